"""SQLite profile databases: nvprof ``-o`` output and ``nsys export --type sqlite`` exports.

Both tools write SQLite files (they start with ``SQLite format 3\\0``).  The first 4096 bytes the
registry hands a sniffer do not reliably hold the table names that tell the two apart (an nsys
export can have no ``CUPTI_ACTIVITY_KIND`` name on its first page), so one binary format,
``sqlite``, sniffs the header and its reader opens the database read-only and hands it to the
reader whose tables it has.  Each reader registers itself here with :func:`add_reader`:

* ``nvprof-db`` (:mod:`parsers.sqlite.nvprof`): ``StringTable``, ``Version`` and
  ``CUPTI_ACTIVITY_KIND_*`` tables;
* ``nsys-sqlite`` (:mod:`parsers.sqlite.nsys`): ``StringIds`` with ``CUPTI_ACTIVITY_KIND_*``,
  ``TARGET_INFO_*`` or export metadata tables.

The Profile's provenance names the reader's format (``nvprof-db`` / ``nsys-sqlite``).  A SQLite
file that is neither is an :class:`UnrecognisedFormat` naming the tables expected and found; a
truncated or corrupt database is a one-line :class:`MalformedInput`.  Every query goes through
:class:`Database`, which never writes: the file is opened with ``mode=ro``.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from advisor import schema
from advisor.errors import MalformedInput, UnreadableInput, UnrecognisedFormat, one_line
from advisor.profile import Profile
from parsers.registry import BinaryFormat, Selection, register
from parsers.source import SQLITE_MAGIC
from parsers.units import fits_int

FORMAT = "sqlite"
#: a column's place in :class:`_IntReader` once the column is taken from it
_NO_VALUES = np.zeros(0, dtype=np.int64)
#: how many table names an "unrecognised database" message lists
_LISTED_TABLES = 8
#: rows fetched at a time by Database.int_frame (a few MB of Python objects at once)
_CHUNK_ROWS = 8192


class Database:
    """A read-only SQLite database whose every error becomes a one-line MalformedInput."""

    def __init__(self, path: str, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        names = self.rows("SELECT name FROM sqlite_master WHERE type = 'table'")
        self.tables: frozenset[str] = frozenset(str(n) for (n,) in names)

    def malformed(self, message: str) -> MalformedInput:
        return MalformedInput(self.path, message)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._reading():
            return list(self._conn.execute(sql, tuple(params)).fetchall())

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Every SQLite error (and a text cell that is not UTF-8) as a one-line MalformedInput."""
        try:
            yield
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise self.malformed(
                f"cannot read the SQLite database ({_one_line(exc)}); "
                "the file may be truncated or corrupt"
            ) from exc

    def has_rows(self, table: str) -> bool:
        return table in self.tables and bool(self.rows(f"SELECT 1 FROM {_q(table)} LIMIT 1"))

    def count(self, table: str) -> int:
        if table not in self.tables:
            return 0
        return int(self.rows(f"SELECT count(*) FROM {_q(table)}")[0][0])

    def columns(self, table: str) -> list[str]:
        return [str(row[1]) for row in self.rows(f"PRAGMA table_info({_q(table)})")]

    def frame(
        self, table: str, columns: Sequence[str], required: Sequence[str] = ()
    ) -> pd.DataFrame:
        """``columns`` of ``table`` in storage order (``rowid``); a column the table lacks (an
        older schema) is all missing, a lacking ``required`` column is MalformedInput.  A table
        the file lacks gives an empty frame."""
        if table not in self.tables:
            return pd.DataFrame({c: pd.Series([], dtype="object") for c in columns})
        have = set(self.columns(table))
        lacking = [c for c in required if c not in have]
        if lacking:
            raise self.malformed(f"table {table} has no column {', '.join(lacking)}")
        present = [c for c in columns if c in have]
        select = ", ".join(_q(c) for c in present) or "NULL"
        records = self.rows(f"SELECT {select} FROM {_q(table)} ORDER BY rowid")
        # object columns keep SQLite's integers exact (absolute ns exceed float64's 2**53)
        stored = dict(zip(present, zip(*records, strict=True), strict=True)) if records else {}
        return pd.DataFrame(
            {c: pd.Series(stored.get(c, [None] * len(records)), dtype="object") for c in columns}
        )

    def int_frame(
        self,
        table: str,
        columns: Sequence[str],
        required: Sequence[str] = (),
        keep: Sequence[str] = (),
        narrow: Sequence[str] = (),
    ) -> pd.DataFrame:
        """:meth:`frame` with every column but ``keep`` as exact nullable integers (``Int64``,
        :func:`int_column` of each cell), read without a Python object per cell; a ``narrow``
        column in the narrowest width that holds it (:func:`advisor.schema.narrow_ints`, what the
        schema keeps of it: each column narrowed as it is taken from the reader, so the frame
        never holds its int64 array beside the narrow one).

        The CUPTI activity columns are INTEGER (int64 in SQLite, exact beyond float64's 2**53):
        rows are fetched :data:`_CHUNK_ROWS` at a time into an int64 array.  A chunk holding
        anything else (NULL, a fraction, text: a damaged database) is converted cell by cell as
        :meth:`frame` + :func:`int_column` do; a ``keep`` column (a string id that may be text)
        holding anything but integers is returned as :meth:`frame` returns it."""
        if table not in self.tables:
            return pd.DataFrame({c: pd.Series([], dtype="Int64") for c in columns})
        have = set(self.columns(table))
        lacking = [c for c in required if c not in have]
        if lacking:
            raise self.malformed(f"table {table} has no column {', '.join(lacking)}")
        present = [c for c in columns if c in have]
        reader = _IntReader(len(present), self.count(table))
        select = ", ".join(_q(c) for c in present) or "NULL"
        with self._reading():
            cursor = self._conn.execute(f"SELECT {select} FROM {_q(table)} ORDER BY rowid")
            while records := cursor.fetchmany(_CHUNK_ROWS):
                reader.add(records)
        stored = {}
        for i, c in enumerate(present):
            column = reader.column(i, c in keep)
            if c in narrow:
                column = schema.narrow_ints(column)
            reader.values[i] = _NO_VALUES  # the int64 array lives on only in an Int64 column
            stored[c] = column
        rows = reader.rows
        del reader  # from here each column holds only its own array
        return pd.DataFrame(
            {c: stored[c] if c in stored else _missing_ints(rows) for c in columns}, copy=False
        )

    def strings(self, table: str, key: str, value: str) -> dict[int, str]:
        """An id -> text table (nvprof ``StringTable``, nsys ``StringIds``) as a dict."""
        out: dict[int, str] = {}
        for k, v in self.rows(f"SELECT {_q(key)}, {_q(value)} FROM {_q(table)}"):
            if (number := as_int(k)) is not None and (text := as_text(v)) is not None:
                out[number] = text
        return out


