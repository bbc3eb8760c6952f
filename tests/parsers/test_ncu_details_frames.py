"""The details page's frames built on categorical codes give what the text columns give.

parsers.ncu.frames.first_values on a categorical key column (the columnar reading of a details
page) against the same frame with the key as object texts; parsers.ncu.csv_layouts._stripped
against ``str.strip``; the (name, unit) pair numbering against pandas' factorize; the text
column against the schema's string dtype and the printable texts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from advisor import schema
from parsers.ncu import csv_layouts, values
from parsers.ncu.frames import first_values


def _metrics(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = 400
    names = np.array(["a", "b", "c", "unused"], dtype=object)[rng.integers(0, 3, rows)]
    values = rng.random(rows)
    values[rng.random(rows) < 0.3] = np.nan
    texts = np.array(["x", "y", None], dtype=object)[rng.integers(0, 3, rows)]
    return pd.DataFrame(
        {
            "launch_id": rng.integers(-2, 25, rows),  # ids outside 0..n-1 too
            "tool_metric": pd.Categorical(names, categories=["a", "b", "c", "unused", "z"]),
            "value": values,
            "text": texts,
        }
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("column", ["value", "text"])
def test_first_values_on_codes_are_those_on_texts(seed: int, column: str) -> None:
    metrics = _metrics(seed)
    as_texts = metrics.assign(tool_metric=metrics["tool_metric"].astype(object))
    wanted = ["c", "a", "missing", "z"]
    fast = first_values(metrics, "tool_metric", wanted, 20, column)
    slow = first_values(as_texts, "tool_metric", wanted, 20, column)
    assert list(fast) == list(slow) == wanted
    for name in wanted:
        pd.testing.assert_series_equal(fast[name], slow[name], check_exact=True)
    assert fast["a"].notna().sum() > 5  # the first value of each launch was found


def test_stripped_categorical_is_str_strip() -> None:
    """A rule column stripped once per category (a details page read by columns) holds the
    values ``str.strip`` gives the object column of the row-by-row reading, an empty text
    missing; unstripped, the texts as they are."""
    cells = pd.Series([" a ", "", "b", "  ", " a ", None], dtype=object)
    stripped = csv_layouts._texts(cells.astype("category"))
    assert stripped.dtype == pd.StringDtype()
    by_rows = csv_layouts._texts(cells)
    assert by_rows.dtype == object
    assert stripped.astype(object).where(stripped.notna(), None).tolist() == [
        "a", None, "b", None, "a", None
    ]  # fmt: skip
    assert by_rows.where(by_rows.notna(), None).tolist() == ["a", None, "b", None, "a", None]
    kept = csv_layouts._texts(cells.astype("category"), strip=False)
    assert kept.astype(object).where(kept.notna(), None).tolist() == [
        " a ", "", "b", "  ", " a ", None
    ]  # fmt: skip


@pytest.mark.parametrize("size", [7, 1 << 23])
def test_numbered_pairs_name_the_same_values(size: int) -> None:
    """Dense numbering (a table of ``size`` slots) or pandas' hash beyond the limit: either
    way each row's code looks its own value up."""
    pair = np.random.default_rng(4).integers(0, 7, 500)
    codes, distinct = values._numbered(pair, size)
    assert np.asarray(distinct)[codes].tolist() == pair.tolist()
    assert sorted(np.asarray(distinct).tolist()) == sorted(set(pair.tolist()))


def test_text_column_is_the_schema_string_of_the_kept_words() -> None:
    words = np.array(["PolicySpread", "n/a", "bad \udcff", ""], dtype=object)
    codes = np.array([0, 1, 2, 3, 0], dtype=np.int8)
    keep = np.array([True, False, True, False, True])
    texts = pd.Series(values.texts_of(words, codes, keep))
    assert texts.dtype == schema._DTYPES[schema.STR]
    assert texts.isna().tolist() == [False, True, False, True, False]
    assert texts[[0, 2, 4]].tolist() == ["PolicySpread", "bad \\udcff", "PolicySpread"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_launch_key_on_category_codes_is_the_key_on_texts(seed: int) -> None:
    """The launch key of categorical columns (their codes combined, numbered per run of equal
    rows) numbers each combination as the text columns' numbering does, in order of first
    appearance: rows of one combination in runs or scattered, missing cells, unused
    categories, one column or two."""
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 600))
    pids = np.array(["7", "12", None], dtype=object)[rng.integers(0, 3, rows)]
    ids = np.array([str(k) for k in rng.integers(0, 40, rows)], dtype=object)
    runs = np.repeat(ids[: rows // 5 + 1], 5)[:rows] if seed % 2 else ids  # runs, or scattered
    frame = pd.DataFrame(
        {
            "Process ID": pd.Categorical(pids, categories=["12", "7", "99"]),
            "ID": pd.Categorical(runs),
        }
    )
    as_texts = frame.astype(object)
    for columns in (["Process ID", "ID"], ["ID"], ["Process ID"]):
        fast = csv_layouts._category_codes(frame, columns)
        assert fast is not None
        expected = csv_layouts._codes(as_texts, columns)  # object columns: numbered on texts
        assert fast.dtype == expected.dtype and fast.tolist() == expected.tolist(), columns
    assert csv_layouts._category_codes(as_texts, ["ID"]) is None
    empty = frame.iloc[:0]
    got = csv_layouts._category_codes(empty, ["ID"])
    assert got is not None and len(got) == 0
