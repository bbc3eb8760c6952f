"""Nsight Systems ``nsys stats`` report tables -> normalised frames (FORMATS.md §3).

:mod:`parsers.nsys.csv` cuts a file into :class:`Table` objects (raw header and cells, from the
CSV or the column-aligned text output); this module names each table's report, converts its units
and builds the schema's frames.

Reports read (current name, and the 2020.x-2021.x name it replaced, FORMATS.md §3.7):

=========================== ================= =========================================
report                      old name          frame
=========================== ================= =========================================
``cuda_gpu_trace``          ``gputrace``      launches + transfers + devices (§3.2)
``cuda_api_trace``          ``cudaapitrace``  api_calls (§3.6)
``cuda_gpu_kern_sum``       ``gpukernsum``    kernel_summary (§3.3)
``cuda_gpu_kern_gb_sum``    -                 kernel_summary, one row per (kernel, grid, block)
``cuda_api_sum``            ``cudaapisum``    api_summary (§3.5)
``cuda_gpu_mem_time_sum``   ``gpumemtimesum`` transfer_summary times (§3.4)
``cuda_gpu_mem_size_sum``   ``gpumemsizesum`` transfer_summary sizes, merged by kind (§3.4)
=========================== ================= =========================================

A report is named by the ``Processing [...] with [.../reports/<name>.py]`` line (or a text section
title) before it when there is one, else by its header.  Header cells are matched by name, case-
and blank-insensitively (:mod:`parsers.nsys.columns`), with the unit from the parentheses:
``Avg (ns)``, ``Average(ns)``, ``Average`` (2020.x, no unit: the unit of ``Total Time``),
``Start(sec)``, ``Bytes (MB)`` (decimal MB), ``Total (KiB)``.  Throughput columns are not read
(nsys computes them with integer division, §3.2; the transfers table has no throughput column).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from parsers.frames import device_columns, distinct_rows, gpu_activity_frames
from parsers.names import transfer_kind
from parsers.nsys.columns import Columns, Table, header_key
from parsers.source import Source

GPU_TRACE = "cuda_gpu_trace"
API_TRACE = "cuda_api_trace"
KERN_SUM = "cuda_gpu_kern_sum"
KERN_GB_SUM = "cuda_gpu_kern_gb_sum"
API_SUM = "cuda_api_sum"
MEM_TIME = "cuda_gpu_mem_time_sum"
MEM_SIZE = "cuda_gpu_mem_size_sum"
SUPPORTED = (GPU_TRACE, API_TRACE, KERN_SUM, KERN_GB_SUM, API_SUM, MEM_TIME, MEM_SIZE)

#: 2020.x-2021.x report names (FORMATS.md §3.7)
OLD_NAMES = {
    "gputrace": GPU_TRACE,
    "cudaapitrace": API_TRACE,
    "gpukernsum": KERN_SUM,
    "cudaapisum": API_SUM,
    "gpumemtimesum": MEM_TIME,
    "gpumemsizesum": MEM_SIZE,
}
_GPU_TRACE_MARKERS = {"grid_x", "block_x", "regs", "static_smem", "src_kind", "ctx", "strm"}
_MAX_HEADER_CELL = 40  # nsys header cells are short ("Throughput (MB/s)"); prose is longer


def canonical_report(name: str) -> str:
    """``gpukernsum`` -> ``cuda_gpu_kern_sum``; current names are returned as they are."""
    return OLD_NAMES.get(name, name)


def identify(header: Sequence[str]) -> str | None:
    """The report a header belongs to, or None (not a report cuda-advisor reads).

    nvprof's ``"Grid X"``/``"Context"``/``"Correlation_ID"``/``"Total Time"`` (no unit) and
    osrt/nvtx ``Range``/``Style`` headers never match: a GPU trace needs one of nsys's
    abbreviations (GrdX, Strm, Ctx, ...), a time summary a ``Total Time (<unit>)`` column.
    """
    cells = [c.strip() for c in header]
    if not cells or any(not c or len(c) > _MAX_HEADER_CELL for c in cells):
        return None
    units = dict(header_key(c) for c in cells)
    keys = set(units)
    if {"start", "duration", "name"} <= keys:
        if keys & _GPU_TRACE_MARKERS:
            return GPU_TRACE
        if "corr" in keys and keys & {"pid", "tid", "result"}:
            return API_TRACE
        return None
    named = bool(keys & {"operation", "name"})  # 2020.x memory tables say Name
    if {"total", "count"} <= keys and named:
        return MEM_SIZE
    if units.get("total_time") is None:
        return None
    if {"instances", "name"} <= keys:
        return KERN_GB_SUM if "grid_xyz" in keys else KERN_SUM
    if {"calls", "name"} <= keys:
        return API_SUM
    if "count" in keys and named:
        return MEM_TIME
    return None


#: columns each report must have (checked when a ``Processing`` line names the report);
#: "a|b" means either
REQUIRED = {
    GPU_TRACE: ("start", "duration", "name"),
    API_TRACE: ("start", "duration", "name"),
    KERN_SUM: ("total_time", "instances", "name"),
    KERN_GB_SUM: ("total_time", "instances", "name"),
    API_SUM: ("total_time", "calls", "name"),
    MEM_TIME: ("total_time", "count", "operation|name"),
    MEM_SIZE: ("total", "count", "operation|name"),
}


@dataclass
class Frames:
    """The frames a whole file adds up to, with what was assumed along the way."""

    gpu_rows: list[pd.DataFrame] = field(default_factory=list)
    api_calls: list[pd.DataFrame] = field(default_factory=list)
    kernel_summary: list[pd.DataFrame] = field(default_factory=list)
    api_summary: list[pd.DataFrame] = field(default_factory=list)
    mem_time: list[pd.DataFrame] = field(default_factory=list)
    mem_size: list[pd.DataFrame] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The schema tables (``launches``, ``transfers``, ``devices``, ...), in file order."""
        out: dict[str, pd.DataFrame] = {}
        if self.gpu_rows:
            many = len(self.gpu_rows) > 1
            rows = pd.concat(self.gpu_rows, ignore_index=True) if many else self.gpu_rows[0]
            self.gpu_rows.clear()  # the rows live on in ``rows`` only: no second copy at once
            devices = _devices(rows)
            out["launches"], out["transfers"] = gpu_activity_frames(rows)  # consumes ``rows``
            out["devices"] = devices
            del rows
        for name in ("api_calls", "kernel_summary", "api_summary"):
            frames = getattr(self, name)
            if frames:
                out[name] = pd.concat(frames, ignore_index=True)
        summary = _transfer_summary(self.mem_time, self.mem_size)
        if summary is not None:
            out["transfer_summary"] = summary
        return out


