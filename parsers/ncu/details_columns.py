"""The rows of a plainly quoted Nsight Compute details page read into categorical columns by
pyarrow's CSV parser (FORMATS.md §2.2; the caller, :func:`parsers.ncu.csv.one_details_table`,
has checked the quoting with :func:`parsers.ncu.csv._plain_rows`).

A details page mixes two row widths: ncu ends a metric row after its ``Metric Value`` (and a
trailing comma), five fields short of the header, while a rule row fills every column.  pyarrow
reads rows of one width only, so the width most of the first rows have is read by pyarrow
(every column dictionary-encoded: each distinct text is one string, every cell an ``int32``
index) and every row of another width is handed to a callback that notes its line; those few
lines (two rule rows per launch) are split by :mod:`csv` from the file's bytes, as the row-by-row
reading splits them, and merged back in file order.

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

import numpy as np
import pandas as pd

#: lines looked at for the width most rows have
_SAMPLE_LINES = 200
#: rows of other widths split by :mod:`csv` one at a time below this many, else read by pyarrow
_FEW_ROWS = 2000
#: bytes pyarrow parses at a time
_BLOCK = 1 << 22


@dataclass
class _Part:
    """Rows of one width: their line numbers (0-based after the header; None: every line not
    in a later part) and, per column, the distinct texts and each row's index into them."""

    lines: np.ndarray | None
    words: list[list[str]]
    indices: list[np.ndarray]


class FirstRead:
    """The first pyarrow pass over ``raw[start:]`` (the rows as wide as most of the first
    :data:`_SAMPLE_LINES` lines), run on a worker thread while the caller checks the quoting
    (:func:`parsers.ncu.csv._plain_rows`, numpy): pyarrow's parser and numpy's loops let go of
    the interpreter lock, so on two free cores the check costs no wall time.  Its result is
    used only once the check has passed (:func:`arrow_details_columns`); :meth:`result` waits
    for it, and an error raised on the thread is raised there."""

    def __init__(self, raw: bytes, start: int, header: Sequence[str], minimum: int) -> None:
        self.width: int | None = None
        self._read: tuple[_Part, np.ndarray] | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        begins, ends = _first_lines(raw, start, _SAMPLE_LINES)
        width = _common_width(raw, begins, ends)
        if width is None or not minimum <= width <= len(header):
            return
        self.width = width
        names, body = list(header[:width]), memoryview(raw)[start:]
        self._thread = threading.Thread(target=self._run, args=(body, names, len(header)))
        self._thread.start()

    def _run(self, body: memoryview, names: list[str], width: int) -> None:
        try:
            self._read = _arrow_rows(body, names, width)
        except BaseException as exc:  # raised again on the caller's thread
            self._error = exc

    def result(self) -> tuple[_Part, np.ndarray] | None:
        """The rows read and the numbers of those set aside (:func:`_arrow_rows`), or None."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._read


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
) -> pd.DataFrame | None:
    """``raw[start:]`` (lines ending at ``ends``, plainly quoted: :func:`_plain_rows`) as one
    categorical column per ``header`` name, rows padded with ``""`` to the header's width; None
    when a row is shorter than ``minimum`` fields or longer than the header (the row-by-row
    reading then names it), or pyarrow refuses the bytes (bad UTF-8).

    Under plain quoting pyarrow and :mod:`csv` split a line the same way: at the commas outside
    quotes, dropping the quotes (no quote is escaped, no line break quoted).  The rows of the
    most common width are read first; the rows set aside are read again, from their lines, by
    the same means (pyarrow with their own most common width, or :mod:`csv` when they are few).
    ``first``: the first pass, started before the quoting was checked (:class:`FirstRead`)."""
    begins = np.concatenate(([start], ends[:-1] + 1))
    parts: list[_Part] = []
    body = memoryview(raw)[start:]
    lines: np.ndarray | None = None  # the lines of ``body`` (None: all of them)
    while True:
        count = len(ends) if lines is None else len(lines)
        if lines is not None and count < _FEW_ROWS:
            part = _split_rows(raw, begins[lines], ends[lines], lines, len(header), minimum)
            if part is None:
                return None
            parts.append(part)
            break
        if lines is None and first is not None:
            if first.width is None:
                return None
            read = first.result()
        else:
            if lines is None:
                sample = begins[:_SAMPLE_LINES], ends[:_SAMPLE_LINES]
            else:
                sample = begins[lines[:_SAMPLE_LINES]], ends[lines[:_SAMPLE_LINES]]
            width = _common_width(raw, *sample)
            if width is None or not minimum <= width <= len(header):
                return None
            read = _arrow_rows(body, list(header[:width]), len(header))
        if read is None:
            return None
        part, aside = read
        if part.indices and len(part.indices[0]) + len(aside) != count:
            return None
        if lines is not None:
            part.lines = lines[np.setdiff1d(np.arange(count), aside, assume_unique=True)]
        parts.append(part)
        if not len(aside):
            break
        lines = aside if lines is None else lines[aside]
        body = memoryview(b"\n".join(raw[b:e] for b, e in zip(
            begins[lines].tolist(), ends[lines].tolist(), strict=True
        )))  # fmt: skip
    rows = len(ends)
    return pd.DataFrame({name: _categorical(parts, j, rows) for j, name in enumerate(header)})


def _arrow_rows(body: memoryview, names: list[str], width: int) -> tuple[_Part, np.ndarray] | None:
    """The rows of ``body`` that have ``len(names)`` fields, read by pyarrow (every column
    dictionary-encoded), padded to ``width`` columns, and the numbers (0-based, sorted) of the
    other rows; None when pyarrow refuses the bytes."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.csv as pacsv  # type: ignore[import-untyped]

    aside: list[int] = []

    def set_aside(row: object) -> str:
        aside.append(getattr(row, "number", None) or 0)  # 1-based; 0: not known
        return "skip"

    try:
        table = pacsv.read_csv(
            pa.py_buffer(body),
            read_options=pacsv.ReadOptions(
                column_names=names, use_threads=False, block_size=_BLOCK
            ),
            parse_options=pacsv.ParseOptions(invalid_row_handler=set_aside),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.dictionary(pa.int32(), pa.string()) for n in names},
                strings_can_be_null=False,
            ),
        ).unify_dictionaries()
    except (pa.ArrowException, UnicodeDecodeError):
        return None
    numbers = np.array(sorted(aside), dtype=np.int64) - 1
    if len(numbers) and (numbers[0] < 0 or (np.diff(numbers) == 0).any()):
        return None
    words: list[list[str]] = []
    indices: list[np.ndarray] = []
    for j in range(width):
        if j < len(names) and table.num_rows:
            chunks = table.column(j).chunks
            words.append(chunks[0].dictionary.to_pylist())
            indices.append(np.concatenate([c.indices.to_numpy() for c in chunks]))
        else:
            words.append([""])
            indices.append(np.zeros(table.num_rows, dtype=np.int32))
    return _Part(None, words, indices), numbers


