"""Launches and devices of an Nsight Compute export, assembled from its metrics rows.

Whatever the layout (details page, raw page), a launch's duration, registers and shared memory
are metrics of that launch: ``gpu_time_duration`` (``Duration`` or ``gpu__time_duration.sum``),
``registers_per_thread``, ``static/dynamic_shared_bytes_per_block``; grid and block come from
the printed ``Grid Size``/``Block Size`` tuples (2023+) or the ``launch__grid_dim_x``... metrics,
else from the scalar ``Grid Size``/``Block Size`` rows of Launch Statistics as (total, 1, 1);
device facts from the ``device__attribute_*`` metrics of the raw page (FORMATS.md §2.3), the
memory bandwidth computed as for reports (2 x memory clock x bus width / 8), the per-SM limits
(warps, threads, blocks, registers, shared memory) from the
``device__attribute_max_*_per_multiprocessor`` metrics (:data:`SM_LIMIT_ATTRIBUTES`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from parsers.names import compute_capability, parse_dims, split_device
from parsers.ncu.values import id_number, int_or_na

T = TypeVar("T")

#: launches column <- canonical metric
_FROM_METRICS = {
    "duration_ns": "gpu_time_duration",
    "registers_per_thread": "registers_per_thread",
    "static_shared_bytes": "static_shared_bytes_per_block",
    "dynamic_shared_bytes": "dynamic_shared_bytes_per_block",
}
#: grid / block -> the canonical metric of its total size (the scalar ``Grid Size`` and
#: ``Block Size`` rows of Launch Statistics before 2023), used when no dimensions are printed
_TOTALS = {"grid": "grid_size", "block": "block_size"}
#: launches column <- (printed identification column, raw-page metric)
_ID_COLUMNS = {
    "context": ("Context", "launch__context_id"),
    "stream": ("Stream", "launch__stream_id"),
}


#: raw-page metric columns the launches and devices are built from (read whatever is selected)
LAUNCH_TOOL_METRICS: tuple[str, ...] = (
    *(t for _, t in _ID_COLUMNS.values()),
    "launch__device_id",
    *(f"launch__{p}_dim_{a}" for p in ("grid", "block") for a in "xyz"),
)


def each_distinct(cells: pd.Series, convert: Callable[[Any], T]) -> list[T]:
    """``[convert(c) for c in cells]``, calling ``convert`` once per distinct cell (a column of
    ten thousand launches repeats a few dozen texts)."""
    codes, uniq = pd.factorize(cells, use_na_sentinel=True)
    if (codes < 0).any():  # missing cells: each as it is
        return [convert(c) for c in cells]
    table = [convert(u) for u in uniq]
    return [table[c] for c in codes.tolist()]


class Facts(Protocol):
    """Metric values read without a metrics frame (the raw page's grid, parsers.ncu.melt)."""

    def first(
        self, key: str, names: Iterable[str], n: int, column: str = "value"
    ) -> dict[str, pd.Series]: ...


def first_values(
    metrics: pd.DataFrame | Facts,
    key: str,
    names: Iterable[str],
    n: int,
    column: str = "value",
) -> dict[str, pd.Series]:
    """name -> Series over launch ids 0..n-1 of the first non-missing ``column`` of the metrics
    rows whose ``key`` column (``metric`` or ``tool_metric``) is that name."""
    if not isinstance(metrics, pd.DataFrame):
        return metrics.first(key, names, n, column)
    wanted = list(names)
    dtype = float if column == "value" else object
    keys, ids = metrics[key], metrics["launch_id"]
    if isinstance(keys.dtype, pd.CategoricalDtype) and ids.dtype.kind in "iu":
        return _first_by_codes(keys, ids.to_numpy(), metrics[column], wanted, n, dtype)
    rows = metrics[["launch_id", key, column]]
    present = rows[
        rows[key].isin(wanted) & rows[column].notna() & rows["launch_id"].notna()
    ].drop_duplicates(["launch_id", key])
    out: dict[str, pd.Series] = {}
    for name in wanted:
        rows = present[present[key] == name]
        values = pd.Series(rows[column].to_numpy(), index=rows["launch_id"].astype(int))
        out[name] = values.reindex(range(n)).astype(dtype).reset_index(drop=True)
    return out


def _first_by_codes(
    keys: pd.Series, ids: np.ndarray, cells: pd.Series, wanted: list[str], n: int, dtype: type
) -> dict[str, pd.Series]:
    """:func:`first_values` of a frame whose ``key`` column is categorical and whose launch ids
    are integers (a details page read by columns): the rows of each wanted name found on the
    category codes, the first row of each launch by :func:`numpy.unique` (the same rows, in the
    same order, as ``drop_duplicates`` keeps); launches without a value are NaN."""
    codes = keys.cat.codes.to_numpy()
    position = {str(w): i for i, w in enumerate(keys.cat.categories)}
    present = cells.notna().to_numpy()
    values = cells.to_numpy(dtype=dtype)
    out: dict[str, pd.Series] = {}
    for name in wanted:
        code = position.get(name)
        rows = np.zeros(0, dtype=np.int64) if code is None else np.flatnonzero(codes == code)
        rows = rows[present[rows] & (ids[rows] >= 0) & (ids[rows] < n)]
        launch, first = np.unique(ids[rows], return_index=True)
        column: np.ndarray = np.full(n, np.nan, dtype=dtype)
        column[launch] = values[rows[first]]
        out[name] = pd.Series(column, dtype=dtype)
    return out


def device_ids(rows: pd.DataFrame) -> pd.Series:
    """The device index of each row from a printed ``Device`` column ("0", "Tesla K40c (0)")."""
    if "Device" not in rows.columns:
        return pd.Series([pd.NA] * len(rows), dtype="Int64")
    return pd.Series(
        each_distinct(rows["Device"], lambda c: split_device(str(c))[1]), dtype="Int64"
    )


def launch_rows(ids: pd.DataFrame, metrics: pd.DataFrame | Facts) -> pd.DataFrame:
    """One launches row per row of ``ids`` (the printed identification columns, in launch-id
    order 0..n-1) completed from the launch's metrics rows."""
    ids = ids.reset_index(drop=True)
    n = len(ids)
    by_tool = first_values(metrics, "tool_metric", LAUNCH_TOOL_METRICS, n)
    by_metric = first_values(metrics, "metric", (*_FROM_METRICS.values(), *_TOTALS.values()), n)
    out = pd.DataFrame({"launch_id": np.arange(n, dtype="int64")})
    out["name"] = ids["Kernel Name"].astype(object) if "Kernel Name" in ids else None
    out["device_id"] = device_ids(ids).fillna(int_or_na(by_tool["launch__device_id"]))
    for column, (printed, tool) in _ID_COLUMNS.items():
        out[column] = int_or_na(_numbers(ids, printed, n).fillna(by_tool[tool]))
    for prefix, printed in (("grid", "Grid Size"), ("block", "Block Size")):
        dims = (
            each_distinct(ids[printed], lambda c: parse_dims(str(c)))
            if printed in ids
            else [None] * n
        )
        for axis, name in enumerate("xyz"):
            values = pd.Series([d[axis] if d else np.nan for d in dims], dtype=float)
            values = values.fillna(by_tool[f"launch__{prefix}_dim_{name}"])
            if name == "x":  # older versions print the total only: (total, 1, 1)
                values = values.fillna(by_metric[_TOTALS[prefix]])
            else:
                total_only = by_metric[_TOTALS[prefix]].notna() & out[f"{prefix}_x"].notna()
                values = values.where(values.notna() | ~total_only, 1.0)
            out[f"{prefix}_{name}"] = int_or_na(values)
    for column, metric in _FROM_METRICS.items():
        out[column] = by_metric[metric].to_numpy()
    out["registers_per_thread"] = int_or_na(out["registers_per_thread"])
    return out


def _numbers(ids: pd.DataFrame, column: str, n: int) -> pd.Series:
    if column not in ids:
        return pd.Series(np.nan, index=range(n), dtype=float)
    return pd.Series(each_distinct(ids[column], id_number), dtype=float)


def build_devices(
    device_id: pd.Series, cc: pd.Series | None, metrics: pd.DataFrame | Facts
) -> pd.DataFrame:
    """The ``devices`` rows of one table.

    ``device_id`` and ``cc`` (the printed ``CC`` column, may be None) hold one entry per launch
    (position = launch id) or per summary group; facts come from the ``device__attribute_*``
    metrics of the same launch where the table has them (raw page).  One row per device id,
    the first value seen for each column.
    """
    n = len(device_id)
    value = first_values(metrics, "tool_metric", _ATTRIBUTES, n)
    name = first_values(metrics, "tool_metric", [_NAME], n, column="text")[_NAME]
    sm_count = first_values(metrics, "metric", [_SM_COUNT], n)[_SM_COUNT]
    major = value["device__attribute_compute_capability_major"]
    minor = value["device__attribute_compute_capability_minor"]
    pairs = pd.MultiIndex.from_arrays([major, minor])  # a few distinct (major, minor) pairs
    codes, distinct = pd.factorize(pairs)
    from_distinct = [compute_capability(a, b) for a, b in distinct] + [None]
    from_attrs = pd.Series([from_distinct[c] for c in codes.tolist()], index=range(n), dtype=object)
    memory_hz = value["device__attribute_memory_clock_rate"].fillna(
        value["device__attribute_max_mem_frequency_khz"]
    )
    printed = pd.Series([None] * n, dtype=object)
    if cc is not None:
        printed = pd.Series(
            each_distinct(cc.astype(str), lambda c: c.strip() or None), dtype=object
        )
    frame = pd.DataFrame(
        {
            "device_id": device_id.reset_index(drop=True).astype("Int64"),
            "name": name,
            "compute_capability": printed.where(printed.notna(), from_attrs),
            "sm_count": sm_count,
            "sm_clock_hz": value["device__attribute_clock_rate"].fillna(
                value["device__attribute_max_gpu_frequency_khz"]
            ),
            "memory_clock_hz": memory_hz,
            # double data rate x bus width, as for reports (parsers.ncu.rep_frames)
            "memory_bandwidth_bytes_per_s": 2
            * memory_hz
            * value["device__attribute_global_memory_bus_width"]
            / 8,
            "l2_bytes": value["device__attribute_l2_cache_size"],
            **{column: value[attribute] for column, attribute in SM_LIMIT_ATTRIBUTES.items()},
        }
    )
    frame = frame[frame["device_id"].notna()]
    if not len(frame):
        return frame
    firsts = frame.groupby("device_id", sort=True).first().reset_index()
    for column in ("sm_count", *_INT_LIMITS):
        firsts[column] = int_or_na(firsts[column])
    return firsts


_NAME = "device__attribute_display_name"
_SM_COUNT = "sm_count"
#: devices column <- the device attribute of the per-SM limit (older reports lack
#: ``max_blocks_per_multiprocessor``: the Volta and Pascal ones of 2019.x-2020.2 read here)
SM_LIMIT_ATTRIBUTES: dict[str, str] = {
    "max_warps_per_sm": "device__attribute_max_warps_per_multiprocessor",
    "max_threads_per_sm": "device__attribute_max_threads_per_multiprocessor",
    "max_blocks_per_sm": "device__attribute_max_blocks_per_multiprocessor",
    "registers_per_sm": "device__attribute_max_registers_per_multiprocessor",
    "shared_bytes_per_sm": "device__attribute_max_shared_memory_per_multiprocessor",
}
_INT_LIMITS = ("max_warps_per_sm", "max_threads_per_sm", "max_blocks_per_sm", "registers_per_sm")
_ATTRIBUTES: tuple[str, ...] = (
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
    "device__attribute_clock_rate",
    "device__attribute_max_gpu_frequency_khz",
    "device__attribute_memory_clock_rate",
    "device__attribute_max_mem_frequency_khz",
    "device__attribute_l2_cache_size",
    "device__attribute_global_memory_bus_width",
    *SM_LIMIT_ATTRIBUTES.values(),
)

#: raw-page metric columns the devices are built from
DEVICE_TOOL_METRICS: tuple[str, ...] = (_NAME, *_ATTRIBUTES)