def check_required(table: Table, report: str, src: Source) -> None:
    """A table named by a Processing line must have its report's columns."""
    keys = {header_key(c)[0] for c in table.header}
    missing = [k for k in REQUIRED[report] if not keys & set(k.split("|"))]
    if missing:
        raise src.malformed(
            table.header_index,
            f"{report} table lacks the column(s) {', '.join(missing)} "
            f"(header: {', '.join(c.strip() for c in table.header)})",
        )


def add_table(table: Table, report: str, src: Source, frames: Frames) -> bool:
    """Convert ``table`` (a ``report`` table) into rows of ``frames``.

    Returns False when the table is left out (a ``Num Calls`` summary of non-CUDA calls that no
    Processing line names: the OS runtime summary ``osrt_sum`` has cuda_api_sum's header).
    """
    cols = Columns(table, report, src, frames.note)
    return _BUILDERS[report](cols, frames)


def _summary(cols: Columns, calls_key: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": cols.text("name"),
            "calls": cols.integer(calls_key),
            "total_ns": cols.number("total_time", cols.time_factor("total_time")),
            "avg_ns": cols.number("avg", cols.time_factor("avg")),
            "min_ns": cols.number("min", cols.time_factor("min")),
            "max_ns": cols.number("max", cols.time_factor("max")),
            "median_ns": cols.number("med", cols.time_factor("med")),
            "stddev_ns": cols.number("stddev", cols.time_factor("stddev")),
            "time_frac": cols.number("time_pct", 0.01),
        }
    )


