"""The normalised tables every parser produces, with the unit of each column in its name.

Units are converted at the parser boundary, so every other module sees only these columns:
durations and timestamps in nanoseconds (``*_ns``), sizes in bytes (``*_bytes``), rates as
fractions in [0, 1] (``*_frac``), throughputs in bytes per second.  ``metrics.value`` is in the
base unit named by ``metrics.unit`` (see :data:`BASE_UNITS`).

Each table is a pandas DataFrame with exactly the columns listed here, in this order, with these
dtypes; :func:`validate` coerces a parser's frame to it and rejects unknown or missing columns.
Missing values are ``pd.NA``/``NaN``, never a sentinel such as 0 or -1.  Names repeated row
after row (``launches.name``/``device``, ``api_calls.name``, the names and units of ``metrics``)
are categoricals (:data:`CAT`) whose categories are the distinct strings, sorted and all used,
whichever reader produced them: a million-launch trace stores its few dozen kernel names once.
The integer columns of :data:`NARROW` (sizes CUDA bounds, small ids) are ``Int8``, ``Int16`` or
``Int32``, the narrowest that holds every value of the column, else ``Int64``: the values are
the same either way.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from advisor.errors import SchemaError

STR = "string"
INT = "Int64"
FLOAT = "float64"
#: text repeated row after row (a trace names a few dozen kernels over millions of launches): a
#: categorical whose categories are the distinct strings (object dtype), sorted, all used
CAT = "category"

#: table name -> ordered {column: dtype}
TABLES: dict[str, dict[str, str]] = {
    # One row per kernel launch.  ``launch_id`` is unique in a Profile and links metrics/rules.
    "launches": {
        "launch_id": INT,
        "name": CAT,  # demangled kernel name, correlation suffix "[123]" removed
        "device": CAT,  # device name as the profiler prints it, without the "(0)" index
        "device_id": INT,
        "context": INT,
        "stream": INT,
        "start_ns": FLOAT,  # relative to the start of profiling where the tool says so
        "duration_ns": FLOAT,
        "grid_x": INT,
        "grid_y": INT,
        "grid_z": INT,
        "block_x": INT,
        "block_y": INT,
        "block_z": INT,
        "registers_per_thread": INT,
        "static_shared_bytes": FLOAT,
        "dynamic_shared_bytes": FLOAT,
        "correlation_id": INT,
        "operator": CAT,  # the framework operator that launched it (PyTorch: aten::addmm)
        # the collective a communication kernel runs, as the trace names it (a Kineto kernel's
        # "Collective name" arg: allreduce, all_to_all, ...); see advisor/communication.py
        "collective": CAT,
    },
    # One row per (device, kernel) when the file aggregates launches (nvprof summary,
    # nsys cuda_gpu_kern_sum).
    "kernel_summary": {
        "name": STR,
        "device": STR,
        "device_id": INT,
        "calls": INT,
        "total_ns": FLOAT,
        "avg_ns": FLOAT,
        "min_ns": FLOAT,
        "max_ns": FLOAT,
        "median_ns": FLOAT,
        "stddev_ns": FLOAT,
        "time_frac": FLOAT,  # share of the listed GPU time, 0..1
    },
    # One row per memcpy / memset.
    "transfers": {
        "kind": STR,  # HtoD, DtoH, DtoD, PtoP, HtoH, memset, UM-HtoD, UM-DtoH, ...
        "bytes": FLOAT,
        "start_ns": FLOAT,
        "duration_ns": FLOAT,
        "device": STR,
        "device_id": INT,
        "context": INT,
        "stream": INT,
        "src_kind": STR,  # Pageable, Pinned, Device, Managed, ...
        "dst_kind": STR,
        "correlation_id": INT,
        # a unified-memory migration's cause (nsys SQLite migrationCause): page fault,
        # speculative prefetch, prefetch (cudaMemPrefetchAsync), eviction, access counters
        "cause": STR,
    },
    # One row per transfer kind when the file aggregates (nvprof summary, nsys mem sums,
    # nvprof unified-memory table).
    "transfer_summary": {
        "kind": STR,
        "device": STR,
        "calls": INT,
        "total_ns": FLOAT,
        "avg_ns": FLOAT,
        "min_ns": FLOAT,
        "max_ns": FLOAT,
        "total_bytes": FLOAT,
        "avg_bytes": FLOAT,
        "min_bytes": FLOAT,
        "max_bytes": FLOAT,
    },
    # One row per CUDA runtime / driver API call.
    "api_calls": {
        "name": CAT,  # a few hundred API names over millions of calls
        "start_ns": FLOAT,
        "duration_ns": FLOAT,
        "process_id": INT,
        "thread_id": INT,
        "correlation_id": INT,
        "result": INT,
        "operator": STR,  # the framework operator that made the call (PyTorch: aten::item)
        "sync_kind": STR,  # a synchronizing call: Stream Sync, Event Sync, Context Sync, ...
    },
    "api_summary": {
        "name": STR,
        "calls": INT,
        "total_ns": FLOAT,
        "avg_ns": FLOAT,
        "min_ns": FLOAT,
        "max_ns": FLOAT,
        "median_ns": FLOAT,
        "stddev_ns": FLOAT,
        "time_frac": FLOAT,
    },
    # Long format: one row per (launch or kernel summary, metric).  Per-launch rows have a
    # launch_id and ``value``; summary rows have no launch_id, ``invocations`` and
    # value = average, ``minimum``/``maximum``/``total`` where the tool prints them.
    "metrics": {
        "launch_id": INT,
        "kernel": CAT,
        "device": CAT,
        "device_id": INT,
        "metric": CAT,  # canonical name (advisor/data/metric_map.csv), else the tool's name
        "tool_metric": CAT,  # the name (or label / description) exactly as the tool printed it
        "section": CAT,  # ncu section or nvprof "event"/"metric"
        "unit": CAT,  # base unit of value/minimum/maximum/total (see BASE_UNITS)
        "value": FLOAT,
        "minimum": FLOAT,
        "maximum": FLOAT,
        "total": FLOAT,
        "invocations": INT,
        "text": STR,  # the raw cell when it is not a number ("PolicySpread", "n/a")
    },
    # Nsight Compute rule results (guided analysis), kept as reference data.
    "rules": {
        "launch_id": INT,
        "kernel": STR,
        "section": STR,
        "rule": STR,
        "rule_type": STR,  # OPT, INF, WRN, ERR
        "description": STR,
        "speedup_type": STR,  # global / local
        "estimated_speedup_frac": FLOAT,  # NVIDIA's "Estimated Speedup" (percent) / 100
    },
    "devices": {
        "device_id": INT,
        "name": STR,
        "compute_capability": STR,  # "8.0"
        "sm_count": INT,
        "sm_clock_hz": FLOAT,
        "memory_clock_hz": FLOAT,
        "memory_bandwidth_bytes_per_s": FLOAT,
        "l2_bytes": FLOAT,
        # per-SM limits as the profiler reports them (ncu device__attribute_max_*_per_multi-
        # processor, the nvprof and nsys device tables); missing where the file does not say
        "max_warps_per_sm": INT,
        "max_threads_per_sm": INT,
        "max_blocks_per_sm": INT,
        "registers_per_sm": INT,  # 32-bit registers
        "shared_bytes_per_sm": FLOAT,  # largest shared-memory carve-out per SM
    },
}

#: ``Int64`` columns (:data:`INT`) held in the narrowest of ``Int8``, ``Int16`` and ``Int32``
#: (:data:`NARROW_WIDTHS`) that holds every value of the column (2, 3 or 5 bytes a row instead
#: of 9), else as ``Int64``, so a value out of 32 bits is read as it is (and judged by
#: :mod:`advisor.values`, not refused here).  CUDA bounds the launch configuration (grid x <
#: 2**31, grid y and z <= 65535, block dimensions <= 1024, registers <= 255); device, context and
#: stream ids, process and thread ids, API result codes and CUPTI's correlation ids (32 bits)
#: are small in every profiler's output.  Every consumer takes these columns as floats or int64
#: arrays (``to_numpy(dtype=...)``) before any arithmetic: a product of narrow integers would
#: wrap.  A million-launch trace of the nsys SQLite export: 63 MiB less (benchmarks/README.md,
#: "nsys SQLite").
_NARROW_LAUNCHES = (
    "device_id", "context", "stream", "grid_x", "grid_y", "grid_z", "block_x", "block_y",
    "block_z", "registers_per_thread", "correlation_id",
)  # fmt: skip
NARROW: dict[str, frozenset[str]] = {
    "launches": frozenset(_NARROW_LAUNCHES),
    "api_calls": frozenset({"process_id", "thread_id", "result", "correlation_id"}),
}
#: the widths a :data:`NARROW` column may take, narrowest first, with their pandas dtypes
NARROW_WIDTHS = (
    (np.dtype(np.int8), pd.Int8Dtype()),
    (np.dtype(np.int16), pd.Int16Dtype()),
    (np.dtype(np.int32), pd.Int32Dtype()),
)
#: the dtype of an all-missing :data:`NARROW` column (the narrowest)
NARROW_MISSING = "Int8"

#: the base units metric values are converted to
BASE_UNITS = (
    "ns",  # time
    "byte",
    "byte/s",
    "frac",  # a percentage / 100, or a ratio the tool prints in 0..1
    "hz",
    "level",  # nvprof utilization level 0..10 ("Low (1)" -> 1)
    "",  # plain count or dimensionless number
)


def empty(table: str) -> pd.DataFrame:
    """An empty frame of ``table`` with the schema's columns and dtypes."""
    return pd.DataFrame({c: _missing(0, _dtype_of(table, c)) for c in TABLES[table]})