def _split_rows(
    raw: bytes,
    begins: np.ndarray,
    ends: np.ndarray,
    lines: np.ndarray,
    width: int,
    minimum: int,
) -> _Part | None:
    """The lines ``raw[begins[i]:ends[i]]`` split by :mod:`csv` (as the row-by-row reading splits
    them) and padded to ``width`` fields; None when one has fewer than ``minimum`` or more than
    ``width`` fields."""
    rows: list[list[str]] = []
    for begin, end in zip(begins.tolist(), ends.tolist(), strict=True):
        fields = next(csv.reader([raw[begin:end].decode("utf-8")], strict=True))
        if not minimum <= len(fields) <= width:
            return None
        rows.append(fields + [""] * (width - len(fields)))
    words: list[list[str]] = []
    indices: list[np.ndarray] = []
    for column in zip(*rows, strict=True) if rows else [()] * width:
        codes, uniq = pd.factorize(pd.Series(column, dtype=object))
        words.append([str(w) for w in uniq])
        indices.append(codes.astype(np.int32))
    return _Part(lines, words, indices)


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


def _categorical(parts: list[_Part], column: int, rows: int) -> pd.Categorical:
    """Column ``column`` of ``rows`` rows gathered from ``parts`` (the first one's rows fill the
    lines no later part names); categories sorted (as pandas' C parser sorts them), codes in
    the smallest integer type that holds them (as pandas stores them)."""
    known: dict[str, int] = {}
    maps: list[np.ndarray] = []
    for part in parts:
        texts = part.words[column]
        maps.append(np.array([known.setdefault(w, len(known)) for w in texts], dtype=np.int64))
    words = list(known)
    order = sorted(range(len(words)), key=words.__getitem__)
    small = np.int8 if len(words) < 2**7 else np.int16 if len(words) < 2**15 else np.int32
    rank = np.empty(len(words), dtype=small)
    rank[order] = np.arange(len(words), dtype=small)
    first = parts[0]
    main = rank[maps[0]][first.indices[column]]
    if len(parts) == 1:
        codes = main
    else:
        codes = np.empty(rows, dtype=small)
        kept = np.ones(rows, dtype=bool)
        for part, own in zip(parts[1:], maps[1:], strict=True):
            assert part.lines is not None
            codes[part.lines] = rank[own][part.indices[column]]
            kept[part.lines] = False
        codes[kept] = main
    categories = pd.Index([words[i] for i in order])
    return pd.Categorical.from_codes(codes, categories=categories, validate=False)
