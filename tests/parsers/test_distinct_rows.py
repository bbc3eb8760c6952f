"""parsers.frames.distinct_rows finds a frame's distinct rows on per-column codes: the same rows,
in the same order and with the same index labels, as pandas' drop_duplicates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from parsers import frames
from parsers.frames import distinct_rows


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = pd.array(rng.integers(0, 3, n), dtype="Int64")
    ids[rng.random(n) < 0.1] = pd.NA
    names = pd.Categorical.from_codes(
        rng.integers(-1, 3, n).astype(np.int8), categories=["A (0)", "B (1)", "C (2)"]
    )
    text = pd.array(rng.choice(["x", "y", None], n), dtype="string")
    return pd.DataFrame(
        {"device_id": ids, "device": names, "text": text, "f": rng.integers(0, 2, n) / 2},
        index=pd.RangeIndex(5, 5 + 2 * n, 2),  # labels that are not positions
    )


@pytest.mark.parametrize("columns", [["device_id", "device"], ["text", "f"], ["device", "text"]])
def test_the_rows_drop_duplicates_keeps(columns: list[str]) -> None:
    frame = _frame(5000, 1)
    before = frame.copy(deep=True)
    got = distinct_rows(frame, columns)
    pd.testing.assert_frame_equal(frame, before)  # the frame itself is left as it was
    pd.testing.assert_frame_equal(got, before[columns].drop_duplicates())


def test_missing_values_equal_each_other_and_an_empty_frame() -> None:
    frame = pd.DataFrame(
        {"a": pd.array([pd.NA, 1, pd.NA, 1, 2], dtype="Int64"), "b": ["x", "x", "x", "x", None]}
    )
    pd.testing.assert_frame_equal(distinct_rows(frame, ["a", "b"]), frame.drop_duplicates())
    assert len(distinct_rows(frame.iloc[:0], ["a", "b"])) == 0


@pytest.mark.parametrize("table_keys", [frames.TABLE_KEYS, 0])
def test_a_key_too_wide_is_renumbered(table_keys: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # many distinct values per column: the combined key is renumbered before it overflows; the
    # first rows found by a sort (table_keys 0) or the small table agree with pandas
    monkeypatch.setattr(frames, "TABLE_KEYS", table_keys)
    rng = np.random.default_rng(2)
    n = 20000
    frame = pd.DataFrame({k: rng.integers(1, 15000, n) for k in "abcde"})
    frame = pd.concat([frame, frame.iloc[::3]], ignore_index=True)  # repeated rows
    before = frame.copy(deep=True)
    got = distinct_rows(frame, list("abcde"))
    pd.testing.assert_frame_equal(frame, before)
    pd.testing.assert_frame_equal(got, before[list("abcde")].drop_duplicates())
    small = _frame(3000, 3)
    pd.testing.assert_frame_equal(
        distinct_rows(small, ["device_id", "device", "text"]),
        small[["device_id", "device", "text"]].drop_duplicates(),
    )
