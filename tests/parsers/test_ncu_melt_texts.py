"""The ``text`` column of a melted raw page (parsers.ncu.melt) is built in the schema's string
dtype: the texts the profile would make of the categorical it replaces (printable, missing
where the cell is a number or blank), and the profile converts nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd

from advisor import schema
from parsers.ncu.melt import Grid, melt


def test_melted_texts_are_the_schema_strings_of_the_cells() -> None:
    rows, width = 4, 3
    values = np.arange(rows * width, dtype=float).reshape(rows, width)
    values[:, 1] = np.nan  # a column of texts
    keep = np.ones((rows, width), dtype=bool)
    keep[2, 1] = False  # a blank cell: no row
    cells = np.array(["n/a", None, None, "bad \udcff"], dtype=object)
    info = [(f"m{j}", f"tool{j}", "", f"raw{j}") for j in range(width)]
    kernels = pd.Series(["k"] * rows)
    frame = melt(Grid(info, values, keep, [(1, cells)], kernels))  # type: ignore[arg-type]
    assert frame["text"].dtype == schema.validate("metrics", frame.iloc[:0])["text"].dtype
    texts = schema.validate("metrics", frame)["text"].tolist()
    na = pd.NA
    # launch-major, the blank cell of launch 2 left out; a lone surrogate written as its escape
    assert texts == [na, "n/a", na, na, na, na, na, na, na, "bad \\udcff", na]
    assert len(frame) == rows * width - 1
    empty = melt(Grid(info, values, keep, [], kernels))  # type: ignore[arg-type]
    assert empty["text"].isna().all() and len(empty) == len(frame)
