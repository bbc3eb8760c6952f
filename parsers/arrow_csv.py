"""The fast path for one big CSV table: the data rows read by ``pyarrow.csv`` from the bytes.

A gpu-trace export of a long run (nvprof ``--csv --print-gpu-trace``, FORMATS.md §1.3; nsys
``cuda_gpu_trace``, §3.2) is a few header lines and then hundreds of thousands of rows of one
table to the end of the file.  The readers find the header (and nvprof's units row) with their
line scanners on the first lines only, then hand the rest of the bytes to :func:`read_rows`,
which reads only the columns they use, numbers typed as float64 (placeholder tokens missing),
texts as categoricals (each distinct text once).

:func:`read_rows` answers None whenever the rows are not plainly that one table, and the reader
then scans the file line by line as before, so every error message, line number and note is the
scanner's: a row with another number of fields (a cut-short last line, another table or a status
line after the trace), a blank line, a carriage return, a cell that is not a number where one is
expected (or ``nan``/``inf``), a quoted field spanning lines, bytes that are not UTF-8.
"""

from __future__ import annotations

import codecs
import io
import os
import queue
import threading
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.csv as pacsv  # type: ignore[import-untyped]

from parsers.codes import FirstSeen
from parsers.source import MAX_FIELDS, Source, has_line_longer
from parsers.units import MISSING_TOKENS, fits_int_array

#: below this many bytes of rows the line scanner is as fast and the fast path is not tried
MIN_BYTES = 1 << 20
#: the rows are parsed this many bytes at a time, each piece on every core (pyarrow's blocks in
#: parallel), so the parse buffers stay a few times this size whatever the file's size
PIECE_BYTES = 16 << 20
#: a file read in pieces from the file alone: the rows' arrays start at the number of rows its
#: first this many bytes would give over the whole file (and grow when there are more)
ESTIMATE_BYTES = 1 << 16


def last_line(raw: bytes) -> tuple[int, int]:
    """(byte offset, 0-based index) of the last non-blank line of ``raw`` (trailing newlines
    ignored)."""
    end = len(raw)
    while end and raw[end - 1] == ord("\n"):  # not rstrip: that copies the whole bytes
        end -= 1
    offset = raw.rfind(b"\n", 0, end) + 1
    return offset, raw.count(b"\n", 0, offset)


def read_rows(
    raw: bytes | Source,
    start: int,
    width: int,
    numbers: list[int],
    texts: list[int],
    end: int | None = None,
) -> pd.DataFrame | None:
    """The rows of ``raw`` from byte ``start`` to ``end`` (the end of the file) as a frame with
    integer column labels: columns ``numbers`` as float64 (placeholders NaN), ``texts`` as
    categoricals of the strings exactly as written (quotes removed).  Every row must have
    ``width`` fields; trailing newlines are ignored.  None when anything is unusual (see the
    module docstring).

    Given the file's :class:`~parsers.source.Source`, its bytes are checked whole (the rows
    counted, no carriage return) and then released (:meth:`Source.release`): the rows are read
    from the file a piece at a time, so the file's bytes and the parsed columns are never in
    memory together (the peak was their sum, 2.7x the file).  A pending source (only the file's
    start read, :meth:`Source.pending`) is never read whole: each piece is checked as it is
    read (:class:`_StreamPieces`)."""
    src = raw if isinstance(raw, Source) else None
    if src is not None and src.is_pending and end is None:
        return _read_stream(src.path, src.size or 0, start, width, numbers, texts)
    if src is not None:
        if src.raw is None:
            return None
        raw = src.raw
    assert isinstance(raw, bytes)
    end = len(raw) if end is None else end
    while end > start and raw[end - 1] == ord("\n"):
        end -= 1
    if end - start < MIN_BYTES or b"\r" in raw or raw.startswith(b"\n", start):
        return None
    n = raw.count(b"\n", start, end) + 1  # one row per line, else a quoted field spans lines
    pieces = _pieces(raw, start, end)
    size = len(raw)
    if src is not None:
        src.release()
        if src.raw is None:  # released (the lines were never split): read from the file
            del raw
            return _read_pieces(_FilePieces(src.path, size, pieces), n, width, numbers, texts)
    return _read_pieces(_BytesPieces(raw, pieces), n, width, numbers, texts)


