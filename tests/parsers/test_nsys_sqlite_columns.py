"""How the nsys SQLite reader builds its large columns: the kernel and device names of the
launches in the schema's dtype (a categorical: each distinct name once), with the values a plain
SQL read of the export gives."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor import schema
from parsers.sqlite import nsys as nsys_sqlite
from parsers.sqlite.db import open_database

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import gen_nsys

DDL = (
    "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
    "INSERT INTO StringIds VALUES (1, 'void big<float>(float *)'), (2, 'small');"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,"
    " correlationId INTEGER, demangledName);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 1, 2), (30, 45, 5, 2, 1),"
    " (50, 52, NULL, 3, 2), (60, 70, 0, 4, 1);"
    "CREATE TABLE TARGET_INFO_GPU(id INTEGER, cuDevice INTEGER, name TEXT);"
    "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'GPU zero'), (NULL, NULL, 'GPU without id');"
)


def export(path: Path, *extra: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(DDL + "".join(extra))
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("dtype", ["category", "string"])
def test_launch_names_are_built_in_the_schema_dtype(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str
) -> None:
    """Built as the schema keeps them, so validating the launches converts nothing."""
    monkeypatch.setitem(schema.TABLES["launches"], "name", dtype)
    monkeypatch.setitem(schema.TABLES["launches"], "device", dtype)
    with open_database(str(export(tmp_path / "run.sqlite"))) as db:
        strings = db.strings("StringIds", "id", "value")
        out = nsys_sqlite._launches(db, strings, {0: "GPU zero"})
    for column in ("name", "device"):
        assert isinstance(out[column].dtype, pd.CategoricalDtype) == (dtype == "category")
    if dtype == "category":
        assert list(out["name"].cat.categories) == ["small", "void big<float>(float *)"]
        assert list(out["device"].cat.categories) == ["GPU zero"]
    else:
        assert out["name"].dtype == pd.StringDtype()
    assert out["name"].astype("string").tolist() == [
        "small", "void big<float>(float *)", "small", "void big<float>(float *)",
    ]  # fmt: skip
    assert out["device"].astype("string").tolist() == ["GPU zero", pd.NA, pd.NA, "GPU zero"]


def test_device_names_are_those_series_map_gives(tmp_path: Path) -> None:
    """Each launch's device as ``device_id.map(names)`` gave it: an id no GPU has is missing,
    and a launch without a device id matches the GPU without one."""
    prof = parsers.read(export(tmp_path / "run.sqlite"))
    launches = prof.launches
    names = dict(zip(prof.devices["device_id"], prof.devices["name"], strict=True))
    expected = launches["device_id"].map(names)
    assert launches["device"].astype("string").tolist() == [
        "GPU zero", pd.NA, "GPU without id", "GPU zero",
    ]  # fmt: skip
    assert launches["device"].astype("string").tolist() == expected.astype("string").tolist()


def test_kernel_name_stored_as_text_is_read_as_text(tmp_path: Path) -> None:
    """A damaged export with the name itself where the id belongs: the text, missing for NULL."""
    path = export(
        tmp_path / "run.sqlite",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 'typed' WHERE correlationId = 2;"
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = NULL WHERE correlationId = 3;",
    )
    names = parsers.read(path).launches["name"].astype("string").tolist()
    assert names == ["small", "typed", pd.NA, "void big<float>(float *)"]


def test_generated_export_matches_a_plain_sql_read(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    gen_nsys.write_nsys_sqlite(path, 2000, seed=3)
    prof = parsers.read(path)
    with sqlite3.connect(path) as con:
        kernels = con.execute(
            "SELECT k.start, k.end - k.start, s.value, k.correlationId, k.streamId, k.gridX,"
            " k.blockX, k.registersPerThread, k.staticSharedMemory, g.name"
            " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
            " JOIN TARGET_INFO_GPU g ON g.cuDevice = k.deviceId"
            " ORDER BY k.start, k.correlationId"
        ).fetchall()
        calls = con.execute(
            "SELECT s.value, r.start, r.correlationId, r.globalTid % 16777216"
            " FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
            " ORDER BY r.start, r.correlationId"
        ).fetchall()
    columns = [
        "start_ns", "duration_ns", "name", "correlation_id", "stream", "grid_x", "block_x",
        "registers_per_thread", "static_shared_bytes", "device",
    ]  # fmt: skip
    launches = prof.launches[columns].astype({"name": "string", "device": "string"})
    assert [tuple(row) for row in launches.itertuples(index=False)] == kernels
    assert len(kernels) == 2000 and len({name for _, _, name, *_ in kernels}) > 10
    api = prof.api_calls[["name", "start_ns", "correlation_id", "thread_id"]]
    assert [tuple(row) for row in api.itertuples(index=False)] == [
        (name.rsplit("_v", 1)[0], start, corr, tid) for name, start, corr, tid in calls
    ]
