"""Splitting and converting the rows of nvprof's plain-text tables, for :mod:`parsers.nvprof.text`.

nvprof prints its text tables with fixed-width columns (``../shared/docs/FORMATS.md`` §1.3, last
bullet): every column but the last is right-aligned under its header, and the last column
(``Name``) is left-aligned and runs to the end of the line.  Column names are separated by two or
more spaces and may contain single spaces (``Grid Size``, ``Avg Size``).  A cell therefore spans
from the end of the previous header name to the end of its own, which keeps multi-word cells
together (``(32768 1 1)``, ``TITAN Xp (0)``, ``GPU activities:``).

Values carry their unit glued on (``326.63ms``, ``8.0000KB``, ``3.0167GB/s``) except in the old
summaries that print a units row under the header (``%  ms  ms  ms  ms``); both are handled by
:func:`cell_value`.  Metric/event rows (§1.5, §1.6) are split by tokens instead, see
:func:`split_metric_row`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from parsers.frames import metric_record
from parsers.names import parse_dims, split_device, transfer_kind
from parsers.source import Source
from parsers.units import fits_int, is_missing, nvprof_cell, scale_nvprof

NAN = math.nan

_HEADER_CELL = re.compile(r"\S+(?: \S+)*")
_TOKEN = re.compile(r"\S+")
_BARE_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_UNIT_TOKENS = frozenset(
    {"%", "s", "ms", "us", "ns", "B", "KB", "MB", "GB", "TB", "B/s", "KB/s", "MB/s", "GB/s"}
)
#: a utilization level split over two tokens: ``Low`` ``(1)``
_LEVEL_WORD = re.compile(r"^[A-Za-z]+$")
_LEVEL_NUMBER = re.compile(r"^\(\d+\)$")
_UNIT_WORDS = {"ns": "time units (s, ms, us, ns)", "byte": "bytes (B, KB, MB, GB)",
               "frac": "percent"}  # fmt: skip


@dataclass(frozen=True)
class Column:
    """One header name and its character span ``[start, end)`` in the header line."""

    name: str
    start: int
    end: int


def header_columns(line: str) -> list[Column]:
    """The columns of a fixed-width header line (names separated by two or more spaces)."""
    return [Column(m.group(0), m.start(), m.end()) for m in _HEADER_CELL.finditer(line)]


def units_row(line: str, columns: Sequence[Column]) -> dict[str, str] | None:
    """Column name -> unit when ``line`` is a units row (``      %        ms  ...``), else None.

    Each unit is right-aligned under its column, so it belongs to the column whose span ends at or
    after the unit's last character.
    """
    tokens = list(_TOKEN.finditer(line))
    if not tokens or any(t.group(0) not in _UNIT_TOKENS for t in tokens):
        return None
    units: dict[str, str] = {}
    for tok in tokens:
        col = next((c for c in columns if tok.end() <= c.end), None)
        if col is None:
            return None
        units[col.name] = tok.group(0)
    return units


def split_fixed(src: Source, index: int, columns: Sequence[Column]) -> dict[str, str]:
    """Cells of the fixed-width row at 0-based line ``index``, keyed by column name.

    Raises MalformedInput when a value crosses a column boundary or does not end flush with its
    (right-aligned) column: the row does not line up with the header.
    """
    line = src.lines[index].expandtabs().rstrip()
    cells: dict[str, str] = {}
    prev = 0
    for col in columns[:-1]:
        cell = line[prev : col.end]
        if cell.strip():
            flush = col.end <= len(line) and line[col.end - 1] != " "
            crosses = col.end < len(line) and line[col.end] != " "
            if not flush or crosses:
                raise src.malformed(
                    index,
                    f"row does not line up with the table header: the value under column "
                    f"{col.name!r} should end at character {col.end}",
                )
        cells[col.name] = cell.strip()
        prev = col.end
    last = columns[-1]
    if line[prev : last.start].strip():
        raise src.malformed(
            index,
            f"row does not line up with the table header: unexpected text before column "
            f"{last.name!r} (character {last.start + 1})",
        )
    cells[last.name] = line[last.start :].strip()
    return cells


def cell_value(
    src: Source, index: int, column: str, cell: str, unit: str | None, expect: str
) -> float:
    """A numeric cell in the base unit ``expect`` (``ns``, ``byte``, ``frac``); NaN for ``-``.

    ``unit`` is the column's unit from a units row (or implied by its header, ``Time(%)``) and
    applies to bare numbers; otherwise the unit must be glued to the number.  A bare ``0`` needs
    no unit.
    """
    if is_missing(cell):
        return NAN
    text = cell.strip()
    try:
        if _BARE_NUMBER.fullmatch(text):
            number = float(text)
            if unit:
                value, base = scale_nvprof(number, unit)
            elif number == 0:
                return 0.0
            else:
                raise src.malformed(
                    index,
                    f"column {column!r}: {text!r} has no unit and the table has no units row",
                )
        else:
            value, base = nvprof_cell(text)
    except ValueError as exc:
        raise src.malformed(index, f"column {column!r}: cannot read {text!r}: {exc}") from None
    if base != expect:
        raise src.malformed(
            index,
            f"column {column!r}: {text!r} is not a value in {_UNIT_WORDS.get(expect, expect)}",
        )
    return value


def cell_int(src: Source, index: int, column: str, cell: str) -> object:
    """An integer cell (Calls, Regs, Context, Stream, Count); ``pd.NA`` for ``-``."""
    if is_missing(cell):
        return pd.NA
    text = cell.strip()
    if not text.isdecimal() or not fits_int(int(text)):
        raise src.malformed(index, f"column {column!r}: expected a whole number, found {text!r}")
    return int(text)


@dataclass(frozen=True)
class MetricRow:
    """One row of an nvprof text metric/event table, its values not yet converted."""

    invocations: int
    name: str  # the metric / event name, with an instance suffix "(0)" when printed
    values: tuple[str, ...]  # Min, Max, Avg (metrics) or Min, Max, Avg, Total (events)
    instances: tuple[str, ...]  # per-instance values printed as "[ v1 v2 ... ]", else ()


def split_metric_row(src: Source, index: int, n_values: int, described: bool) -> MetricRow:
    """Split a metric row (``Invocations  name  description...  Min  Max  Avg``) or an event row
    (``Invocations  name  Min  Max  Avg  Total``) by tokens.

    The name is one token (plus ``(N)`` for an instance, or ``(80 instances)``); the values are
    the last ``n_values`` cells counted from the right, where a utilization level ``Low (1)`` is
    one cell of two tokens; the description is whatever lies between.  A per-instance list
    ``[ 99.99% 100.00% ... ]`` stands in for the Avg cell.
    """
    line = src.lines[index]
    instances: tuple[str, ...] = ()
    body = line.rstrip()
    if body.endswith("]") and "[" in body:
        cut = body.rindex("[")
        instances = tuple(body[cut + 1 : -1].split())
        body = body[:cut] + " -"  # the list stands in for the Avg cell
    tokens = body.split()
    if len(tokens) < 2 or not tokens[0].isdecimal() or not fits_int(int(tokens[0])):
        raise src.malformed(
            index,
            "expected a metric row: invocation count, metric name, values; found "
            f"{line.strip()[:60]!r}",
        )
    name, pos = tokens[1], 2
    if len(tokens) > 3 and re.fullmatch(r"\(\d+", tokens[2]) and tokens[3] == "instances)":
        pos = 4  # "sm_efficiency (80 instances)": the count is implied by the list
    elif len(tokens) > 2 and _LEVEL_NUMBER.match(tokens[2]):
        name, pos = f"{name} {tokens[2]}", 3  # --aggregate-mode off: "local_load (0)"
    cells: list[str] = []
    end = len(tokens)
    while len(cells) < n_values and end > pos:
        if (
            end - 2 >= pos
            and _LEVEL_NUMBER.match(tokens[end - 1])
            and _LEVEL_WORD.match(tokens[end - 2])
        ):
            cells.append(f"{tokens[end - 2]} {tokens[end - 1]}")
            end -= 2
        else:
            cells.append(tokens[end - 1])
            end -= 1
    if len(cells) < n_values or (described and end == pos) or (not described and end != pos):
        layout = "name, description, Min, Max, Avg" if described else "name, Min, Max, Avg, Total"
        raise src.malformed(index, f"metric row does not have the columns {layout}")
    return MetricRow(int(tokens[0]), name, tuple(reversed(cells)), instances)


def metric_cell(src: Source, index: int, cell: str) -> tuple[float, str]:
    """A metric value with its unit glued on -> (value in base unit, base unit)."""
    try:
        return nvprof_cell(cell)
    except ValueError as exc:
        raise src.malformed(index, f"cannot read metric value {cell!r}: {exc}") from None


# -- row converters --------------------------------------------------------------------------
_API_NAME = re.compile(r"^cu(?:da)?[A-Z]\w*(?:\s+\(.*\))?$")
_API_LAUNCH = re.compile(r"^(\S+)\s+\((.*)\)$")
_CORRELATION = re.compile(r"\[(\d+)\]\s*$")
_UM_KINDS = {"host to device": "UM-HtoD", "device to host": "UM-DtoH",
             "device to device": "UM-DtoD"}  # fmt: skip
#: Unified Memory rows of a GPU trace: copies (size in the ``Unified Memory`` column) and the
#: page-fault events, which are neither kernels nor transfers
_UM_ROW = re.compile(r"^\[Unified Memory .*\]$")
_UM_COPY = re.compile(r"^\[Unified Memory Memcpy ([A-Za-z]+)\]$")


def activity_row(
    src: Source, i: int, cells: dict[str, str], units: dict[str, str]
) -> dict[str, Any]:
    """The launch/transfer fields of a GPU-trace row (``Start``/``Duration`` excepted), keyed by
    the normalised column names that :func:`parsers.frames.gpu_activity_frames` expects."""
    row: dict[str, Any] = {"name": cells["Name"]}
    for col, prefix in (("Grid Size", "grid"), ("Block Size", "block")):
        cell = cells.get(col, "")
        if is_missing(cell):
            continue
        dims = parse_dims(cell)
        if dims is None:
            raise src.malformed(i, f"column {col!r}: expected '(x y z)', found {cell!r}")
        row.update({f"{prefix}_x": dims[0], f"{prefix}_y": dims[1], f"{prefix}_z": dims[2]})
    for col, key in (("SSMem", "static_shared_bytes"), ("DSMem", "dynamic_shared_bytes"),
                     ("Size", "bytes")):  # fmt: skip
        if col in cells:
            row[key] = cell_value(src, i, col, cells[col], units.get(col), "byte")
    for col, key in (("Regs", "registers_per_thread"), ("Context", "context"),
                     ("Stream", "stream"), ("Correlation_ID", "correlation_id")):  # fmt: skip
        if col in cells:
            row[key] = cell_int(src, i, col, cells[col])
    for col, key in (("SrcMemType", "src_kind"), ("DstMemType", "dst_kind")):
        if col in cells and not is_missing(cells[col]):
            row[key] = cells[col]
    if "Device" in cells and not is_missing(cells["Device"]):
        row["device"], row["device_id"] = split_device(cells["Device"])
    um_copy = _UM_COPY.match(cells["Name"])
    if um_copy:  # as in the CSV trace: a UM-<direction> transfer sized by "Unified Memory"
        row["name"] = f"[CUDA Unified Memory memcpy {um_copy.group(1)}]"
        size = cells.get("Unified Memory", "-")
        row["bytes"] = cell_value(
            src, i, "Unified Memory", size, units.get("Unified Memory"), "byte"
        )
    return row


def is_um_event(name: str) -> bool:
    """A Unified Memory page-fault row of a GPU trace (not a kernel, not a transfer)."""
    return bool(_UM_ROW.match(name)) and not _UM_COPY.match(name)


def is_api_row(cells: dict[str, str]) -> bool:
    """An API call in a combined GPU/API trace: no launch configuration, not a transfer."""
    name = cells["Name"]
    return (
        transfer_kind(name) is None
        and is_missing(cells.get("Grid Size", "-"))
        and is_missing(cells.get("Block Size", "-"))
        and bool(_API_NAME.match(name))
    )


def api_call(text: str) -> dict[str, Any]:
    """``cudaLaunchKernel (kern(float*) [112])`` -> name ``cudaLaunchKernel``, correlation 112."""
    m = _API_LAUNCH.match(text)
    if not m:
        return {"name": text}
    corr = _CORRELATION.search(m.group(2))
    found = int(corr.group(1)) if corr else None
    known = found is not None and fits_int(found)
    return {"name": m.group(1), "correlation_id": found if known else None}


def um_row(src: Source, i: int, cells: dict[str, str], device: str | None) -> dict[str, Any]:
    """A ``transfer_summary`` row from a Unified Memory table row (kind ``UM-HtoD`` ...)."""
    name = cells["Name"]
    if not name:
        raise src.malformed(i, "unified memory row has no Name")
    low = " ".join(name.lower().split())
    if not is_missing(cells.get("Device", "")):
        device = split_device(cells["Device"])[0]
    row: dict[str, Any] = {
        "kind": _UM_KINDS.get(low, "UM-" + low.replace(" ", "-")),
        "device": device,
        "calls": cell_int(src, i, "Count", cells["Count"]),
        "total_ns": cell_value(src, i, "Total Time", cells["Total Time"], None, "ns"),
    }
    for col, key in (("Avg Size", "avg_bytes"), ("Min Size", "min_bytes"),
                     ("Max Size", "max_bytes"), ("Total Size", "total_bytes")):  # fmt: skip
        row[key] = cell_value(src, i, col, cells[col], None, "byte")
    return row


def metric_row(
    src: Source,
    i: int,
    row: MetricRow,
    *,
    section: str,
    kernel: str,
    device: tuple[str | None, int | None],
) -> dict[str, Any]:
    """A ``metrics`` row: value = Avg (the mean of the per-instance list when one is printed),
    minimum = Min, maximum = Max, total = Total (events); ``text`` keeps a level's label."""
    cells = [metric_cell(src, i, c) for c in row.values]
    text: str | None = None
    if row.instances:
        per_instance = [metric_cell(src, i, c) for c in row.instances]
        numbers = [v for v, _ in per_instance if not math.isnan(v)]
        cells[2] = (sum(numbers) / len(numbers) if numbers else NAN,
                    next((u for _, u in per_instance if u), ""))  # fmt: skip
    elif math.isnan(cells[2][0]) or cells[2][1] == "level":
        text = row.values[2]
    units = {u for (v, u) in cells if u and not math.isnan(v)}
    if len(units) > 1:
        raise src.malformed(i, f"metric {row.name!r}: Min, Max and Avg have different units")
    return metric_record(
        tool="nvprof",
        tool_metric=row.name,
        value=cells[2][0],
        unit=units.pop() if units else "",
        kernel=kernel,
        device=device[0],
        device_id=device[1],
        section=section,
        minimum=cells[0][0],
        maximum=cells[1][0],
        total=cells[3][0] if len(cells) > 3 else NAN,
        invocations=row.invocations,
        text=text,
    )
