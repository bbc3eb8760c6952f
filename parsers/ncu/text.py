"""Nsight Compute plain-text output (``ncu ./app``, ``nv-nsight-cu-cli ./app``, no ``--csv``).

Format ``ncu-text``: what the CLI prints per profiled kernel launch, 2019–2025, as saved from a
terminal or pasted in notes.  The text carries the rows of the ``--page details`` CSV export
(FORMATS.md §2.2): for each launch the sections' (metric name, unit, value) rows and the rule
results.  This module turns the text into exactly those rows (:data:`HEADER`) and hands them to
the CSV reader's details layout (:func:`parsers.ncu.csv.read_tables`), so names, units, the
metric map, launches (duration, grid and block, registers, shared memory) and devices come out
as they do for the export.

What the text looks like::

    [5341] matrix_sums@127.0.0.1                                   <- process (pid)
      row_sums(const float *, float *, unsigned long), 2022-Jun-02 19:46:33, Context 1, Stream 7
        Section: GPU Speed Of Light Throughput
        ---------------------------------------------------------------- ------------- ---------
        Duration                                                               msecond     11.97
        ---------------------------------------------------------------- ------------- ---------
        WRN   Memory is more heavily utilized than Compute: Look at the Memory Workload ...
              bottleneck. Check memory replay (coalescing) metrics to make sure ...

* **Kernel header**: 2019–2022 ``name, 2022-Jun-02 19:46:33, Context 1, Stream 7``; 2022+
  ``name (64, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6`` (grid and block,
  device index and compute capability -> the details page's ``Grid Size``, ``Block Size``,
  ``Device``, ``CC`` columns).  Every header starts a launch, in file order: a kernel printed
  several times is several launches.
* **Section tables**: ``Section: <display name>``, a rule line of three dash groups whose
  widths are the name, unit and value columns, the rows, a closing rule line.  2023+ prints a
  ``Metric Name  Metric Unit  Metric Value`` header row and a second rule line first.  Names are
  left-aligned, units and values right-aligned, so a row is cut at the column widths counted
  from its own indentation (pasted copies are often re-indented); a name or value wider than its
  column pushes the rest right and that row is split at whitespace instead.  Units are those of
  the export (``msecond``, ``cycle/nsecond``, ``Kbyte/block``, ``Gbyte/second``, ``%``, blank);
  values keep their thousands separators (``9,284,529``) and text (``cudaFuncCachePreferNone``)
  for :mod:`parsers.ncu.values`; ncu's ``(!)`` flag before a value (``(!) nan``) is dropped and
  counted in a note.  With ``--metrics`` the section is ``Command line profiler metrics`` and
  the names are raw metric names (``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum``).  A table
  of other than three columns is skipped (noted).
* **Rule results**: ``OPT``/``WRN``/``INF``/``ERR`` and the message, wrapped onto lines indented
  under it (joined with single spaces); 2023+ starts the message with ``Est. Speedup: 26.29%``
  (``Estimated Speedup``; ``Est. Local Speedup`` for a local estimate) -> ``speedup_type``
  global / local and the speedup.  Consecutive results are separated by a two-group rule line.
  The text names neither the rule nor the section identifier: ``rule`` stays empty and
  ``section`` is the display name.

Other lines are skipped: ``==PROF==`` status lines, application output before, between and
after the kernels' blocks (counted in a note once the first kernel header is seen),
``Warning:`` lines.  The device's name is not printed: the devices table holds the index and
compute capability of a 2022+ header (nothing for older headers), or what ``device__attribute_*``
rows give.  Text that stops inside a table, a table row cut short of its value column or a
kernel header at the end with nothing under it is malformed (the line is named).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from advisor.profile import Profile
from parsers.ncu.csv import profiler_version, read_tables
from parsers.ncu.csv_layouts import Table
from parsers.ncu.values import is_count_unit
from parsers.registry import Selection, TextFormat, register
from parsers.source import Source, is_preamble
from parsers.units import scale_ncu

FORMAT = "ncu-text"

#: the ``--page details`` columns each launch's rows are given (FORMATS.md §2.2)
HEADER = [
    "ID", "Process ID", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device",
    "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
    "Rule Description", "Estimated Speedup Type", "Estimated Speedup",
]  # fmt: skip

_PROCESS = re.compile(r"^\s*\[(?P<pid>\d+)\] \S.*@\S+$")
_KERNEL = re.compile(
    r"^\s*(?P<name>\S.*?)"
    r"(?: \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\)"
    r"|, \d{4}-[A-Z][a-z]{2}-\d{1,2} \d{1,2}:\d{2}:\d{2})"
    r", Context (?P<context>\d+), Stream (?P<stream>\d+)"
    r"(?P<rest>(?:, [A-Z][A-Za-z]*(?: [A-Za-z]+)* [\w.]+)*)$"
)
_PAIR = re.compile(r", ([A-Z][A-Za-z]*(?: [A-Za-z]+)*?) ([\w.]+)")
_SECTION = re.compile(r"^\s*Section: (?P<name>\S.*)$")
_DASHES = re.compile(r"^\s*-+(?: -+)+$")
_HEADER_ROW = re.compile(r"^\s*Metric Name\s+Metric Unit\s+Metric Value$")
_RULE = re.compile(r"^(?P<indent>\s*)(?P<type>OPT|WRN|INF|ERR)\s{2,}(?P<text>\S.*)$")
_SPEEDUP = re.compile(
    r"^Est(?:\.|imated) (?:(?P<kind>Local|Global) )?Speedup: "
    r"(?P<value>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.?\d+)%\s*(?P<rest>.*)$"
)
#: two or more spaces: where a row whose cell is wider than its column is split first
_GAP = re.compile(r"\s{2,}")
_FLAG = "(!)"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _kernel(text: str) -> re.Match[str] | None:
    """The kernel header ``text`` is, if any (the regular expression only for a line that
    names a context and a stream)."""
    if ", Context " not in text or ", Stream " not in text:
        return None
    return _KERNEL.match(text)


def sniff_ncu_text(head: Sequence[str]) -> bool:
    """True when ``head`` has a kernel header line and, after it, a ``Section:`` line followed
    by a rule line of dash groups (a section table).  ``==PROF==`` lines alone are not enough:
    a run that profiled nothing has no kernel header."""
    kernel = False
    for i, line in enumerate(head):
        text = line.rstrip()
        if not kernel:
            kernel = _kernel(text) is not None
        elif _SECTION.match(text) and i + 1 < len(head):
            below = head[i + 1].rstrip()
            if _DASHES.match(below) and len(below.split()) >= 3:
                return True
    return False


def read_ncu_text(src: Source, selected: Selection) -> Profile:
    """Read the kernel launches of ``src`` (see the module docstring) into a Profile."""
    reader = _Reader(src)
    reader.run()
    table = Table("details", list(HEADER), reader.first_line, reader.rows, reader.lines)
    return read_tables(
        src,
        [table],
        selected,
        fmt=FORMAT,
        version=profiler_version(src.lines),
        notes=reader.notes(),
    )


@dataclass
class _Launch:
    cells: list[str]  # ID .. CC of HEADER
    line: int
    rows: int = 0
    sections: int = 0


@dataclass
class _Table:
    section: str
    line: int
    widths: tuple[int, ...]
    rows: int = 0
    under_header: bool = False  # the header row was read: a rule line follows it

    @property
    def metric(self) -> bool:
        return len(self.widths) == 3


@dataclass
class _Rule:
    indent: int
    rule_type: str
    line: int
    parts: list[str] = field(default_factory=list)
    speedup: str = ""
    speedup_type: str = ""


class _Reader:
    """The details rows of the text, line by line (a small state machine: launch, section,
    open table, open rule)."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.text = src.lines
        self.rows: list[list[str]] = []
        self.lines: list[int] = []
        self.first_line = 0
        self.pid = ""
        self.launch: _Launch | None = None
        self.launches = 0
        self.section = ""
        self.table: _Table | None = None
        self.rule: _Rule | None = None
        self.skipped = 0
        self.flagged = 0
        self.foreign = 0
        self.empty = 0
        #: the index of the last line that is not blank
        self.last = max((i for i, line in enumerate(self.text) if line.strip()), default=0)

    def run(self) -> None:
        for index, line in enumerate(self.text):
            self._line(index, line.rstrip())
        if self.table is not None:
            raise self._cut_in_table(self.table)
        self._end_rule()
        launch = self.launch
        if launch is not None and not launch.rows and not launch.sections:
            raise self.src.malformed(
                launch.line,
                f"the text ends after the header of kernel {launch.cells[2]!r} with no section "
                "under it: the output is cut short",
            )
        self._end_launch()

    def _cut_in_table(self, table: _Table) -> Exception:
        return self.src.malformed(
            self.last,
            f"the text ends inside the table of section {table.section!r} begun on line "
            f"{table.line + 1}: the output is cut short",
        )

    def notes(self) -> list[str]:
        notes = []
        if self.skipped:
            notes.append(
                f"{self.skipped} line(s) after the first kernel header that belong to no "
                "section table or rule result skipped (application output, warnings)"
            )
        if self.flagged:
            notes.append(
                f"{self.flagged} value(s) that ncu flagged with '(!)' (as in '(!) nan') read "
                "without the flag"
            )
        if self.foreign:
            notes.append(f"{self.foreign} table(s) of other than three columns skipped")
        if self.empty:
            notes.append(f"{self.empty} kernel header(s) with nothing read under them skipped")
        return notes

    # -- one line -------------------------------------------------------------------------

    def _line(self, index: int, text: str) -> None:
        if self.table is not None:
            self._table_line(index, text)
            return
        if not text.strip() or is_preamble(text):
            self._end_rule()
            return
        if _DASHES.match(text):
            self._end_rule()
            if len(text.split()) >= 3 and self.launch is not None and self.section:
                self.table = _Table(self.section, index, tuple(len(g) for g in text.split()))
            elif len(text.split()) >= 3:
                self._skip()
            return  # two groups: the rule line between two rule results
        process = _PROCESS.match(text)
        if process:
            self._end_rule()
            self._end_launch()
            self.pid = process["pid"]
            return
        kernel = _kernel(text)
        if kernel:
            self._end_rule()
            self._end_launch()
            self._start_launch(index, kernel)
            return
        if self.launch is None:
            return  # application output before the first kernel's results
        section = _SECTION.match(text)
        if section:
            self._end_rule()
            self.section = section["name"]
            self.launch.sections += 1
            return
        rule = _RULE.match(text)
        if rule:
            self._end_rule()
            self._start_rule(index, rule)
            return
        if self.rule is not None and _indent(text) > self.rule.indent:
            self.rule.parts.append(text.strip())
            return
        self._end_rule()
        self._skip()

    def _skip(self) -> None:
        if self.launches:
            self.skipped += 1

    def _table_line(self, index: int, text: str) -> None:
        table = self.table
        assert table is not None
        if is_preamble(text):
            return  # a status line of another process printed across the table
        if _DASHES.match(text):
            if table.under_header or (not table.metric and self._header_rule(index, table)):
                table.under_header = False
                return
            self.table = None
            return
        if not text.strip() and index > self.last:
            raise self._cut_in_table(table)
        if not text.strip() or _SECTION.match(text) or _kernel(text) or _PROCESS.match(text):
            raise self.src.malformed(
                index,
                f"the table of section {table.section!r} begun on line {table.line + 1} "
                "stops without its closing rule line (the output is cut or interleaved)",
            )
        if not table.metric:
            if table.rows == 0:
                self.foreign += 1
            table.rows += 1
            return
        if table.rows == 0 and not table.under_header and _HEADER_ROW.match(text):
            table.under_header = True
            return
        table.under_header = False
        name, unit, value = self._cells(index, text, table.widths)
        if value.startswith(_FLAG):
            self.flagged += 1
            value = value[len(_FLAG) :].strip()
        table.rows += 1
        self._add(index, [table.section, name, unit, value, "", "", "", "", ""])

    def _header_rule(self, index: int, table: _Table) -> bool:
        """A rule line inside a table of other than three columns is the one under its header
        row when it is the second line of the table and a row follows it."""
        below = self.text[index + 1].rstrip() if index + 1 < len(self.text) else ""
        return (
            table.rows == 1
            and bool(below.strip())
            and not _DASHES.match(below)
            and not _RULE.match(below)
        )

    def _cells(self, index: int, text: str, widths: Sequence[int]) -> tuple[str, str, str]:
        """(name, unit, value) of a table row: cut at the column widths from the row's own
        indentation, or split at whitespace when a cell is wider than its column."""
        name_w, unit_w, value_w = widths
        start = _indent(text)
        end = start + name_w + unit_w + value_w + 2
        if len(text) < end:
            raise self.src.malformed(
                index,
                f"a table row that ends at column {len(text)}, before the end of its value "
                f"column ({end}, from the rule line's widths): the line is cut short",
            )
        cut, unit_end = start + name_w, start + name_w + 1 + unit_w
        if len(text) == end and text[cut] == " " and text[unit_end] == " ":
            name, unit = text[start:cut].strip(), text[cut + 1 : unit_end].strip()
            value = text[unit_end + 1 :].strip()
            if name and value and " " not in unit:
                return name, unit, value
        cells = _GAP.split(text.strip())
        if len(cells) == 3 and _is_unit(cells[1]):
            return cells[0], cells[1], cells[2]
        if len(cells) == 2:
            return cells[0], "", cells[1]
        parts = text.strip().rsplit(None, 1)
        if len(parts) < 2:
            raise self.src.malformed(index, "a table row without a metric value")
        rest, value = parts
        if rest.endswith(_FLAG) and rest != _FLAG:
            rest, value = rest[: -len(_FLAG)].rstrip(), f"{_FLAG} {value}"
        words = rest.rsplit(None, 1)
        if len(words) == 2 and _is_unit(words[1]):
            return words[0], words[1], value
        return rest, "", value

    # -- launches and rules -----------------------------------------------------------------

    def _start_launch(self, index: int, m: re.Match[str]) -> None:
        pairs = dict(_PAIR.findall(m["rest"]))
        grid = f"({m['grid']})" if m["grid"] else ""
        block = f"({m['block']})" if m["block"] else ""
        if not self.launches:
            self.first_line = index
        cells = [
            str(self.launches), self.pid, m["name"], m["context"], m["stream"], block, grid,
            pairs.get("Device", ""), pairs.get("CC", ""),
        ]  # fmt: skip
        self.launch = _Launch(cells, index)
        self.launches += 1
        self.section = ""

    def _end_launch(self) -> None:
        if self.launch is not None and not self.launch.rows:
            self.empty += 1
        self.launch = None
        self.section = ""

    def _start_rule(self, index: int, m: re.Match[str]) -> None:
        rule = _Rule(indent=len(m["indent"]), rule_type=m["type"], line=index)
        text = m["text"].strip()
        speedup = _SPEEDUP.match(text)
        if speedup:
            rule.speedup = speedup["value"].replace(",", "")
            rule.speedup_type = (speedup["kind"] or "global").lower()
            text = speedup["rest"].strip()
        if text:
            rule.parts.append(text)
        self.rule = rule

    def _end_rule(self) -> None:
        rule, self.rule = self.rule, None
        if rule is None:
            return
        description = " ".join(rule.parts)
        self._add(
            rule.line,
            [self.section, "", "", "", "", rule.rule_type, description, rule.speedup_type,
             rule.speedup],
        )  # fmt: skip

    def _add(self, index: int, tail: list[str]) -> None:
        launch = self.launch
        assert launch is not None
        launch.rows += 1
        self.rows.append([*launch.cells, *tail])
        self.lines.append(index)


def _is_unit(text: str) -> bool:
    """True for a unit ncu prints (``%``, ``msecond``, ``Kbyte/block``, ``register/thread``)."""
    return text == "%" or scale_ncu(1.0, text) != (1.0, text) or is_count_unit(text)


register(
    TextFormat(
        name=FORMAT,
        profiler="ncu",
        description="Nsight Compute plain-text output (ncu ./app without --csv): sections, "
        "--metrics, rule results",
        sniff=sniff_ncu_text,
        read=read_ncu_text,
        priority=50,
    )
)
