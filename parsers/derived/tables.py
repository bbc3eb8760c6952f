"""Tables derived from profiler runs, kept by users of the BSP-model papers (profiler ``derived``).

These files are not written by an NVIDIA profiler but by the scripts of the people who ran it.
Three layouts are registered, each with a content-only sniffer strict enough never to claim a
profiler export:

* ``timing-table``: kernel times in milliseconds cut out of ``nvprof --normalized-time-unit ms``
  summaries, one line per input size, one tab-separated column per repeated run, a trailing tab,
  no header (``../shared/real_profiles/README.md``, ``amaris_bspgpu/<gpu>/*.txt``).  Values of
  1000 ms or more are printed with 3 significant digits (``1.31e+03``); rows may be ragged and may
  hold empty cells (runs without a value).  There is no kernel name in the file: every value
  becomes one launch named ``kernel`` with per-launch metrics ``input_row`` (0-based line of the
  table = input-size index) and ``repeat_index`` (0-based column = run), so the size grid can be
  recovered by grouping.
* ``r-dataset``: a data set written by R's ``write.csv`` from nvprof gpu-trace, metric and event
  runs (``amaris_gpuperfpredict/datasets/*.csv``), read by :mod:`parsers.derived.rdata`.
* ``wallclock-table``: ``/usr/bin/time`` (or the bash ``time`` keyword) output reshaped into one
  line per input size (``amaris_gpuperfpredict/rodinia_traces/*-time-1.csv``).  It holds no kernel
  data; reading it raises :class:`~advisor.errors.NoKernelData` saying so.

Lines starting with ``# `` before the data are comments (see :func:`parsers.source.is_preamble`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from advisor.errors import NoKernelData
from advisor.profile import Profile, Provenance
from parsers.derived.rdata import read_r_dataset, sniff_r_dataset
from parsers.registry import Selection, TextFormat, register
from parsers.source import Source, is_preamble
from parsers.units import parse_number

PROFILER = "derived"
TIMING_TABLE = "timing-table"
WALLCLOCK_TABLE = "wallclock-table"

#: the name every launch of a timing table gets: the file names no kernel
TIMING_KERNEL = "kernel"
TIMING_NOTE = (
    "kernel times of a derived timing table: rows are input sizes (row k = size index k), "
    "columns are repeated runs"
)
WALLCLOCK_MESSAGE = (
    "wall-clock timing table (real/user/sys per input size), not a profiler export: "
    "it has no kernel data"
)

_PLAIN_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_SCIENTIFIC = re.compile(r"[eE]")
#: /usr/bin/time reshaped: ``size, m:ss.sss , m:ss.sss , m:ss.sss`` (real, user, sys)
_WALL_USR_BIN_TIME = re.compile(
    r"^\s*\d+(?:\s*,\s*\d+)*\s*,\s*\d+:\d+(?:\.\d+)?\s*,\s*\d+:\d+(?:\.\d+)?\s*,"
    r"\s*\d+:\d+(?:\.\d+)?\s*,?\s*$"
)
#: bash ``time`` keyword reshaped: ``size,...,`` then ``size,...,real<TAB>0m0.441s`` per field
_WALL_BASH_TIME = re.compile(r"^\s*(?:\d+,)+(?:(real|user|sys)\t\d+m\d+(?:\.\d+)?s)?\s*$")


def _data_lines(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(0-based index, line) of the lines that are neither blank nor ``# `` comments."""
    return [(i, line) for i, line in enumerate(lines) if line.strip() and not is_preamble(line)]


# --------------------------------------------------------------------------------------------
# timing-table


def _timing_cells(line: str) -> list[str]:
    """The cells of one timing-table line; the one empty cell after the trailing tab dropped."""
    cells = line.rstrip("\n").split("\t")
    if cells and cells[-1].strip() == "":
        cells = cells[:-1]
    return [c.strip() for c in cells]


def sniff_timing_table(head: Sequence[str]) -> bool:
    """A timing table: every data line has a tab and no comma or quote, and the first data line
    is only numbers (or empty cells) with at least one number."""
    data = _data_lines(head)
    if not data:
        return False
    if any("\t" not in line or "," in line or '"' in line for _, line in data):
        return False
    first = _timing_cells(data[0][1])
    return any(first) and all(c == "" or _PLAIN_NUMBER.match(c) for c in first)


