"""The fast path for one big GPU-trace table of nvprof's plain-text output (no ``--csv``).

``nvprof --print-gpu-trace`` printed to a terminal or a ``--log-file``
(``../shared/docs/FORMATS.md`` §1.3, last bullet) is a few ``==PID==`` lines, one fixed-width
header and then one row per kernel or copy, often a million of them.  The line reader
(:mod:`parsers.nvprof.text`, :mod:`parsers.nvprof.text_rows`) splits each row by the header's
column spans and parses every cell in Python (about 38 µs and 2.6 KB per row).
:func:`read_trace` reads the same table by columns instead:

* the rows' byte offsets are found with numpy on the file's bytes (the newlines, and any control
  or non-ASCII byte), 16 MiB at a time;
* each column is cut out of every row at once as a fixed-width slice (``pyarrow.compute``) by the
  header's spans, exactly as :func:`~parsers.nvprof.text_rows.split_fixed` cuts one row;
* numbers with their units glued on (``1.183826s``, ``129.518us``, ``1024.000KB``) are split by
  one regular expression per column, the numbers converted by Arrow (correctly rounded, as
  Python's ``float``) and scaled by the factor of each distinct unit, the same factors and the
  same float64 product as :func:`~parsers.units.scale_nvprof`; grid and block sizes
  ``(1024 1 1)`` and whole numbers likewise;
* names and other texts are looked at once per distinct text (stripped, split, classified in
  Python as the line reader does).

It produces the frame the line reader's rows make (the keys of
:func:`~parsers.nvprof.text_rows.activity_row`, plus ``start_ns`` and ``duration_ns``); the rest
of the reader is unchanged.  It answers None, and the file is read line by line, whenever it
cannot show that the line reader would read every row the same way without an error: a units row
under the header, a cell that is not one of the plain spellings above (a bare number, a sign, an
exponent, a placeholder other than ``-``, an unknown unit), a value that does not end flush with
its column or runs into the next one, text between the last column and ``Name``, a row without a
name, a tab, a carriage return or another control byte in the rows, a byte that is not ASCII left
of ``Name``, a Unified Memory row, an API call mixed into the trace (``--print-api-trace``), or a
line right after the rows that does not end the table (blank, ``==PID==``, a legend line).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from parsers.names import split_correlation, split_device, transfer_kind
from parsers.nvprof.text_rows import Column, header_columns, units_row
from parsers.source import Source, is_preamble, line_offset
from parsers.units import BINARY, TIME_NS, is_missing

#: below this many bytes the line reader is as fast and the fast path is not tried
MIN_BYTES = 64 << 10
#: the bytes are searched for newlines this many at a time (the masks stay a few times this)
PIECE_BYTES = 16 << 20
#: the header is looked for in this many first lines
HEAD_LINES = 200

_TRACE_HEADER = re.compile(r"^\s*Start\s+Duration\s+(?:\S.*\s)?Name\s*$")
_LEGEND = re.compile(r"^\s*(?:Regs|SSMem|DSMem|SrcMemType|DstMemType|Src Dev|Dst Dev)\*?:\s")
_API_NAME = re.compile(r"^cu(?:da)?[A-Z]\w*(?:\s+\(.*\))?$")
_UM_ROW = re.compile(r"^\[Unified Memory .*\]$")
#: a name's correlation suffix (then the line's end), as ``split_correlation`` finds it where the
#: separator is a space and the digits ASCII; unanchored at the start, so the regular expression
#: engine only follows the end of the line (anchored with ``^(.*)`` it took 2.4 µs per row)
_SUFFIX = r" \[(?P<id>[0-9]{1,18})\][ \n]*$"

#: the spellings read here (anything else: the line reader decides)
_GLUED = r"^(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<unit>[A-Za-z/]+)$"
_WHOLE = r"^[0-9]{1,18}$"  # below 2**63: every such number fits an Int64 column
_DIMS = r"^\((?P<x>[0-9]{1,18}) (?P<y>[0-9]{1,18}) (?P<z>[0-9]{1,18})\)$"
#: placeholders read as missing (``is_missing``); other placeholder tokens go to the line reader
_PLACEHOLDERS = ("", "-")

#: the units each kind of value may carry, and their factors (those of ``scale_nvprof``)
_TIME_UNITS = {u: TIME_NS[u] for u in ("s", "ms", "us", "ns")}
_BYTE_UNITS = {u: float(f) for u, f in BINARY.items()}

_TIMES = {"Start": "start_ns", "Duration": "duration_ns"}
_SIZES = {"SSMem": "static_shared_bytes", "DSMem": "dynamic_shared_bytes", "Size": "bytes"}
_INTEGERS = {"Regs": "registers_per_thread", "Context": "context", "Stream": "stream",
             "Correlation_ID": "correlation_id"}  # fmt: skip
_DIMENSIONS = {"Grid Size": "grid", "Block Size": "block"}
_TEXTS = {"SrcMemType": "src_kind", "DstMemType": "dst_kind"}


@dataclass
class FastTrace:
    """One GPU-trace table read by columns.

    ``lines`` are the file's lines, tabs expanded, with the table's rows left blank (the line
    numbers of everything else unchanged), for the line reader to read the rest of the file;
    ``header`` is the 0-based line of the table's header, ``end`` the line after its last row,
    and ``rows`` the rows' frame, in the columns the line reader's row dictionaries have.
    """

    header: int
    end: int
    lines: list[str]
    rows: pd.DataFrame


class _NotPlain(Exception):
    """The table is not one the fast path reads exactly as the line reader does."""


def read_trace(src: Source) -> FastTrace | None:
    """The first GPU-trace table of ``src`` read by columns, or None when the line reader must
    read it (see the module docstring).

    The file's bytes are released (:meth:`Source.release`) once the header is found, and the rows
    read from the file :data:`PIECE_BYTES` at a time: the bytes and the parsed columns are never
    in memory together (the whole file is read again by the line reader if it must)."""
    if src.raw is None or len(src.raw) < MIN_BYTES:
        return None
    try:
        return _read(src, src.head(HEAD_LINES))
    except _NotPlain:
        return None


def _read(src: Source, head: Sequence[str]) -> FastTrace:
    header = next((i for i, ln in enumerate(head) if _TRACE_HEADER.match(ln)), None)
    if header is None or header + 1 >= len(head) or "\t" in head[header]:
        raise _NotPlain
    columns = header_columns(head[header])
    printed = {c.name for c in columns}
    names = [c.name.rstrip("*") for c in columns]
    if len(set(names)) < len(names) or columns[-1].name != "Name":
        raise _NotPlain
    if {"Start", "Duration"} - printed or printed <= {"Start", "Duration", "Name",
                                                      "Correlation_ID"}:  # fmt: skip
        raise _NotPlain  # the line reader's error, or an API trace
    if units_row(head[header + 1], columns) is not None:
        raise _NotPlain
    raw = src.raw
    assert raw is not None
    body = _line_offset(raw, header + 1)
    if b"\r" in raw[:body]:
        raise _NotPlain  # lines counted otherwise than by newlines
    prefix = [ln.expandtabs() for ln in _split(raw[:body].decode("utf-8"))[:-1]]
    del raw
    src.release()
    table = _Table(columns, names)
    rest = b""
    with open(src.path, "rb") as file:
        file.seek(body)
        carry = b""
        while True:
            block = file.read(PIECE_BYTES)
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            if block and cut == 0:  # no whole line yet
                carry = data
                continue
            carry = data[cut:]
            piece = data[:cut]
            del data
            after = table.add(piece, final=not block)
            if after is not None:  # the table ended in this piece
                rest = piece[after:] + carry + file.read()
                break
            del piece
            if not block:
                break
    if table.n == 0:
        raise _NotPlain
    suffix = [ln.expandtabs() for ln in _split(rest.decode("utf-8"))] if table.ended else []
    if suffix:  # the line after the rows must end the table
        first = suffix[0]
        if first.strip() and not is_preamble(first) and not _LEGEND.match(first):
            raise _NotPlain
    del rest
    rows = table.frame()
    return FastTrace(header, header + 1 + table.n, [*prefix, *[""] * table.n, *suffix], rows)


def _split(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _line_offset(raw: bytes, index: int) -> int:
    offset = line_offset(raw, index)
    if offset is None:
        raise _NotPlain
    return offset


class _Words:
    """The distinct texts of a column over all pieces: per-row codes into one list of words."""

    def __init__(self) -> None:
        self.kept: dict[str, int] = {}
        self.codes: list[np.ndarray] = []

    def code(self, word: str | None) -> int:
        return -1 if word is None else self.kept.setdefault(word, len(self.kept))

    def categorical(self) -> pd.Categorical:
        codes = np.concatenate(self.codes) if self.codes else np.empty(0, np.int64)
        self.codes = []
        return pd.Categorical.from_codes(codes, categories=pd.Index(list(self.kept), dtype=object))


class _Table:
    """The rows of one table, a piece of the file at a time, as columns."""

    def __init__(self, columns: Sequence[Column], names: list[str]) -> None:
        self.columns, self.names = columns, names
        self.name_at = columns[-1].start
        self.n = 0
        self.ended = False
        self.floats: dict[str, list[np.ndarray]] = {}
        self.ints: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}  # values, missing
        self.words: dict[str, _Words] = {}
        self.devices: dict[str, tuple[str, int | None] | None] = {}

    def add(self, piece: bytes, final: bool) -> int | None:
        """Read the rows of ``piece`` (whole lines; the last line of the file when ``final``);
        the offset of the line after the rows when the table ends in it, else None."""
        u8 = np.frombuffer(piece, dtype=np.uint8)
        at = np.flatnonzero((u8 < 0x20) | (u8 > 0x7E))
        is_newline = u8[at] == 0x0A
        nl, odd = at[is_newline], at[~is_newline]
        del at, is_newline
        starts = np.concatenate([[0], nl + 1]).astype(np.int64)
        ends = np.concatenate([nl, [len(piece)]]).astype(np.int64)
        if not final:  # the piece ends with a newline: no line after it here
            starts, ends = starts[:-1], ends[:-1]
        short = np.flatnonzero(ends - starts <= self.name_at)
        n = int(short[0]) if len(short) else len(starts)
        after = int(starts[n]) if n < len(starts) else None
        self.ended = after is not None
        if n:
            starts, ends = starts[:n], ends[:n]
            odd = odd[odd < ends[-1]]
            if len(odd):
                if (u8[odd] < 0x20).any():
                    raise _NotPlain  # tabs, carriage returns, other control bytes
                row = np.searchsorted(starts, odd, side="right") - 1
                if (odd - starts[row] < self.name_at).any():
                    raise _NotPlain  # not ASCII left of Name: characters are not bytes there
            self._rows(piece, u8, starts, ends)
            self.n += n
        return after

    def _rows(self, piece: bytes, u8: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.compute as pc  # type: ignore[import-untyped]

        n = len(starts)
        offsets = np.empty(n + 1, dtype=np.int64)
        offsets[:n] = starts
        offsets[n] = ends[-1]
        lines = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(piece)]
        )
        grid: dict[str, np.ndarray] = {}
        prev = 0
        for col, name in zip(self.columns[:-1], self.names[:-1], strict=True):
            cut = pc.binary_slice(lines, prev, col.end).cast(pa.large_string())
            cells = pc.ascii_trim(cut, " ")
            del cut
            filled = pc.greater(pc.binary_length(cells), 0).to_numpy(zero_copy_only=False)
            last, nxt = u8[starts + col.end - 1], u8[starts + col.end]
            if (filled & ((last == 0x20) | (nxt != 0x20))).any():
                raise _NotPlain  # does not line up with the header: the line reader says where
            self._parse(name, cells, filled, grid)
            prev = col.end
        for at in range(prev, self.name_at):
            if (u8[starts + at] != 0x20).any():
                raise _NotPlain
        widest = int((ends - starts).max()) + 1  # (a stop past the ends: Arrow's default overflows)
        self._names(pc.binary_slice(lines, self.name_at, widest), grid)

    def _parse(
        self, name: str, cells: Any, filled: np.ndarray, grid: dict[str, np.ndarray]
    ) -> None:
        """The value(s) of the column ``name`` under the line reader's keys."""
        if name in _TIMES:
            self.floats.setdefault(_TIMES[name], []).append(_glued(cells, filled, _TIME_UNITS))
        elif name in _SIZES:
            self.floats.setdefault(_SIZES[name], []).append(_glued(cells, filled, _BYTE_UNITS))
        elif name in _INTEGERS:
            self.ints.setdefault(_INTEGERS[name], []).append(_whole(cells, filled))
        elif name in _DIMENSIONS:
            for axis, values in zip("xyz", _dims(cells, filled), strict=True):
                self.ints.setdefault(f"{_DIMENSIONS[name]}_{axis}", []).append(values)
                grid[name] = values[1]
        elif name in _TEXTS:
            codes, words = _distinct(cells)
            kept = self.words.setdefault(_TEXTS[name], _Words())
            remap = np.array([kept.code(None if is_missing(w) else w) for w in words] + [-1])
            kept.codes.append(remap[codes])
        elif name == "Device":
            codes, words = _distinct(cells)
            for w in words:
                if w not in self.devices:
                    self.devices[w] = None if is_missing(w) else split_device(w)
            split = [self.devices[w] for w in words]
            kept = self.words.setdefault("device", _Words())
            remap = np.array([kept.code(s[0] if s else None) for s in split] + [-1])
            kept.codes.append(remap[codes])
            ids = [s[1] if s else None for s in split]
            known = np.array([i is not None for i in ids] + [False])
            whole = np.array([i if i is not None else 0 for i in ids] + [0], dtype=np.int64)
            self.ints.setdefault("device_id", []).append((whole[codes], ~known[codes]))
        # other columns (Throughput, Src Dev, Unified Memory ...) are only checked for alignment

    def _names(self, tails: Any, grid: dict[str, np.ndarray]) -> None:
        """The ``Name`` column: the rest of each line, stripped, with the rows the line reader
        reads otherwise (Unified Memory rows, API calls) refused.

        A kernel name's correlation suffix `` [123]`` is split off here, by one regular
        expression over the column, where :func:`parsers.names.split_correlation` would find it
        (a space before the bracket, ASCII digits): the distinct names are then the few dozen
        kernels, not one per launch, and each is looked at once.
        :func:`parsers.frames.gpu_activity_frames` splits the others (no ``correlation_id`` is
        set for them) as it does for the line reader's rows.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        text = tails.cast(pa.large_string())
        del tails
        parts = pc.extract_regex(text, _SUFFIX)
        split = parts.is_valid().to_numpy(zero_copy_only=False)
        suffix = pc.struct_field(parts, "id")
        del parts
        # the part before the suffix where there is one (the only match: it ends the line)
        encoded = pc.dictionary_encode(pc.replace_substring_regex(text, _SUFFIX, ""))
        del text
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        raw = [str(w) for w in encoded.dictionary.to_pylist()]
        del encoded
        used_split = np.bincount(codes[split], minlength=len(raw)) > 0
        used_plain = np.bincount(codes[~split], minlength=len(raw)) > 0
        kept = self.words.setdefault("name", _Words())
        as_split = np.full(len(raw), -1, dtype=np.int64)
        as_plain = np.full(len(raw), -1, dtype=np.int64)
        api = np.zeros(len(raw), dtype=bool)
        for c, word in enumerate(raw):
            if used_plain[c]:  # the name as printed: the line reader's strip
                name = word.strip()
                if not name or _UM_ROW.match(name):
                    raise _NotPlain  # a row without a name (an error), or a Unified Memory row
                api[c] = transfer_kind(name) is None and bool(_API_NAME.match(name))
                as_plain[c] = kept.code(name)
            if used_split[c]:  # the name before its suffix, which ends the printed name
                name, printed = word.lstrip(), word.lstrip() + " [0]"
                if (
                    not name
                    or _UM_ROW.match(printed)
                    or _API_NAME.match(printed)
                    or transfer_kind(name) is not None  # printed with a suffix it is a kernel
                    or split_correlation(name)[1] is not None  # the line reader splits once
                ):
                    raise _NotPlain
                as_split[c] = kept.code(name)
        if api.any():  # an API call is a row with such a name and no launch configuration
            unconfigured = ~split
            for missing in grid.values():
                unconfigured &= missing
            if (api[codes] & unconfigured).any():
                raise _NotPlain
        kept.codes.append(np.where(split, as_split[codes], as_plain[codes]))
        del codes
        ids, _ = _integers(pc.fill_null(suffix, "0"), split, pa, pc)
        self.ints.setdefault("suffix", []).append((ids, ~split))

    def frame(self) -> pd.DataFrame:
        """The rows' frame, in the columns (and values) the line reader's rows have."""
        out: dict[str, Any] = {}
        for key in list(self.floats):
            out[key] = np.concatenate(self.floats.pop(key))
        ints: dict[str, pd.arrays.IntegerArray] = {}
        for key in list(self.ints):
            pieces = self.ints.pop(key)
            values = np.concatenate([v for v, _ in pieces])
            missing = np.concatenate([m for _, m in pieces])
            del pieces
            ints[key] = pd.arrays.IntegerArray(values, missing)
        suffix = ints.pop("suffix")
        given = ints.pop("correlation_id", None)
        if given is not None:  # the Correlation_ID column first, as gpu_activity_frames keeps it
            use = given.isna()
            values = np.where(use, suffix.to_numpy(np.int64, na_value=0),
                              given.to_numpy(np.int64, na_value=0))  # fmt: skip
            suffix = pd.arrays.IntegerArray(values, use & suffix.isna())
        out.update(ints)
        out["correlation_id"] = suffix
        for key in list(self.words):
            out[key] = self.words.pop(key).categorical()
        return pd.DataFrame(out, copy=False)


def _missing(cells: Any, filled: np.ndarray) -> np.ndarray:
    import pyarrow.compute as pc

    return ~filled | pc.equal(cells, "-").to_numpy(zero_copy_only=False)


def _glued(cells: Any, filled: np.ndarray, units: dict[str, float]) -> np.ndarray:
    """Numbers with a unit glued on, in the base unit (NaN for a placeholder), as
    :func:`parsers.units.nvprof_cell` computes them: ``float(number) * factor``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = pc.extract_regex(cells, _GLUED)
    missing = _missing(cells, filled)
    if (parts.is_null().to_numpy(zero_copy_only=False) & ~missing).any():
        raise _NotPlain
    unit = pc.dictionary_encode(pc.struct_field(parts, "unit"))
    try:
        factors = np.array([units[u] for u in unit.dictionary.to_pylist()] + [np.nan])
    except KeyError:
        raise _NotPlain from None  # a unit of another kind: the line reader's message
    codes = pc.fill_null(unit.indices, len(factors) - 1).to_numpy(zero_copy_only=False)
    number = pc.cast(pc.struct_field(parts, "number"), pa.float64())
    values: np.ndarray = number.to_numpy(zero_copy_only=False) * factors[codes]
    values[missing] = np.nan
    return values


def _whole(cells: Any, filled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whole numbers (values, missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ok = pc.match_substring_regex(cells, _WHOLE).to_numpy(zero_copy_only=False)
    if (~ok & ~_missing(cells, filled)).any():
        raise _NotPlain
    return _integers(cells, ok, pa, pc)


def _integers(cells: Any, ok: np.ndarray, pa: Any, pc: Any) -> tuple[np.ndarray, np.ndarray]:
    digits = pc.if_else(pa.array(ok), cells, "0")
    values = pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False)
    return values.astype(np.int64), ~ok


def _dims(cells: Any, filled: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(x y z)`` cells -> the three dimensions (missing for a placeholder)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = pc.extract_regex(cells, _DIMS)
    ok = parts.is_valid().to_numpy(zero_copy_only=False)
    if (~ok & ~_missing(cells, filled)).any():
        raise _NotPlain
    return [_integers(pc.fill_null(pc.struct_field(parts, a), "0"), ok, pa, pc) for a in "xyz"]


def _distinct(cells: Any) -> tuple[np.ndarray, list[str]]:
    """Per-row codes into the distinct texts of ``cells``."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(cells)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, [str(w) for w in encoded.dictionary.to_pylist()]