def _dtype_of(table: str, col: str) -> str:
    """The schema dtype of ``col``, :data:`NARROW_MISSING` for a :data:`NARROW` column (what
    its all-missing column is made of)."""
    return NARROW_MISSING if col in NARROW.get(table, ()) else TABLES[table][col]


def narrow_ints(values: Any) -> Any:
    """An ``Int64`` array (or Series) in the narrowest width of :data:`NARROW_WIDTHS` that
    holds every present value, else as it is (a value beyond 32 bits); any other array as it
    is.  The values do not change."""
    array = values.array if isinstance(values, pd.Series) else values
    if not isinstance(array, pd.arrays.IntegerArray) or array.dtype != _DTYPES[INT]:
        return values
    mask = array.isna()
    data = array.to_numpy(dtype=np.int64, na_value=0)  # no copy without a missing value
    lo, hi = (int(data.min()), int(data.max())) if len(data) else (0, 0)  # missing reads 0
    width = next(
        (w for w, _ in NARROW_WIDTHS if np.iinfo(w).min <= lo and hi <= np.iinfo(w).max), None
    )
    if width is None:
        return values
    narrow = pd.arrays.IntegerArray(data.astype(width), mask)
    if isinstance(values, pd.Series):
        return pd.Series(narrow, index=values.index, name=values.name, copy=False)
    return narrow