def read_timing_table(src: Source, selected: Selection) -> Profile:
    """Read a derived timing table: one launch per measured value, durations ms -> ns.

    ``selected`` (the registry's metric selection) is not used: the table's two index metrics
    are left to :func:`parsers.read`."""
    durations: list[float] = []
    rows: list[int] = []
    cols: list[int] = []
    widths: list[int] = []
    empty_cells = 0
    scientific = 0
    for row, (index, line) in enumerate(_data_lines(src.lines)):
        cells = _timing_cells(line)
        widths.append(len(cells))
        for col, cell in enumerate(cells):
            if cell == "":
                empty_cells += 1
                continue
            value = parse_number(cell) if _PLAIN_NUMBER.match(cell) else float("nan")
            if value != value or value < 0:
                raise src.malformed(
                    index,
                    f"cell {col + 1} is {cell!r}; expected a kernel time in ms "
                    "(a non-negative number) or an empty cell",
                )
            scientific += bool(_SCIENTIFIC.search(cell))
            durations.append(round(value * 1e6, 3))
            rows.append(row)
            cols.append(col)
    n = len(durations)
    launches = pd.DataFrame(
        {"launch_id": range(n), "name": [TIMING_KERNEL] * n, "duration_ns": durations}
    )
    metrics = pd.concat(
        [_index_metrics("input_row", rows), _index_metrics("repeat_index", cols)],
        ignore_index=True,
    ).sort_values("launch_id", kind="stable", ignore_index=True)
    notes = [TIMING_NOTE, "times read as milliseconds: the table has no header and no units"]
    notes += _timing_notes(widths, empty_cells, scientific, rows, durations)
    provenance = Provenance(
        path=src.path, format=TIMING_TABLE, profiler=PROFILER, modes=(TIMING_TABLE,),
        notes=tuple(notes),
    )  # fmt: skip
    return Profile(provenance=(provenance,), launches=launches, metrics=metrics)


def _index_metrics(metric: str, values: list[int]) -> pd.DataFrame:
    """Per-launch metric rows holding a 0-based table position (unit '')."""
    n = len(values)
    return pd.DataFrame(
        {
            "launch_id": range(n),
            "kernel": [TIMING_KERNEL] * n,
            "metric": [metric] * n,
            "tool_metric": [metric] * n,
            "unit": [""] * n,
            "value": [float(v) for v in values],
        }
    )


def _timing_notes(
    widths: list[int], empty_cells: int, scientific: int, rows: list[int], durations: list[float]
) -> list[str]:
    notes: list[str] = []
    if scientific:
        notes.append(
            f"{scientific} values are printed in scientific notation with 3 significant digits "
            "(values >= 1000 ms): they carry only 3 significant digits"
        )
    if len(set(widths)) > 1:
        notes.append(f"ragged rows: {min(widths)} to {max(widths)} columns per row")
    if empty_cells:
        notes.append(f"{empty_cells} empty cells (runs without a value) were skipped")
    by_row: dict[int, set[float]] = {}
    counts: dict[int, int] = {}
    for row, value in zip(rows, durations, strict=True):
        by_row.setdefault(row, set()).add(value)
        counts[row] = counts.get(row, 0) + 1
    same = [r for r, values in by_row.items() if counts[r] > 1 and len(values) == 1]
    if same:
        notes.append(
            f"in {len(same)} of {len(by_row)} rows every repeat has the same value: "
            "those columns may not be independent runs"
        )
    return notes


# --------------------------------------------------------------------------------------------
# wallclock-table


def sniff_wallclock_table(head: Sequence[str]) -> bool:
    """Every data line is ``size, m:ss.sss , m:ss.sss , m:ss.sss`` (/usr/bin/time reshaped), or
    every data line is ``size,...,`` / ``size,...,real<TAB>0m0.441s`` (bash time reshaped)."""
    data = [line for _, line in _data_lines(head)]
    if not data:
        return False
    if all(_WALL_USR_BIN_TIME.match(line) for line in data):
        return True
    matches = [_WALL_BASH_TIME.match(line) for line in data]
    return all(matches) and any(m is not None and m.group(1) for m in matches)


def read_wallclock_table(src: Source, selected: Selection) -> Profile:
    """A wall-clock table has no kernel data: always :class:`NoKernelData` (``selected``, the
    registry's metric selection, is not used)."""
    raise NoKernelData(src.path, WALLCLOCK_MESSAGE)


register(
    TextFormat(
        name=TIMING_TABLE,
        profiler=PROFILER,
        description="derived timing table: tab-separated kernel times in ms (sizes x repeats)",
        sniff=sniff_timing_table,
        read=read_timing_table,
        priority=30,
    )
)
register(
    TextFormat(
        name="r-dataset",
        profiler=PROFILER,
        description="derived R data set (write.csv) of nvprof trace + metric runs per launch",
        sniff=sniff_r_dataset,
        read=read_r_dataset,
        priority=30,
    )
)
register(
    TextFormat(
        name=WALLCLOCK_TABLE,
        profiler=PROFILER,
        description="wall-clock time table (real/user/sys per input size): no kernel data",
        sniff=sniff_wallclock_table,
        read=read_wallclock_table,
        priority=30,
    )
)
