"""Column helpers of the SQLite readers (:mod:`parsers.nsys_sqlite`, :mod:`parsers.nvprof_sqlite`)
that keep large activity tables lean: text looked up once per distinct id and copied once into
pandas' string dtype, and the time order checked before a table is sorted (copied) into it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]

from parsers.sqlite_db import per_distinct

#: the key every activity table is ordered by (ties in time keep the launch order)
TIME_ORDER = ["start_ns", "correlation_id"]


def text_per_distinct(cells: pd.Series, fn: Callable[[object], str | None]) -> pd.Series:
    """``fn`` of every cell as a string column (pandas' pyarrow-backed ``string``, None missing).

    For an integer column (string ids, enum codes) ``fn`` runs once per distinct value and each
    row's text is copied once from the distinct results, instead of building a Python object
    per row that the schema then converts (:func:`parsers.sqlite_db.per_distinct` otherwise)."""
    if not (pd.api.types.is_integer_dtype(cells.dtype) and len(cells)):
        return pd.Series(per_distinct(cells, fn), index=cells.index, dtype="string")
    codes, uniques = pd.factorize(cells, use_na_sentinel=True)
    texts = [fn(int(value)) for value in uniques] + [fn(None)]  # the last for a missing cell
    rows = np.where(codes < 0, len(uniques), codes)
    column = pa.array(texts, type=pa.large_string()).take(pa.array(rows))
    return pd.Series(pd.arrays.ArrowStringArray(column), index=cells.index)


def in_time_order(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` stably sorted by :data:`TIME_ORDER` with a fresh index; a frame already in that
    order (the usual export) is returned without copying its columns."""
    start, corr = (frame[c] for c in TIME_ORDER)
    if len(frame) > 1 and not (start.isna().any() or corr.isna().any()):
        s, c = start.to_numpy(), corr.to_numpy()
        later = s[1:] > s[:-1]
        if (later | ((s[1:] == s[:-1]) & (c[1:] >= c[:-1]))).all():
            return frame.reset_index(drop=True)
    return frame.sort_values(TIME_ORDER, kind="stable").reset_index(drop=True)
