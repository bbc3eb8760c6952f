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
from parsers.source import Source, is_preamble
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
#: a name with a correlation suffix (then the line's end), split as ``split_correlation`` splits
_SUFFIXED = r"^(?P<base>.*) \[(?P<id>[0-9]{1,18})\][ \n]*$"

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

    ``lines`` are the file's lines with the table's rows left blank (the line numbers of
    everything else unchanged), for the line reader to read the rest of the file; ``header`` is
    the 0-based line of the table's header, ``end`` the line after its last row, and ``rows``
    the rows' frame, in the columns the line reader's row dictionaries have.
    """

    header: int
    end: int
    lines: list[str]
    rows: pd.DataFrame


class _NotPlain(Exception):
    """The table is not one the fast path reads exactly as the line reader does."""


def read_trace(src: Source) -> FastTrace | None:
    """The first GPU-trace table of ``src`` read by columns, or None when the line reader must
    read it (see the module docstring); the file's bytes are released once read."""
    raw = src.raw
    if raw is None or len(raw) < MIN_BYTES:
        return None
    try:
        found = _read(raw, src.head(HEAD_LINES))
    except _NotPlain:
        return None
    del raw
    src.release()
    return found


def _read(raw: bytes, head: Sequence[str]) -> FastTrace:
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
    body = _line_offset(raw, header + 1)
    if b"\r" in raw[:body]:
        raise _NotPlain  # lines counted otherwise than by newlines
    name_at = columns[-1].start
    starts, ends, odd = _lines(raw, body)
    short = np.flatnonzero(ends - starts <= name_at)
    n = int(short[0]) if len(short) else len(starts)
    if n == 0:
        raise _NotPlain
    if n < len(starts):  # the line after the rows must end the table
        after = raw[starts[n] : ends[n]].decode("utf-8").expandtabs()
        if after.strip() and not is_preamble(after) and not _LEGEND.match(after):
            raise _NotPlain
    rows_end = int(ends[n - 1])
    odd = odd[odd < rows_end]
    if len(odd):
        u8 = np.frombuffer(raw, dtype=np.uint8)
        if (u8[odd] < 0x20).any():
            raise _NotPlain  # tabs, carriage returns, other control bytes
        row = np.searchsorted(starts[:n], odd, side="right") - 1
        if (odd - starts[row] < name_at).any():
            raise _NotPlain  # not ASCII left of Name: characters are not bytes there
    rows = _columns(raw, starts[:n], ends[:n], columns, names)
    prefix = _split(raw[:body].decode("utf-8"))[:-1]
    suffix = _split(raw[starts[n] :].decode("utf-8")) if n < len(starts) else []
    return FastTrace(header, header + 1 + n, [*prefix, *[""] * n, *suffix], rows)


