"""nvprof ``--csv`` output (CUDA 5.x-11.x), format ``nvprof-csv``.

One file may hold several tables; each starts at a quoted header row and ends at a blank line,
an ``==PID==`` / ``========`` line or the next header.  The header names the table
(FORMATS.md §1); columns are always found by name:

* ``"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"`` + units row: default summary,
  ``--print-gpu-summary``, ``--print-api-summary`` (§1.2).  Old toolkits print no ``Type``
  column and put the API calls in a second table after an ``==PID== API calls:`` line.
  Mode ``summary``.
* ``"Device","Count","Avg Size",...,""``: the Unified Memory summary printed after
  ``==PID== Unified Memory profiling result:`` (units glued to the values).  Mode
  ``unified-memory``.
* ``"Start","Duration",...,"Name"`` with ``Grid X`` / ``Device`` columns + units row:
  ``--print-gpu-trace`` of CUDA 7/8 and CUDA 9+ (``SrcMemType``, ``DstMemType``,
  ``Unified Memory``, ``Virtual Address``, ``Correlation_ID``, peer-to-peer columns) (§1.3).
  Mode ``gpu-trace``.
* ``"Start","Duration","Name"[,"Correlation_ID"]`` + units row: ``--print-api-trace`` (§1.4).
  Mode ``api-trace``.
* ``"Device","Kernel","Invocations","Metric Name",...`` / ``...,"Event Name",...``: ``--metrics``
  / ``--events`` summaries, units glued to each value (§1.5, §1.6).  Modes ``metrics`` /
  ``events``.
* ``"Device","Context","Stream","Kernel",<events...>,<metrics...>`` + a mostly empty units
  row: per-launch ``--print-gpu-trace --events/--metrics`` (§1.7).  Mode ``metric-trace``.

Scripts that run nvprof once per input size leave two more shapes (README of the real
profiles): every line prefixed with one or two unquoted numbers (``256,"Start","Duration",...``;
the prefix is dropped, the header and units row repeat per run and are re-read per block), and
grep-filtered trace rows with no header and no units row at all, recognised by their
``"<GPU> (N)","<context>","<stream>","<name>"`` tail and read with the CUDA 7/8 gpu-trace
layout (assumptions recorded in ``Provenance.notes``).

``==PID==`` lines, application output and trailers such as ``Total CPU Page faults: 49`` are
skipped; profiler warnings and trailers become provenance notes.  A file that only says
``No kernels were profiled.`` has no table, so the sniffer declines it and
:func:`parsers.read` reports it as no kernel data, quoting that line.  A data row with the
wrong number of fields is :class:`~advisor.errors.MalformedInput` with its line number, except
a last line cut short (a truncated copy), which is dropped with a note.  Table builders:
:mod:`parsers.nvprof.csv_tables` (summaries and traces), :mod:`parsers.nvprof.csv_metrics`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from advisor import schema
from advisor.profile import Profile, Provenance
from parsers import arrow_csv
from parsers.nvprof import csv_metrics as metrics
from parsers.nvprof import csv_summaries as summaries
from parsers.nvprof import csv_tables as tables
from parsers.nvprof.csv_tables import _LINE, HEADERLESS_LAYOUT, Block
from parsers.registry import Selection, TextFormat, register
from parsers.source import Source, csv_fields, is_preamble

FORMAT = "nvprof-csv"
#: how many leading lines the fast path looks at for the trace header
SNIFF_HEAD = 500
PROFILER = "nvprof"

#: up to two unquoted numbers a script put in front of nvprof's line, then the line itself
_PREFIX = re.compile(r"^((?:[-+]?\d+(?:\.\d+)?,){0,2})(?=\S)")
_HEADER_START = ('"Type"', '"Time(%)"', '"Start"', '"Device"')
#: the tail of a gpu-trace data row: "Tesla K40c (0)","1","7","name"
_TRACE_TAIL = re.compile(r',"[^"]*\S \(\d+\)","\d*","\d*","[^"]*"\s*$')
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_API_MARKER = re.compile(r"(==\d+==|========)\s*API calls:")
_RESULT_MARKER = re.compile(r"(==\d+==|========)\s*Profiling result:")
_WARNING = re.compile(r"(?:==\d+==|========)\s*(Warning: .*)$")
_TRAILER = re.compile(r"^\s*Total [A-Za-z ]+: \d+\s*$")
_UNIT_TOKENS = frozenset(
    {"", "%", "s", "ms", "us", "ns", "B", "KB", "MB", "GB", "TB", "B/s", "KB/s", "MB/s",
     "GB/s", "TB/s"}
)  # fmt: skip


def header_kind(fields: Sequence[str]) -> str | None:
    """The table a header row starts (a Provenance mode name), or None."""
    head = list(fields[:4])
    if head[:2] == ["Type", "Time(%)"] or head[:3] == ["Time(%)", "Time", "Calls"]:
        return "summary" if "Name" in fields else None
    if head[:2] == ["Start", "Duration"] and "Name" in fields:
        return "gpu-trace" if ("Grid X" in fields or "Device" in fields) else "api-trace"
    if head == ["Device", "Kernel", "Invocations", "Metric Name"]:
        return "metrics"
    if head == ["Device", "Kernel", "Invocations", "Event Name"]:
        return "events"
    if head[:3] == ["Device", "Count", "Avg Size"]:
        return "unified-memory"
    if head == ["Device", "Context", "Stream", "Kernel"]:
        return "metric-trace"
    return None


def match_header(line: str) -> tuple[str, int, list[str]] | None:
    """(kind, number of prefixed columns, header fields) when ``line`` is a table header."""
    m = _PREFIX.match(line)
    if not m:
        return None
    body = line[m.end(1) :]
    if not body.startswith(_HEADER_START):
        return None
    fields = csv_fields(body)
    kind = header_kind(fields)
    return (kind, m.group(1).count(","), fields) if kind else None


def match_headerless(line: str) -> tuple[int, list[str]] | None:
    """(number of prefixed columns, the 17 layout fields) for a header-less gpu-trace row."""
    if not _TRACE_TAIL.search(line):
        return None
    fields = csv_fields(line)
    extra = len(fields) - len(HEADERLESS_LAYOUT)
    if extra not in (0, 1, 2) or not all(_NUMBER.match(f) for f in fields[: extra + 2]):
        return None
    return extra, fields[extra:]


def _is_tool_line(line: str) -> bool:
    """An nvprof status line, possibly behind a script's numeric prefix."""
    if is_preamble(line):
        return True
    m = _PREFIX.match(line)
    return bool(m and m.group(1) and is_preamble(line[m.end(1) :]))


