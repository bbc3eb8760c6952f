"""Cells of one Nsight Systems report table, by column name and with units (FORMATS.md §3).

A :class:`Table` is what :mod:`parsers.nsys.csv` cuts out of a file: the header cells and the rows
of cells, with their line numbers.  :class:`Columns` gives typed access to its columns by key
(:func:`header_key`): text, numbers scaled by the unit in the header's parentheses, whole numbers;
any cell that is not a number (or a placeholder such as an empty cell or ``n/a``) raises
MalformedInput naming the line and the column.  Thousands separators (``1,831,281``) are accepted
for the column-aligned text tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers import arrow_csv
from parsers.frames import whole_ints
from parsers.source import Source
from parsers.units import MISSING_TOKENS, TIME_NS, fits_int_array, scale_nsys_header

#: header name (lower case, blanks and underscores removed) -> key
_KEYS = {
    "totaltime": "total_time", "instances": "instances",
    "numcalls": "calls", "calls": "calls", "count": "count", "operations": "count",
    "avg": "avg", "average": "avg", "med": "med", "median": "med",
    "min": "min", "minimum": "min", "max": "max", "maximum": "max", "stddev": "stddev",
    "total": "total", "name": "name", "operation": "operation",
    "start": "start", "starttime": "start", "duration": "duration", "corrid": "corr",
    "grdx": "grid_x", "grdy": "grid_y", "grdz": "grid_z",
    "blkx": "block_x", "blky": "block_y", "blkz": "block_z", "reg/trd": "regs",
    "stcsmem": "static_smem", "dymsmem": "dynamic_smem", "bytes": "bytes",
    "srcmemkd": "src_kind", "dstmemkd": "dst_kind", "device": "device", "ctx": "ctx",
    "strm": "strm", "result": "result", "pid": "pid", "tid": "tid", "gridxyz": "grid_xyz",
}  # fmt: skip
#: every key a header cell can map to
KNOWN_KEYS = frozenset({*_KEYS.values(), "time_pct"})
_HEADER_UNIT = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
_GROUPED = r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?"
_SIZE_UNITS = {"byte": "B", "bytes": "B"}


def header_key(cell: str) -> tuple[str, str | None]:
    """``'Avg (ns)'`` -> ``('avg', 'ns')``; ``'Time(%)'`` -> ``('time_pct', '%')``;
    ``'CorrID'`` -> ``('corr', None)``.  Unknown names keep their normalised spelling."""
    cell = cell.strip()
    unit: str | None = None
    m = _HEADER_UNIT.match(cell)
    if m and m.group(1):
        cell, unit = m.group(1), m.group(2).strip()
    norm = re.sub(r"[\s_]+", "", cell.lower())
    if norm == "time" and unit == "%":
        return "time_pct", unit
    return _KEYS.get(norm, norm), unit


@dataclass
class Table:
    """One report table as printed: header cells, rows of cells, and where they are."""

    header: list[str]
    header_index: int  # 0-based line of the header
    rows: list[list[str]] = field(default_factory=list)
    row_index: list[int] = field(default_factory=list)  # 0-based line of each row
    report: str | None = None  # named by a Processing line / section title (canonical name)
    text: bool = False  # column-aligned text output (thousands separators, padded cells)
    title_unit: str | None = None  # unit from a text section title, "(by size in KiB)"
    #: the rows already read as a frame by :mod:`parsers.arrow_csv` (the used columns only,
    #: numbers as floats, checked) instead of ``rows`` and ``row_index``
    data: pd.DataFrame | None = None


class Columns:
    """Typed access to one table's columns by key, raising MalformedInput with the line."""

    def __init__(self, table: Table, report: str, src: Source, note: Callable[[str], None]) -> None:
        self.table, self.report, self.src, self.note = table, report, src, note
        self.index: dict[str, int] = {}
        self.units: dict[str, str | None] = {}
        for i, cell in enumerate(table.header):
            key, unit = header_key(cell)
            self.index.setdefault(key, i)
            self.units.setdefault(key, unit)
        width = len(table.header)
        if table.data is not None:  # pyarrow checked the widths
            self.cells = table.data
            return
        for cells, line in zip(table.rows, table.row_index, strict=True):
            if len(cells) != width:
                raise src.malformed(
                    line,
                    f"{report}: row has {len(cells)} fields, the header has {width} "
                    "(names with commas must be quoted)",
                )
        self.cells = pd.DataFrame(table.rows, columns=range(width), dtype=object)

    def release(self, key: str) -> None:
        """Let go of column ``key`` of the rows pyarrow read (a converted column is not kept
        twice); nothing for rows of cells."""
        j = self.index.get(key)
        if self.table.data is not None and j is not None and j in self.cells:
            del self.cells[j]

    def raw(self, key: str) -> pd.Series:
        if key in self.index and self.index[key] in self.cells:
            return self.cells[self.index[key]]
        return self._empty()

    def text(self, key: str) -> pd.Series:
        """Cells as strings, blanks and placeholder tokens as missing (categorical, each distinct
        text looked at once, when pyarrow read the column)."""
        raw = self.raw(key)
        if isinstance(raw.dtype, pd.CategoricalDtype):
            return arrow_csv.without_placeholders(raw, self._text, MISSING_TOKENS, self.table.text)
        return self._text(raw.astype("string"))

    def _text(self, cells: pd.Series) -> pd.Series:
        if self.table.text:
            cells = cells.str.strip()
        return cells.mask(cells.str.strip().isin(MISSING_TOKENS))

    def present(self, key: str) -> pd.Series:
        """True where the cell holds a value (not blank, not a placeholder token)."""
        if self.raw(key).dtype == "float64":  # read by pyarrow, placeholders already NaN
            return self.raw(key).notna()
        return self.text(key).notna()

    def number(self, key: str, factor: float = 1.0) -> pd.Series:
        """Cells as floats times ``factor``; anything but a number or a placeholder is an error."""
        if key not in self.index:
            return pd.Series([float("nan")] * len(self.cells), dtype="float64")
        if self.raw(key).dtype == "float64":  # read by pyarrow, placeholders already NaN
            return self.raw(key) if factor == 1.0 else self.raw(key) * factor
        cells = self.raw(key).astype("string").str.strip()
        missing = cells.isna() | cells.isin(MISSING_TOKENS)
        cleaned = cells
        if cells.str.contains(",", regex=False).any():  # thousands separators (text tables)
            grouped = cells.str.fullmatch(_GROUPED).fillna(False).astype(bool)
            cleaned = cells.where(~grouped, cells.str.replace(",", "", regex=False))
        values = pd.to_numeric(cleaned.mask(missing), errors="coerce").astype("float64")
        bad = values.isna() & ~missing
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise self.src.malformed(
                self.table.row_index[row],
                f"{self.report}: column {self._header(key)!r}: expected a number, "
                f"found {self.cells.iat[row, self.index[key]]!r}",
            )
        return values * factor

    def integer(self, key: str) -> pd.Series:
        values = self.number(key)
        floats = values.to_numpy()
        missing = np.isnan(floats)
        bad = missing[:0]  # pyarrow's rows: nsys_csv.py checked them
        if self.table.data is None:
            bad = ~(missing | fits_int_array(floats))
        if bad.any():
            row = int(values.index[bad][0])
            raise self.src.malformed(
                self.table.row_index[row],
                f"{self.report}: column {self._header(key)!r}: expected a whole number, "
                f"found {self.cells.iat[row, self.index[key]]!r}",
            )
        return pd.Series(whole_ints(floats), index=values.index)

    def time_factor(self, key: str) -> float:
        """ns per unit of a time column: its header unit, else the unit of ``Total Time`` or of
        the section title (2020.x ``Average``/``Minimum``), else ns (noted)."""
        unit = self.units.get(key) or self.units.get("total_time") or self.table.title_unit
        if unit is None:
            if key in self.index:
                self.note(f"{self.report}: time columns have no unit, read as ns")
            unit = "ns"
        factor = TIME_NS.get(unit)
        if factor is None:
            raise self.src.malformed(
                self.table.header_index,
                f"{self.report}: column {self._header(key)!r}: unknown time unit {unit!r} "
                "(expected ns, us, ms or s)",
            )
        return factor

    def size_factor(self, key: str, default: str, why: str) -> float:
        """Bytes per unit of a size column (nsys MB is decimal, KiB binary)."""
        unit = self.units.get(key) or self.table.title_unit
        if unit is None:
            if key in self.index:
                self.note(why)
            unit = default
        try:
            factor, base = scale_nsys_header(_SIZE_UNITS.get(unit, unit))
        except ValueError:
            base = ""
        if base != "byte":
            raise self.src.malformed(
                self.table.header_index,
                f"{self.report}: column {self._header(key)!r}: unknown size unit {unit!r} "
                "(expected B, KiB, MiB, KB, MB or GB)",
            )
        return factor

    def _header(self, key: str) -> str:
        return self.table.header[self.index[key]].strip()

    def _empty(self) -> pd.Series:
        return pd.Series([None] * len(self.cells), dtype=object)
