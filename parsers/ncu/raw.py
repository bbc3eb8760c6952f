"""A columnar reader for the Nsight Compute ``--page raw`` table (FORMATS.md §2.3).

The raw page is wide: one row per launch, one column per metric, a units row below the header.
:func:`read_raw_columns` reads the table with pyarrow's CSV reader, straight from the file's
bytes when :mod:`parsers.ncu.csv` found the table to run to the end of the file: first the units
row alone, which with the header gives every column's canonical metric name, then the rows,
converting only the identification columns and the metric columns the read keeps (the metric
selection of ``report``, which :func:`parsers.read` hands to the format's reader and that one to
:func:`read_raw_cells`).  Each kept metric column is converted at once and the grid melted into
the long ``metrics`` table (:mod:`parsers.ncu.melt`), so a page of ten
thousand launches by five hundred metrics costs a few passes over its columns rather than one
Python step per cell.  The conversions are those of :mod:`parsers.ncu.values` (FORMATS.md §2.5):

* A column whose every non-blank cell is a plain finite decimal number (the usual case) is cast
  in one step; any other column (``n/a``, ``PolicySpread``, ``1,234``) is parsed once per
  distinct cell by :func:`parsers.ncu.values.parse_cells`, its non-numbers kept as text.
* Each column's printed unit is resolved once (:func:`parsers.ncu.values.canonical`) and its
  values scaled by the factor with numpy.
* Blank cells give no metrics row, as on the row-by-row path.

It returns None, and the caller takes the row-by-row path of :mod:`parsers.ncu.csv_layouts`
(with its line-precise error messages and locale handling), when pyarrow is not installed, when
a row does not have the header's width, when an ``ID`` other than the units row's is blank, or
when a cell can only be read with a decimal comma.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parsers.ncu.frames import DEVICE_TOOL_METRICS, LAUNCH_TOOL_METRICS
from parsers.ncu.melt import Grid, kept_columns, melt
from parsers.ncu.values import IMPLIED_UNITS, canonical, decimal_comma_style, parse_cells

try:  # optional: without pyarrow every raw page takes the row-by-row path
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]
    import pyarrow.csv as pacsv  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - pyarrow ships with the supported pandas installs
    pa = None


#: raw-page columns always read: the launch and device facts of :mod:`parsers.ncu.frames`
ALWAYS_READ = frozenset(LAUNCH_TOOL_METRICS + DEVICE_TOOL_METRICS)
#: bytes pyarrow parses at a time, in one thread: a block's cells (of every column) are held
#: while it is converted, and parallel reading holds several blocks at once for little gain
BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class FileRows:
    """The table's rows as the file ``path`` from byte ``offset`` to its end: pyarrow reads them
    from the file, so the file's bytes need not be held while their cells are parsed."""

    path: str
    offset: int


#: the table's rows: the file's bytes from the first row on, the same read from the file, or
#: the rows as lines of text
Rows = memoryview | bytes | FileRows | Sequence[str]
#: column index -> the column's cells (text), for the columns read
Columns = dict[int, "pa.Array"]


class _Fallback(Exception):
    """The table needs the row-by-row path."""


@dataclass
class RawCells:
    """The cells a raw table's read keeps: ``columns`` (identification columns and the
    ``picked`` metric columns), the units row (None when the table has none) and the metric
    selection they were read for (``selected``)."""

    header: Sequence[str]
    is_metric: Sequence[bool]
    columns: Columns
    picked: list[int]
    units: list[str] | None
    selected: Callable[[str], bool] | None


@dataclass
class RawPage:
    """A raw table as frames: ``ids`` (the identification columns, one row per launch, cells as
    printed), ``metrics`` (``launch_id`` from 0, ``metric``, ``tool_metric``, ``unit``,
    ``value``, ``text``, ``kernel``; launch-major in header order, names categorical) and
    ``facts``, the grid of every column read, which the launches and devices are built from
    (:mod:`parsers.ncu.frames`) whatever rows ``metrics`` leaves out."""

    ids: pd.DataFrame
    metrics: pd.DataFrame
    facts: Grid
    notes: list[str]


