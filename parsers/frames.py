"""Building the normalised frames from parsed rows: shared by every parser family."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from advisor import schema
from advisor.metric_map import canonicalize
from parsers.names import split_correlation, split_device, transfer_kind

_LAUNCH_COLS = list(schema.TABLES["launches"])
_TRANSFER_COLS = list(schema.TABLES["transfers"])


def metric_record(
    *,
    tool: str,
    tool_metric: str,
    value: float,
    unit: str,
    kernel: str | None,
    launch_id: int | None = None,
    device: str | None = None,
    device_id: int | None = None,
    section: str | None = None,
    minimum: float = math.nan,
    maximum: float = math.nan,
    total: float = math.nan,
    invocations: int | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """One ``metrics`` row; value/minimum/maximum/total are in ``unit`` (a base unit) and are
    mapped to the canonical name and unit by :func:`advisor.metric_map.canonicalize`."""
    metric, value_c, unit_c = canonicalize(tool_metric, value, unit, tool)

    def conv(x: float) -> float:
        return canonicalize(tool_metric, x, unit, tool)[1]

    return {
        "launch_id": launch_id,
        "kernel": kernel,
        "device": device,
        "device_id": device_id,
        "metric": metric,
        "tool_metric": tool_metric,
        "section": section,
        "unit": unit_c,
        "value": value_c,
        "minimum": conv(minimum),
        "maximum": conv(maximum),
        "total": conv(total),
        "invocations": invocations,
        "text": text,
    }


def gpu_activity_frames(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split GPU-trace rows (kernels, memcpy and memset mixed) into ``launches`` and
    ``transfers`` frames.

    ``rows`` has a ``name`` column and any of the columns of both tables plus ``bytes``; a row
    whose name is a transfer (``[CUDA memcpy HtoD]``, ``[CUDA memset]`` ...) becomes a transfer,
    every other named row a launch.  A trailing correlation id ``[123]`` on a kernel name moves
    to ``correlation_id`` when that column is empty.  Names are looked at once per distinct name
    (a trace repeats a few dozen over millions of rows).

    ``rows`` is consumed: each column is removed from it once split, so a million-row trace is
    held about once (its columns move into the two tables one at a time) instead of as the rows
    and both tables at once.
    """
    if isinstance(rows["name"].dtype, pd.CategoricalDtype):  # the distinct names are at hand
        codes, uniques = rows["name"].cat.codes.to_numpy(), rows["name"].cat.categories
    else:
        codes, uniques = schema.factorize(rows["name"].astype("string"), use_na_sentinel=True)
    texts = [str(u) for u in uniques]

    kind_of = [transfer_kind(t) for t in texts]
    # per row, on a table of the distinct names (not an object per row): the last slot is for
    # code -1 (missing)
    is_transfer = np.array([k is not None for k in kind_of] + [False], dtype=bool)[codes]
    is_kernel = ~is_transfer & (codes >= 0)
    kernel_rows, transfer_rows = np.flatnonzero(is_kernel), np.flatnonzero(is_transfer)
    name_column = rows["name"].iloc[:0]
    kernel_cols: dict[str, pd.Series] = {}
    transfer_cols: dict[str, pd.Series] = {}
    for col in list(rows.columns):
        column = rows.pop(col)  # the rows' copy goes once both tables have theirs
        # the arrays' own take: iloc's indexing costs three to five times the copy itself
        if col in _LAUNCH_COLS and col != "name":
            kernel_cols[col] = pd.Series(column.array.take(kernel_rows), copy=False)
        if col in _TRANSFER_COLS:
            transfer_cols[col] = pd.Series(column.array.take(transfer_rows), copy=False)
        del column
    kernels = pd.DataFrame(kernel_cols, index=pd.RangeIndex(len(kernel_rows)), copy=False)
    del kernel_cols
    # the names are built from the distinct names below: not copied row by row here
    if len(kernels):
        names: list[str | None] = []
        ids: list[int | None] = []
        for text in texts:  # two lists, not a list of pairs (a million distinct names)
            name, suffix = split_correlation(text)
            names.append(name)
            ids.append(suffix)
        kernels["name"] = strings_by_code(codes[is_kernel], names, kernels.index)
        suffix_ids = pd.Series(ints_by_code(codes[is_kernel], ids), index=kernels.index)
        if "correlation_id" in kernels.columns:
            kernels["correlation_id"] = kernels["correlation_id"].where(
                kernels["correlation_id"].notna(), suffix_ids
            )
        else:
            kernels["correlation_id"] = suffix_ids
    else:
        kernels["name"] = name_column.iloc[:0]
    launches = kernels[[c for c in _LAUNCH_COLS if c in kernels.columns]]
    del kernels
    launches["launch_id"] = pd.arrays.IntegerArray(
        np.arange(len(launches), dtype=np.int64), np.zeros(len(launches), dtype=bool)
    )
    transfers = pd.DataFrame(transfer_cols, index=pd.RangeIndex(len(transfer_rows)), copy=False)
    kind_table = np.empty(len(kind_of) + 1, dtype=object)  # the last slot: code -1 (missing)
    kind_table[: len(kind_of)] = kind_of
    transfers["kind"] = kind_table[codes[transfer_rows]]
    transfers = transfers[[c for c in _TRANSFER_COLS if c in transfers.columns]]
    texts = [c for c in transfers.columns if isinstance(transfers[c].dtype, pd.CategoricalDtype)]
    transfers = transfers.astype(dict.fromkeys(texts, "string"))  # a tenth of the rows: strings
    return launches, transfers