def _split(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _line_offset(raw: bytes, index: int) -> int:
    end = -1
    for _ in range(index):
        end = raw.find(b"\n", end + 1)
        if end < 0:
            raise _NotPlain
    return end + 1


def _lines(raw: bytes, start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends) of the lines of ``raw`` from byte ``start`` (ends exclude the newline; a
    last line without one ends at the end of the file, a file ending in a newline has an empty
    last line, as ``str.split``), and the offsets of the other bytes outside printable ASCII."""
    u8 = np.frombuffer(raw, dtype=np.uint8)
    newlines: list[np.ndarray] = []
    others: list[np.ndarray] = []
    for lo in range(start, len(raw), PIECE_BYTES):
        piece = u8[lo : lo + PIECE_BYTES]
        at = np.flatnonzero((piece < 0x20) | (piece > 0x7E))
        is_newline = piece[at] == 0x0A
        newlines.append(at[is_newline] + lo)
        others.append(at[~is_newline] + lo)
    nl = np.concatenate([*newlines, np.empty(0, np.int64)]).astype(np.int64)
    starts = np.concatenate([[start], nl + 1]).astype(np.int64)
    ends = np.concatenate([nl, [len(raw)]]).astype(np.int64)
    return starts, ends, np.concatenate([*others, np.empty(0, np.int64)]).astype(np.int64)


def _columns(
    raw: bytes, starts: np.ndarray, ends: np.ndarray, columns: Sequence[Column], names: list[str]
) -> pd.DataFrame:
    """The rows' frame: every column cut, checked and parsed as one array."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    n = len(starts)
    u8 = np.frombuffer(raw, dtype=np.uint8)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[:n] = starts
    offsets[n] = ends[-1]
    lines = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(raw)]
    )
    out: dict[str, Any] = {}
    prev = 0
    for col, name in zip(columns[:-1], names[:-1], strict=True):
        cells = pc.ascii_trim(pc.binary_slice(lines, prev, col.end).cast(pa.large_string()), " ")
        filled = pc.greater(pc.binary_length(cells), 0).to_numpy(zero_copy_only=False)
        last, nxt = u8[starts + col.end - 1], u8[starts + col.end]
        if (filled & ((last == 0x20) | (nxt != 0x20))).any():
            raise _NotPlain  # does not line up with the header: the line reader says where
        _parse(out, name, cells, filled, n)
        prev = col.end
    for at in range(prev, columns[-1].start):
        if (u8[starts + at] != 0x20).any():
            raise _NotPlain
    widest = int((ends - starts).max()) + 1  # (a stop past the ends: Arrow's default overflows)
    _names(out, pc.binary_slice(lines, columns[-1].start, widest))
    return pd.DataFrame(out, copy=False)


def _parse(out: dict[str, Any], name: str, cells: Any, filled: np.ndarray, n: int) -> None:
    """The value(s) of the column ``name`` into ``out`` under the line reader's keys."""
    if name in _TIMES:
        out[_TIMES[name]] = _glued(cells, filled, _TIME_UNITS)
    elif name in _SIZES:
        out[_SIZES[name]] = _glued(cells, filled, _BYTE_UNITS)
    elif name in _INTEGERS:
        out[_INTEGERS[name]] = _whole(cells, filled)
    elif name in _DIMENSIONS:
        for axis, values in zip("xyz", _dims(cells, filled), strict=True):
            out[f"{_DIMENSIONS[name]}_{axis}"] = values
    elif name in _TEXTS:
        codes, words = _distinct(cells)
        texts = [None if is_missing(w) else w for w in words]
        out[_TEXTS[name]] = _categorical(codes, texts)
    elif name == "Device":
        codes, words = _distinct(cells)
        split = [None if is_missing(w) else split_device(w) for w in words]
        out["device"] = _categorical(codes, [s[0] if s else None for s in split])
        out["device_id"] = _ints_by_code(codes, [s[1] if s else None for s in split])
    # other columns (Throughput, Src Dev, Unified Memory ...) are only checked for alignment


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
    number = pc.cast(pc.struct_field(parts, "number"), pa.float64()).to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):
        values: np.ndarray = number * factors[codes]
    values[missing] = np.nan
    return values


def _whole(cells: Any, filled: np.ndarray) -> pd.arrays.IntegerArray:
    import pyarrow as pa
    import pyarrow.compute as pc

    ok = pc.match_substring_regex(cells, _WHOLE).to_numpy(zero_copy_only=False)
    missing = _missing(cells, filled)
    if (~ok & ~missing).any():
        raise _NotPlain
    return _integers(cells, ok, pa, pc)


def _integers(cells: Any, ok: np.ndarray, pa: Any, pc: Any) -> pd.arrays.IntegerArray:
    digits = pc.if_else(pa.array(ok), cells, "0")
    values = pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False)
    return pd.arrays.IntegerArray(values.astype(np.int64), ~ok)


def _dims(cells: Any, filled: np.ndarray) -> list[pd.arrays.IntegerArray]:
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