def _read_stream(
    path: str, size: int, start: int, width: int, numbers: list[int], texts: list[int]
) -> pd.DataFrame | None:
    """:func:`read_rows` of a pending source: the file's rows from ``start`` read and checked a
    piece at a time (:class:`_StreamPieces`), the bytes before them checked for a carriage
    return, trailing newlines ignored; None where the whole bytes' checks would fail."""
    try:
        with io.FileIO(path, "r") as handle:
            if os.fstat(handle.fileno()).st_size != size or start >= size:
                return None
            if b"\r" in _read_at(handle, 0, start):
                return None
            end = size
            while end > start:  # the trailing newlines, looked at from the end
                tail = _read_at(handle, max(start, end - 4096), end)
                bare = tail.rstrip(b"\n")
                end -= len(tail) - len(bare)
                if bare:
                    break
            if end - start < MIN_BYTES:
                return None
            first = _read_at(handle, start, min(end, start + ESTIMATE_BYTES))
            if first.startswith(b"\n"):
                return None
            # rows for the arrays to start with: the bytes over the first lines' mean length
            estimate = (end - start) * max(first.count(b"\n"), 1) // max(len(first), 1)
            return _read_pieces(
                _StreamPieces(handle, start, end), estimate + 1024, width, numbers, texts, False
            )
    except OSError:
        return None


def _read_into(handle: io.FileIO, at: int, view: memoryview) -> bool:
    """Fill ``view`` with the file's bytes from offset ``at``; False when the file ends first."""
    handle.seek(at)
    got = 0
    while got < len(view):
        count = handle.readinto(view[got:])
        if not count:
            return False
        got += count
    return True


def _read_at(handle: io.FileIO, first: int, last: int) -> bytes:
    """The file's bytes ``first`` to ``last`` (fewer when it is shorter)."""
    handle.seek(first)
    parts = []
    want = last - first
    while want > 0:
        got = handle.read(want)
        if not got:
            break
        parts.append(got)
        want -= len(got)
    return b"".join(parts)


def _read_pieces(
    source: _BytesPieces | _FilePieces | _StreamPieces,
    n: int,
    width: int,
    numbers: list[int],
    texts: list[int],
    exact: bool = True,
) -> pd.DataFrame | None:
    """:func:`read_rows` once the bytes are checked: the rows of ``source``'s pieces (byte
    ranges each without its final newline, with their number of lines when known) parsed one
    piece at a time; ``n`` rows in all when ``exact``, else about ``n`` (the arrays grow)."""
    used = sorted({*numbers, *texts})
    words = pa.dictionary(pa.int32(), pa.string())  # a trace repeats a few dozen names
    types = {str(j): pa.float64() for j in numbers} | {str(j): words for j in texts}
    options = {
        "read_options": pacsv.ReadOptions(column_names=[str(j) for j in range(width)]),
        "parse_options": pacsv.ParseOptions(newlines_in_values=False, ignore_empty_lines=False),
        "convert_options": pacsv.ConvertOptions(
            column_types=types,
            include_columns=[str(j) for j in used],
            null_values=sorted(MISSING_TOKENS),
            strings_can_be_null=False,
        ),
        "memory_pool": pa.system_memory_pool(),  # gives freed blocks back at once
    }
    floats = {j: np.empty(n) for j in numbers}
    nulls = dict.fromkeys(numbers, 0)
    strings = {j: _Coder() for j in texts}
    done = 0
    try:
        with source:
            for piece, lines in source:
                if piece is None:
                    return None
                table = pacsv.read_csv(pa.BufferReader(piece), **options)
                rows = table.num_rows
                if lines is not None and rows != lines:  # a quoted field spans lines
                    return None
                # a blank line ends the table (it reads as a row of empty cells): looked for
                # in a piece whose first column has an empty cell, or always when that column
                # is text (a piece is cut after a newline, so a blank line at a cut is a
                # piece's first or last line)
                if (0 not in numbers or table.column("0").null_count) and _has_blank_line(piece):
                    return None
                del piece
                source.parsed()  # the piece's bytes are done with: the next one may be read
                if done + rows > n:
                    if exact:
                        return None
                    n = max(2 * n, done + rows)
                    for values in floats.values():
                        values.resize(n, refcheck=False)  # realloc: no copy of the pages
                for j in numbers:
                    column = table.column(str(j))
                    floats[j][done : done + rows] = column.to_numpy()
                    nulls[j] += column.null_count
                for j in texts:
                    strings[j].add(table.column(str(j)))
                done += rows
                del table
    except (pa.ArrowException, ValueError, OSError):
        return None
    if done != n and exact:
        return None
    if done != n:
        for values in floats.values():
            values.resize(done, refcheck=False)
    if not _plain_numbers(floats, nulls):
        return None
    columns: dict[int, object] = {}
    for j in used:
        columns[j] = floats[j] if j in floats else strings.pop(j).series()
    frame = pd.DataFrame(columns, copy=False)
    frame.columns = list(columns)
    return frame


