"""Nsight Compute ``--csv`` console output (``ncu --csv``, ``ncu -i x.ncu-rep --csv``), 2019–2026.

Format ``ncu-csv``.  Three table layouts, told apart by their header (FORMATS.md §2):

* ``--page details`` (the default page, §2.2): long, one row per (launch, section, metric).
  Headers of 2019–2021 carry ``Kernel Time`` (a launch timestamp, not a duration: not used);
  ``--nvtx`` inserts NVTX columns; 2023+ adds ``Block Size``, ``Grid Size``, ``Device``, ``CC``
  and the rule columns ``Rule Name``, ``Rule Type``, ``Rule Description``, ``Estimated Speedup
  Type``, ``Estimated Speedup``.  Metric rows may stop before the rule columns (padded); rule
  rows leave the metric fields empty and name the section by its identifier (``SpeedOfLight``)
  -> ``rules``.  Units are per row.  With ``--metrics`` the section is ``Command line profiler
  metrics`` and the name the raw metric name.  Each distinct ``ID`` (per process) is one
  launch.  Modes ``details`` and, when the file has rule rows, ``rules``.
* ``--page raw`` (§2.3): wide, one row per launch: identification columns, then one column per
  metric (every name with ``__``: ``device__attribute_*``, ``launch__*``, section metrics), and
  a units row (``""`` under the identification columns).  Mode ``raw``.
* ``--print-summary per-kernel`` (§2.4): one group of rows per (kernel, launch shape) with
  ``Invocations`` and ``Minimum``/``Maximum``/``Average``, units per row -> metrics rows without
  a launch, and a ``kernel_summary`` row per group that has a duration.  Mode
  ``summary-per-kernel``.

Lines around the table (``==PROF==``, ``==WARNING==``, ``==ERROR==``, application output that
does not start with a double quote) are skipped; a repeated header starts a new table (runs
concatenated into one file).  A file that is one raw page and nothing after it (every ``--page
raw`` export) is not split into lines at all: its rows go to the columnar reader as the file's
bytes (:func:`one_raw_table`); nor is one details page whose rows are plainly quoted (every
``--page details`` export): pandas' C parser reads it by columns (:func:`one_details_table`).
Columns are found by name.  A file whose table has no rows reads
as an empty profile, which :func:`parsers.read` reports as no kernel data (quoting an
``==ERROR==`` line when there is one).  Numbers and units: :mod:`parsers.ncu.values`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from advisor import schema
from advisor.profile import Profile, Provenance
from parsers.ncu.csv_layouts import PADDING_LIMIT_CELLS as _PADDING_CELLS
from parsers.ncu.csv_layouts import PADDING_LIMIT_FACTOR as _PADDING_FACTOR
from parsers.ncu.csv_layouts import Table, read_table
from parsers.ncu.values import int_or_na
from parsers.registry import Selection, TextFormat, register
from parsers.source import Source, is_preamble

FORMAT = "ncu-csv"

_DETAILS = frozenset({"ID", "Kernel Name", "Section Name", "Metric Name", "Metric Value"})
_SUMMARY = frozenset(
    {"Kernel Name", "Invocations", "Metric Name", "Metric Unit", "Minimum", "Maximum", "Average"}
)
_HEADER_START = re.compile(r'^\s*"(ID|Process ID)",')
_HEADER_STARTS = (b'"ID",', b'"Process ID",')
#: status lines looked through for the header of a raw table read from the bytes
_PREAMBLE_LIMIT = 1000
_QUOTE, _NEWLINE, _COMMA = ord('"'), ord("\n"), ord(",")
#: "Nsight Compute 2023.2.2", "nsight-compute/2023.2.2/...", "NsightCompute-2019.1"
_VERSION = re.compile(r"nsight[\s_-]?compute\D{0,40}?(\d{4}\.\d+(?:\.\d+){0,2})", re.I)


def _layout(fields: Sequence[str]) -> str | None:
    """The layout whose header ``fields`` is, or None when it is no ncu header."""
    names = set(fields)
    if names >= _SUMMARY:
        return "summary-per-kernel"
    if names >= _DETAILS:
        return "details"
    if fields and fields[0] == "ID" and "Kernel Name" in names:
        return "raw"
    return None


def _header(line: str) -> tuple[str, list[str]] | None:
    if not _HEADER_START.match(line):
        return None
    try:
        fields = next(csv.reader([line.strip()], strict=True))
    except (csv.Error, StopIteration):
        return None
    layout = _layout(fields)
    return (layout, fields) if layout else None


def sniff_ncu_csv(head: Sequence[str]) -> bool:
    """True when a line of ``head`` is an Nsight Compute CSV header (details, raw or summary).

    nvprof headers (``"Device","Kernel",...``, ``"Start","Duration",...``) and nsys headers
    (unquoted, ``Time (%),...``) never start with ``"ID"``/``"Process ID"`` nor name a
    ``"Kernel Name"`` column.
    """
    return any(_header(line) for line in head)


def read_ncu_csv(src: Source, selected: Selection) -> Profile:
    """Read every ncu table of ``src`` into one Profile (see the module docstring).

    ``selected``, the registry's metric selection, goes to each table's reader: a raw page reads
    only the metric columns it keeps (:mod:`parsers.ncu.raw`); the other layouts read every
    row and leave the selection to :func:`parsers.read`."""
    whole = one_raw_table(src)
    if whole is None:
        whole = one_details_table(src)
    tables, skipped = ([whole], 0) if whole is not None else _tables(src)
    if not tables:
        raise src.malformed(0, 'no Nsight Compute CSV header ("ID","Process ID",...) found')
    # the status lines naming the version lie before the header of a table read from the bytes
    version = profiler_version(src.head(whole.header_line) if whole is not None else src.lines)
    if whole is not None and whole.frame is not None:
        src.release()  # every cell is in the frame: the file's bytes are no longer needed
    notes: list[str] = []
    if skipped:
        notes.append(f"{skipped} line(s) of application output after the header skipped")
    return read_tables(src, tables, selected, fmt=FORMAT, version=version, notes=notes)


def read_tables(
    src: Source,
    tables: Sequence[Table],
    selected: Selection,
    *,
    fmt: str,
    version: str | None,
    notes: Sequence[str] = (),
) -> Profile:
    """The Profile of ``tables`` (each read by its layout, :func:`read_table`), one after the
    other: launch ids offset per table, devices named, provenance of format ``fmt`` with the
    reader's ``notes`` after the tables' own.  Shared with the plain-text reader
    (:mod:`parsers.ncu.text`), which builds a details table from the text."""
    parts = [read_table(src, t, selected) for t in tables]
    collected: dict[str, list[pd.DataFrame | None]] = {
        t: [] for t in ("launches", "metrics", "rules", "kernel_summary", "devices")
    }
    offset = 0
    for part in parts:
        for table in ("launches", "metrics", "rules"):
            frame = getattr(part, table)
            if frame is not None and len(frame):
                if offset:  # the first table's ids stay as they are: not copied
                    frame = frame.copy()
                    frame["launch_id"] = frame["launch_id"] + offset
                collected[table].append(frame)
        collected["kernel_summary"].append(part.kernel_summary)
        collected["devices"].append(part.devices)
        offset += len(part.launches)
    frames = {t: _concat(fs, t) for t, fs in collected.items()}
    frames["metrics"] = _typed(frames["metrics"], "metrics")
    frames["devices"] = frames["devices"].drop_duplicates("device_id", keep="first")
    _name_devices(frames)
    modes = list(dict.fromkeys(t.layout for t in tables))
    if len(frames["rules"]):
        modes.append("rules")
    provenance = Provenance(
        path=src.path,
        format=fmt,
        profiler="ncu",
        modes=tuple(modes),
        profiler_version=version,
        notes=tuple(dict.fromkeys([*(n for p in parts for n in p.notes), *notes])),
    )
    return Profile.of((provenance,), frames)


def one_raw_table(src: Source) -> Table | None:
    """The file's raw-page table with its rows left as bytes (:attr:`Table.data`), when the
    file is status lines, a raw header and quoted rows up to its end (every ``ncu --page raw
    --csv`` export); None for anything else, which :func:`_tables` splits line by line.

    Equal to what :func:`_tables` finds: every line after the header starts and ends with a
    double quote (so none is blank, a status line or application output, and stripping it
    changes nothing), none starts as a header does, and the file has no carriage return."""
    raw = src.raw
    if raw is None:
        return None
    top = _top_header(raw)  # the first lines only: a details page goes no further
    if top is None or top[0] != "raw" or b"\r" in raw:
        return None
    _, fields, index, after = top
    if not _quoted_rows(raw, after):
        return None
    return Table("raw", fields, index, data=memoryview(raw)[after:])


def one_details_table(src: Source) -> Table | None:
    """The file's details-page table read by columns (:attr:`Table.frame`: pyarrow's CSV
    parser, :mod:`parsers.ncu.details_columns`, else pandas' C parser), when the file is status
    lines, a details header and plainly quoted rows up to its end (:func:`_plain_rows`) and
    every row is as wide as :func:`_tables` and :func:`parsers.ncu.csv_layouts.read_table`
    accept; None for anything else (the row-by-row reading then reads the file, naming the line
    of any malformed row).

    The same frame as the row-by-row reading: under :func:`_plain_rows` both split every line
    at the commas outside quotes and drop the quotes; rows are padded with ``""`` to the
    header's width; a row longer than the header or shorter than ``Metric Value`` gives None.
    About 13 µs per row less than splitting each line with :mod:`csv`
    (benchmarks/bench_scale.py, ``ncu-details-csv``)."""
    raw = src.raw
    if raw is None or b"\r" in raw:
        return None
    found = _top_header(raw)
    if found is None or found[0] != "details":
        return None
    _, header, index, start = found
    width = len(header)
    if len(set(header)) < width or "Metric Unit" not in header:
        return None  # read_table's own message, from the row-by-row reading
    minimum = header.index("Metric Value") + 1
    from parsers.ncu.details_columns import FirstRead, arrow_details_columns  # (pages only)

    first = FirstRead(raw, start, header, minimum)  # parses while the quoting is checked
    ends = _plain_rows(raw, start)
    if ends is None or not len(ends):
        first.result()
        return None
    if int(np.diff(ends, prepend=start - 1).max()) > csv.field_size_limit():
        first.result()
        return None  # a field may be over csv's limit, which the row-by-row reading reports
    rows = len(ends)
    if width * rows - minimum * rows > _PADDING_FACTOR * minimum * rows + _PADDING_CELLS:
        first.result()
        return None  # the padding check of read_table might fail: let it name the header
    read = arrow_details_columns(raw, start, header, ends, minimum, first)
    if read is not None:
        return Table("details", header, index, frame=read[0], launches=read[1])
    frame = _pandas_columns(raw, start, header, ends, minimum)
    return None if frame is None else Table("details", header, index, frame=frame)


def _pandas_columns(
    raw: bytes, start: int, header: list[str], ends: np.ndarray, minimum: int
) -> pd.DataFrame | None:
    """The rows read by pandas' C parser (:func:`_read_columns`) when pyarrow's reading
    (:func:`parsers.ncu.details_columns.arrow_details_columns`) declines them: rows are padded
    to the header's width, so a row whose cells from ``Metric Value`` on are all empty is split
    again by :mod:`csv` to count its fields (None when one is shorter than ``minimum``)."""
    rows = len(ends)
    frame = _read_columns(raw, start, header, "category")
    if frame is not None and not all(map(_texts, (frame[c] for c in header))):
        frame = _read_columns(raw, start, header, object)  # a column pandas made non-text
    if frame is None or len(frame) != rows:
        return None
    empty = np.ones(rows, dtype=bool)
    for name in header[minimum - 1 :]:
        empty &= _empty(frame[name])
    begins = np.concatenate(([start], ends[:-1] + 1))
    for row in np.flatnonzero(empty).tolist():
        line = raw[begins[row] : ends[row]].decode("utf-8")
        if len(next(csv.reader([line], strict=True))) < minimum:
            return None  # too short: the row-by-row reading names it
    return frame


def _read_columns(
    raw: bytes, start: int, header: list[str], dtype: str | type
) -> pd.DataFrame | None:
    """``raw[start:]`` read by pandas' C CSV parser into columns named ``header``, each of
    ``dtype``: ``"category"`` (each distinct text made a string once, every cell a small
    code: a million rows of a details page repeat a few dozen names) or ``object``; None when
    the parser refuses the bytes (a row longer than the header, bad UTF-8).

    ``thousands`` names a character that only keeps pandas from reading categories that all
    look like numbers as numbers (it parses no number here: every column is text)."""
    body = io.BytesIO(raw)  # shares the bytes
    body.seek(start)
    try:
        return pd.read_csv(
            body, engine="c", header=None, names=header,
            dtype=dtype, na_filter=False, skip_blank_lines=False, quoting=csv.QUOTE_MINIMAL,
            doublequote=True, encoding="utf-8", low_memory=True, thousands="\x1f",
        )  # fmt: skip
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError):
        return None


def _texts(cells: pd.Series) -> bool:
    """Whether ``cells`` hold the file's texts as they are: an object column, or a categorical
    one whose categories are strings (pandas turns a column of ``True``/``False`` cells into
    booleans)."""
    if not isinstance(cells.dtype, pd.CategoricalDtype):
        return cells.dtype == object
    words = cells.cat.categories
    return bool(words.dtype.kind in "OU" or pd.api.types.is_string_dtype(words.dtype)) and all(
        type(w) is str for w in words
    )


def _empty(cells: pd.Series) -> np.ndarray:
    """Per row, whether the cell is ``""`` (a categorical column looked at per category)."""
    if isinstance(cells.dtype, pd.CategoricalDtype):
        words = cells.cat.categories
        hit = np.append(np.array([w == "" for w in words], dtype=bool), False)
        return hit[cells.cat.codes.to_numpy()]
    return (cells == "").to_numpy(dtype=bool)


def _top_header(raw: bytes) -> tuple[str, list[str], int, int] | None:
    """(layout, fields, line index, offset of the next line) of the header that the first
    line that is neither blank nor a status line is, among the first :data:`_PREAMBLE_LIMIT`;
    None when that line is no header (or there is none)."""
    start, index = 0, 0
    while index < _PREAMBLE_LIMIT:
        end = raw.find(b"\n", start)
        if end < 0:
            return None
        line = raw[start:end].decode("utf-8")
        if line.strip() and not is_preamble(line):
            found = _header(line.strip())
            return None if found is None else (found[0], found[1], index, end + 1)
        start, index = end + 1, index + 1
    return None


def _plain_rows(raw: bytes, start: int, chunk: int = 1 << 22) -> np.ndarray | None:
    """The offsets of the line ends (the last one may be the file's end) of ``raw[start:]``
    when every line there starts with a double quote and ends with a double quote or a comma
    (so none is blank, a status line or application output, and stripping it changes nothing),
    none starts as a header does (a second table), and the quotes are plain: each one with an
    even number of quotes before it opens a field (after a comma or at the line's start), each
    other one closes it (before a comma or the line's end), and every line has an even number
    of them (no escaped quote, no quoted line break); None otherwise.

    Looked at a chunk at a time as bit sets (:func:`_quoting_is_plain`), one bit per byte: no
    quote's position is listed (benchmarks/bench_scale.py, ``ncu-details-csv``: 60 million
    quotes, 0.46 -> 0.26 s of CPU)."""
    octets = np.frombuffer(raw, dtype=np.uint8)
    size = len(octets)
    if start >= size or b"\x00" in raw:
        return None
    parity = 0  # quotes seen before the chunk, modulo 2
    found: list[np.ndarray] = []
    for at in range(start, size, chunk):
        parity, ends = _quoting_is_plain(octets, at, min(chunk, size - at), parity)
        if parity < 0:
            return None
        found.append(ends)
    if parity:
        return None
    ends = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    if octets[-1] != _NEWLINE:  # a last line without its newline
        ends = np.concatenate((ends, [size]))
    starts = np.concatenate(([start], ends[:-1] + 1))
    if not (octets[starts] == _QUOTE).all():
        return None
    tails = octets[ends - 1]
    if not ((tails == _QUOTE) | (tails == _COMMA)).all():
        return None
    second = octets[starts + 1]
    for begin in starts[(second == ord("I")) | (second == ord("P"))].tolist():
        if raw.startswith(_HEADER_STARTS, begin):
            return None
    return ends


def _quoting_is_plain(octets: np.ndarray, at: int, n: int, parity: int) -> tuple[int, np.ndarray]:
    """(the quote parity after ``octets[at:at + n]`` (``at`` >= 1) given ``parity`` before it,
    the offsets of its line ends); the parity is -1 when a quote opens a field elsewhere than
    after a comma or a line end, closes one elsewhere than before a comma, a line end or the
    file's end, or a line ends inside quotes (the rules of :func:`_plain_rows`).

    Each byte is a bit of 64-bit words (bit ``i`` of word ``j``: byte ``64 j + i``); a byte is
    inside quotes when an odd number of quotes lies before it, found for every bit at once by
    a prefix XOR within each word (six shifts) and the words' parities carried across them."""
    part = octets[at : at + n]
    newline = _bits(part == _NEWLINE)
    quotes = _bits(part == _QUOTE)
    separators = _bits(part == _COMMA) | newline
    one, top = np.uint64(1), np.uint64(63)
    before = np.uint64(octets[at - 1] in (_COMMA, _NEWLINE))
    # per bit, whether the byte before is a separator: the bits moved up by one, across words
    follows = (separators << one) | np.concatenate(([before], separators[:-1] >> top))
    # whether the byte after is one (the file's end counts as one): moved down by one
    precedes = (separators >> one) | np.concatenate((separators[1:] << top, [np.uint64(0)]))
    after = octets[at + n] if at + n < len(octets) else _NEWLINE
    precedes[-1] |= np.uint64(after in (_COMMA, _NEWLINE)) << np.uint64((n - 1) % 64)
    inside = quotes.copy()  # becomes, per bit, the parity of the quotes up to it (inclusive)
    for shift in (1, 2, 4, 8, 16, 32):
        inside ^= inside << np.uint64(shift)
    carried = np.bitwise_xor.accumulate(inside >> top)  # parity up to each word's end
    entering = np.concatenate(([0], carried[:-1])).astype(np.uint64) ^ np.uint64(parity)
    inside ^= np.uint64(0) - entering  # all ones where an odd number came before the word
    inside ^= quotes  # the quotes strictly before each byte
    opening, closing = quotes & ~inside, quotes & inside
    if (opening & ~follows).any() or (closing & ~precedes).any() or (newline & inside).any():
        return -1, np.zeros(0, dtype=np.int64)
    return int(carried[-1]) ^ parity, _bit_positions(newline) + at


def _bits(flags: np.ndarray) -> np.ndarray:
    """``flags`` as bits of little-endian 64-bit words (bit ``i`` of word ``j``: flag
    ``64 j + i``; the last word padded with zeros)."""
    packed = np.packbits(flags, bitorder="little")
    if len(packed) % 8:
        packed = np.concatenate((packed, np.zeros(8 - len(packed) % 8, dtype=np.uint8)))
    return packed.view("<u8")


def _bit_positions(words: np.ndarray) -> np.ndarray:
    """The positions of the set bits of ``words`` (as :func:`_bits` sets them), ascending, as
    int64: only the words that hold one are unpacked."""
    held = np.flatnonzero(words != 0)
    flags = np.unpackbits(words[held].view(np.uint8), bitorder="little").view(bool)  # 0 or 1
    at = np.flatnonzero(flags)
    return held[at >> 6].astype(np.int64) * 64 + (at & 63)


def _quoted_rows(raw: bytes, start: int, chunk: int = 1 << 22) -> bool:
    """True when ``raw[start:]`` has lines, each starts and ends with a double quote (the last
    one may lack its newline) and none starts as a header (a second table: runs concatenated),
    looked at with numpy a chunk at a time."""
    octets = np.frombuffer(raw, dtype=np.uint8)
    size = len(octets)
    if start >= size or octets[start] != _QUOTE or octets[-1] not in (_QUOTE, _NEWLINE):
        return False
    for at in range(start, size, chunk):
        ends = np.flatnonzero(octets[at : at + chunk] == _NEWLINE) + at
        starts = ends[ends + 1 < size] + 1
        if not ((octets[ends - 1] == _QUOTE).all() and (octets[starts] == _QUOTE).all()):
            return False
        if at == start:
            starts = np.concatenate(([start], starts))
        second = octets[np.minimum(starts + 1, size - 1)]
        for begin in starts[(second == ord("I")) | (second == ord("P"))].tolist():
            if raw.startswith(_HEADER_STARTS, begin):
                return False
    return True


def _tables(src: Source) -> tuple[list[Table], int]:
    """Split the lines into tables (header + rows); count the skipped non-CSV lines.

    Equal cells share one string (``shared``): a details page repeats the launch's eleven
    identification cells and the section, metric and unit names on every row (benchmarks/
    bench_scale.py, ``ncu-details-csv``: peak RSS 2.5 GiB -> 1.8 GiB for a million rows)."""
    tables: list[Table] = []
    skipped = 0
    shared: dict[str, str] = {}
    for index, line in enumerate(src.lines):
        stripped = line.strip()
        if not stripped or is_preamble(line):
            continue
        found = _header(stripped)
        if found:
            tables.append(Table(found[0], found[1], index))
        elif not tables:
            continue
        elif not stripped.startswith('"'):
            skipped += 1
        elif tables[-1].layout == "raw":  # split by the columnar reader (parsers.ncu.raw)
            tables[-1].texts.append(stripped)
            tables[-1].lines.append(index)
        else:
            try:
                fields = next(csv.reader([stripped], strict=True))
            except csv.Error as exc:
                raise src.malformed(index, f"bad CSV quoting ({exc})") from exc
            tables[-1].rows.append([shared.setdefault(f, f) for f in fields])
            tables[-1].lines.append(index)
    return tables, skipped


def _name_devices(frames: dict[str, pd.DataFrame]) -> None:
    """Fill the device name of launches, metrics and summaries from the devices table."""
    devices = frames["devices"].dropna(subset=["device_id", "name"])
    names = {int(d): str(n) for d, n in zip(devices["device_id"], devices["name"], strict=True)}
    if not names:
        return
    for table in ("launches", "kernel_summary"):
        frame = frames[table]
        frame["device"] = frame["device_id"].astype("Int64").map(names).astype("string")
    # one per metrics row (a raw page: launches x metrics): each name stored once
    words = sorted(set(names.values()))
    device_id = frames["metrics"]["device_id"].astype("Int64")
    known = device_id.notna().to_numpy()
    ids = device_id.to_numpy(dtype=np.int64, na_value=0)
    codes = np.full(len(ids), -1, dtype=np.int64)
    for device, name in names.items():
        codes[known & (ids == device)] = words.index(name)
    frames["metrics"]["device"] = schema.categorical_of(codes, words)


def profiler_version(lines: Sequence[str]) -> str | None:
    """The Nsight Compute version a ``==PROF==``/``==WARNING==`` line names, if any."""
    for line in lines:
        if is_preamble(line):
            m = _VERSION.search(line)
            if m:
                return m.group(1)
    return None


def _typed(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """``frame`` with the schema's numeric columns it lacks added, already typed (so the
    Profile's validation of a raw page's hundreds of thousands of rows stays vectorised)."""
    for column, dtype in schema.TABLES[table].items():
        if column not in frame.columns and dtype != schema.STR:
            frame[column] = pd.Series(np.nan, index=frame.index).astype(dtype)
        elif column in frame.columns and dtype == schema.INT and frame[column].dtype == object:
            frame[column] = int_or_na(frame[column])
    return frame


def _concat(frames: Sequence[pd.DataFrame | None], table: str) -> pd.DataFrame:
    """The non-empty frames one after the other (validated once, by the Profile)."""
    present = [f for f in frames if f is not None and len(f)]
    if not present:
        return schema.empty(table)
    if len(present) == 1:
        return present[0].reset_index(drop=True)
    return pd.concat([schema.validate(table, f) for f in present], ignore_index=True)


register(
    TextFormat(
        name=FORMAT,
        profiler="ncu",
        description="Nsight Compute --csv output: --page details / raw, --print-summary per-kernel",
        sniff=sniff_ncu_csv,
        read=read_ncu_csv,
        priority=20,
    )
)
