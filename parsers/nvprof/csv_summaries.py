"""The summary tables of nvprof ``--csv`` output -> normalised frames: the default summary
(kernels, transfers, API calls), the Unified Memory table and the API trace.

Each builder takes one :class:`~parsers.nvprof.csv_tables.Block` and converts units per column
with its units row (FORMATS.md §1.2, §1.4); nvprof sizes are binary (KB = 1024 B).  Columns are
found by name; a missing optional column leaves the field missing.
"""

from __future__ import annotations

import math

import pandas as pd

from advisor import schema
from parsers.names import split_device, transfer_kind
from parsers.nvprof.csv_tables import (
    Block,
    integer_column,
    note,
    number_column,
    text_column,
    time_factor,
    unit_factor,
)
from parsers.source import Source
from parsers.units import fits_int, nvprof_cell, parse_number

_UM_KINDS = frozenset({"UM-HtoD", "UM-DtoH", "UM-DtoD", "UM-PtoP", "UM-HtoH"})


def summary_frames(src: Source, block: Block, notes: list[str]) -> dict[str, pd.DataFrame]:
    """Default summary (FORMATS.md §1.2): GPU activities -> kernel_summary / transfer_summary,
    API calls -> api_summary.  Without a Type column (old toolkits) the rows are GPU
    activities unless they follow an ``API calls:`` line."""
    frame = block.frame()
    names = text_column(block, frame, "Name")
    kinds = names.map(lambda n: transfer_kind(n) if isinstance(n, str) else None)
    times = {
        col: number_column(src, block, frame, name, time_factor(src, block, name, notes))
        for col, name in (("total_ns", "Time"), ("avg_ns", "Avg"), ("min_ns", "Min"),
                          ("max_ns", "Max"))
    }  # fmt: skip
    frac = unit_factor(src, block, "Time(%)", "frac") or 0.01
    common = pd.DataFrame(
        {
            "calls": integer_column(src, block, frame, "Calls"),
            **times,
            "time_frac": number_column(src, block, frame, "Time(%)", frac),
        }
    )
    if block.col("Type") is not None:
        kind = text_column(block, frame, "Type")
        is_api = (kind == "API calls").fillna(False)
        is_gpu = (kind == "GPU activities").fillna(False)
    else:
        is_api = pd.Series(block.api_section, index=frame.index)
        is_gpu = ~is_api
    if block.col("Type") is not None:
        other = kind[~(is_api | is_gpu)].dropna()
        for group, n in other.value_counts(sort=False).items():
            note(notes, f"{n} summary rows of the group {group!r} not imported (no table)")
    is_copy = is_gpu & kinds.notna()
    is_kernel = is_gpu & kinds.isna() & names.notna()
    kernels = common[is_kernel].assign(name=names[is_kernel])
    copies = common[is_copy].drop(columns="time_frac").assign(kind=kinds[is_copy])
    api = common[is_api].assign(name=names[is_api])
    return {"kernel_summary": kernels, "transfer_summary": copies, "api_summary": api}


def unified_memory_frame(src: Source, block: Block, notes: list[str]) -> pd.DataFrame:
    """The ``Unified Memory profiling result`` table: one row per direction, units glued to
    the values (``38.890625KB``) -> transfer_summary rows of kind ``UM-HtoD``...; other rows
    (``Gpu page fault groups``) are not transfers and are skipped with a note."""
    desc_col = block.header.index("") if "" in block.header else len(block.header) - 1
    records: list[dict[str, object]] = []
    for fields, line in zip(block.rows, block.lines, strict=True):
        what = fields[desc_col].strip()
        kind = transfer_kind(f"[CUDA Unified Memory memcpy {what}]")
        if kind not in _UM_KINDS:
            note(notes, f"unified memory row {what!r} is not a transfer: skipped")
            continue
        device = split_device(_get(block, fields, "Device"))[0]
        rec: dict[str, object] = {"kind": kind, "device": device}
        count = _get(block, fields, "Count")
        calls = parse_number(count)
        if not (math.isnan(calls) or fits_int(calls)):
            raise src.malformed(line, f"column 'Count': expected a whole number, got {count!r}")
        rec["calls"] = calls
        for col, name in (("avg_bytes", "Avg Size"), ("min_bytes", "Min Size"),
                          ("max_bytes", "Max Size"), ("total_bytes", "Total Size")):  # fmt: skip
            rec[col] = _glued(src, line, _get(block, fields, name), name, "byte")
        total = _get(block, fields, "Total Time")
        value, unit = _glued_any(src, line, total, "Total Time")
        if unit == "" and value != 0 and not math.isnan(value):
            note(notes, "unified memory Total Time printed without a unit: left missing")
            value = math.nan
        elif unit not in ("", "ns"):
            raise src.malformed(line, f"column 'Total Time': expected a time, got {total!r}")
        rec["total_ns"] = value
        records.append(rec)
    return pd.DataFrame.from_records(records) if records else schema.empty("transfer_summary")


def _get(block: Block, fields: list[str], name: str) -> str:
    j = block.col(name)
    return fields[j] if j is not None else ""


def _glued_any(src: Source, line: int, cell: str, name: str) -> tuple[float, str]:
    try:
        return nvprof_cell(cell)
    except ValueError:
        raise src.malformed(line, f"column {name!r}: {cell!r} is not a number") from None


def _glued(src: Source, line: int, cell: str, name: str, base: str) -> float:
    value, unit = _glued_any(src, line, cell, name)
    if unit not in ("", base) or (unit == "" and value != 0 and not math.isnan(value)):
        raise src.malformed(line, f"column {name!r}: expected a {base} value, got {cell!r}")
    return value


def api_trace_frame(src: Source, block: Block, notes: list[str]) -> pd.DataFrame:
    """``--print-api-trace`` (FORMATS.md §1.4) -> api_calls."""
    frame = block.frame()
    start = time_factor(src, block, "Start", notes)
    duration = time_factor(src, block, "Duration", notes)
    return pd.DataFrame(
        {
            "name": text_column(block, frame, "Name"),
            "start_ns": number_column(src, block, frame, "Start", start),
            "duration_ns": number_column(src, block, frame, "Duration", duration),
            "correlation_id": integer_column(src, block, frame, "Correlation_ID"),
        }
    )