@dataclass(frozen=True)
class SqliteReader:
    """One tool's database layout: which tables claim a file, and the reader (called with
    the open database and the metric selection of :func:`read_sqlite`)."""

    format: str  # the Provenance format, e.g. "nvprof-db"
    profiler: str
    expects: str  # the tables it recognises, for the "neither" message
    claims: Callable[[frozenset[str]], bool]
    read: Callable[[Database, Selection], Profile]


READERS: list[SqliteReader] = []


def add_reader(reader: SqliteReader) -> None:
    if any(r.format == reader.format for r in READERS):
        raise ValueError(f"SQLite reader {reader.format!r} added twice")
    READERS.append(reader)


@contextmanager
def open_database(path: str) -> Iterator[Database]:
    """Open ``path`` read-only (``mode=ro``: the user's file is never written)."""
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise UnreadableInput(path, f"cannot open the SQLite database: {_one_line(exc)}") from exc
    try:
        yield Database(path, conn)
    finally:
        conn.close()


def sniff_sqlite(head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC)


def read_sqlite(path: str, selected: Selection) -> Profile:
    """Read an nvprof database or an nsys SQLite export, told apart by their tables; the metric
    selection ``selected`` is handed to the reader of the database's layout."""
    with open_database(path) as db:
        for reader in READERS:
            if reader.claims(db.tables):
                return reader.read(db, selected)
        found = sorted(db.tables)
        listed = ", ".join(found[:_LISTED_TABLES]) or "none"
        if len(found) > _LISTED_TABLES:
            listed += f", ... ({len(found)} tables)"
        expected = "; ".join(f"{r.format}: {r.expects}" for r in READERS)
        raise UnrecognisedFormat(
            path,
            f"SQLite database that is neither an nvprof database nor an Nsight Systems export "
            f"(expected {expected}; found tables: {listed})",
        )


