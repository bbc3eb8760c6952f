"""nvprof's source-level tables as instruction rows (parsers/sqlite/nvprof_source.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from advisor.report import locations
from parsers.ncu import source_counters
from parsers.sqlite import nvprof_source


def _database(path: Path) -> Path:
    """A small database with CUPTI's column names: one launch, three instructions on two lines."""
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT);
            INSERT INTO StringTable VALUES (1, '_Z4convPf'), (2, '/src/conv.cu');
            CREATE TABLE CUPTI_ACTIVITY_KIND_FUNCTION(_id_ INTEGER PRIMARY KEY, id INT,
                contextId INT, moduleId INT, functionIndex INT, name INT);
            INSERT INTO CUPTI_ACTIVITY_KIND_FUNCTION VALUES (1, 7, 1, 1, 0, 1);
            CREATE TABLE CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR(_id_ INTEGER PRIMARY KEY, id INT,
                lineNumber INT, fileName INT);
            INSERT INTO CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR VALUES (1, 1, 54, 2), (2, 2, 60, 2);
            CREATE TABLE CUPTI_ACTIVITY_KIND_INSTRUCTION_EXECUTION(_id_ INTEGER PRIMARY KEY,
                flags INT, sourceLocatorId INT, correlationId INT, functionId INT, pcOffset INT,
                threadsExecuted INT, notPredOffThreadsExecuted INT, executed INT);
            INSERT INTO CUPTI_ACTIVITY_KIND_INSTRUCTION_EXECUTION VALUES
                (1, 0, 1, 5, 7, 16, 320, 160, 10), (2, 0, 1, 5, 7, 32, 320, 320, 10),
                (3, 0, 2, 5, 7, 48, 320, 320, 10);
            CREATE TABLE CUPTI_ACTIVITY_KIND_GLOBAL_ACCESS(_id_ INTEGER PRIMARY KEY, flags INT,
                sourceLocatorId INT, correlationId INT, functionId INT, executed INT,
                pcOffset INT, threadsExecuted INT, l2_transactions INT,
                theoreticalL2Transactions INT);
            INSERT INTO CUPTI_ACTIVITY_KIND_GLOBAL_ACCESS VALUES
                (1, 0, 1, 5, 7, 10, 32, 320, 320, 40), (2, 0, 2, 5, 7, 10, 48, 320, 40, 40);
            CREATE TABLE CUPTI_ACTIVITY_KIND_PC_SAMPLING(_id_ INTEGER PRIMARY KEY, flags INT,
                sourceLocatorId INT, correlationId INT, functionId INT, latencySamples INT,
                samples INT, stallReason INT, pcOffset INT);
            INSERT INTO CUPTI_ACTIVITY_KIND_PC_SAMPLING VALUES
                (1, 0, 1, 5, 7, 0, 70, 4, 32), (2, 0, 2, 5, 7, 0, 20, 6, 48),
                (3, 0, 2, 5, 7, 0, 10, 1, 48);
            """
        )
    return path


def test_tables_become_instruction_rows(tmp_path: Path) -> None:
    path = _database(tmp_path / "app.nvprof")
    counts = nvprof_source.present(path)
    assert counts["SHARED_ACCESS"] == 0 and counts["GLOBAL_ACCESS"] == 2
    launches = nvprof_source.read(path)
    assert list(launches) == [5]
    rows = launches[5]
    assert rows["pc_offset"].tolist() == [16, 32, 48]
    assert rows["line"].tolist() == [54, 54, 60] and set(rows["file"]) == {"/src/conv.cu"}
    assert rows["function"].tolist() == ["_Z4convPf"] * 3
    assert rows["l2_sectors_global_excessive"].tolist() == [0.0, 280.0, 0.0]
    assert rows["stall_memory_dependency"].tolist() == [0.0, 70.0, 0.0]
    assert rows["stall_barrier"].tolist() == [0.0, 0.0, 20.0]  # CUPTI's SYNC
    assert rows["samples"].sum() == 100.0
    # the ranking of Nsight Compute's rows applies unchanged
    sectors = locations.top_locations(rows, "L2_GRANULARITY")
    assert sectors["top"][0]["location"] == "/src/conv.cu:54" and sectors["total"] == 280.0
    lanes = locations.top_locations(rows, "DIVERGENCE")  # 32 x 10 - 160 inactive lanes
    assert lanes["total"] == 160.0 and lanes["top"][0]["line"] == 54
    assert locations.top_locations(rows, "DEVICESYNC")["top"][0]["line"] == 60


def test_a_database_without_the_tables_has_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "trace.nvvp"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT)")
    assert nvprof_source.read(path) == {}
    assert set(nvprof_source.present(path).values()) == {0}
    assert "--source-level-analysis" in nvprof_source.HOW


@pytest.mark.real_profiles
def test_real_databases_with_source_level_tables(real_profiles: Path) -> None:
    reports = real_profiles / "reports"
    compression = nvprof_source.read(reports / "compression" / "analysis.nvprof")
    rows = next(iter(compression.values()))
    assert (rows["line"] > 0).any() and rows["samples"].sum() > 0
    lines = source_counters.by_line(rows)
    for column in source_counters.additive_columns(rows):
        assert lines[column].sum() == rows[column].sum(), column
    assert locations.top_locations(rows, "L2_GRANULARITY")["top"]
    # built without -lineinfo: no SOURCE_LOCATOR rows, locations are function + offset
    em = nvprof_source.read(reports / "EM-Algorithm" / "analysis.nvprof")
    assert len(em) >= 4 and all((r["line"] == 0).all() for r in em.values())
    assert nvprof_source.read(reports / "GPU_ML" / "timeline.nvvp") == {}