def _categorical(codes: np.ndarray, words: list[str | None]) -> pd.Categorical:
    """``words[code]`` per row (None: missing) as a categorical of the distinct words."""
    kept: dict[str, int] = {}
    remap = np.full(len(words) + 1, -1, dtype=np.int64)
    for i, w in enumerate(words):
        if w is not None:
            remap[i] = kept.setdefault(w, len(kept))
    return pd.Categorical.from_codes(remap[codes], categories=pd.Index(list(kept), dtype=object))


def _ints_by_code(codes: np.ndarray, values: list[int | None]) -> pd.arrays.IntegerArray:
    known = np.array([v is not None for v in values] + [False])
    whole = np.array([v if v is not None else 0 for v in values] + [0], dtype=np.int64)
    return pd.arrays.IntegerArray(whole[codes], ~known[codes])


def _names(out: dict[str, Any], tails: Any) -> None:
    """The ``Name`` column: the rest of each line, stripped, with the rows the line reader reads
    otherwise (Unified Memory rows, API calls) refused.

    A kernel name's correlation suffix `` [123]`` is split off here, by one regular expression
    over the column, where :func:`parsers.names.split_correlation` would find it (a space before
    the bracket, ASCII digits): the distinct names are then the few dozen kernels, not one per
    launch, and each is looked at once.  :func:`parsers.frames.gpu_activity_frames` splits the
    others (no ``correlation_id`` is set for them) as it does for the line reader's rows.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    text = tails.cast(pa.large_string())
    parts = pc.extract_regex(text, _SUFFIXED)
    valid = parts.is_valid()
    split = valid.to_numpy(zero_copy_only=False)
    encoded = pc.dictionary_encode(pc.if_else(valid, pc.struct_field(parts, "base"), text))
    suffix = pc.struct_field(parts, "id")
    del text, parts, valid
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    raw = [str(w) for w in encoded.dictionary.to_pylist()]
    del encoded
    used_split = np.bincount(codes[split], minlength=len(raw)) > 0
    used_plain = np.bincount(codes[~split], minlength=len(raw)) > 0
    kept: dict[str, int] = {}
    as_split = np.full(len(raw), -1, dtype=np.int64)
    as_plain = np.full(len(raw), -1, dtype=np.int64)
    api = np.zeros(len(raw), dtype=bool)
    for c, word in enumerate(raw):
        if used_plain[c]:  # the name as printed: the line reader's strip
            name = word.strip()
            if not name or _UM_ROW.match(name):
                raise _NotPlain  # a row without a name (an error), or a Unified Memory row
            api[c] = transfer_kind(name) is None and bool(_API_NAME.match(name))
            as_plain[c] = kept.setdefault(name, len(kept))
        if used_split[c]:  # the name before its suffix, which ends the printed name
            name, printed = word.lstrip(), word.lstrip() + " [0]"
            if (
                not name
                or _UM_ROW.match(printed)
                or _API_NAME.match(printed)
                or transfer_kind(name) is not None  # printed with a suffix it is a kernel
                or split_correlation(name)[1] is not None  # split once only by the line reader
            ):
                raise _NotPlain
            as_split[c] = kept.setdefault(name, len(kept))
    if api.any():  # an API call is a row with such a name and no launch configuration
        unconfigured = ~split
        for key in ("grid_x", "block_x"):
            if key in out:
                unconfigured &= np.asarray(pd.isna(out[key]))
        if (api[codes] & unconfigured).any():
            raise _NotPlain
    final = np.where(split, as_split[codes], as_plain[codes])
    del codes
    out["name"] = pd.Categorical.from_codes(final, categories=pd.Index(list(kept), dtype=object))
    ids = _integers(pc.fill_null(suffix, "0"), split, pa, pc)
    given = out.get("correlation_id")
    if given is not None:  # the Correlation_ID column first, as gpu_activity_frames keeps it
        missing = given.isna()
        ids = pd.arrays.IntegerArray(
            np.where(
                missing,
                ids.to_numpy(dtype=np.int64, na_value=0),
                given.to_numpy(dtype=np.int64, na_value=0),
            ),
            missing & ~split,
        )
    out["correlation_id"] = ids