def as_int(cell: object) -> int | None:
    """An SQLite/pandas cell as an exact int; None, NaN, NA, text and fractions -> None."""
    if isinstance(cell, bool):
        return None
    if isinstance(cell, int | np.integer):
        return int(cell)
    if isinstance(cell, float | np.floating) and fits_int(cell):
        return int(cell)
    return None


def as_text(cell: object) -> str | None:
    """An SQLite/pandas cell as text (a blob decoded as UTF-8); None, NaN and NA -> None."""
    if cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell)):
        return None
    if isinstance(cell, bytes | bytearray | memoryview):
        return bytes(cell).decode("utf-8", errors="replace")
    return str(cell)


def int_column(values: pd.Series) -> pd.Series:
    """A column of integer cells as exact nullable integers (``Int64``)."""
    if pd.api.types.is_integer_dtype(values.dtype):
        return values.astype("Int64")
    if _only_ints(values):  # the usual column: converted in one step
        return pd.Series(pd.array(values.to_numpy(dtype=object), dtype="Int64"), index=values.index)
    return pd.Series(pd.array([as_int(v) for v in values], dtype="Int64"), index=values.index)


def _only_ints(values: pd.Series) -> bool:
    """Every cell a Python int (not a bool) or None, as sqlite3 returns INTEGER columns."""
    return set(map(type, values)) <= {int, type(None)}


def number_column(values: pd.Series) -> pd.Series:
    """A column of numeric cells as floats; text and blobs (a damaged row) are missing."""
    return pd.to_numeric(values, errors="coerce").astype("float64")


def lookup(table: Mapping[int, str], cell: object, default: str | None = None) -> str | None:
    """``table[cell]`` for an integer id cell (an enum or string id), else ``default``."""
    code = as_int(cell)
    return default if code is None else table.get(code, default)


def lookup_column(
    table: Mapping[int, str], cells: pd.Series, default: str | None = None
) -> np.ndarray:
    """:func:`lookup` of every cell (an object array), one look-up per distinct cell."""
    return per_distinct(cells, lambda cell: lookup(table, cell, default))


def per_distinct(cells: pd.Series, fn: Callable[[object], Any]) -> np.ndarray:
    """``fn`` of every cell as an object array; for the usual integer column (ids, enum codes:
    few distinct values over millions of rows) computed once per distinct value."""
    out = np.empty(len(cells), dtype=object)
    if pd.api.types.is_integer_dtype(cells.dtype) or _only_ints(cells):
        codes, uniques = schema.factorize(pd.Series(cells, dtype="Int64"), use_na_sentinel=True)
    else:
        out[:] = [fn(cell) for cell in cells]
        return out
    mapped = np.empty(len(uniques) + 1, dtype=object)  # the last slot is for None (code -1)
    for i, value in enumerate(uniques):
        mapped[i] = fn(int(value))
    mapped[-1] = fn(None)
    out[:] = mapped[codes]
    return out


