"""SQLite profile databases: nvprof ``-o`` output and ``nsys export --type sqlite`` exports.

Both tools write SQLite files (they start with ``SQLite format 3\\0``).  The first 4096 bytes the
registry hands a sniffer do not reliably hold the table names that tell the two apart (an nsys
export can have no ``CUPTI_ACTIVITY_KIND`` name on its first page), so one binary format,
``sqlite``, sniffs the header and its reader opens the database read-only and hands it to the
reader whose tables it has.  Each reader registers itself here with :func:`add_reader`:

* ``nvprof-db`` (:mod:`parsers.nvprof_sqlite`): ``StringTable``, ``Version`` and
  ``CUPTI_ACTIVITY_KIND_*`` tables;
* ``nsys-sqlite`` (:mod:`parsers.nsys_sqlite`): ``StringIds`` with ``CUPTI_ACTIVITY_KIND_*``,
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

from advisor.errors import MalformedInput, UnreadableInput, UnrecognisedFormat
from advisor.profile import Profile
from parsers.registry import BinaryFormat, register
from parsers.source import SQLITE_MAGIC
from parsers.units import fits_int

FORMAT = "sqlite"
#: how many table names an "unrecognised database" message lists
_LISTED_TABLES = 8


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
        try:
            return list(self._conn.execute(sql, tuple(params)).fetchall())
        except (sqlite3.Error, UnicodeDecodeError) as exc:  # text cells must be UTF-8
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

    def strings(self, table: str, key: str, value: str) -> dict[int, str]:
        """An id -> text table (nvprof ``StringTable``, nsys ``StringIds``) as a dict."""
        out: dict[int, str] = {}
        for k, v in self.rows(f"SELECT {_q(key)}, {_q(value)} FROM {_q(table)}"):
            if (number := as_int(k)) is not None and (text := as_text(v)) is not None:
                out[number] = text
        return out


@dataclass(frozen=True)
class SqliteReader:
    """One tool's database layout: which tables claim a file, and the reader."""

    format: str  # the Provenance format, e.g. "nvprof-db"
    profiler: str
    expects: str  # the tables it recognises, for the "neither" message
    claims: Callable[[frozenset[str]], bool]
    read: Callable[[Database], Profile]


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


def read_sqlite(path: str) -> Profile:
    """Read an nvprof database or an nsys SQLite export, told apart by their tables."""
    with open_database(path) as db:
        for reader in READERS:
            if reader.claims(db.tables):
                return reader.read(db)
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
    return pd.Series(pd.array([as_int(v) for v in values], dtype="Int64"), index=values.index)


def number_column(values: pd.Series) -> pd.Series:
    """A column of numeric cells as floats; text and blobs (a damaged row) are missing."""
    return pd.to_numeric(values, errors="coerce").astype("float64")


def int_columns(frame: pd.DataFrame, keep: Sequence[str] = ("name",)) -> None:
    """Every column of ``frame`` but ``keep`` (string ids, looked up with their own check) as
    exact nullable integers: the CUPTI activity columns are all integers, and a cell that is not
    one (text, a fraction in a damaged database) is a missing value."""
    for column in frame.columns:
        if column not in keep:
            frame[column] = int_column(frame[column])


def lookup(table: Mapping[int, str], cell: object, default: str | None = None) -> str | None:
    """``table[cell]`` for an integer id cell (an enum or string id), else ``default``."""
    code = as_int(cell)
    return default if code is None else table.get(code, default)


def _q(name: str) -> str:
    """Quote an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


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
