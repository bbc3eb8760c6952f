"""Column helpers of the SQLite readers (:mod:`parsers.sqlite.nsys`, :mod:`parsers.sqlite.nvprof`)
that keep large activity tables lean: text looked up once per distinct id and copied once into
pandas' string dtype (or kept once per distinct text in a categorical), and the time order
checked before a table is sorted (copied) into it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from advisor.schema import categorical_of, factorize
from parsers.sqlite.db import per_distinct

#: the key every activity table is ordered by (ties in time keep the launch order)
TIME_ORDER = ["start_ns", "correlation_id"]
#: the schema dtype of a text column kept once per distinct value (advisor/schema.py)
CATEGORY = "category"


def text_per_distinct(cells: pd.Series, fn: Callable[[object], str | None]) -> pd.Series:
    """``fn`` of every cell as a string column (pandas' pyarrow-backed ``string``, None missing).

    For an integer column (string ids, enum codes) ``fn`` runs once per distinct value and each
    row's text is copied once from the distinct results, instead of building a Python object
    per row that the schema then converts (:func:`parsers.sqlite.db.per_distinct` otherwise)."""
    if not (pd.api.types.is_integer_dtype(cells.dtype) and len(cells)):
        return pd.Series(per_distinct(cells, fn), index=cells.index, dtype="string")
    codes, uniques = factorize(cells, use_na_sentinel=True)
    texts = [fn(int(value)) for value in uniques] + [fn(None)]  # the last for a missing cell
    rows = np.where(codes < 0, len(uniques), codes)
    pool = pa.system_memory_pool()  # gives freed blocks back at once
    words = pa.array(texts, type=pa.large_string(), memory_pool=pool)
    column = pc.take(words, pa.array(rows, memory_pool=pool), memory_pool=pool)
    return pd.Series(pd.arrays.ArrowStringArray(column), index=cells.index)


def categories_per_distinct(cells: pd.Series, fn: Callable[[object], str | None]) -> pd.Series:
    """``fn`` of every cell as a categorical column: each distinct text once, a code per row.

    The categories are the texts that occur, sorted (object dtype), as the schema keeps a
    repeated text column (``launches.name``, ``launches.device``); where the schema wants
    ``string`` it converts the column.  For an integer column ``fn`` runs once per distinct
    value (and once for a missing cell), else once per cell as :func:`parsers.sqlite.db.
    per_distinct` runs it."""
    if pd.api.types.is_integer_dtype(cells.dtype) and len(cells):
        codes, uniques = factorize(cells, use_na_sentinel=True)
        texts = [fn(int(value)) for value in uniques] + [fn(None)]  # the last: a missing cell
    else:
        codes, found = factorize(per_distinct(cells, fn), use_na_sentinel=True)
        texts = [str(text) for text in found] + [None]
    rows = np.where(codes < 0, len(texts) - 1, codes)  # a missing cell: the last text
    return pd.Series(categorical_of(rows, texts), index=cells.index, copy=False)


def text_column(cells: pd.Series, fn: Callable[[object], str | None], dtype: str) -> pd.Series:
    """``fn`` of every cell in the schema's ``dtype`` for the column: a categorical
    (:func:`categories_per_distinct`) where the schema keeps the text once per distinct value
    (``category``), else ``string`` (:func:`text_per_distinct`), so that validating the frame
    converts nothing."""
    if dtype == CATEGORY:
        return categories_per_distinct(cells, fn)
    return text_per_distinct(cells, fn)


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