class _IntReader:
    """The columns of :meth:`Database.int_frame`, filled one fetched chunk at a time.

    Each column has an int64 array of its own, so a column the reader drops once it is converted
    (the times, the name ids) frees its memory while the kept ones live on in the frame."""

    def __init__(self, columns: int, capacity: int) -> None:
        self.rows = 0
        self.values = [np.zeros(capacity, dtype=np.int64) for _ in range(columns)]
        self.nulls: dict[int, np.ndarray] = {}  # column -> its NULL cells, if it has any
        self.cells: dict[int, list[tuple[int, np.ndarray]]] = {}  # column -> (row, objects)

    def add(self, records: list[tuple[Any, ...]]) -> None:
        """The next rows; numpy infers int64 only when every cell is an integer."""
        start, stop = self.rows, self.rows + len(records)
        self.rows = stop
        if self.values and stop > len(self.values[0]):  # more rows than count(*) said: grow
            self.values = [np.pad(v, (0, stop)) for v in self.values]
            self.nulls = {i: np.pad(m, (0, stop)) for i, m in self.nulls.items()}
        if not self.values:
            return
        try:
            block = np.array(records)
        except (ValueError, TypeError, OverflowError):
            block = np.empty(0)
        if block.dtype == np.int64 and block.ndim == 2:
            for values, column in zip(self.values, block.T, strict=True):
                values[start:stop] = column
            return
        block = np.empty((len(records), len(self.values)), dtype=object)
        block[:] = records
        for i, column in enumerate(block.T):
            if set(map(type, column)) <= {int, type(None)}:  # an INTEGER column with NULLs
                nulls = pd.isna(column)
                column[nulls] = 0
                self.values[i][start:stop] = column
                mask = self.nulls.setdefault(i, np.zeros(len(self.values[i]), dtype=bool))
                mask[start:stop] = nulls
            else:  # text, fractions, blobs: a damaged database
                self.cells.setdefault(i, []).append((start, column))

    def column(self, i: int, keep: bool) -> pd.api.extensions.ExtensionArray | np.ndarray:
        """Column ``i`` as :func:`int_column` makes it; a ``keep`` column with cells that are
        not integers as its cells (None for NULL), as :meth:`Database.frame` reads it."""
        values = self.values[i][: self.rows]
        nulls = self.nulls.get(i, np.zeros(self.rows, dtype=bool))[: self.rows]
        if i not in self.cells:
            return pd.arrays.IntegerArray(values, nulls)
        cells = values.astype(object)
        cells[nulls] = None
        for start, chunk in self.cells[i]:
            cells[start : start + len(chunk)] = chunk
        return cells if keep else int_column(pd.Series(cells, dtype="object")).array


def _missing_ints(rows: int) -> pd.arrays.IntegerArray:
    """A column of ``rows`` missing integers (a column an older schema lacks)."""
    return pd.arrays.IntegerArray(np.zeros(rows, dtype=np.int64), np.ones(rows, dtype=bool))


def _q(name: str) -> str:
    """Quote an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _one_line(exc: BaseException) -> str:
    return one_line(str(exc)) or type(exc).__name__


register(
    BinaryFormat(
        name=FORMAT,
        profiler="nvprof|nsys",
        description=(
            "SQLite profile database: nvprof -o output (.nvprof/.nvvp, read as nvprof-db) or "
            "an Nsight Systems export (nsys export --type sqlite, read as nsys-sqlite)"
        ),
        sniff=sniff_sqlite,
        read=read_sqlite,
        priority=20,
    )
)


def strings_by_id(
    db: Database, strings: Mapping[int, str], cells: pd.Series, what: str, table: str
) -> np.ndarray:
    """:func:`string_by_id` of every cell (an object array), resolved once per distinct id."""
    return per_distinct(cells, lambda cell: string_by_id(db, strings, cell, what, table))


def string_by_id(
    db: Database, strings: Mapping[int, str], cell: object, what: str, table: str
) -> str | None:
    """A name stored as an id into the string table ``table`` (or, defensively, as text)."""
    if isinstance(cell, str):
        return cell
    if as_text(cell) is None:
        return None
    name = lookup(strings, cell)
    if name is None:
        raise db.malformed(f"{what} id {cell!r} is not in {table}")
    return name


def sm_limit(cells: pd.Series) -> pd.Series:
    """A per-SM limit of a device table (warps, blocks, registers, shared memory): a positive
    whole number, else missing (0 or a damaged cell)."""
    number = number_column(cells)
    return number.where((number > 0) & (number % 1 == 0))
