"""The trace tables of nvprof ``--csv`` output -> normalised frames, and the column helpers the
summary tables (:mod:`parsers.nvprof.csv_summaries`) share.

Each builder takes one :class:`Block` (a header, its units row if any, and the data rows found by
:mod:`parsers.nvprof.csv`) and converts units per column with the units row (FORMATS.md §1.2,
§1.3: every column carries its own unit, and the units change from block to block).  nvprof
sizes and throughputs are binary (KB = 1024 B).  Columns are found by name; a missing optional
column leaves the field missing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from advisor import schema
from parsers import arrow_csv
from parsers.frames import device_columns, distinct_rows, gpu_activity_frames, whole_ints
from parsers.names import split_device
from parsers.source import Source
from parsers.units import (
    MISSING_TOKENS,
    fits_int_array,
    is_missing,
    scale_nvprof,
)

#: the columns of a CUDA 7/8 ``--print-gpu-trace`` row (FORMATS.md §1.3 a), assumed for rows
#: whose header was filtered out
HEADERLESS_LAYOUT = (
    "Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z",
    "Registers Per Thread", "Static SMem", "Dynamic SMem", "Size", "Throughput", "Device",
    "Context", "Stream", "Name",
)  # fmt: skip

_UM_COPY = re.compile(r"^\[Unified Memory Memcpy ([A-Za-z]+)\]$")
_LINE = "_line"


@dataclass
class Block:
    """One table of the file: its header, units row and data rows (prefix columns removed)."""

    kind: str
    header: list[str]
    header_line: int  # 0-based line index
    prefix: int  # unquoted columns a script put in front of every line
    units: list[str] | None = None
    units_line: int | None = None
    rows: list[list[str]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # 0-based line index of each row
    headerless: bool = False
    api_section: bool = False  # old summary without Type: rows follow "API calls:"
    #: the rows already read as a frame (:mod:`parsers.arrow_csv`: typed columns, ``_line``)
    #: instead of ``rows`` and ``lines``
    data: pd.DataFrame | None = None

    @property
    def n_rows(self) -> int:
        return len(self.rows) if self.data is None else len(self.data)

    def col(self, name: str) -> int | None:
        """Index of the first column called ``name``."""
        return self.header.index(name) if name in self.header else None

    def frame(self) -> pd.DataFrame:
        """The rows as strings, one column per header position, plus the line index (or the
        frame read by pyarrow, numbers already floats)."""
        if self.data is not None:
            return self.data
        frame = pd.DataFrame(self.rows, columns=range(len(self.header)), dtype=object)
        frame[_LINE] = self.lines
        return frame


def note(notes: list[str], text: str) -> None:
    if text not in notes:
        notes.append(text)


def text_column(block: Block, frame: pd.DataFrame, name: str) -> pd.Series:
    """Stripped strings of column ``name``; empty cells (or no such column) -> NA.  A column
    read by pyarrow stays categorical (each distinct text stripped once)."""
    j = block.col(name)
    if j is None:
        return pd.Series(pd.NA, index=frame.index, dtype="string")
    if isinstance(frame[j].dtype, pd.CategoricalDtype):  # read by pyarrow: stays categorical
        return arrow_csv.without_placeholders(frame[j], _stripped, _BLANK, strip=True)
    return _stripped(frame[j].astype("string"))


#: what an empty cell holds once stripped
_BLANK = frozenset({""})


def _stripped(text: pd.Series) -> pd.Series:
    text = text.str.strip()
    return text.mask(text == "")


def number_column(
    src: Source, block: Block, frame: pd.DataFrame, name: str, factor: float = 1.0
) -> pd.Series:
    """Column ``name`` as floats times ``factor``; placeholders -> NaN; other text is
    MalformedInput on its line."""
    j = block.col(name)
    if j is None:
        return pd.Series(np.nan, index=frame.index, dtype=float)
    if frame[j].dtype == np.float64:  # read by pyarrow, placeholders already NaN
        return frame[j] if factor == 1.0 else frame[j] * factor
    raw = frame[j].astype(str).str.strip()
    missing = raw.isin(MISSING_TOKENS)
    num = pd.to_numeric(raw.mask(missing), errors="coerce")
    bad = num.isna() & ~missing
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise src.malformed(
            int(frame[_LINE].iloc[pos]),
            f"column {name!r}: expected a number, got {raw.iloc[pos]!r}",
        )
    return num.astype(float) * factor


def integer_column(src: Source, block: Block, frame: pd.DataFrame, name: str) -> pd.Series:
    """Column ``name`` of whole numbers (grid, registers, ids, counts) as floats; a fraction or a
    number too large for a count is MalformedInput on its line."""
    values = number_column(src, block, frame, name)
    if block.data is not None:  # read by pyarrow: the fast path checked them (nvprof_csv.py)
        return values
    bad = values.notna() & ~fits_int_array(values)
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise src.malformed(
            int(frame[_LINE].iloc[pos]),
            f"column {name!r}: expected a whole number, got {frame[block.col(name)].iloc[pos]!r}",
        )
    return values


def unit_factor(src: Source, block: Block, name: str, base: str) -> float | None:
    """The factor turning column ``name`` into ``base`` (ns, byte, frac) by the units row;
    None when the file does not say (no units row, or an empty unit)."""
    j = block.col(name)
    if j is None or block.units is None or not block.units[j]:
        return None
    unit = block.units[j]
    line = block.units_line if block.units_line is not None else block.header_line
    try:
        factor, got = scale_nvprof(1.0, unit)
    except ValueError:
        raise src.malformed(line, f"unknown unit {unit!r} for column {name!r}") from None
    if got != base:
        raise src.malformed(line, f"column {name!r} has unit {unit!r}, expected a {base} unit")
    return factor


def _per_row(per_block: list[float | None], blocks: list[Block]) -> np.ndarray:
    """Per row, the factor of its own block (``per_block``: from each block's units row); NaN
    where the block does not give the unit."""
    return np.repeat(
        np.array([math.nan if f is None else f for f in per_block], dtype=float),
        [b.n_rows for b in blocks],
    )


def time_factor(src: Source, block: Block, name: str, notes: list[str]) -> float:
    """The factor turning time column ``name`` into ns; ns is assumed (with a note) when the
    file does not print the unit (the ``nvprof -u ns`` idiom of scripts that cut the header)."""
    factor = unit_factor(src, block, name, "ns")
    if factor is None and block.col(name) is not None:
        why = "the rows have no header and no units row" if block.headerless else "no unit given"
        note(notes, f"time unit assumed ns (the nvprof -u ns idiom) for {name!r}: {why}")
    return 1.0 if factor is None else factor


def _time(
    src: Source, blocks: list[Block], frame: pd.DataFrame, name: str, notes: list[str]
) -> pd.Series:
    factors = [time_factor(src, b, name, notes) for b in blocks]
    values = number_column(src, blocks[0], frame, name)
    if len(set(factors)) == 1:  # one unit for every row (a trace of one block): no per-row array
        return values if factors[0] == 1.0 else values * factors[0]
    per_row = np.repeat(np.array(factors, dtype=float), [b.n_rows for b in blocks])
    return values if bool((per_row == 1.0).all()) else values * per_row


def _size(
    src: Source, blocks: list[Block], frame: pd.DataFrame, name: str, notes: list[str]
) -> pd.Series:
    """A size column in bytes; without a unit only zeros are kept (0 is 0 in any unit)."""
    values = number_column(src, blocks[0], frame, name)
    per_block = [unit_factor(src, b, name, "byte") for b in blocks]
    if len(set(per_block)) == 1 and per_block[0] is not None:  # one printed unit for every row
        return values if per_block[0] == 1.0 else values * per_block[0]
    factors = _per_row(per_block, blocks)
    unknown = np.isnan(factors) & values.notna().to_numpy() & (values != 0).to_numpy()
    if unknown.any():
        note(
            notes,
            f"{name!r} left missing where not 0: the size unit is not printed and nvprof "
            "picks B/KB/MB/GB per run",
        )
    factors = np.where(np.isnan(factors), 1.0, factors)
    scaled = values if bool((factors == 1.0).all()) else values * factors
    return scaled.mask(unknown) if unknown.any() else scaled


def gpu_trace_rows(src: Source, blocks: list[Block], notes: list[str]) -> pd.DataFrame:
    """``--print-gpu-trace`` rows of blocks with one header (both header generations,
    FORMATS.md §1.3) in normalised units, kernels and copies still mixed (see
    :func:`activity_frames`), with the line index in ``_line``.  Each block's rows are scaled
    by that block's units row.

    Unified Memory page-fault rows (``[Unified Memory CPU page faults]``: only Start filled,
    ``"PC 0x5e240510"`` strings) are skipped; ``[Unified Memory Memcpy HtoD]`` rows become
    ``UM-HtoD`` transfers whose size is in the ``Unified Memory`` column."""
    block = blocks[0]
    # one block (every fast-path trace) is not copied: its columns are let go as converted
    many = len(blocks) > 1
    frame = pd.concat([b.frame() for b in blocks], ignore_index=True) if many else block.frame()
    names = text_column(block, frame, "Name")
    is_um_row = names.str.startswith("[Unified Memory ").fillna(False).astype(bool)
    if not is_um_row.any():  # the usual trace: no Unified Memory rows to rename or skip
        return _trace_frame(src, blocks, frame, names, notes)
    names = names.astype("string")  # rows are renamed and blanked below: strings, not categories
    texts = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    frame = frame.astype(dict.fromkeys(texts, "string"))
    um_copy = names[is_um_row].str.extract(_UM_COPY, expand=False).reindex(names.index)
    skip = (is_um_row & um_copy.isna()).to_numpy()
    if skip.any():
        counts = names[skip].value_counts(sort=False)
        what = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
        note(notes, f"rows that are not kernels or transfers skipped: {what}")
        keep = ~skip
        frame = frame[keep].reset_index(drop=True)
        names, um_copy = names[keep].reset_index(drop=True), um_copy[keep].reset_index(drop=True)
        parts = zip(blocks, _split(keep, blocks), strict=True)
        blocks = [_trimmed(b, keep_b) for b, keep_b in parts]
    is_um = um_copy.notna()
    names = names.mask(is_um, "[CUDA Unified Memory memcpy " + um_copy + "]")
    size = _size(src, blocks, frame, "Size", notes)
    if block.col("Unified Memory") is not None and is_um.any():
        um_frame = frame.where(is_um, "").assign(**{_LINE: frame[_LINE]})
        size = size.mask(is_um, _size(src, blocks, um_frame, "Unified Memory", notes))
    return _trace_frame(src, blocks, frame, names, notes, size)


def _trace_frame(
    src: Source,
    blocks: list[Block],
    frame: pd.DataFrame,
    names: pd.Series,
    notes: list[str],
    size: pd.Series | None = None,
) -> pd.DataFrame:
    """The normalised gpu-trace rows of ``frame`` (names already settled, ``size`` when the
    Unified Memory rows changed it)."""
    block = blocks[0]
    if size is None:
        size = _size(src, blocks, frame, "Size", notes)
    device, device_id = device_columns(text_column(block, frame, "Device"))
    # built without copying the columns (``copy=False``), and each integer column let go from
    # the parsed rows once converted: a million rows are not held twice
    rows = pd.DataFrame(
        {
            "name": names,
            "start_ns": _time(src, blocks, frame, "Start", notes),
            "duration_ns": _time(src, blocks, frame, "Duration", notes),
            "static_shared_bytes": _size(src, blocks, frame, "Static SMem", notes),
            "dynamic_shared_bytes": _size(src, blocks, frame, "Dynamic SMem", notes),
            "bytes": size,
            "src_kind": text_column(block, frame, "SrcMemType"),
            "dst_kind": text_column(block, frame, "DstMemType"),
            "device": device,
            "device_id": device_id,
            _LINE: frame[_LINE],
        },
        copy=False,
    )
    del names, size, device, device_id
    for col, name in (("grid_x", "Grid X"), ("grid_y", "Grid Y"), ("grid_z", "Grid Z"),
                      ("block_x", "Block X"), ("block_y", "Block Y"), ("block_z", "Block Z"),
                      ("registers_per_thread", "Registers Per Thread"), ("context", "Context"),
                      ("stream", "Stream"), ("correlation_id", "Correlation_ID")):  # fmt: skip
        values = integer_column(src, block, frame, name).to_numpy()
        j = block.col(name)
        if block.data is not None and j is not None and j in frame.columns:
            del frame[j]  # the parsed floats go once converted
        rows[col] = pd.Series(whole_ints(values), index=rows.index, copy=False)
        del values
    if block.headerless and len(rows):
        _check_headerless_times(rows, notes)
    return rows


def _split(mask: np.ndarray, blocks: list[Block]) -> list[np.ndarray]:
    bounds = np.cumsum([b.n_rows for b in blocks])[:-1]
    return list(np.split(mask, bounds))


def _trimmed(block: Block, keep: np.ndarray) -> Block:
    """``block`` with only the rows ``keep`` marks (for the per-row units)."""
    if block.data is not None:
        return replace(block, data=block.data[keep].reset_index(drop=True))
    rows = [r for r, k in zip(block.rows, keep, strict=True) if k]
    lines = [ln for ln, k in zip(block.lines, keep, strict=True) if k]
    return replace(block, rows=rows, lines=lines)


def _check_headerless_times(rows: pd.DataFrame, notes: list[str]) -> None:
    note(
        notes,
        "rows without a header: columns assumed to be the CUDA 7/8 --print-gpu-trace layout ("
        + ", ".join(HEADERLESS_LAYOUT)
        + ")",
    )
    times = pd.concat([rows["start_ns"], rows["duration_ns"]]).dropna()
    if ((times % 1) != 0).any():
        note(notes, "some Start/Duration values are fractional, unusual for ns: check the unit")


def activity_frames(parts: list[pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All gpu-trace rows of the file, put back in file order -> (launches, transfers).
    ``parts`` is emptied: its frames are consumed (:func:`~parsers.frames.gpu_activity_frames`).
    """
    rows = [p for p in parts if len(p)]
    parts.clear()  # the rows live on in ``merged`` only: it is consumed column by column
    if not rows:
        return schema.empty("launches"), schema.empty("transfers")
    merged = rows[0] if len(rows) == 1 else pd.concat(rows, ignore_index=True)
    del rows
    if not merged[_LINE].is_monotonic_increasing:
        merged = merged.sort_values(_LINE, kind="stable").reset_index(drop=True)
    del merged[_LINE]
    return gpu_activity_frames(merged)


def concat(frames: list[pd.DataFrame], table: str) -> pd.DataFrame:
    non_empty = [f for f in frames if len(f)]
    if not non_empty:
        return schema.empty(table)
    return pd.concat([schema.validate(table, f) for f in non_empty], ignore_index=True)


def block_devices(block: Block) -> list[tuple[int, str]]:
    """(device id, name) of the ``Device`` cells of a table that has no frame of its own for
    them (the unified-memory summary keeps only the name)."""
    j = block.col("Device")
    found = (split_device(row[j]) for row in block.rows) if j is not None else iter(())
    return [(i, name) for name, i in found if i is not None]


def devices_frame(frames: dict[str, pd.DataFrame], extra: list[tuple[int, str]]) -> pd.DataFrame:
    """One row per (device id, name) seen in launches, transfers, metrics and ``extra``."""
    parts = [  # each table's distinct pairs first: a trace repeats one device a million times
        distinct_rows(frames[t], ["device_id", "device"])
        for t in ("launches", "transfers", "metrics")
    ]
    parts.append(pd.DataFrame(extra, columns=["device_id", "device"]))
    seen = pd.concat([p for p in parts if len(p)] or [parts[0]], ignore_index=True)
    seen = seen.dropna(subset=["device_id"]).drop_duplicates()
    seen = seen.rename(columns={"device": "name"}).sort_values(["device_id", "name"])
    return seen.reset_index(drop=True) if len(seen) else schema.empty("devices")


def is_placeholder(cell: str) -> bool:
    """A non-empty placeholder token such as ``<OVERFLOW>`` (kept as metrics text)."""
    return bool(cell.strip()) and is_missing(cell)
