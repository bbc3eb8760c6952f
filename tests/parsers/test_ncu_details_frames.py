"""The details page's frames built on categorical codes give what the text columns give.

parsers.ncu.frames.first_values on a categorical key column (the columnar reading of a details
page) against the same frame with the key as object texts; parsers.ncu.csv_layouts._stripped
against ``str.strip``; the rules of the columnar reading against the row-by-row reading.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from parsers.ncu import csv_layouts
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
    cells = pd.Series([" a ", "", "b", "  ", " a "], dtype=object)
    stripped = csv_layouts._stripped(cells.astype("category"))
    assert stripped.dtype == object
    assert stripped.tolist() == cells.str.strip().tolist() == ["a", "", "b", "", "a"]
