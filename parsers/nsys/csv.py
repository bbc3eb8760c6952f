"""Nsight Systems ``nsys stats`` output: CSV reports and pasted text tables (FORMATS.md §3).

Registers the text format ``nsys-csv``.  Layouts read:

* one report per file (``nsys stats --format csv --output run`` writes ``run_<report>.csv``):
  a header with the units in parentheses (``Avg (ns)``, ``Bytes (MB)``), no units row, fields
  quoted only when they hold a comma (§0, §3.2-§3.6);
* stdout captures (``--output -``, or several reports piped into one file): tables between
  ``Generating SQLite file ...``, ``Exporting N events``, ``Processing [db] with
  [.../reports/<report>.py]...``, ``NOTICE: ...``, `` ** CUDA GPU Kernel Summary
  (cuda_gpu_kern_sum):`` and ``SKIPPED: db does not contain CUDA kernel data.`` lines (§3.1);
* 2020.x-2021.x output: ``Exporting [.../reports/gputrace.py db] to console...``, old report names
  (``gpukernsum``) and headers (``Time(%)``, ``Average``, ``Start(sec)``, ``Thru(MB/s)``) (§3.7);
* the text tables of ``nsys profile --stats=true`` and ``nsys stats`` (default ``column`` format:
  a header over a dashed rule, right-aligned numbers with thousands separators, names cut at 100
  characters with ``…``; the ``table`` format framed by ``+---+`` lines), with the
  ``[n/m] Executing '<report>' stats report`` lines or the 2020.x-2021.x section titles
  (``CUDA Kernel Statistics:``, ``CUDA Memory Operation Statistics (by size in KiB):``).

A table's report is the one the ``Processing``/``Executing`` line or section title before it names,
else the one its header identifies (:func:`parsers.nsys.reports.identify`); never the file name.
Reports cuda-advisor does not use (``osrt_sum``, ``nvtx_sum``, ...) are skipped with a note.
``Provenance.modes`` lists the reports read by their current names, prefixed ``text:`` for text
tables.  A capture whose CUDA reports were all ``SKIPPED`` reads as an empty profile, so
:func:`parsers.read` raises NoKernelData quoting the ``SKIPPED`` line.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from advisor.profile import Profile, Provenance
from parsers import arrow_csv
from parsers.nsys import reports as rep
from parsers.nsys.columns import KNOWN_KEYS, Table, header_key
from parsers.registry import Selection, TextFormat, register
from parsers.source import Source, csv_fields

FORMAT = "nsys-csv"
#: how many leading lines the fast path scans for the trace header
SNIFF_HEAD = 500
#: ``cuda_gpu_trace`` columns read (by key) on the fast path; the rest are not used
_TRACE_INTEGERS = frozenset(
    {"corr", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "regs", "ctx", "strm"}
)
_TRACE_NUMBERS = _TRACE_INTEGERS | {"start", "duration", "static_smem", "dynamic_smem", "bytes"}
_TRACE_TEXTS = frozenset({"name", "device", "src_kind", "dst_kind"})

_SCRIPT = re.compile(
    r"^\s*(?:Processing \[.*\] with \[|Exporting \[).*?reports[/\\](?P<name>\w+)\.py"
)
_EXECUTING = re.compile(r"^\s*\[\d+/\d+\] Executing '(?P<name>\w+)' stats report")
_REPORT_TITLE = re.compile(r"^\s*\*\* .*\((?P<name>\w+)\):\s*$")
_SECTION = re.compile(
    r"^\s*(?P<title>[A-Z][A-Za-z /-]*? Statistics)\s*(?:\((?P<detail>[^()]*)\))?\s*:?\s*$"
)
_SKIPPED = re.compile(r"^\s*SKIPPED: (?P<msg>.*\S)")
_VERSION = re.compile(
    r"nsight[-_ ]systems(?:[-_]cli)?[-/ ](?:version )?(?P<v>\d{4}\.\d+(?:\.\d+)*)", re.I
)
_STATUS = re.compile(
    r"^\s*(?:Generating SQLite file|Generating '|Exporting |Processing |NOTICE:|WARNING:|ERROR:"
    r"|SKIPPED:|Using \S+ export|\[\d+/\d+\] |\*\* |Generated:|Report file |Saved report)"
)
_RULE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_BORDER = re.compile(r"^\s*\+(?:-+\+)+\s*$")
_NUMERIC = re.compile(r"^[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?$")

#: 2020.x-2021.x ``--stats=true`` section titles -> report
_SECTIONS = {
    "cuda api statistics": rep.API_SUM,
    "cuda kernel statistics": rep.KERN_SUM,
    "operating system runtime api statistics": "osrt_sum",
    "nvtx push-pop range statistics": "nvtx_sum",
}


@dataclass
class _Scan:
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    version: str | None = None


def sniff_nsys(head: Sequence[str]) -> bool:
    """nsys stats output: a ``Processing [...] with [.../reports/x.py]`` or ``Executing 'x'
    stats report`` line, a ``CUDA ... Statistics`` section title over a dashed table (2020.x-2021.x
    ``--stats=true``), or a CSV/text header of a report cuda-advisor reads (nsys names such as
    ``Total Time (ns)``, ``GrdX``, ``CorrID``; nvprof and ncu headers never match)."""
    for i, line in enumerate(head):
        if _SCRIPT.match(line) or _EXECUTING.match(line):
            return True
        section = _SECTION.match(line)
        cuda_section = bool(section) and line.lstrip().startswith("CUDA ")
        if cuda_section and any(_RULE.match(nxt) for nxt in head[i + 1 : i + 5]):
            return True
        if "," in line and rep.identify(_csv_header(line)):
            return True
        nxt = head[i + 1] if i + 1 < len(head) else ""
        if _RULE.match(nxt) and rep.identify(_slice(line, _rule_starts(nxt))):
            return True
        if _BORDER.match(line) and rep.identify(_box_cells(nxt, _border_cuts(line))):
            return True
    return False


def read_nsys(src: Source, selected: Selection) -> Profile:
    """Every report table of an nsys stats output, as one profile (it has no metrics rows:
    ``selected``, the registry's metric selection, is not used)."""
    scan = _fast_scan(src) or _scan(src)
    frames = rep.Frames(notes=list(scan.notes))
    modes: list[str] = []
    for table in scan.tables:
        report = table.report
        if report is not None and report not in rep.SUPPORTED:
            frames.note(f"report {report} is not one cuda-advisor reads; its table was skipped")
            continue
        if report is None:
            report = rep.identify(table.header)
            if report is None:
                continue
        else:
            rep.check_required(table, report, src)
        if table.text:
            _note_truncated(table, frames)
        added = rep.add_table(table, report, src, frames)
        table.data = None  # converted: free it before the next copies (big traces)
        if added:
            mode = ("text:" if table.text else "") + report
            if mode not in modes:
                modes.append(mode)
    provenance = Provenance(
        path=src.path,
        format=FORMAT,
        profiler="nsys",
        modes=tuple(modes),
        profiler_version=scan.version,
        notes=tuple(frames.notes),
    )
    return Profile.of((provenance,), frames.tables())


def _fast_scan(src: Source) -> _Scan | None:
    """The scan of a file that is one big ``cuda_gpu_trace`` CSV table to its end, the rows read
    by :func:`parsers.arrow_csv.read_rows`; None for anything else (then the lines are scanned).
    """
    if (src.size or 0) < arrow_csv.MIN_BYTES:  # not UTF-8 (decoded: no bytes), or small
        return None
    head = src.head(SNIFF_HEAD)
    scan = _scan(Source(src.path, head))
    if len(scan.tables) != 1:
        return None
    table = scan.tables[0]
    filled = [i for i, line in enumerate(head) if line.strip()]
    if table.text or not table.row_index or table.row_index[-1] != filled[-1]:
        return None  # the table ends within the first lines
    if (table.report or rep.identify(table.header)) != rep.GPU_TRACE:
        return None
    index: dict[str, int] = {}
    for j, cell in enumerate(table.header):
        index.setdefault(header_key(cell)[0], j)
    numbers = [j for key, j in index.items() if key in _TRACE_NUMBERS]
    texts = [j for key, j in index.items() if key in _TRACE_TEXTS]
    start = src.line_offset(table.header_index + 1)
    if 0 not in numbers or start is None:
        return None  # a number first: status lines and other headers fail to convert
    data = arrow_csv.read_rows(src, start, len(table.header), numbers, texts)
    if data is None:
        return None
    for key in _TRACE_INTEGERS:  # a fraction: the scanner's rows give the message
        col = index.get(key)
        if col is not None and not arrow_csv.whole_numbers(data[col].to_numpy()):
            return None
    table.rows, table.row_index, table.data = [], [], data
    # read_rows released the bytes once it had checked them: they are not kept while the rows
    # are parsed and the frames built
    return scan


def _scan(src: Source) -> _Scan:
    """Cut the file into report tables, remembering the report each status line names."""
    scan = _Scan()
    lines = src.lines
    hint: str | None = None
    title_unit: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        named = _named_report(line, scan)
        if named is not None:
            hint, title_unit = named
            i += 1
            continue
        skipped = _SKIPPED.match(line)
        if skipped:
            scan.notes.append(f"{hint or 'a report'}: {line.strip()}")
            hint, title_unit = None, None
            i += 1
            continue
        if _STATUS.match(line):
            _version(line, scan)
            i += 1
            continue
        found = _table_at(lines, i, hint, src)
        if found is None:
            i += 1
            continue
        table, i = found
        table.report, table.title_unit = hint, title_unit
        scan.tables.append(table)
        hint, title_unit = None, None
    return scan


def _named_report(line: str, scan: _Scan) -> tuple[str | None, str | None] | None:
    """(report, unit from the title) when ``line`` names the report that follows, else None."""
    m = _SCRIPT.match(line) or _EXECUTING.match(line) or _REPORT_TITLE.match(line)
    if m:
        _version(line, scan)
        name = m.group("name")
        report = rep.canonical_report(name)
        if report != name:
            note = f"report {name} (nsys 2020.x-2021.x name) read as {report}"
            if note not in scan.notes:
                scan.notes.append(note)
        return report, None
    m = _SECTION.match(line)
    if not m:
        return None
    title, detail = m.group("title").lower(), (m.group("detail") or "").strip()
    unit = {"nanoseconds": "ns", "microseconds": "us"}.get(detail)
    size_unit = re.sub(r"^by size in ", "", detail)  # "(by size in KiB)" 2021.x, "(KiB)" 2020.x
    if title == "cuda memory operation statistics":
        if size_unit.endswith("B"):
            return rep.MEM_SIZE, size_unit
        return rep.MEM_TIME, unit
    return _SECTIONS.get(title), unit


def _version(line: str, scan: _Scan) -> None:
    if scan.version is None:
        m = _VERSION.search(line)
        if m:
            scan.version = m.group("v")


def _table_at(lines: list[str], i: int, hint: str | None, src: Source) -> tuple[Table, int] | None:
    """The table whose header is line ``i`` (CSV, column text or framed text) and the line
    after it, else None."""
    line = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if _RULE.match(nxt):
        starts = _rule_starts(nxt)
        header = _slice(line, starts)
        if _header_ok(header, hint):
            return _text_rows(lines, Table(header, i, text=True), i + 2, starts)
    if _BORDER.match(line) and i + 2 < len(lines) and _BORDER.match(lines[i + 2]):
        cuts = _border_cuts(line)
        header = _box_cells(nxt, cuts)
        if _header_ok(header, hint):
            return _box_rows(lines, Table(header, i + 1, text=True), i + 3, cuts)
    if "," in line:
        header = _csv_header(line)
        if _header_ok(header, hint):
            return _csv_rows(lines, Table(header, i), i + 1, src)
    return None


def _header_ok(header: list[str], hint: str | None) -> bool:
    """A report header: one :func:`identify` knows, or (after a line naming the report) one with
    two or more known column names and no numbers."""
    if rep.identify(header):
        return True
    keys = _keys(header)
    if hint is None or len(keys & KNOWN_KEYS) < 2:
        return False
    return all(c.strip() and not _NUMERIC.match(c.strip()) for c in header)


def _csv_rows(lines: list[str], table: Table, j: int, src: Source) -> tuple[Table, int]:
    """Rows up to a blank line, a status line or the next report's header."""
    while j < len(lines):
        line = lines[j]
        if not line.strip() or _STATUS.match(line):
            break
        try:
            cells = csv_fields(line)
        except csv.Error as exc:
            raise src.malformed(j, f"not a CSV row: {exc}") from exc
        first = cells[0].strip() if cells else ""
        if first and not _NUMERIC.match(first) and rep.identify(cells):
            break
        table.rows.append(cells)
        table.row_index.append(j)
        j += 1
    return table, j


def _text_rows(lines: list[str], table: Table, j: int, starts: list[int]) -> tuple[Table, int]:
    """Rows of a column-aligned table, up to a blank or status line.

    A row whose leading cells are all numbers and whose last cell is the name (the summaries) is
    split on blanks, which also reads rows whose alignment was lost in copying; any other row
    (traces, with empty cells) is cut at the columns of the dashed rule.
    """
    width = len(starts)
    while j < len(lines) and lines[j].strip() and not _STATUS.match(lines[j]):
        tokens = lines[j].split(None, width - 1)
        if len(tokens) == width and all(_NUMERIC.match(t) for t in tokens[:-1]):
            table.rows.append([*tokens[:-1], tokens[-1].strip()])
        else:
            table.rows.append(_slice(lines[j], starts))
        table.row_index.append(j)
        j += 1
    return table, j


def _box_rows(lines: list[str], table: Table, j: int, cuts: list[int]) -> tuple[Table, int]:
    """Rows of a ``+---+`` framed table, up to its closing border (skipped)."""
    while j < len(lines) and lines[j].strip() and not _BORDER.match(lines[j]):
        table.rows.append(_box_cells(lines[j], cuts))
        table.row_index.append(j)
        j += 1
    if j < len(lines) and _BORDER.match(lines[j]):
        j += 1
    return table, j


def _csv_header(line: str) -> list[str]:
    try:
        return csv_fields(line)
    except csv.Error:
        return []


def _keys(header: list[str]) -> set[str]:
    return {header_key(c)[0] for c in header}


def _rule_starts(rule: str) -> list[int]:
    return [m.start() for m in re.finditer(r"-+", rule)]


def _slice(line: str, starts: list[int]) -> list[str]:
    """Cells of a column-aligned line: from the start of one dashed run to the next."""
    ends = [*starts[1:], None]
    return [line[s:e].strip() for s, e in zip(starts, ends, strict=True)]


def _border_cuts(border: str) -> list[int]:
    return [i for i, ch in enumerate(border) if ch == "+"]


def _box_cells(line: str, cuts: list[int]) -> list[str]:
    return [line[a + 1 : b].strip() for a, b in itertools.pairwise(cuts)]


def _note_truncated(table: Table, frames: rep.Frames) -> None:
    cut = sum(1 for row in table.rows if any(cell.endswith("…") for cell in row))
    if cut:
        frames.note(f"line {table.header_index + 1}: {cut} name(s) cut short with '…' by nsys")


register(
    TextFormat(
        name=FORMAT,
        profiler="nsys",
        description="Nsight Systems `nsys stats` reports (CSV, or the --stats=true text tables)",
        sniff=sniff_nsys,
        read=read_nsys,
        priority=30,
    )
)
