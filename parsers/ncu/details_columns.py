"""The rows of a plainly quoted Nsight Compute details page read into categorical columns by
pyarrow's CSV parser (FORMATS.md §2.2; the caller, :func:`parsers.ncu.csv.one_details_table`,
has checked the quoting with :func:`parsers.ncu.csv._plain_rows`).

A details page mixes two row widths: ncu ends a metric row after its ``Metric Value`` (and a
trailing comma), five fields short of the header, while a rule row fills every column.  pyarrow
reads rows of one width only, so the width most of the first rows have is read by pyarrow
(every column dictionary-encoded: each distinct text is one string, every cell an ``int32``
index) and every row of another width is handed to a callback that notes its line; those lines
(two rule rows per launch) are read again from the file's bytes, by pyarrow with their own most
common width (their lines sliced a run of neighbouring lines at a time), or split by :mod:`csv`
as the row-by-row reading splits them when fewer than :data:`_FEW_ROWS` are left, and merged
back in file order.  A page of 16 MiB of rows or more is parsed as two halves on two threads.

Each column becomes a :class:`pandas.Categorical` with its categories sorted, as pandas' C
parser builds them with ``dtype="category"``: the same frame the columnar reading had before,
at about half the cost (benchmarks/bench_scale.py, ``ncu-details-csv``: the parse of a million
rows 1.1 s -> 0.5 s of CPU).
"""

from __future__ import annotations

import csv
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import pandas as pd

from parsers.ncu.csv_layouts import DETAILS_ROW_COLUMNS

#: lines looked at for the width most rows have
_SAMPLE_LINES = 200
#: rows of other widths split by :mod:`csv` one at a time below this many, else read by pyarrow
_FEW_ROWS = 2000
#: bytes pyarrow parses at a time
_BLOCK = 1 << 22
#: rows of this many bytes or more are parsed as two halves on two threads (:class:`FirstRead`)
_SPLIT_BYTES = 1 << 24


@dataclass
class _Part:
    """Rows of one width: their line numbers (0-based among the lines read; None: every line
    not in a later part), how many, and per column read the distinct texts and each row's
    index into them (None for a column not read)."""

    lines: np.ndarray | None
    rows: int
    words: list[list[str] | None]
    indices: list[np.ndarray | None]
    #: the first part's: per line, whether it holds it (:func:`_first_rows`)
    held: np.ndarray | None = None


class FirstRead:
    """The first pyarrow pass over ``raw[start:]`` (the rows as wide as most of the first
    :data:`_SAMPLE_LINES` lines; the columns of :data:`DETAILS_ROW_COLUMNS`), run on worker
    threads while the caller checks the quoting (:func:`parsers.ncu.csv._plain_rows`, numpy):
    pyarrow's parser and numpy's loops let go of the interpreter lock.  Rows of
    :data:`_SPLIT_BYTES` or more are parsed as two halves split at a line end, each on its own
    thread (:func:`_halves`), and joined (:func:`_joined_halves`).  Its result is used only once
    the check has passed (:func:`arrow_details_columns`); :meth:`result` waits for it, and an
    error raised on a thread is raised there."""

    def __init__(self, raw: bytes, start: int, header: Sequence[str], minimum: int) -> None:
        self.width: int | None = None
        self._reads: list[tuple[_Part, np.ndarray] | None] = []
        self._errors: list[BaseException] = []
        self._threads: list[threading.Thread] = []
        begins, ends = _first_lines(raw, start, _SAMPLE_LINES)
        width = _common_width(raw, begins, ends)
        if width is None or not minimum <= width <= len(header):
            return
        self.width = width
        keep = _row_columns(header)
        pieces = _halves(raw, start)
        self._reads = [None] * len(pieces)
        for k, body in enumerate(pieces):
            thread = threading.Thread(target=self._run, args=(k, body, header, width, keep))
            self._threads.append(thread)
            thread.start()

    def _run(
        self, k: int, body: memoryview, header: Sequence[str], width: int, keep: list[bool]
    ) -> None:
        try:
            self._reads[k] = _arrow_rows(body, header, width, keep, release=False)
        except BaseException as exc:  # raised again on the caller's thread
            self._errors.append(exc)

    def result(self) -> tuple[_Part, np.ndarray] | None:
        """The rows read and the numbers of those set aside (:func:`_arrow_rows`), or None."""
        for thread in self._threads:
            thread.join()
        if self._threads:
            self._threads = []
            _release()
        if self._errors:
            error, self._errors = self._errors[0], []
            raise error
        reads, self._reads = self._reads, []  # handed over: the caller's to let go of
        if not reads or any(read is None for read in reads):
            return None
        return _joined_halves([read for read in reads if read is not None])