def validate(table: str, frame: pd.DataFrame | None) -> pd.DataFrame:
    """Return ``frame`` coerced to the schema of ``table``.

    Columns the schema has but the frame lacks are added as missing values; columns the schema
    does not name are a :class:`SchemaError` (a parser bug), as are values that cannot be coerced
    to the column's dtype.
    """
    if table not in TABLES:
        raise SchemaError(f"unknown table {table!r}; tables: {', '.join(TABLES)}")
    cols = TABLES[table]
    if frame is None or (len(frame) == 0 and len(frame.columns) == 0):
        return empty(table)
    unknown = [c for c in frame.columns if c not in cols]
    if unknown:
        raise SchemaError(f"table {table!r}: unknown columns {unknown}")
    out: dict[str, pd.Series] = {}
    n = len(frame)
    narrow = NARROW.get(table, frozenset())
    for col, dtype in cols.items():
        if col in frame.columns:
            out[col] = _coerce(table, col, frame[col].reset_index(drop=True), dtype)
            if col in narrow:
                out[col] = narrow_ints(out[col])
        else:
            out[col] = _missing(n, NARROW_MISSING if col in narrow else dtype)
    return pd.DataFrame(out, copy=False)


#: the pandas dtype each schema dtype coerces to
_DTYPES = {FLOAT: np.dtype("float64"), INT: pd.Int64Dtype(), STR: pd.StringDtype()}
_NARROW_DTYPES = frozenset(d for _, d in NARROW_WIDTHS)