def whole_ints(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Float64 values already checked whole and within the 64-bit range (NaN: missing) as the
    schema's ``Int64`` column (the values :func:`advisor.schema.validate` would make of them),
    without the float temporary of ``np.where``: one int64 array and the mask."""
    missing = np.isnan(values)
    with np.errstate(invalid="ignore"):  # NaN cells: set to 0 below
        whole = values.astype(np.int64)
    whole[missing] = 0
    return pd.arrays.IntegerArray(whole, missing)


def device_columns(text: pd.Series) -> tuple[pd.Series, pd.Series]:
    """``"Tesla K40c (0)"`` cells -> (device name, device id) columns, split once per distinct
    cell."""
    codes, uniques = schema.factorize(text, use_na_sentinel=True)
    split = [split_device(str(d)) for d in uniques]
    names = strings_by_code(codes, [n for n, _ in split], text.index)
    ids = ints_by_code(codes, [i for _, i in split])
    return names, pd.Series(ids, index=text.index)


#: :func:`distinct_rows` finds the first rows in a table of this many keys at most, else by a sort
TABLE_KEYS = 1 << 20


def distinct_rows(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame[columns].drop_duplicates()`` (each distinct row's first occurrence, in row order,
    with its index label; missing values equal each other), found on per-column codes: a
    categorical's own codes, else :func:`advisor.schema.factorize`.  A million-row trace repeats
    one or two (device id, device) pairs; pandas hashes every row's tuple (40-100 ms) where the
    codes are combined into one small integer key (about 15 ms)."""
    n = len(frame)
    key, size = schema.combined_codes((_row_codes(frame[name]) for name in columns), n)
    if size <= TABLE_KEYS:  # each key's first row in one pass over a small table
        first = np.full(size, n, dtype=np.int64)
        np.minimum.at(first, key, np.arange(n, dtype=np.int64))
        places = np.sort(first[first < n])
    else:
        places = np.sort(np.unique(key, return_index=True)[1])
    return frame[columns].iloc[places]


def _row_codes(column: pd.Series) -> tuple[np.ndarray, int]:
    """A code per row in ``[0, width)``, equal for equal values, 0 for a missing one, and
    ``width``: a categorical's codes; an integer column's values less its least one, when they
    span a small range (device ids, streams); else :func:`advisor.schema.factorize`'s codes."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64) + 1, len(column.cat.categories) + 1
    if pd.api.types.is_integer_dtype(column.dtype):
        array = column.array
        missing = np.asarray(array.isna(), dtype=bool)
        # the column's own buffer where nothing is missing: read, never written
        values = np.asarray(array.to_numpy(dtype=np.int64, na_value=0), dtype=np.int64)
        present = values[~missing]
        low = int(present.min()) if len(present) else 0
        high = int(present.max()) if len(present) else 0
        if high - low < 1 << 16:
            codes = values - (low - 1)  # a new array
            codes[missing] = 0
            return codes, high - low + 2
    codes, found = schema.factorize(column, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64) + 1, len(found) + 1


def ints_by_code(codes: np.ndarray, values: list[int | None]) -> pd.arrays.IntegerArray:
    """``values[code]`` of every row as an ``Int64`` array (code -1 or a None value: missing),
    built from the distinct values."""
    known = np.array([v is not None for v in values] + [False])
    whole = np.array([v if v is not None else 0 for v in values] + [0], dtype=np.int64)
    return pd.arrays.IntegerArray(whole[codes], ~known[codes])


def strings_by_code(codes: np.ndarray, values: list[str | None], index: pd.Index) -> pd.Series:
    """``values[code]`` of every row (code -1 or a None value: missing) as the schema's
    categorical (:func:`advisor.schema.categorical_of`): each distinct text once and a code per
    row, not one Python string per row (the schema makes it ``string`` where the column is)."""
    return pd.Series(schema.categorical_of(codes, values), index=index, copy=False)