def _pieces(raw: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """``raw[start:end]`` cut at line ends into pieces of about :data:`PIECE_BYTES` (each
    without its final newline)."""
    pieces = []
    while end - start > PIECE_BYTES:
        cut = raw.find(b"\n", start + PIECE_BYTES, end)
        if cut < 0:
            break
        pieces.append((start, cut))
        start = cut + 1
    pieces.append((start, end))
    return pieces


def _has_blank_line(piece: memoryview) -> bool:
    """Whether the piece (lines without the final newline) holds an empty line."""
    text = piece.tobytes()
    return text.find(b"\n\n") >= 0 or text.startswith(b"\n") or text.endswith(b"\n")


#: a piece and its number of lines (None: not counted, the whole bytes' count is checked)
Piece = tuple[memoryview | None, int | None]


class _BytesPieces:
    """Pieces of the bytes at hand (zero-copy slices)."""

    def __init__(self, raw: bytes, pieces: list[tuple[int, int]]) -> None:
        self._whole = memoryview(raw)
        self._pieces = pieces

    def __enter__(self) -> _BytesPieces:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __iter__(self) -> Iterator[Piece]:
        for first, last in self._pieces:
            yield self._whole[first:last], None

    def parsed(self) -> None:
        """The piece given last is parsed (its bytes stay: they are the caller's)."""


class _FilePieces:
    """Pieces read from the file into one reused buffer; None when the file no longer has the
    size it had when its bytes were checked (replaced meanwhile: the scanner reads it again) or
    a piece no longer ends at a line end."""

    def __init__(self, path: str, size: int, pieces: list[tuple[int, int]]) -> None:
        self._path = path
        self._size = size
        self._pieces = pieces
        self._file: io.FileIO | None = None
        self._buffer = bytearray()

    def __enter__(self) -> _FilePieces:
        self._file = io.FileIO(self._path, "r")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._buffer = None, bytearray()

    def __iter__(self) -> Iterator[Piece]:
        for first, last in self._pieces:
            yield self.piece(first, last), None

    def parsed(self) -> None:
        """The piece given last is parsed (the next one is read when asked for)."""

    def piece(self, first: int, last: int) -> memoryview | None:
        handle = self._file
        assert handle is not None
        if os.fstat(handle.fileno()).st_size != self._size:
            return None
        want = last - first + (last < self._size)  # with the newline that ends the piece
        if len(self._buffer) < want:
            self._buffer = bytearray(want)
        view = memoryview(self._buffer)[:want]
        if not _read_into(handle, first, view):
            return None
        if want > last - first and view[-1] != ord("\n"):
            return None
        return view[: last - first]


class _StreamPieces:
    """The file's bytes ``start`` to ``end`` (no trailing newline) in pieces of about
    :data:`PIECE_BYTES`, each cut after a line end, read and counted (its lines) and checked as
    the whole bytes are on the other paths: a piece is None, which ends the read, when it holds
    a carriage return, bytes that are not UTF-8 or a line wider than
    :data:`parsers.source.MAX_FIELDS` (the whole-file checks would then name the line), or when
    one line is longer than a piece.

    The next piece is read and checked on a worker thread while the caller parses the one it
    was given (file reads and numpy's loops let go of the interpreter lock, and a piece's
    parse leaves a core idle while its columns are converted): two buffers take turns, and a
    buffer is filled again only once the caller is done with its bytes (:meth:`parsed`, or
    asking for the next piece).  An error raised on the thread (an OSError of the read) is
    raised in the caller."""

    def __init__(self, handle: io.FileIO, start: int, end: int) -> None:
        self._handle, self._start, self._end = handle, start, end
        self._free: queue.SimpleQueue[bytearray | None] = queue.SimpleQueue()
        self._ready: queue.SimpleQueue[_Ready] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._held: bytearray | None = None  # the buffer of the piece the caller holds
        self._stop = False

    def __enter__(self) -> _StreamPieces:
        for _ in range(2):
            self._free.put(bytearray(PIECE_BYTES))
        self._thread = threading.Thread(target=self._produce, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._free.put(None)  # wakes the worker if it waits for a buffer
        if self._thread is not None:
            self._thread.join()
        self._thread, self._held = None, None
        self._free, self._ready = queue.SimpleQueue(), queue.SimpleQueue()

    def __iter__(self) -> Iterator[Piece]:
        while True:
            self.parsed()  # asking for the next piece: done with the one given last
            item = self._ready.get()
            if isinstance(item, BaseException):
                raise item
            if item is None:  # the end
                return
            view, lines, self._held = item
            yield view, lines
            if view is None:
                return

    def parsed(self) -> None:
        """The caller is done with the bytes of the piece it was given last: its buffer is
        handed back to the worker, which reads the next piece into it while the caller goes on
        (converting the parsed columns)."""
        if self._held is not None:
            self._free.put(self._held)
            self._held = None

    def _produce(self) -> None:
        try:
            for item in self._pieces():
                self._ready.put(item)
                if item[0] is None:
                    return
            self._ready.put(None)
        except BaseException as exc:  # raised again in the caller's thread
            self._ready.put(exc)

    def _pieces(self) -> Iterator[tuple[memoryview | None, int | None, bytearray | None]]:
        at = self._start
        while at < self._end:
            buffer = self._free.get()
            if buffer is None or self._stop:
                return
            want = min(PIECE_BYTES, self._end - at)
            view = memoryview(buffer)
            if not _read_into(self._handle, at, view[:want]):
                yield None, None, None
                return
            size = want
            if at + want < self._end:  # cut after the piece's last line end
                size = buffer.rfind(b"\n", 0, want)
                if size < 0:
                    yield None, None, None
                    return
            octets = np.frombuffer(buffer, dtype=np.uint8, count=size)
            plain = buffer.find(b"\r", 0, size) < 0 and not has_line_longer(
                buffer, MAX_FIELDS, size
            )
            if plain and int(octets.max(initial=0)) >= 0x80:  # not ASCII: UTF-8 or refused
                try:
                    codecs.utf_8_decode(view[:size], "strict", True)
                except UnicodeDecodeError:
                    plain = False
            if not plain:
                yield None, None, None
                return
            lines = int(np.count_nonzero(octets == ord("\n"))) + 1
            del octets
            yield view[:size], lines, buffer
            at += size + 1


#: what :class:`_StreamPieces`' worker hands over: a piece, its lines and its buffer; None at
#: the end; or the error it met
_Ready = tuple[memoryview | None, int | None, bytearray | None] | BaseException | None


class _Coder:
    """Dictionary-encoded text blocks as one categorical column, block by block: each block's
    distinct texts become Python strings once and get codes in first-seen order, and the block
    is let go (a column of many distinct names is not held as Arrow blocks, a unified Arrow
    dictionary and Python strings at once)."""

    def __init__(self) -> None:
        self.words = FirstSeen()
        self.parts: list[np.ndarray] = []

    def add(self, column: pa.ChunkedArray) -> None:
        for chunk in column.chunks:
            local = chunk.dictionary.to_pylist()
            mapping = np.fromiter((self.words.code(w) for w in local), np.int32, len(local))
            indices = chunk.indices.to_numpy(zero_copy_only=False)
            self.parts.append(mapping[indices] if len(mapping) else indices.astype(np.int32))

    def series(self) -> pd.Series:
        codes = np.concatenate(self.parts) if self.parts else np.empty(0, np.int32)
        categories = pd.Index(self.words.values, dtype=object)
        self.words, self.parts = FirstSeen(), []
        return pd.Series(pd.Categorical.from_codes(codes, categories=categories), copy=False)


def without_placeholders(
    cells: pd.Series,
    texts: Callable[[pd.Series], pd.Series],
    placeholders: frozenset[str],
    strip: bool,
) -> pd.Series:
    """:func:`recode` of a categorical column with ``texts``, where ``texts`` strips the cells
    (``strip``) and makes the ``placeholders`` missing: done by removing the placeholder
    categories, without re-encoding the column, when no category needs stripping (a column of a
    million distinct names is not copied); :func:`recode` otherwise."""
    words = cells.cat.categories
    if words.dtype != object:
        return recode(cells, texts)
    gone = []
    for word in words:
        if not isinstance(word, str):
            return recode(cells, texts)
        bare = word.strip()
        if bare in placeholders:
            gone.append(word)
        elif strip and bare != word:
            return recode(cells, texts)  # a text to change, not only to drop
    return cells.cat.remove_categories(gone) if gone else cells


def recode(cells: pd.Series, texts: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """A categorical column with ``texts`` applied to its distinct texts (given and returned as
    a ``string`` Series; NA: missing), each distinct text looked at once; still categorical."""
    words = texts(pd.Series(cells.cat.categories, dtype="string"))
    codes, uniques = pd.factorize(words, use_na_sentinel=True)
    recoded = np.append(codes, -1)[cells.cat.codes.to_numpy()]  # code -1 (missing) stays -1
    category = pd.Categorical.from_codes(recoded, categories=pd.Index(uniques, dtype=object))
    return pd.Series(category, index=cells.index, copy=False)


#: values :func:`whole_numbers` looks at a time
WHOLE_CHUNK = 1 << 15


def whole_numbers(values: np.ndarray) -> bool:
    """Every value of a float column a whole number an ``Int64`` column holds, or NaN.  Looked
    at :data:`WHOLE_CHUNK` values at a time: the temporaries of a million-row column (two of
    8 MiB) cost more in fresh pages than in arithmetic (ten columns of a million rows 35 ->
    18 ms)."""
    for at in range(0, len(values), WHOLE_CHUNK):
        part = values[at : at + WHOLE_CHUNK]
        if not (np.isnan(part) | fits_int_array(part)).all():
            return False
    return True


def _plain_numbers(floats: dict[int, np.ndarray], nulls: dict[int, int]) -> bool:
    """No ``inf`` and no NaN but the placeholders' (``-nan``, ``inf``: the scanner reports
    them)."""
    # every placeholder is NaN, so the values that are not finite are exactly the placeholders
    # when there are as many of them (one pass: no inf, no other NaN)
    return all(len(a) - np.count_nonzero(np.isfinite(a)) == nulls[j] for j, a in floats.items())


def line_numbers(first: int, n: int) -> np.ndarray:
    """0-based line indices of ``n`` consecutive rows starting at line ``first``."""
    return np.arange(first, first + n, dtype=np.int64)