def _kern_sum(cols: Columns, frames: Frames) -> bool:
    if cols.report == KERN_GB_SUM:
        frames.note(
            "cuda_gpu_kern_gb_sum: one kernel_summary row per (kernel, grid, block); "
            "GridXYZ/BlockXYZ are not kept"
        )
    frames.kernel_summary.append(_summary(cols, "instances"))
    return True


def _api_sum(cols: Columns, frames: Frames) -> bool:
    names = cols.text("name").dropna()
    if cols.table.report is None and len(names) and not names.str.startswith("cu").any():
        frames.note(
            f"line {cols.table.header_index + 1}: a 'Num Calls' summary without CUDA API names "
            "was not read (the OS runtime summary osrt_sum has this header)"
        )
        return False
    frames.api_summary.append(_summary(cols, "calls"))
    return True


def _kinds(cols: Columns) -> pd.Series:
    names = cols.text("operation" if "operation" in cols.index else "name")
    return names.map(lambda n: (transfer_kind(n) or n) if isinstance(n, str) else None)


def _mem_time(cols: Columns, frames: Frames) -> bool:
    frames.mem_time.append(
        pd.DataFrame(
            {
                "kind": _kinds(cols),
                "calls": cols.integer("count"),
                "total_ns": cols.number("total_time", cols.time_factor("total_time")),
                "avg_ns": cols.number("avg", cols.time_factor("avg")),
                "min_ns": cols.number("min", cols.time_factor("min")),
                "max_ns": cols.number("max", cols.time_factor("max")),
            }
        )
    )
    return True


def _mem_size(cols: Columns, frames: Frames) -> bool:
    why = f"{MEM_SIZE}: sizes have no unit, read as KiB (the 2020.x-2021.x gpumemsizesum unit)"

    def size(key: str) -> pd.Series:
        return cols.number(key, cols.size_factor(key, "KiB", why))

    frames.mem_size.append(
        pd.DataFrame(
            {
                "kind": _kinds(cols),
                "calls": cols.integer("count"),
                "total_bytes": size("total"),
                "avg_bytes": size("avg"),
                "min_bytes": size("min"),
                "max_bytes": size("max"),
            }
        )
    )
    return True