def _missing(n: int, dtype: str) -> pd.Series:
    """A column of ``n`` missing values of ``dtype``."""
    if dtype == FLOAT:
        return pd.Series(np.full(n, np.nan))
    if dtype in (INT, NARROW_MISSING):
        width = np.int8 if dtype == NARROW_MISSING else np.int64
        return pd.Series(pd.arrays.IntegerArray(np.zeros(n, width), np.ones(n, bool)))
    if dtype == CAT:
        nothing = pd.Index([], dtype=object)
        return pd.Series(pd.Categorical.from_codes(np.full(n, -1, np.int8), categories=nothing))
    return pd.Series(_missing_strings(n), copy=False)


#: rows of the one all-missing text chunk that :func:`_missing_strings` repeats
_NULL_CHUNK_ROWS = 65536


def _missing_strings(n: int) -> pd.arrays.ArrowStringArray:
    """``n`` missing texts (the schema's ``string`` dtype) as one chunk of
    :data:`_NULL_CHUNK_ROWS` missing values repeated: every chunk, of every such column, shares
    its buffers, so a text column the input lacks (``api_calls.operator`` and ``sync_kind`` of
    an Nsight Systems export: 1.1 million calls) takes nothing of its own instead of 8 bytes a
    row.  Every operation sees the same values as in a column of one chunk; a write makes a new
    array, as for any text column."""
    import pyarrow as pa  # type: ignore[import-untyped]  # (as pandas' string dtype does)

    chunk = _null_chunk()
    whole, rest = divmod(n, _NULL_CHUNK_ROWS)
    chunks = [chunk] * whole + ([chunk.slice(0, rest)] if rest else [])
    return pd.arrays.ArrowStringArray(pa.chunked_array(chunks, type=pa.large_string()))


@functools.cache
def _null_chunk() -> Any:
    """The all-missing chunk every column of :func:`_missing_strings` repeats (arrow arrays are
    immutable: a write to a column makes a new one)."""
    import pyarrow as pa

    return pa.nulls(_NULL_CHUNK_ROWS, pa.large_string())


def _coerce(table: str, col: str, series: pd.Series, dtype: str) -> pd.Series:
    try:
        if series.dtype == _DTYPES.get(dtype):  # already valid (a profile validated again)
            return series
        if dtype == INT and series.dtype in _NARROW_DTYPES:  # a NARROW column already narrow
            return series
        if dtype == CAT:
            return _categorical(series)  # repeated text: names stored once
        if dtype == INT and series.dtype == np.float64:  # the common case, vectorised in numpy
            return _float_to_int(series.to_numpy())
        if dtype == FLOAT:
            return pd.to_numeric(series, errors="raise").astype("float64")
        if dtype == INT:
            num = pd.to_numeric(series, errors="raise")
            if num.dtype.kind in "iu":
                return num.astype("Int64")
            floats = num.astype("Float64").dropna()
            if (floats % 1 != 0).any():
                raise ValueError("non-integer values")
            if (floats.abs() >= 2.0**63).any():  # inf, 1e20: astype would wrap them silently
                raise ValueError("values out of the 64-bit integer range")
            return num.astype("Float64").astype("Int64")
        return series.astype("string")
    except (ValueError, TypeError) as exc:
        raise SchemaError(
            f"table {table!r} column {col!r}: cannot coerce to {dtype}: {exc}"
        ) from exc


#: the hash table :func:`factorize` starts with: a profile's column of a million rows holds a
#: few dozen distinct values, and pandas' default (a table for as many values as rows) held
#: 40 MiB a million rows while it ran
FACTORIZE_HINT = 1 << 10


def factorize(values: Any, **options: Any) -> tuple[np.ndarray, Any]:
    """:func:`pandas.factorize` of a per-row column (the same codes and distinct values), its
    hash table started small (:data:`FACTORIZE_HINT`) and grown as distinct values come."""
    return pd.factorize(values, size_hint=FACTORIZE_HINT, **options)


def combined_codes(parts: Iterable[tuple[np.ndarray, int]], n: int) -> tuple[np.ndarray, int]:
    """One int64 key per row of ``n``, equal exactly where every part's code is, and the size
    the keys lie under: each part a (codes in ``[0, width)``, width) pair, combined a part at a
    time (``key * width + codes``), the key renumbered (:func:`factorize`) before the next part
    could overflow 62 bits.  The rows that share a key do not depend on the parts' numbering."""
    key: np.ndarray | None = None
    size = 1  # the key's values lie in [0, size)
    for codes, width in parts:
        width = max(width, 1)
        if key is None:
            key = np.asarray(codes, dtype=np.int64).copy()
        else:
            if size * width >= 2**62:
                numbers, found = factorize(key)
                key, size = np.asarray(numbers, dtype=np.int64), max(len(found), 1)
            key *= width
            key += codes
        del codes  # not held while the next part is numbered
        size *= width
    return (np.zeros(n, dtype=np.int64) if key is None else key), size