def _looks_like_row(line: str) -> bool:
    return "," in line and line.lstrip()[:1] in ('"', ",", "-", "+", ".", *"0123456789")


def _is_units_row(fields: Sequence[str], width: int) -> bool:
    return len(fields) == width and all(f.strip() in _UNIT_TOKENS for f in fields)


def sniff_nvprof_csv(head: Sequence[str]) -> bool:
    """True when a line is a quoted nvprof CSV table header (behind at most two prefixed
    numbers) or a header-less gpu-trace row.  nvprof text output, ncu and nsys never match."""
    return any('"' in ln and (match_header(ln) or match_headerless(ln)) for ln in head)


class _Scanner:
    """Splits the lines of one file into :class:`Block` tables (see the module docstring)."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.blocks: list[Block] = []
        self.notes: list[str] = []
        self.skipped = 0
        self.current: Block | None = None
        self.api_section = False
        nonblank = [i for i, ln in enumerate(src.lines) if ln.strip()]
        self.last_line = nonblank[-1] if nonblank else -1

    def scan(self) -> None:
        lines = self.src.lines
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                self.current = None
            elif _is_tool_line(line):
                self._tool_line(line)
            elif (hdr := match_header(line)) is not None:
                i = self._open(i, *hdr)
            elif self.current is not None:
                self._row(i, line)
            elif (hl := match_headerless(line)) is not None:
                self._headerless(i, *hl)
            else:
                self._foreign(line)
            i += 1

    def _tool_line(self, line: str) -> None:
        self.current = None
        if _API_MARKER.search(line):
            self.api_section = True
        elif _RESULT_MARKER.search(line):
            self.api_section = False
        warning = _WARNING.search(line)
        if warning:
            self._note(f"profiler {warning.group(1).strip()}")

    def _open(self, index: int, kind: str, prefix: int, header: list[str]) -> int:
        block = Block(kind, header, index, prefix, api_section=self.api_section)
        nxt = index + 1
        if kind not in ("metrics", "events", "unified-memory") and nxt < len(self.src.lines):
            fields = csv_fields(self.src.lines[nxt])[prefix:] if self.src.lines[nxt] else []
            if _is_units_row(fields, len(header)):
                block.units = [f.strip() for f in fields]
                block.units_line = nxt
                index = nxt
        self.blocks.append(block)
        self.current = block
        return index

    def _row(self, index: int, line: str) -> None:
        block = self.current
        assert block is not None
        if not _looks_like_row(line):
            self._foreign(line)
            return
        fields = csv_fields(line)[block.prefix :]
        if len(fields) != len(block.header):
            if index == self.last_line and len(fields) < len(block.header):
                self._note(
                    f"line {index + 1} is cut short ({len(fields)} of {len(block.header)} "
                    "fields): dropped as a truncated copy"
                )
                return
            raise self.src.malformed(
                index,
                f"{block.kind} row has {len(fields)} fields, expected {len(block.header)} "
                f"as in the header on line {block.header_line + 1}",
            )
        block.rows.append(fields)
        block.lines.append(index)

    def _headerless(self, index: int, prefix: int, fields: list[str]) -> None:
        last = self.blocks[-1] if self.blocks else None
        if last is None or not last.headerless or last.prefix != prefix:
            last = Block("gpu-trace", list(HEADERLESS_LAYOUT), index, prefix, headerless=True)
            self.blocks.append(last)
        last.rows.append(fields)
        last.lines.append(index)

    def _foreign(self, line: str) -> None:
        if _TRAILER.match(line):
            self._note(f"trailer: {line.strip()}")
        else:
            self.skipped += 1

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)


#: gpu-trace columns read as whole numbers / other numbers / text on the fast path (the rest are
#: not used; ``Unified Memory`` is text: page-fault rows put ``PC 0x5e240510`` there)
_TRACE_INTEGERS = (
    "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z", "Registers Per Thread",
    "Context", "Stream", "Correlation_ID",
)  # fmt: skip
_TRACE_NUMBERS = (*_TRACE_INTEGERS, "Start", "Duration", "Static SMem", "Dynamic SMem", "Size")
_TRACE_TEXTS = ("Name", "SrcMemType", "DstMemType", "Device", "Unified Memory")


def _fast_scan(src: Source) -> _Scanner | None:
    """The scanner's result for a file that is one big gpu-trace table after a preamble (its last
    line possibly cut short), the rows read by :func:`parsers.arrow_csv.read_rows`; None for
    anything else (then the lines are scanned)."""
    if (src.size or 0) < arrow_csv.MIN_BYTES:  # not UTF-8 (decoded: no bytes), or small
        return None
    head = src.head(SNIFF_HEAD)
    found = next(((i, h) for i, ln in enumerate(head) if (h := match_header(ln))), None)
    if found is None or found[1][0] != "gpu-trace" or found[1][1]:
        return None
    index, (_, _, header) = found
    scanner = _Scanner(Source(src.path, head[: index + 2]))
    scanner.scan()
    if len(scanner.blocks) != 1:
        return None
    block = scanner.blocks[0]
    first = index + 1 if block.units is None else index + 2
    start = src.line_offset(first)
    if start is None:
        return None
    cols = {name: block.col(name) for name in (*_TRACE_NUMBERS, *_TRACE_TEXTS)}
    numbers = [j for name in _TRACE_NUMBERS if (j := cols[name]) is not None]
    texts = [j for name in _TRACE_TEXTS if (j := cols[name]) is not None]
    data = arrow_csv.read_rows(src, start, len(header), numbers, texts)
    last: tuple[int, int] | None = None
    text = ""
    if data is None:  # perhaps a truncated copy: all but the last line, which is scanned
        raw = src.reread()
        if raw is None:
            return None
        last = arrow_csv.last_line(raw)
        text = raw[last[0] :].decode("utf-8").rstrip("\n")
        del raw
        data = arrow_csv.read_rows(src, start, len(header), numbers, texts, last[0])
        if data is None:
            return None
    for name in _TRACE_INTEGERS:  # a fraction: the scanner's rows give the message
        j = cols[name]
        if j is not None and not arrow_csv.whole_numbers(data[j].to_numpy()):
            return None
    data[_LINE] = arrow_csv.line_numbers(first, len(data))
    block.rows, block.lines, block.data = [], [], data
    if last is not None:
        if _is_tool_line(text) or match_header(text) or not _looks_like_row(text):
            return None
        scanner.last_line, scanner.current = last[1], block
        scanner._row(last[1], text)
        if block.rows:  # the last line is a whole row: the failure was elsewhere
            return None
    # read_rows released the bytes once it had checked them: they are not kept while the rows
    # are parsed and the frames built
    return scanner


def read_nvprof_csv(src: Source, selected: Selection) -> Profile:
    """Read every table of an nvprof ``--csv`` file into one :class:`Profile`; ``selected`` (the
    registry's metric selection) is not used: :func:`parsers.read` applies it to the rows read."""
    scanner = _fast_scan(src)
    if scanner is None:
        scanner = _Scanner(src)
        scanner.scan()
    notes = scanner.notes
    if any(b.prefix for b in scanner.blocks):
        notes.append(
            "every line carries extra leading column(s) added by a script (e.g. an input "
            "size); they were dropped"
        )
    out: dict[str, list[pd.DataFrame]] = {t: [] for t in schema.TABLES}
    traces: dict[tuple[tuple[str, ...], bool], list[Block]] = {}
    per_launch: list[tuple[pd.DataFrame, pd.DataFrame]] = []
    modes: list[str] = []
    um_devices: list[tuple[int, str]] = []
    for block in scanner.blocks:
        if block.kind not in modes:
            modes.append(block.kind)
        if block.kind == "summary":
            for table, frame in summaries.summary_frames(src, block, notes).items():
                out[table].append(frame)
        elif block.kind == "unified-memory":
            out["transfer_summary"].append(summaries.unified_memory_frame(src, block, notes))
            um_devices += tables.block_devices(block)
        elif block.kind == "gpu-trace":
            traces.setdefault((tuple(block.header), block.headerless), []).append(block)
        elif block.kind == "api-trace":
            out["api_calls"].append(summaries.api_trace_frame(src, block, notes))
        elif block.kind in ("metrics", "events"):
            out["metrics"].append(metrics.summary_metrics_frame(src, block))
        else:
            per_launch.append(metrics.metric_trace_frames(src, block, notes))
    trace_rows = []
    for group in traces.values():
        trace_rows.append(tables.gpu_trace_rows(src, group, notes))
        for block in group:
            block.data = None  # converted: free it before the next copies (big traces)
    launches, transfers = tables.activity_frames(trace_rows)
    del trace_rows
    out["transfers"].append(transfers)
    out["launches"].append(launches)
    offset = len(launches)
    del launches, transfers
    for launch_frame, metric_frame in per_launch:
        out["launches"].append(launch_frame.assign(launch_id=launch_frame["launch_id"] + offset))
        out["metrics"].append(metric_frame.assign(launch_id=metric_frame["launch_id"] + offset))
        offset += len(launch_frame)
    if scanner.skipped:
        notes.append(f"{scanner.skipped} line(s) of other text (application output) skipped")
    frames = {t: tables.concat(out.pop(t), t) for t in list(out)}
    frames["devices"] = tables.devices_frame(frames, um_devices)
    provenance = Provenance(
        path=src.path, format=FORMAT, profiler=PROFILER, modes=tuple(modes), notes=tuple(notes)
    )
    return Profile.of((provenance,), frames)


register(
    TextFormat(
        name=FORMAT,
        profiler=PROFILER,
        description="nvprof --csv output: summary, unified memory, gpu/api trace, "
        "metrics/events summary and per-launch metric trace",
        sniff=sniff_nvprof_csv,
        read=read_nvprof_csv,
        priority=40,
    )
)