def _gpu_trace(cols: Columns, frames: Frames) -> bool:
    why = f"{GPU_TRACE}: StcSMem/DymSMem/Bytes have no unit, read as bytes (2020.x-2021.x gputrace)"

    def size(key: str) -> pd.Series:
        return cols.number(key, cols.size_factor(key, "B", why))

    if cols.units.get("static_smem") == "MB" and cols.present("static_smem").any():
        frames.note(
            f"{GPU_TRACE}: StcSMem/DymSMem are printed in MB with 3 decimals "
            "(exact to 500 bytes; 0.000 means under 500 bytes)"
        )
    device, device_id = device_columns(cols.text("device"))
    cols.release("device")
    # each column is let go from the parsed rows once converted (a million rows: the parsed
    # floats and the converted columns are not all held at once)
    columns: dict[str, pd.Series] = {"name": cols.text("name")}
    cols.release("name")
    for column, key, value in (
        ("start_ns", "start", lambda: cols.number("start", cols.time_factor("start"))),
        ("duration_ns", "duration", lambda: cols.number("duration", cols.time_factor("duration"))),
        ("correlation_id", "corr", lambda: cols.integer("corr")),
        ("grid_x", "grid_x", lambda: cols.integer("grid_x")),
        ("grid_y", "grid_y", lambda: cols.integer("grid_y")),
        ("grid_z", "grid_z", lambda: cols.integer("grid_z")),
        ("block_x", "block_x", lambda: cols.integer("block_x")),
        ("block_y", "block_y", lambda: cols.integer("block_y")),
        ("block_z", "block_z", lambda: cols.integer("block_z")),
        ("registers_per_thread", "regs", lambda: cols.integer("regs")),
        ("static_shared_bytes", "static_smem", lambda: size("static_smem")),
        ("dynamic_shared_bytes", "dynamic_smem", lambda: size("dynamic_smem")),
        ("bytes", "bytes", lambda: size("bytes")),
    ):
        columns[column] = value()
        cols.release(key)
    columns["device"], columns["device_id"] = device, device_id
    del device, device_id
    for column, key in (("context", "ctx"), ("stream", "strm")):
        columns[column] = cols.integer(key)
        cols.release(key)
    for key in ("src_kind", "dst_kind"):
        columns[key] = cols.text(key)
        cols.release(key)
    frames.gpu_rows.append(pd.DataFrame(columns, copy=False))
    return True


def _api_trace(cols: Columns, frames: Frames) -> bool:
    frames.api_calls.append(
        pd.DataFrame(
            {
                "name": cols.text("name"),
                "start_ns": cols.number("start", cols.time_factor("start")),
                "duration_ns": cols.number("duration", cols.time_factor("duration")),
                "process_id": cols.integer("pid"),
                "thread_id": cols.integer("tid"),
                "correlation_id": cols.integer("corr"),
                "result": cols.integer("result"),
            }
        )
    )
    return True


_BUILDERS: dict[str, Callable[[Columns, Frames], bool]] = {
    GPU_TRACE: _gpu_trace,
    API_TRACE: _api_trace,
    KERN_SUM: _kern_sum,
    KERN_GB_SUM: _kern_sum,
    API_SUM: _api_sum,
    MEM_TIME: _mem_time,
    MEM_SIZE: _mem_size,
}


def _devices(rows: pd.DataFrame) -> pd.DataFrame:
    pairs = distinct_rows(rows, ["device_id", "device"]).dropna(how="all")
    pairs = pairs.sort_values(["device_id", "device"], kind="stable")
    return pd.DataFrame({"device_id": pairs["device_id"], "name": pairs["device"]})


def _transfer_summary(times: list[pd.DataFrame], sizes: list[pd.DataFrame]) -> pd.DataFrame | None:
    """Time and size summaries as one row per kind; a file of several captures pairs the n-th
    time row of a kind with the n-th size row of that kind (one row per kind and capture)."""
    time = pd.concat(times, ignore_index=True) if times else None
    size = pd.concat(sizes, ignore_index=True) if sizes else None
    if time is None or size is None:
        return time if size is None else size
    keys = ["kind", "_n"]
    time = time.assign(_n=time.groupby("kind", dropna=False).cumcount())
    size = size.assign(_n=size.groupby("kind", dropna=False).cumcount())
    merged = time.merge(size, on=keys, how="outer", suffixes=("", "_size"), sort=False)
    order: dict[tuple[object, int], int] = {}
    for key in [*_pairs(time, keys), *_pairs(size, keys)]:
        order.setdefault(key, len(order))
    rank = [order.get(k, len(order)) for k in _pairs(merged, keys)]
    merged = merged.assign(_rank=rank).sort_values("_rank", kind="stable")
    merged["calls"] = merged["calls"].fillna(merged.pop("calls_size"))
    return merged.drop(columns=["_n", "_rank"]).reset_index(drop=True)


def _pairs(frame: pd.DataFrame, keys: list[str]) -> list[tuple[object, int]]:
    return list(zip(frame[keys[0]], frame[keys[1]], strict=True))
