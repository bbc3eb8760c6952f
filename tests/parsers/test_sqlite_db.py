"""The ``sqlite`` binary format: detection of nvprof databases and nsys exports by their tables,
errors for other and damaged SQLite files, read-only access, and ``inspect`` on the real files."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

import parsers
from advisor.errors import MalformedInput, UnrecognisedFormat
from tests.cli_helpers import one_line_error, run

#: real SQLite reports -> (format, launches); launch counts from count(*) of the kernel tables
REAL_DATABASES = {
    "EM-Algorithm/analysis.nvprof": ("nvprof-db", 8),
    "compression/analysis.nvprof": ("nvprof-db", 1),
    "ece408/forward1_analysis.nvprof": ("nvprof-db", 1),
    "GPU_ML/timeline.nvvp": ("nvprof-db", 38),
    "path_integral_gpu/prof.nvvp": ("nvprof-db", 4),
    "CudaProgramming/streamSimple.sqlite": ("nsys-sqlite", 16),
    "memfusion_artifact/report1.sqlite": ("nsys-sqlite", 36),
}


def app_database(path: Path) -> Path:
    """A SQLite database of an unrelated application, big enough to span several pages."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO users VALUES (?, ?)", [(i, "x" * 200) for i in range(400)])
    conn.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, user INTEGER)")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("name", sorted(REAL_DATABASES))
def test_inspect_json_on_every_real_database(real_profiles: Path, name: str) -> None:
    fmt, launches = REAL_DATABASES[name]
    path = real_profiles / "reports" / name
    assert parsers.detect(path) == "sqlite"
    code, out, err = run("inspect", "--json", str(path))
    assert code == 0, err
    (summary,) = json.loads(out)
    assert summary["format"] == fmt
    assert summary["launches"] == launches
    assert summary["launch_source"] == "per-launch"


def test_reading_never_writes_the_database(real_profiles: Path, tmp_path: Path) -> None:
    source = real_profiles / "reports" / "path_integral_gpu/prof.nvvp"
    copy = tmp_path / "prof.nvvp"
    copy.write_bytes(source.read_bytes())
    before = hashlib.sha256(copy.read_bytes()).hexdigest()
    parsers.read(copy)
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prof.nvvp"]  # no journal left behind


def test_unrelated_sqlite_database_is_unrecognised(tmp_path: Path) -> None:
    path = app_database(tmp_path / "app.db")
    with pytest.raises(UnrecognisedFormat) as info:
        parsers.read(path)
    message = str(info.value)
    assert "neither an nvprof database nor an Nsight Systems export" in message
    assert "StringTable, Version and CUPTI_ACTIVITY_KIND_*" in message  # what was expected
    assert "found tables: orders, users" in message
    code, _, err = run("inspect", str(path))
    assert code == 3
    assert "neither an nvprof database" in one_line_error(err)


def test_truncated_database_is_malformed_in_one_line(tmp_path: Path) -> None:
    whole = app_database(tmp_path / "whole.db").read_bytes()
    path = tmp_path / "truncated.nvprof"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(MalformedInput, match="truncated or corrupt"):
        parsers.read(path)
    code, _, err = run("inspect", str(path))
    assert code == 3
    line = one_line_error(err)
    assert str(path) in line and "cannot read the SQLite database" in line


def test_corrupt_pages_after_a_valid_header_are_malformed(tmp_path: Path) -> None:
    whole = app_database(tmp_path / "whole.db").read_bytes()
    path = tmp_path / "corrupt.sqlite"
    path.write_bytes(whole[:100] + b"\xff" * (len(whole) - 100))
    with pytest.raises(MalformedInput, match="cannot read the SQLite database"):
        parsers.read(path)


def test_header_only_file_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "header.db"
    path.write_bytes(b"SQLite format 3\x00")
    with pytest.raises(MalformedInput):
        parsers.read(path)


def test_empty_database_is_unrecognised(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).execute("CREATE TABLE t(x)").connection.close()
    with pytest.raises(UnrecognisedFormat, match="found tables: t"):
        parsers.read(path)


def test_sqlite_format_is_listed() -> None:
    assert "sqlite" in parsers.known_format_names()


def test_text_that_is_not_utf8_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "latin1.nvprof"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE Version(version INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, name INT);"
        "INSERT INTO StringTable VALUES (1, CAST(X'6bff' AS TEXT));"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 1);"
    )
    conn.close()
    with pytest.raises(MalformedInput, match="cannot read the SQLite database"):
        parsers.read(path)
