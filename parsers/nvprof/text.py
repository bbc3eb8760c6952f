"""nvprof plain-text output (no ``--csv``), the tables users paste from a terminal.

Format ``nvprof-text``.  Layouts (``../shared/docs/FORMATS.md`` §1.2-§1.6 describe the CSV twins of
these tables; §1.3, last bullet, the text trace):

* **Summary, CUDA 9+** (default mode, ``--print-gpu-summary``, ``--print-api-summary``):
  ``Type  Time(%)  Time  Calls  Avg  Min  Max  Name``; the group label (``GPU activities:``,
  ``API calls:``, ``OpenACC (excl):``) is printed on the first row of each group only.  Units are
  glued to the numbers and vary within a column (``102.599s``, ``259.97us``, ``864ns``).
  -> ``kernel_summary``, ``transfer_summary`` (memcpy/memset rows), ``api_summary``.  Groups with
  no normalised table (OpenACC, OpenMP) are counted in a provenance note.
* **Summary, CUDA 5-8**: the same without the ``Type`` column, one table under
  ``==PID== Profiling result:`` (GPU activities) and one under ``==PID== API calls:``.  CUDA 5.x
  prints a units row under the header (``%  ms  ms  ms  ms``) and plain numbers.
* **Unified Memory** (``==PID== Unified Memory profiling result:``): ``Device "TITAN Xp (0)"``, then
  ``Count  Avg Size  Min Size  Max Size  Total Size  Total Time  Name`` (a ``Device`` column in some
  versions), ``-`` placeholders, trailers ``Total CPU Page faults: 155``.  -> ``transfer_summary``
  with kinds ``UM-HtoD``, ``UM-DtoH``, ``UM-gpu-page-fault-groups``, ``UM-cpu-page-faults`` ...
* **GPU trace** (``--print-gpu-trace``): ``Start  Duration  Grid Size  Block Size  Regs*  SSMem*
  DSMem*  Size  Throughput  [SrcMemType  DstMemType]  Device  Context  Stream  [Src Dev ...]  Name``
  (the column set varies and is read by name), grid/block as ``(32768 1 1)``; the legend lines
  after the table (``Regs: Number of registers ...``) are ignored.  -> ``launches``, ``transfers``.
  With unified memory (``Unified Memory``, ``Virtual Address`` columns), as in the CSV trace:
  ``[Unified Memory Memcpy HtoD]`` rows are ``UM-HtoD`` transfers sized by ``Unified Memory``;
  page-fault rows are neither kernels nor transfers and are skipped with a note.
* **API trace** (``--print-api-trace``): ``Start  Duration  Name`` with names such as
  ``cudaLaunchKernel (kernel(float*) [112])``; the bracketed number is the correlation id.
  -> ``api_calls``.
* **Metrics / events** (``--metrics``, ``--events``): ``==PID== Metric result:``, the header
  ``Invocations  Metric Name  Metric Description  Min  Max  Avg`` (events: ``Invocations  Event Name
  Min  Max  Avg  Total``), ``Device "..."`` and ``    Kernel: <name>`` group lines.  Excerpts that
  start at a ``Kernel:`` line with no header are read with the metric layout (provenance note).
  -> ``metrics`` (value = Avg, minimum, maximum, total, invocations).

Several runs appended to one file (one ``==PID== NVPROF is profiling process ..., command: ...``
block each) are read in file order; rows of different runs are never merged, and a provenance note
per run names its command line and the rows it contributed.  Kernel names are kept as printed
(including names an author truncated at a fixed width).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from advisor.errors import MalformedInput
from advisor.profile import Profile, Provenance
from parsers.frames import gpu_activity_frames
from parsers.names import split_device, transfer_kind
from parsers.nvprof.text_rows import (
    Column,
    activity_row,
    api_call,
    cell_int,
    cell_value,
    header_columns,
    is_api_row,
    is_um_event,
    metric_row,
    split_fixed,
    split_metric_row,
    um_row,
    units_row,
)
from parsers.nvprof.text_trace import FastTrace, read_trace
from parsers.registry import Selection, TextFormat, register
from parsers.source import Source, is_preamble

FORMAT = "nvprof-text"

_SUMMARY_HEADER = re.compile(
    r"^\s*(?:Type\s+)?Time\(%\)\s+Time\s+Calls\s+Avg\s+Min\s+Max\s+Name\s*$"
)
_TRACE_HEADER = re.compile(r"^\s*Start\s+Duration\s+(?:\S.*\s)?Name\s*$")
_METRIC_HEADER = re.compile(
    r"^\s*Invocations\s+Metric Name\s+Metric Description\s+Min\s+Max\s+Avg\s*$"
)
_EVENT_HEADER = re.compile(r"^\s*Invocations\s+Event Name\s+Min\s+Max\s+Avg\s+Total\s*$")
_UM_HEADER = re.compile(
    r"^\s*(?:Device\s+)?Count\s+Avg Size\s+Min Size\s+Max Size\s+Total Size\s+Total Time"
    r"\s+Name\s*$"
)
_HEADERS = (_SUMMARY_HEADER, _TRACE_HEADER, _METRIC_HEADER, _EVENT_HEADER, _UM_HEADER)
_DEVICE_LINE = re.compile(r'^\s*Device\s+"(.+)"\s*$')
_KERNEL_LINE = re.compile(r"^\s*Kernel:\s+(\S.*?)\s*$")
#: a metric row: invocations, a lower-case metric name, then at least three more tokens
_METRIC_ROW = re.compile(r"^\s*\d+\s+[a-z][a-z0-9_]*(?:\s+\S+){3,}\s*$")
_TOOL_LINE = re.compile(r"^\s*(?:==\d+==|========)\s*(.*?)\s*$")
_RUN_START = re.compile(r"NVPROF is profiling process (\d+), command: (.*)$")
_UM_TRAILER = re.compile(r"^\s*Total ([A-Za-z ]+?):\s*(\d+)\s*$")
_UM_COLUMNS = ("Count", "Avg Size", "Min Size", "Max Size", "Total Size", "Total Time", "Name")
_LEGEND = re.compile(r"^\s*(?:Regs|SSMem|DSMem|SrcMemType|DstMemType|Src Dev|Dst Dev)\*?:\s")
_TABLES = ("kernel_summary", "transfer_summary", "api_summary", "trace", "api_calls", "metrics")


def sniff_nvprof_text(head: Sequence[str]) -> bool:
    """True when a line is one of nvprof's text table headers, or a ``Kernel:`` line followed by
    a metric row (a headerless metric excerpt).  Quoted CSV headers never match."""
    for i, line in enumerate(head):
        if '"' in line:
            continue
        if any(p.match(line) for p in _HEADERS):
            return True
        if _KERNEL_LINE.match(line) and _metric_row_follows(head, i):
            return True
    return False


def _metric_row_follows(lines: Sequence[str], index: int) -> bool:
    nxt = next((ln for ln in lines[index + 1 : index + 4] if ln.strip()), "")
    return bool(_METRIC_ROW.match(nxt))


def _ends_table(line: str) -> bool:
    return not line.strip() or is_preamble(line)


@dataclass
class _Run:
    """One profiled process of a file (a file may append several runs)."""

    pid: str | None
    command: str | None
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {t: [] for t in _TABLES})
    errors: list[str] = field(default_factory=list)
    #: the GPU-trace rows when they were read by columns (:mod:`parsers.nvprof.text_trace`)
    trace: pd.DataFrame | None = None

    def empty(self) -> bool:
        return not any(self.rows.values()) and self.trace is None


class _ReadByLines(Exception):
    """The table read by columns does not fit where the line reader meets it: read the whole
    file line by line instead."""


class _Reader:
    """A line-by-line state machine over one file; see the module docstring for the layouts."""

    def __init__(self, src: Source, fast: FastTrace | None = None) -> None:
        self.src = src
        #: a GPU-trace table already read by columns: its rows are blank in ``src``
        self.fast = fast
        self.fast_used = False
        # (the lines of a fast path's file are expanded already, a million blank rows among them)
        self.lines = src.lines if fast is not None else [ln.expandtabs() for ln in src.lines]
        self.runs: list[_Run] = [_Run(None, None)]
        self.modes: list[str] = []
        self.notes: list[str] = []
        self.group = "GPU activities"  # summary group of a table without a Type column
        self.device: tuple[str | None, int | None] = (None, None)
        self.skipped: dict[str, int] = {}
        self.instance_metrics: dict[str, int] = {}
        self.um_events: dict[str, int] = {}  # trace rows skipped: UM page faults

    # -- driver -------------------------------------------------------------------------------
    def read(self) -> Profile:
        i = 0
        while i < len(self.lines):
            line = self.lines[i]
            if _TOOL_LINE.match(line):
                self._tool_line(line)
                i += 1
            elif _SUMMARY_HEADER.match(line):
                i = self._summary(i)
            elif _TRACE_HEADER.match(line):
                i = self._trace(i)
            elif _UM_HEADER.match(line):
                i = self._unified_memory(i)
            elif _METRIC_HEADER.match(line) or _EVENT_HEADER.match(line):
                i = self._metrics(i)
            elif device := _DEVICE_LINE.match(line):
                self.device = split_device(device.group(1))
                i += 1
            elif _KERNEL_LINE.match(line) and _metric_row_follows(self.lines, i):
                self.notes.append(
                    f"metric rows at line {i + 1} have no column header: read with the nvprof "
                    "metric layout Invocations, Metric Name, Metric Description, Min, Max, Avg"
                )
                i = self._metrics(i)
            else:
                i += 1  # application output, warnings, "No kernels were profiled.", legends
        if self.fast is not None and not self.fast_used:
            raise _ReadByLines  # the table's rows are blank here: they were never read
        return self._profile()

    def _tool_line(self, line: str) -> None:
        tool = _TOOL_LINE.match(line)
        text = tool.group(1) if tool else line.strip()
        run = _RUN_START.search(text)
        if run:
            if self.runs[-1].pid is None and self.runs[-1].empty():
                self.runs.pop()
            self.runs.append(_Run(run.group(1), run.group(2).strip()))
            self.group, self.device = "GPU activities", (None, None)
        elif text.startswith("Profiling result"):
            self.group = "GPU activities"
        elif text.startswith("API calls"):
            self.group = "API calls"
        elif text.startswith("Error"):
            self.runs[-1].errors.append(text)

    def _columns(self, index: int, required: Sequence[str]) -> list[Column]:
        """The columns of the header at line ``index``; a header whose names run together (one
        space apart) lacks some of ``required`` and is malformed."""
        columns = header_columns(self.lines[index])
        missing = [n for n in required if n not in {c.name for c in columns}]
        if missing:
            raise self.src.malformed(
                index,
                f"table header without the column(s) {', '.join(map(repr, missing))} "
                "(column names are two or more spaces apart)",
            )
        return columns

    def _add(self, table: str, row: dict[str, Any]) -> None:
        if table == "trace" and self.runs[-1].trace is not None:
            raise _ReadByLines  # rows of a second trace table in the run: kept in file order
        self.runs[-1].rows[table].append(row)

    def _mode(self, mode: str) -> None:
        if mode not in self.modes:
            self.modes.append(mode)

    # -- summary ------------------------------------------------------------------------------
    def _summary(self, header: int) -> int:
        columns = self._columns(header, ("Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"))
        i = header + 1
        units = units_row(self.lines[i], columns) if i < len(self.lines) else None
        if units is not None:
            i += 1
        units = units or {}
        self._mode("summary")
        group = self.group
        while i < len(self.lines) and not _ends_table(self.lines[i]):
            cells = split_fixed(self.src, i, columns)
            label = cells.get("Type", "")
            if label:
                group = label.rstrip(":").strip()
            self._summary_row(i, group, cells, units)
            i += 1
        return i

    def _summary_row(
        self, i: int, group: str, cells: dict[str, str], units: dict[str, str]
    ) -> None:
        name = cells["Name"]
        if not name:
            raise self.src.malformed(i, "summary row has no Name")
        rec: dict[str, Any] = {"calls": cell_int(self.src, i, "Calls", cells["Calls"])}
        for col, key in (("Time", "total_ns"), ("Avg", "avg_ns"), ("Min", "min_ns"),
                         ("Max", "max_ns")):  # fmt: skip
            rec[key] = cell_value(self.src, i, col, cells[col], units.get(col), "ns")
        frac = cell_value(
            self.src, i, "Time(%)", cells["Time(%)"], units.get("Time(%)", "%"), "frac"
        )
        if group.lower() == "gpu activities":
            kind = transfer_kind(name)
            if kind is None:
                self._add("kernel_summary", {"name": name, "time_frac": frac, **rec})
            else:
                self._add("transfer_summary", {"kind": kind, **rec})
        elif group.lower() == "api calls":
            self._add("api_summary", {"name": name, "time_frac": frac, **rec})
        else:
            self.skipped[group] = self.skipped.get(group, 0) + 1

    # -- GPU / API trace ----------------------------------------------------------------------
    def _trace(self, header: int) -> int:
        if self.fast is not None and header == self.fast.header:
            run = self.runs[-1]
            if run.rows["trace"] or run.trace is not None:
                raise _ReadByLines
            self._mode("gpu-trace")
            run.trace, self.fast_used = self.fast.rows, True
            self.fast.rows = pd.DataFrame()  # held once: the frames are built from run.trace
            return self.fast.end
        columns = self._columns(header, ("Start", "Duration", "Name"))
        api_only = {c.name for c in columns} <= {"Start", "Duration", "Name", "Correlation_ID"}
        self._mode("api-trace" if api_only else "gpu-trace")
        i = header + 1
        units = units_row(self.lines[i], columns) if i < len(self.lines) else None
        if units is not None:
            i += 1
        units = units or {}
        while i < len(self.lines) and not (
            _ends_table(self.lines[i]) or _LEGEND.match(self.lines[i])
        ):
            cells = {k.rstrip("*"): v for k, v in split_fixed(self.src, i, columns).items()}
            if not cells["Name"]:
                raise self.src.malformed(i, "trace row has no Name")
            if is_um_event(cells["Name"]):
                self.um_events[cells["Name"]] = self.um_events.get(cells["Name"], 0) + 1
                i += 1
                continue
            row: dict[str, Any] = {
                "start_ns": cell_value(
                    self.src, i, "Start", cells["Start"], units.get("Start"), "ns"
                ),
                "duration_ns": cell_value(
                    self.src, i, "Duration", cells["Duration"], units.get("Duration"), "ns"
                ),
            }
            if api_only or is_api_row(cells):
                self._add("api_calls", {**row, **api_call(cells["Name"])})
                self._mode("api-trace")
            else:
                self._add("trace", {**row, **activity_row(self.src, i, cells, units)})
            i += 1
        return i

    # -- unified memory -----------------------------------------------------------------------
    def _unified_memory(self, header: int) -> int:
        columns = self._columns(header, _UM_COLUMNS)
        self._mode("unified-memory")
        src, i = self.src, header + 1
        while i < len(self.lines) and not _ends_table(self.lines[i]):
            line = self.lines[i]
            trailer = _UM_TRAILER.match(line)
            device = _DEVICE_LINE.match(line)
            if _UM_HEADER.match(line):
                columns = self._columns(i, _UM_COLUMNS)
            elif device:
                self.device = split_device(device.group(1))
            elif trailer:
                kind = "UM-" + "-".join(trailer.group(1).lower().split())
                calls = cell_int(src, i, trailer.group(1), trailer.group(2))
                self._add("transfer_summary", {
                    "kind": kind, "device": self.device[0], "calls": calls
                })  # fmt: skip
            else:
                cells = split_fixed(src, i, columns)
                self._add("transfer_summary", um_row(src, i, cells, self.device[0]))
            i += 1
        return i

    # -- metrics / events ---------------------------------------------------------------------
    def _metrics(self, start: int) -> int:
        kind = "event" if _EVENT_HEADER.match(self.lines[start]) else "metric"
        self._mode(kind + "s")
        self.device = (None, None)
        kernel: str | None = None
        i = start
        while i < len(self.lines) and not _ends_table(self.lines[i]):
            line = self.lines[i]
            device, kernel_line = _DEVICE_LINE.match(line), _KERNEL_LINE.match(line)
            if _METRIC_HEADER.match(line) or _EVENT_HEADER.match(line):
                kind = "event" if _EVENT_HEADER.match(line) else "metric"
            elif device:
                self.device = split_device(device.group(1))
            elif kernel_line:
                kernel = kernel_line.group(1)
            elif kernel is None:
                raise self.src.malformed(i, "metric row before any 'Kernel: <name>' line")
            else:
                row = split_metric_row(self.src, i, 3 if kind == "metric" else 4, kind == "metric")
                if row.instances:
                    self.instance_metrics[row.name] = len(row.instances)
                self._add(
                    "metrics",
                    metric_row(self.src, i, row, section=kind, kernel=kernel, device=self.device),
                )
            i += 1
        return i

    # -- result -------------------------------------------------------------------------------
    def _profile(self) -> Profile:
        out: dict[str, list[pd.DataFrame]] = {t: [] for t in (*_TABLES, "launches", "transfers")}
        counts: dict[str, int] = dict.fromkeys(out, 0)
        run_notes: list[str] = []
        for run in self.runs:
            frames = {t: pd.DataFrame(run.rows[t]) for t in _TABLES if t != "trace"}
            if run.trace is not None:
                frames["launches"], frames["transfers"] = gpu_activity_frames(run.trace)
                run.trace = None
            elif run.rows["trace"]:
                frames["launches"], frames["transfers"] = gpu_activity_frames(
                    pd.DataFrame(run.rows["trace"])
                )
            parts = []
            for table, frame in frames.items():
                if len(frame):
                    out[table].append(frame)
                    parts.append(f"{table} rows {counts[table]}-{counts[table] + len(frame) - 1}")
                    counts[table] += len(frame)
            if run.pid is not None:
                said = f"; the profiler said: {run.errors[0]}" if run.errors else ""
                run_notes.append(
                    f"(process {run.pid}, command: {run.command}): "
                    f"{', '.join(parts) or 'no rows'}{said}"
                )
        if len(run_notes) > 1:
            self.notes.extend(
                f"run {k} of {len(run_notes)} {note}" for k, note in enumerate(run_notes, 1)
            )
        for group, n in self.skipped.items():
            self.notes.append(f"{n} summary rows of the group {group!r} not imported (no table)")
        if self.um_events:
            what = ", ".join(f"{n} {name}" for name, n in sorted(self.um_events.items()))
            self.notes.append(f"rows that are not kernels or transfers skipped: {what}")
        for name, n in self.instance_metrics.items():
            self.notes.append(f"{name}: printed per instance ({n} instances); value is their mean")
        tables = {t: _concat(fs) for t, fs in out.items() if t != "trace"}
        if len(tables["launches"]):
            tables["launches"]["launch_id"] = range(len(tables["launches"]))
        provenance = Provenance(
            path=self.src.path,
            format=FORMAT,
            profiler="nvprof",
            modes=tuple(self.modes),
            notes=tuple(self.notes),
        )
        return Profile.of((provenance,), tables)


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def read_nvprof_text(src: Source, selected: Selection) -> Profile:
    """Read one nvprof text output file into a Profile (see the module docstring); ``selected``
    (the registry's metric selection) is not used: :func:`parsers.read` applies it.

    A big GPU-trace table is read by columns (:mod:`parsers.nvprof.text_trace`) and the rest of
    the file line by line; whenever that cannot be shown to read the file as the line reader
    does, the whole file is read line by line."""
    fast = read_trace(src)
    if fast is not None:
        reader = _Reader(Source(src.path, fast.lines, src.encoding_note), fast)
        try:
            return reader.read()
        except _ReadByLines:
            pass
        except MalformedInput:
            if reader.fast_used:
                raise  # met after the table, which the line reader reads alike
        del reader, fast
    return _Reader(src).read()


register(
    TextFormat(
        name=FORMAT,
        profiler="nvprof",
        description="nvprof plain-text output: summary, --print-gpu-trace, --print-api-trace, "
        "--metrics/--events, unified memory",
        sniff=sniff_nvprof_text,
        read=read_nvprof_text,
        priority=40,
    )
)