def read_raw_cells(
    header: Sequence[str],
    rows: Rows,
    is_metric: Sequence[bool],
    selected: Callable[[str], bool] | None,
) -> RawCells | None:
    """The cells of a raw table, or None (take the row-by-row path: module docstring).

    ``rows`` are the table's rows after the header (units row first when there is one), as the
    file's bytes or as lines; nothing returned refers to them.  ``selected``: the metric
    selection of the read, a predicate over canonical metric names (None: every metric)."""
    if pa is None or (not isinstance(rows, FileRows) and not len(rows)):
        return None
    data = rows if isinstance(rows, FileRows) else _bytes(rows)
    try:
        first = _read(header, _first_line(data), range(len(header)))
        units = _units(header, first)
        picked = _picked(header, units, is_metric, selected)
        every = [i for i, m in enumerate(is_metric) if m]
        wanted = [i for i, m in enumerate(is_metric) if not m] + picked
        columns = _read(header, data, wanted if picked != every else range(len(header)))
        start = 1 if units is not None else 0
        if picked != every and not _valued(columns, picked, start).all():
            # a launch whose only values lie in the columns left out: keep every column
            # when leaving them out would leave it without any metric value (see _selected)
            columns = _read(header, data, range(len(header)))
            picked = _selected(picked, every, columns, start)
    except _Fallback:
        return None
    finally:
        # pyarrow's allocator keeps freed pages: give the parser's blocks back to the system
        pa.default_memory_pool().release_unused()
    return RawCells(header, is_metric, columns, picked, units, selected)


def convert_raw_cells(cells: RawCells, alone: bool) -> RawPage | None:
    """The frames of a raw table's cells, or None (take the row-by-row path).

    ``alone``: the table is its file's only one; the metrics rows then leave out, where
    :func:`parsers.read` would drop them, the rows of the columns read only for the launch and
    device facts (:func:`parsers.ncu.melt.kept_columns`, with the selection the cells were read
    for)."""
    try:
        return _convert(cells, alone)
    except _Fallback:
        return None
    finally:
        # the cells are read: let them go (their pyarrow buffers) before the pool gives the
        # freed pages back, as in _read, with those of the columns' conversions
        cells.columns.clear()
        pa.default_memory_pool().release_unused()


def _bytes(rows: memoryview | bytes | Sequence[str]) -> memoryview:
    if isinstance(rows, memoryview | bytes):
        return memoryview(rows)
    return memoryview(("\n".join(rows) + "\n").encode("utf-8"))


def _first_line(data: memoryview | FileRows) -> memoryview:
    """The first line of ``data`` with its newline (all of it when there is none)."""
    if isinstance(data, FileRows):
        try:
            with open(data.path, "rb") as file:
                file.seek(data.offset)
                return memoryview(file.readline())
        except OSError as exc:  # gone or unreadable since it was read: the row-by-row path
            raise _Fallback from exc
    octets = np.frombuffer(data, dtype=np.uint8)
    step = 1 << 16
    for at in range(0, len(octets), step):
        hits = np.flatnonzero(octets[at : at + step] == 10)
        if len(hits):
            return data[: at + int(hits[0]) + 1]
    return data


def _read(header: Sequence[str], data: memoryview | FileRows, wanted: Sequence[int]) -> Columns:
    """The cells of the ``wanted`` columns (every cell as text); pyarrow checks every row's
    width against the header whatever is converted."""
    if isinstance(data, FileRows):  # read from the file, from the table's first row on
        try:
            with pa.OSFile(data.path) as file:
                file.seek(data.offset)
                return _read_from(header, file, wanted)
        except OSError as exc:  # gone or unreadable since it was read: the row-by-row path
            raise _Fallback from exc
    return _read_from(header, pa.py_buffer(data), wanted)