def categorical_of(codes: np.ndarray, words: Sequence[str | None]) -> pd.Categorical:
    """``words[codes]`` as the schema keeps repeated text (:data:`CAT`): the categories are the
    distinct words used, sorted, as objects; code -1 and a None word are missing.  ``words`` may
    repeat a word (two ids with one name) and hold words no code uses."""
    codes = np.asarray(codes, dtype=np.int64)
    used = np.bincount(codes[codes >= 0], minlength=len(words)) > 0
    at = np.flatnonzero(used & np.fromiter((w is not None for w in words), bool, len(words)))
    present = np.empty(len(at), dtype=object)
    present[:] = [words[i] for i in at.tolist()]
    # sorted by an argsort and told apart from their neighbours, not through a set and a dict
    # of the words (a column of 900,000 distinct names took 100 MiB more that way)
    order = np.argsort(present, kind="stable")
    ordered = present[order]
    first = np.ones(len(ordered), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    remap = np.full(len(words) + 1, -1, np.int64)  # the last slot is for code -1
    remap[at[order]] = np.cumsum(first) - 1
    kept = pd.Index(ordered[first], dtype=object)
    return pd.Categorical.from_codes(remap[codes], categories=kept)


def _categorical(series: pd.Series) -> pd.Series:
    """``series`` (text, or a categorical of text) as the schema's categorical (sorted, so two
    readers of one file agree, and ``sort_values`` orders the rows by the text); missing values
    stay missing.  A column already in that form is returned as it is."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy()
        labels = series.cat.categories
        if _in_schema_form(codes, labels):
            return series
    else:
        codes, labels = factorize(series.astype("string"), use_na_sentinel=True)
    words = [str(w) for w in labels]
    out = categorical_of(codes, words)
    already = isinstance(series.dtype, pd.CategoricalDtype) and labels.dtype == object
    if already and list(out.categories) == words:  # sorted, all used: nothing to change
        return series
    return pd.Series(out, copy=False)


def only_texts(labels: pd.Index) -> bool:
    """Whether every label is a ``str`` (not a subclass), looked at without a Python call per
    label (an object array is walked faster than the Index)."""
    return set(map(type, labels.to_numpy())) <= {str}


def sorted_texts(labels: pd.Index) -> bool:
    """Whether ``labels`` (categories: distinct) are ``str`` objects in sorted order, the order
    ``sorted`` gives them: the schema's categories, however many (no hashing)."""
    return bool(labels.dtype == object and labels.is_monotonic_increasing) and only_texts(labels)


def _in_schema_form(codes: np.ndarray, labels: pd.Index) -> bool:
    """Categories already texts, sorted and all used (categories are distinct by construction):
    checked without hashing them (a column of many distinct names)."""
    if not sorted_texts(labels):
        return False
    used = codes[codes >= 0]
    return bool((np.bincount(used, minlength=len(labels)) > 0).all()) if len(labels) else True


def _float_to_int(values: np.ndarray) -> pd.Series:
    """Whole float64 values (NaN missing) as Int64; fractions and values out of the 64-bit range
    raise ValueError as in :func:`_coerce`."""
    missing = np.isnan(values)
    with np.errstate(invalid="ignore"):
        if not ((np.floor(values) == values) | missing).all():  # inf passes: out of range
            raise ValueError("non-integer values")
        if (np.abs(values) >= 2.0**63).any():  # NaN compares False
            raise ValueError("values out of the 64-bit integer range")
    whole = np.where(missing, 0.0, values).astype(np.int64)
    return pd.Series(pd.arrays.IntegerArray(whole, missing))


def validate_all(frames: Mapping[str, pd.DataFrame | None]) -> dict[str, pd.DataFrame]:
    """Validate a mapping of table name -> frame; absent tables become empty frames."""
    unknown = [t for t in frames if t not in TABLES]
    if unknown:
        raise SchemaError(f"unknown tables {unknown}; tables: {', '.join(TABLES)}")
    return {t: validate(t, frames.get(t)) for t in TABLES}
