"""The long ``metrics`` rows of an Nsight Compute raw page's value grid (FORMATS.md §2.3).

A raw page of ten thousand launches by a few dozen kept metric columns is a few hundred
thousand metrics rows, each naming its kernel, metric, printed metric and unit.  Those names
repeat (a few dozen kernels, one name per column), so they are pandas categoricals: each
distinct name is stored once and every row holds a small integer code.  The categories are
sorted, so grouping and sorting by them orders the rows as the names themselves would.

The launch and device facts (:mod:`parsers.ncu.frames`) are read off the grid itself
(:meth:`Grid.first`).  With a metric selection (``report``), :func:`kept_columns` leaves out
the rows of the columns read only for those facts, exactly where :func:`parsers.read` would
drop them: when every launch keeps a metrics row of a selected metric.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor.schema import categorical_of
from parsers.ncu.values import texts_of

#: per metric column read: (canonical name, factor, unit, the name as printed)
ColumnInfo = tuple[str, float, str, str]


@dataclass
class Grid:
    """The metric columns read, one row per launch: ``values`` (already scaled, NaN where not a
    number), ``keep`` (the cell is not blank: it gives a metrics row), ``texts`` (per column
    index that has any, the cells that are not numbers, None elsewhere), ``kernels`` (the
    kernel of each launch)."""

    info: Sequence[ColumnInfo]
    values: np.ndarray
    keep: np.ndarray
    texts: Sequence[tuple[int, np.ndarray]]
    kernels: pd.Series

    def first(
        self, key: str, names: Iterable[str], n: int, column: str = "value"
    ) -> dict[str, pd.Series]:
        """:func:`parsers.ncu.frames.first_values` read off the grid: per name, over launches
        0..n-1, the first value (or text) in column order of the columns whose ``key``
        (``metric``: canonical, ``tool_metric``: as printed) is that name."""
        at = 3 if key == "tool_metric" else 0
        texts = dict(self.texts)
        out: dict[str, pd.Series] = {}
        for name in names:
            columns = [j for j, info in enumerate(self.info) if info[at] == name]
            if column == "value":
                got = np.full(len(self.values), np.nan)
                for j in columns:
                    fill = np.isnan(got) & self.keep[:, j] & ~np.isnan(self.values[:, j])
                    got[fill] = self.values[fill, j]
            else:
                got = np.full(len(self.values), np.nan, dtype=object)
                for j in (j for j in columns if j in texts):
                    fill = pd.isna(got) & self.keep[:, j] & pd.notna(texts[j])
                    got[fill] = texts[j][fill]
            out[name] = pd.Series(got).reindex(range(n)).reset_index(drop=True)
        return out


def kept_columns(grid: Grid, selected: Callable[[str], bool] | None) -> list[int] | None:
    """The columns whose metrics rows to keep, None for every column: those ``selected``
    accepts, unless leaving the others out would leave a launch without any metrics row (then
    :func:`parsers.read` keeps every row, and so does the read)."""
    if selected is None:
        return None
    chosen = [j for j, info in enumerate(grid.info) if selected(info[0])]
    if len(chosen) == len(grid.info):
        return None
    has_rows = grid.keep.any(axis=1)
    if (has_rows & ~grid.keep[:, chosen].any(axis=1)).any():
        return None
    return chosen


def melt(grid: Grid, columns: Sequence[int] | None = None) -> pd.DataFrame:
    """The metrics rows (launch-major, column order) of ``columns`` of the grid (None: all)
    where a cell is not blank."""
    rows, width = grid.values.shape
    at = np.arange(width) if columns is None else np.asarray(columns, dtype=np.int64)
    info = [grid.info[j] for j in at.tolist()]
    flat_keep = grid.keep[:, at].ravel()
    column = np.tile(np.arange(len(at), dtype=np.int64), rows)[flat_keep]
    launch = np.repeat(np.arange(rows, dtype=np.int64), len(at))[flat_keep]
    position = {j: k for k, j in enumerate(at.tolist())}
    texts = [(position[j], cells) for j, cells in grid.texts if j in position]
    return pd.DataFrame(
        {
            "launch_id": launch,
            "metric": _by_column([i[0] for i in info], column),
            "tool_metric": _by_column([i[3] for i in info], column),
            "unit": _by_column([i[2] for i in info], column),
            "value": grid.values[:, at].ravel()[flat_keep],
            "text": _texts(texts, rows, len(at), flat_keep),
            "section": categorical_of(np.full(len(launch), -1, dtype=np.int64), []),
            "kernel": _by_column(grid.kernels.astype(object).tolist(), launch),
        }
    )


def _by_column(names: Sequence[str], at: np.ndarray) -> pd.Categorical:
    """``names[at]`` as the schema's categorical (:func:`advisor.schema.categorical_of`)."""
    return categorical_of(at, names)


def _texts(
    texts: Sequence[tuple[int, np.ndarray]], rows: int, width: int, flat_keep: np.ndarray
) -> pd.arrays.ArrowStringArray:
    """The ``text`` column: the non-number cells (a few distinct ones), missing elsewhere, in
    the schema's string dtype (:func:`parsers.ncu.values.texts_of`: the profile converts no
    categorical of 370,000 rows)."""
    codes = np.full(int(flat_keep.sum()), -1, dtype=np.int64)
    words: list[str] = []
    if texts:
        grid = np.full((rows, width), None, dtype=object)
        for j, cells in texts:
            grid[:, j] = cells
        flat = grid.ravel()[flat_keep]
        present = np.flatnonzero(pd.notna(flat))
        words = sorted({str(w) for w in flat[present]})
        code_of = {w: k for k, w in enumerate(words)}
        codes[present] = [code_of[str(w)] for w in flat[present]]
    return texts_of(np.array(words, dtype=object), codes, codes >= 0)