def _read_from(header: Sequence[str], source: object, wanted: Sequence[int]) -> Columns:
    """:func:`_read` of the rows in ``source`` (a pyarrow buffer or a file positioned on them)."""
    names = [f"c{i}" for i in range(len(header))]
    keep = [names[i] for i in wanted]
    try:
        table = pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(
                column_names=names, block_size=BLOCK_BYTES, use_threads=False
            ),
            parse_options=pacsv.ParseOptions(newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                include_columns=keep,
                column_types=dict.fromkeys(keep, pa.large_string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # ragged rows, stray quotes
        raise _Fallback from exc
    return {i: table.column(k).combine_chunks() for k, i in enumerate(wanted)}


def _units(header: Sequence[str], first: Columns) -> list[str] | None:
    """The units row's cells (its ``ID`` cell is blank), or None when the first row is a launch;
    ``first`` holds the first row of every column (FORMATS.md §2.3)."""
    if pc.utf8_trim_whitespace(first[list(header).index("ID")])[0].as_py():
        return None
    return [str(first[i][0].as_py()) for i in range(len(first))]


def _picked(
    header: Sequence[str],
    units: list[str] | None,
    is_metric: Sequence[bool],
    keep: Callable[[str], bool] | None,
) -> list[int]:
    """The metric columns the selection ``keep`` accepts and :data:`ALWAYS_READ` (every metric
    column when nothing is selected), judged on the names and units alone."""
    every = [i for i, m in enumerate(is_metric) if m]
    if keep is None:
        return every
    unit_of = units if units is not None else [""] * len(header)
    return [
        i for i in every if header[i] in ALWAYS_READ or keep(canonical(header[i], unit_of[i])[0])
    ]


def _valued(columns: Columns, indices: Sequence[int], start: int) -> np.ndarray:
    """Per launch: does any of the ``indices`` columns have a non-blank cell?"""
    out = np.zeros(len(columns[0]) - start, dtype=bool)
    for i in indices:
        cells = pc.utf8_trim_whitespace(columns[i].slice(start))
        out |= pc.not_equal(cells, "").to_numpy(zero_copy_only=False)
    return out


def _selected(picked: list[int], every: list[int], columns: Columns, start: int) -> list[int]:
    """``picked``, or every metric column when leaving the others out would leave a launch
    without any metric value it has (the analysis tells launches with metric rows of their own
    from those without)."""
    has = _valued(columns, picked, start)
    left = sorted(set(every) - set(picked))
    if (_valued(columns, left, start) & ~has).any():
        return every
    return picked


def _convert(cells: RawCells, alone: bool) -> RawPage:
    header, columns, picked, units_row = cells.header, cells.columns, cells.picked, cells.units
    ids_col = pc.utf8_trim_whitespace(columns[list(header).index("ID")])
    notes: list[str] = []
    start = 1 if units_row is not None else 0
    if units_row is None:
        notes.append("raw page without a units row: metric values taken as printed")
    if len(ids_col) > start and not pc.all(pc.not_equal(ids_col.slice(start), "")).as_py():
        raise _Fallback  # a second units row: the row-by-row path names its line
    units = units_row if units_row is not None else [""] * len(header)
    ids = pd.DataFrame(
        {
            h: pc.dictionary_encode(columns[i].slice(start)).to_pandas()
            for i, h in enumerate(header)
            if not cells.is_metric[i]
        }
    ).copy(deep=True)  # codes in numpy's memory: nothing holds pyarrow's pages once read
    rows, width = len(ids_col) - start, len(picked)
    values = np.empty((rows, width), dtype=float)
    keep = np.empty((rows, width), dtype=bool)
    texts: list[tuple[int, np.ndarray]] = []
    slow: list[pa.Array] = []
    for j, i in enumerate(picked):
        column = pc.utf8_trim_whitespace(columns[i].slice(start))
        blank = pc.equal(column, "").to_numpy(zero_copy_only=False)
        keep[:, j] = ~blank
        number = _fast_numbers(column, blank)
        if number is None:
            slow.append(column.filter(pa.array(~blank)))
            raw = column.to_numpy(zero_copy_only=False).astype(object)
            number = parse_cells(pd.Series(raw, dtype=object))
            is_text = np.isnan(number) & ~blank
            if is_text.any():
                text = np.full(len(raw), None, dtype=object)
                text[is_text] = raw[is_text]
                texts.append((j, text))
        values[:, j] = number * canonical(header[i], units[i])[1]
    columns.clear()  # every cell is converted: the pages go back before the grid is melted
    pa.default_memory_pool().release_unused()
    if slow:
        comma, mixed = decimal_comma_style(pd.Series(pa.concat_arrays(slow).to_pylist()))
        if comma or mixed:
            raise _Fallback
    info = [(*canonical(header[i], units[i]), header[i]) for i in picked]
    grid = Grid(info, values, keep, texts, ids["Kernel Name"])
    kept = kept_columns(grid, cells.selected if alone else None)
    metrics = melt(grid, kept)
    implied = {
        IMPLIED_UNITS[header[i]]
        for i in picked
        if header[i] in IMPLIED_UNITS and not units[i].strip()
    }
    if "Khz" in implied:
        notes.append("device clock attributes with a blank unit read as kHz (CUDA's unit)")
    return RawPage(ids, metrics, grid, notes)


def _fast_numbers(cells: pa.Array, blank: np.ndarray) -> np.ndarray | None:
    """The column as floats when every non-blank cell is a plain finite number, else None."""
    present = cells if not blank.any() else pc.if_else(pa.array(blank), None, cells)
    try:
        number = pc.cast(present, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    number = np.asarray(number, dtype=float)
    if not np.isfinite(number[~blank]).all():  # "inf", "nan": text for parse_cells to judge
        return None
    return number