def _halves(raw: bytes, start: int) -> list[memoryview]:
    """``raw[start:]`` as one piece, or, from :data:`_SPLIT_BYTES` on, two split after the line
    end nearest past the middle (views of the bytes, not copies)."""
    body = memoryview(raw)[start:]
    if len(body) < _SPLIT_BYTES:
        return [body]
    cut = raw.find(b"\n", start + len(body) // 2)
    if cut < 0 or cut + 1 >= len(raw):
        return [body]
    return [body[: cut + 1 - start], body[cut + 1 - start :]]


def _joined_halves(reads: list[tuple[_Part, np.ndarray]]) -> tuple[_Part, np.ndarray]:
    """The reads of consecutive pieces of the rows (:func:`_halves`) as one read: the set-aside
    row numbers of each piece moved past the lines of those before it (each piece's rows and
    set-aside rows are all its lines), each column's texts joined (a text new to a later piece
    appended, its indices mapped onto the joined texts).  A piece without a row adds no
    text."""
    first, aside = reads[0]
    numbers = [aside]
    lines = first.rows + len(aside)
    for part, more in reads[1:]:
        numbers.append(more + lines)
        lines += part.rows + len(more)
        if not part.rows:
            continue
        if not first.rows:  # its texts are the padding's only
            first.rows, first.words, first.indices = part.rows, part.words, part.indices
            continue
        for j, (texts, at) in enumerate(zip(part.words, part.indices, strict=True)):
            known_texts, known_at = first.words[j], first.indices[j]
            if texts is None or known_texts is None or at is None or known_at is None:
                continue
            number: dict[str, int] = {}
            _numbered(number, known_texts)
            mapped = _numbered(number, texts)
            small = _smallest(len(number))
            first.indices[j] = np.concatenate((known_at.astype(small), mapped[at].astype(small)))
            first.words[j] = list(number)
        first.rows += part.rows
    return first, np.concatenate(numbers)


def _release() -> None:
    """Give pyarrow's pool back its unused blocks (the parser's: mimalloc keeps them)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    pa.default_memory_pool().release_unused()


def _row_columns(header: Sequence[str]) -> list[bool]:
    """Per header column, whether it is read on every row (:data:`DETAILS_ROW_COLUMNS`)."""
    return [name in DETAILS_ROW_COLUMNS for name in header]


def _first_lines(raw: bytes, start: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(begins, ends) of the first ``n`` lines of ``raw[start:]`` (the last one may end at the
    end of the bytes)."""
    begins: list[int] = []
    ends: list[int] = []
    at = start
    while len(begins) < n and at < len(raw):
        end = raw.find(b"\n", at)
        end = len(raw) if end < 0 else end
        begins.append(at)
        ends.append(end)
        at = end + 1
    return np.array(begins, dtype=np.int64), np.array(ends, dtype=np.int64)


def arrow_details_columns(
    raw: bytes,
    start: int,
    header: Sequence[str],
    ends: np.ndarray,
    minimum: int,
    first: FirstRead | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """``raw[start:]`` (lines ending at ``ends``, plainly quoted: :func:`_plain_rows`) as
    (rows, launches): ``rows`` one categorical column per header name of
    :data:`DETAILS_ROW_COLUMNS`, a row per line; ``launches`` every header column of each
    launch's first line (in the order of the launches' first rows), the only cells the frames
    take of the other columns (:func:`parsers.ncu.csv_layouts._details`).  Rows are padded with
    ``""`` to the header's width.  None when a row is shorter than ``minimum`` fields or longer
    than the header (the row-by-row reading then names it), or pyarrow refuses the bytes (bad
    UTF-8).

    Under plain quoting pyarrow and :mod:`csv` split a line the same way: at the commas outside
    quotes, dropping the quotes (no quote is escaped, no line break quoted).  The rows of the
    most common width are read first; the rows set aside are read again, from their lines, by
    the same means (pyarrow with their own most common width, or :mod:`csv` when they are few).
    ``first``: the first pass, started before the quoting was checked (:class:`FirstRead`)."""
    begins = np.concatenate(([start], ends[:-1] + 1))
    keep = _row_columns(header)
    parts = _read_parts(raw, begins, ends, header, minimum, keep, memoryview(raw)[start:], first)
    if parts is None:
        return None
    rows = pd.DataFrame(
        {name: _categorical(parts, j, len(ends)) for j, name in enumerate(header) if keep[j]}
    )
    del parts
    firsts = _launch_firsts(rows)
    every = [True] * len(header)
    parts = _read_parts(raw, begins[firsts], ends[firsts], header, minimum, every, None, None)
    if parts is None:
        return None
    launches = pd.DataFrame(
        {name: _categorical(parts, j, len(firsts)) for j, name in enumerate(header)}
    )
    return rows, launches


def _launch_firsts(rows: pd.DataFrame) -> np.ndarray:
    """The position of each launch's first row (a launch: one (``Process ID``, ``ID``) pair, as
    :func:`parsers.ncu.csv_layouts._codes` numbers them), ascending, i.e. in the order of the
    launches' first appearance.  A launch's first row is one where the pair changes from the
    row before (a launch's rows follow each other in an export): only those rows are compared."""
    key = np.zeros(len(rows), dtype=np.int64)
    for column in ("Process ID", "ID"):
        if column in rows.columns:
            cells = rows[column].cat
            key = key * max(len(cells.categories), 1) + cells.codes.to_numpy()
    changes = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    return np.sort(changes[np.unique(key[changes], return_index=True)[1]])


def _read_parts(
    raw: bytes,
    begins: np.ndarray,
    ends: np.ndarray,
    header: Sequence[str],
    minimum: int,
    keep: list[bool],
    whole: memoryview | None,
    first: FirstRead | None,
) -> list[_Part] | None:
    """The lines ``raw[begins[i]:ends[i]]`` read in parts of one width each (the first part
    the most common width, each next one the most common among the lines left), the columns
    ``keep`` says; ``whole``: those lines as they lie in the bytes, when they are all the lines
    from the first on (else they are joined)."""
    parts: list[_Part] = []
    lines: np.ndarray | None = None  # the lines still to read (None: all of them)
    while True:
        count = len(ends) if lines is None else len(lines)
        if lines is not None and count < _FEW_ROWS:
            part = _split_rows(raw, begins[lines], ends[lines], lines, header, minimum, keep)
            if part is None:
                return None
            parts.append(part)
            return parts
        if lines is None and first is not None:
            if first.width is None:
                return None
            read = first.result()
        else:
            at = np.arange(len(ends)) if lines is None else lines
            width = _common_width(raw, begins[at[:_SAMPLE_LINES]], ends[at[:_SAMPLE_LINES]])
            if width is None or not minimum <= width <= len(header):
                return None
            body = whole if lines is None and whole is not None else _joined(raw, begins, ends, at)
            read = _arrow_rows(body, header, width, keep)
        if read is None:
            return None
        part, aside = read
        if part.rows + len(aside) != count:
            return None
        if lines is not None:
            part.lines = lines[np.setdiff1d(np.arange(count), aside, assume_unique=True)]
        parts.append(part)
        if not len(aside):
            return parts
        lines = aside if lines is None else lines[aside]


def _joined(raw: bytes, begins: np.ndarray, ends: np.ndarray, lines: np.ndarray) -> memoryview:
    """The lines ``lines`` of ``raw`` (``raw[begins[i]:ends[i]]``), one after the other: each
    run of lines that follow each other in the bytes sliced at once, with the line ends
    between them (a launch's two rule rows are one slice)."""
    starts, stops = begins[lines], ends[lines]
    cuts = np.flatnonzero(starts[1:] != stops[:-1] + 1) + 1
    firsts = np.concatenate(([0], cuts)) if len(lines) else cuts
    lasts = np.concatenate((cuts - 1, [len(lines) - 1])) if len(lines) else cuts
    pieces = zip(starts[firsts].tolist(), stops[lasts].tolist(), strict=True)
    return memoryview(b"\n".join([raw[b:e] for b, e in pieces]))


def _arrow_rows(
    body: memoryview, header: Sequence[str], width: int, keep: list[bool], release: bool = True
) -> tuple[_Part, np.ndarray] | None:
    """The rows of ``body`` that have ``width`` fields, read by pyarrow (the columns ``keep``
    says, dictionary-encoded), padded to the header's width, and the numbers (0-based, sorted)
    of the other rows; None when pyarrow refuses the bytes.  ``release``: give the pool's
    unused blocks back afterwards (:func:`_release`; not while another thread parses)."""
    import pyarrow as pa  # (its missing stubs are reported once: _release)
    import pyarrow.csv as pacsv  # type: ignore[import-untyped]

    aside: list[int] = []

    def set_aside(row: Any) -> str:  # pyarrow's InvalidRow
        aside.append(row.number or 0)  # 1-based; None: not known
        return "skip"

    names = list(header[:width])
    read = [n for n, k in zip(names, keep, strict=False) if k]
    try:
        table = pacsv.read_csv(
            pa.py_buffer(body),
            read_options=pacsv.ReadOptions(
                column_names=names, use_threads=False, block_size=_BLOCK
            ),
            parse_options=pacsv.ParseOptions(invalid_row_handler=set_aside),
            convert_options=pacsv.ConvertOptions(
                include_columns=read,
                column_types={n: pa.dictionary(pa.int32(), pa.string()) for n in read},
                strings_can_be_null=False,
            ),
        ).unify_dictionaries()
    except (pa.ArrowException, UnicodeDecodeError):
        return None
    numbers = np.array(sorted(aside), dtype=np.int64) - 1
    if len(numbers) and (numbers[0] < 0 or (np.diff(numbers) == 0).any()):
        return None
    rows = table.num_rows
    words: list[list[str] | None] = []
    indices: list[np.ndarray | None] = []
    for j, name in enumerate(header):
        if not keep[j]:
            words.append(None)
            indices.append(None)
        elif j < width and rows:
            chunks = table.column(name).chunks
            words.append(chunks[0].dictionary.to_pylist())
            at = np.concatenate([c.indices.to_numpy() for c in chunks])
            indices.append(at.astype(_smallest(len(words[-1] or ())), copy=False))
        else:  # padding, or no row
            words.append([""])
            indices.append(np.zeros(rows, dtype=np.int32))
    del table
    if release:
        _release()
    return _Part(None, rows, words, indices), numbers


def _smallest(count: int) -> type[np.signedinteger]:
    """The smallest signed integer type that numbers ``count`` things (as pandas' codes)."""
    return np.int8 if count < 2**7 else np.int16 if count < 2**15 else np.int32


def _split_rows(
    raw: bytes,
    begins: np.ndarray,
    ends: np.ndarray,
    lines: np.ndarray,
    header: Sequence[str],
    minimum: int,
    keep: list[bool],
) -> _Part | None:
    """The lines ``raw[begins[i]:ends[i]]`` split by :mod:`csv` (as the row-by-row reading splits
    them) and padded to the header's width; None when one has fewer than ``minimum`` or more
    fields than the header."""
    width = len(header)
    rows: list[list[str]] = []
    for begin, end in zip(begins.tolist(), ends.tolist(), strict=True):
        fields = next(csv.reader([raw[begin:end].decode("utf-8")], strict=True))
        if not minimum <= len(fields) <= width:
            return None
        rows.append(fields + [""] * (width - len(fields)))
    words: list[list[str] | None] = []
    indices: list[np.ndarray | None] = []
    columns = zip(*rows, strict=True) if rows else [()] * width
    for column, wanted in zip(columns, keep, strict=True):
        if not wanted:
            words.append(None)
            indices.append(None)
            continue
        codes, uniq = pd.factorize(pd.Series(column, dtype=object))
        words.append([str(w) for w in uniq])
        indices.append(codes.astype(np.int32))
    return _Part(lines, len(rows), words, indices)


def _common_width(raw: bytes, begins: np.ndarray, ends: np.ndarray) -> int | None:
    """The number of fields most of the lines ``raw[begins[i]:ends[i]]`` have (the first one's
    among equals); None when a line is no CSV row."""
    counts: dict[int, int] = {}
    for begin, end in zip(begins.tolist(), ends.tolist(), strict=True):
        try:
            fields = next(csv.reader([raw[begin:end].decode("utf-8")], strict=True))
        except (csv.Error, UnicodeDecodeError, StopIteration):
            return None
        counts[len(fields)] = counts.get(len(fields), 0) + 1
    return max(counts, key=lambda w: counts[w]) if counts else None


def _first_rows(parts: list[_Part], rows: int) -> np.ndarray:
    """Per line, whether the first part holds it (no later part names it): found once for all
    the columns (kept on the first part)."""
    first = parts[0]
    if first.held is None:
        held = np.ones(rows, dtype=bool)
        for part in parts[1:]:
            held[part.lines] = False
        first.held = held
    return first.held


def _numbered(known: dict[str, int], texts: list[str]) -> np.ndarray:
    """Each of ``texts``' number in ``known``, a text not yet there given the next number (and
    added): one dictionary look-up per text, made by ``map``."""
    if not known:
        known.update(zip(texts, range(len(texts)), strict=True))
        if len(known) == len(texts):  # distinct texts (a dictionary's): numbered in order
            return np.arange(len(texts), dtype=np.int64)
        known.clear()
    found = np.fromiter(map(known.get, texts, repeat(-1)), dtype=np.int64, count=len(texts))
    new = np.flatnonzero(found < 0)
    added = [texts[k] for k in new.tolist()]
    if len(set(added)) == len(added):  # distinct new texts: numbered in order
        size = len(known)
        known.update(zip(added, range(size, size + len(added)), strict=True))
        found[new] = np.arange(size, size + len(added))
        return found
    for k in new.tolist():  # a text repeated among them
        found[k] = known.setdefault(texts[k], len(known))
    return found


def _categorical(parts: list[_Part], column: int, rows: int) -> pd.Categorical:
    """Column ``column`` of ``rows`` rows gathered from ``parts`` (the first one's rows fill the
    lines no later part names); categories sorted (as pandas' C parser sorts them), codes in
    the smallest integer type that holds them (as pandas stores them).  The parts' indices
    of the column are let go of."""
    known: dict[str, int] = {}
    maps: list[np.ndarray] = []
    found: list[np.ndarray] = []
    for part in parts:
        texts, at = part.words[column], part.indices[column]
        assert texts is not None and at is not None
        part.indices[column] = None  # let go of as soon as the codes are built
        maps.append(_numbered(known, texts))
        found.append(at)
    words = list(known)
    order = sorted(range(len(words)), key=words.__getitem__)
    small = _smallest(len(words))
    rank = np.empty(len(words), dtype=small)
    rank[order] = np.arange(len(words), dtype=small)
    main = rank[maps[0]][found[0]]
    if len(parts) == 1:
        codes = main
    else:
        codes = np.empty(rows, dtype=small)
        for part, own, at in zip(parts[1:], maps[1:], found[1:], strict=True):
            assert part.lines is not None
            codes[part.lines] = rank[own][at]
        codes[_first_rows(parts, rows)] = main
    categories = pd.Index([words[i] for i in order])
    return pd.Categorical.from_codes(codes, categories=categories, validate=False)
