"""nvprof output databases (``nvprof -o``, ``.nvprof`` / ``.nvvp``) read as ``nvprof-db``.

Expected values were read from the real databases with the sqlite3 shell; each test names the
query.  Synthetic databases are built in ``tmp_path`` with the layout of schema version 12.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.errors import MalformedInput, NoKernelData

REPORTS = "reports"

# -- real databases ---------------------------------------------------------------------------


def test_gpu_ml_timeline_counts_and_first_kernel(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / REPORTS / "GPU_ML/timeline.nvvp")
    prov = prof.provenance[0]
    assert (prov.format, prov.profiler) == ("nvprof-db", "nvprof")
    assert "nvprof database schema version 12" in prov.notes  # SELECT version FROM Version
    # SELECT count(*), count(DISTINCT name) FROM CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL -> 38|15
    assert len(prof.launches) == 38
    assert prof.launches["name"].nunique() == 15
    # count(*) of MEMCPY (21) + MEMSET (9); RUNTIME (2278) + DRIVER (405)
    assert len(prof.transfers) == 30
    assert (prof.transfers["kind"] == "memset").sum() == 9
    assert len(prof.api_calls) == 2278 + 405
    # SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE cbid = 211 (cudaLaunchKernel) -> 38
    assert (prof.api_calls["name"] == "cudaLaunchKernel").sum() == 38
    # SELECT count(*), sum(bytes) FROM ..._MEMCPY WHERE copyKind = 1 -> 20|208996184
    htod = prof.transfers[prof.transfers["kind"] == "HtoD"]
    assert len(htod) == 20 and htod["bytes"].sum() == 208996184
    assert set(htod["src_kind"]) == {"Pageable"} and set(htod["dst_kind"]) == {"Device"}
    # _id_ 1 of CONCURRENT_KERNEL: start 1570772107618696186, end - start = 440187; the earliest
    # start over kernels, memcpy, memset, runtime and driver rows is 1570772102883389881
    first = prof.launches.iloc[0]
    assert first["duration_ns"] == 440187
    assert first["start_ns"] == 1570772107618696186 - 1570772102883389881
    assert first["name"].startswith("_ZN7mshadow4cuda18MapPlanLargeKernel")
    assert (first["grid_x"], first["block_x"], first["correlation_id"]) == (1024, 256, 2445)
    dev = prof.devices.iloc[0]
    # DEVICE: name -> StringTable 2 'TITAN V', cc 7.0, 80 SMs, 1455000 kHz, 652800000 kB/s
    assert (dev["name"], dev["compute_capability"], dev["sm_count"]) == ("TITAN V", "7.0", 80)
    assert dev["sm_clock_hz"] == 1.455e9
    assert dev["memory_bandwidth_bytes_per_s"] == 652.8e9
    assert set(prof.launches["device"]) == {"TITAN V"}


def test_path_integral_kepler_long_kernel(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / REPORTS / "path_integral_gpu/prof.nvvp")
    # SELECT _id_, end - start, name FROM ..._CONCURRENT_KERNEL: 4 rows, names 3, 4, 4, 5
    assert len(prof.launches) == 4
    assert prof.launches["name"].nunique() == 3
    # _id_ 2: 16767867371 ns, staticSharedMemory 20500, 44 registers, correlationId 115
    second = prof.launches.iloc[1]
    assert second["name"] == "_Z14perform_sweepsPdddddiddiS_PiP17curandStateXORWOW"
    assert second["duration_ns"] == 16767867371
    assert (second["static_shared_bytes"], second["registers_per_thread"]) == (20500, 44)
    assert second["correlation_id"] == 115
    # MEMCPY 2 rows (copyKind 2 = DtoH), MEMSET 1; RUNTIME 19 + DRIVER 106
    assert sorted(prof.transfers["kind"]) == ["DtoH", "DtoH", "memset"]
    assert len(prof.api_calls) == 125
    # SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE cbid = 31 (cudaMemcpy) -> 2
    assert (prof.api_calls["name"] == "cudaMemcpy").sum() == 2
    assert prof.devices.iloc[0]["name"] == "GeForce GT 710"
    assert prof.devices.iloc[0]["compute_capability"] == "3.5"


def test_em_algorithm_version_8_metrics_present_but_unnamed(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / REPORTS / "EM-Algorithm/analysis.nvprof")
    assert "nvprof database schema version 8" in prof.provenance[0].notes
    # CUPTI_ACTIVITY_KIND_KERNEL (serialised): 8 rows, 8 names; no API tables filled
    assert len(prof.launches) == 8 and prof.launches["name"].nunique() == 8
    assert prof.api_calls.empty and prof.transfers.empty
    # _id_ 7: end - start = 81807386, name -> StringTable 9
    seventh = prof.launches.iloc[6]
    assert seventh["name"] == "_Z18paso_m_covarianzasPdS_S_S_mm"
    assert seventh["duration_ns"] == 81807386
    # SELECT count(*), count(DISTINCT id), count(DISTINCT correlationId) FROM ..._METRIC
    # -> 640|80|8: every value kept, none named, none decoded
    metrics = prof.metrics
    assert len(metrics) == 640
    assert metrics["metric"].nunique() == 80
    assert metrics["launch_id"].nunique() == 8
    assert metrics["metric"].str.fullmatch(r"nvprof metric id \d+").all()
    assert metrics["value"].isna().all() and (metrics["unit"] == "").all()
    # correlationId 109 (first launch), id 138: hex(value) 86C8B09697502D40
    row = metrics[(metrics["launch_id"] == 0) & (metrics["metric"] == "nvprof metric id 138")]
    assert row["text"].tolist() == ["raw:86c8b09697502d40"]
    assert "metrics" in prof.provenance[0].modes
    assert any("stores no metric names" in n for n in prof.provenance[0].notes)
    assert prof.devices.iloc[0]["name"] == "GeForce GT 520M"


def test_compression_four_devices_one_launch(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / REPORTS / "compression/analysis.nvprof")
    # DEVICE has 4 rows (id 0..3), all 'Tesla V100-SXM2-32GB', 898048000 kB/s
    assert prof.devices["device_id"].tolist() == [0, 1, 2, 3]
    assert set(prof.devices["name"]) == {"Tesla V100-SXM2-32GB"}
    assert (prof.devices["memory_bandwidth_bytes_per_s"] == 898.048e9).all()
    # KERNEL: 1 row, end - start = 110938702, grid 39780, block (32, 3), 1924 B static smem
    (launch,) = prof.launches.itertuples()
    assert launch.duration_ns == 110938702 and launch.start_ns == 0
    assert (launch.grid_x, launch.block_x, launch.block_y) == (39780, 32, 3)
    assert launch.static_shared_bytes == 1924
    assert len(prof.metrics) == 120  # SELECT count(*) FROM CUPTI_ACTIVITY_KIND_METRIC


def test_ece408_version_11(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / REPORTS / "ece408/forward1_analysis.nvprof")
    assert "nvprof database schema version 11" in prof.provenance[0].notes
    # KERNEL: end - start = 395393, grid (100, 12, 25), block (16, 16, 1), 32 registers
    (launch,) = prof.launches.itertuples()
    assert launch.name == "_ZN5mxnet2op14forward_kernelEPfPKfS3_iiiiii"
    assert launch.duration_ns == 395393
    assert (launch.grid_x, launch.grid_y, launch.grid_z) == (100, 12, 25)
    assert launch.registers_per_thread == 32
    assert prof.devices.iloc[0]["name"] == "TITAN V"


# -- synthetic databases -------------------------------------------------------------------

T0 = 1_600_000_000_000_000_000  # absolute ns, beyond float64's exact integers

KERNEL_DDL = (
    "CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(_id_ INTEGER PRIMARY KEY, "
    "registersPerThread INT, start INT, end INT, deviceId INT, contextId INT, streamId INT, "
    "gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT, "
    "staticSharedMemory INT, dynamicSharedMemory INT, correlationId INT, name INT)"
)


def make_nvprof_db(path: Path, kernels: bool = True) -> Path:
    """A tiny schema-12 style nvprof database: 2 kernels, 1 memcpy, 1 memset, 3 API calls."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);"
        "CREATE TABLE Version(version INTEGER);"
        f"{KERNEL_DDL};"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(_id_ INTEGER PRIMARY KEY, start INT, end INT,"
        " name INT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(_id_ INTEGER PRIMARY KEY, copyKind INT,"
        " srcKind INT, dstKind INT, bytes INT, start INT, end INT, deviceId INT, contextId INT,"
        " streamId INT, correlationId INT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(_id_ INTEGER PRIMARY KEY, value INT, bytes INT,"
        " start INT, end INT, deviceId INT, contextId INT, streamId INT, correlationId INT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(_id_ INTEGER PRIMARY KEY, cbid INT, start INT,"
        " end INT, processId INT, threadId INT, correlationId INT, returnValue INT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE(_id_ INTEGER PRIMARY KEY, id INT, name INT,"
        " computeCapabilityMajor INT, computeCapabilityMinor INT, numMultiprocessors INT,"
        " coreClockRate INT, globalMemoryBandwidth INT, l2CacheSize INT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_METRIC(_id_ INTEGER PRIMARY KEY, id INT, value BLOB,"
        " correlationId INT, flags INT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_EVENT(_id_ INTEGER PRIMARY KEY, id INT, value INT,"
        " domain INT, correlationId INT);"
        "INSERT INTO Version VALUES (12);"
        "INSERT INTO StringTable VALUES (0, '-- null --'), (1, 'Tesla K80'),"
        " (2, '_Z6squarePfi'), (3, '<script>alert(1)</script>');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE VALUES (1, 0, 1, 3, 7, 13, 823500, 240480000,"
        " 1572864);"
    )
    if kernels:
        conn.executemany(
            "INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES"
            " (?, 20, ?, ?, 0, 1, 7, 64, 1, 1, 256, 1, 1, 0, 1024, ?, ?)",
            [(1, T0 + 3000, T0 + 4001, 11, 2), (2, T0 + 5000, T0 + 5333, 12, 3)],
        )
    conn.executescript(
        f"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1, 1, 2, 3, 4096, {T0 + 2000},"
        f" {T0 + 2500}, 0, 1, 7, 10);"
        f"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (1, 0, 512, {T0 + 2600}, {T0 + 2700},"
        " 0, 1, 7, 9);"
        f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 20, {T0}, {T0 + 1500}, 42, -2, 8, 0),"
        f" (2, 211, {T0 + 2900}, {T0 + 2950}, 42, -2, 11, 0),"
        f" (3, 9999, {T0 + 6000}, {T0 + 6010}, 42, -2, 13, 1);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_METRIC VALUES (1, 20971523, X'0000000000003440', 11, 0),"
        " (2, 20971523, X'0000000000005440', 99, 0);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_EVENT VALUES (1, 83886081, 1234, 7, 12);"
    )
    conn.commit()
    conn.close()
    return path


def test_synthetic_times_are_exact_and_relative(tmp_path: Path) -> None:
    prof = parsers.read(make_nvprof_db(tmp_path / "run.nvprof"))
    launches = prof.launches
    # earliest activity: the cudaMalloc call at T0 -> kernels start at 3000 and 5000 ns
    assert launches["start_ns"].tolist() == [3000.0, 5000.0]
    assert launches["duration_ns"].tolist() == [1001.0, 333.0]
    assert launches["name"].tolist() == ["_Z6squarePfi", "<script>alert(1)</script>"]
    assert launches["device"].tolist() == ["Tesla K80", "Tesla K80"]
    assert launches["dynamic_shared_bytes"].tolist() == [1024.0, 1024.0]
    notes = prof.provenance[0].notes
    assert any(n.startswith("start_ns is relative to the earliest") for n in notes)
    assert any("kernel names are mangled" in n for n in notes)


def test_synthetic_transfers_and_memory_kinds(tmp_path: Path) -> None:
    prof = parsers.read(make_nvprof_db(tmp_path / "run.nvprof"))
    copy, memset = prof.transfers.itertuples()
    # copyKind 1 = HtoD, srcKind 2 = Pinned, dstKind 3 = Device (CUpti enums)
    assert (copy.kind, copy.src_kind, copy.dst_kind) == ("HtoD", "Pinned", "Device")
    assert (copy.bytes, copy.start_ns, copy.duration_ns) == (4096, 2000, 500)
    # version-8 style MEMSET without memoryKind: the memory kind is missing, not guessed
    assert memset.kind == "memset" and memset.bytes == 512
    assert pd.isna(memset.src_kind) and pd.isna(memset.dst_kind)


def test_synthetic_api_names_and_unknown_cbid(tmp_path: Path) -> None:
    prof = parsers.read(make_nvprof_db(tmp_path / "run.nvprof"))
    api = prof.api_calls
    assert api["name"].tolist() == ["cudaMalloc", "cudaLaunchKernel", "runtime cbid 9999"]
    assert api["duration_ns"].tolist() == [1500.0, 50.0, 10.0]
    # threadId is a uint32 stored signed: -2 -> 4294967294
    assert set(api["thread_id"]) == {2**32 - 2}
    assert api["result"].tolist() == [0, 0, 1]
    assert any("'runtime cbid N'" in n for n in prof.provenance[0].notes)


def test_synthetic_metrics_and_events_by_correlation(tmp_path: Path) -> None:
    prof = parsers.read(make_nvprof_db(tmp_path / "run.nvprof"))
    metrics = prof.metrics
    # metric row 2 has correlationId 99: no launch -> dropped and counted in a note
    assert len(metrics) == 2
    metric = metrics[metrics["section"] == "metric"].iloc[0]
    assert metric["metric"] == "nvprof metric id 20971523" and metric["launch_id"] == 0
    assert math.isnan(metric["value"]) and metric["text"] == "raw:0000000000003440"
    event = metrics[metrics["section"] == "event"].iloc[0]
    assert (event["metric"], event["value"], event["launch_id"]) == (
        "nvprof event id 83886081",
        1234.0,
        1,
    )
    assert event["kernel"] == "<script>alert(1)</script>"
    notes = prof.provenance[0].notes
    assert "1 metric values belong to no kernel launch in the file" in notes
    assert set(prof.provenance[0].modes) == {"gpu-trace", "api-trace", "metrics", "events"}


def test_synthetic_device(tmp_path: Path) -> None:
    prof = parsers.read(make_nvprof_db(tmp_path / "run.nvprof"))
    dev = prof.devices.iloc[0]
    assert (dev["device_id"], dev["name"], dev["compute_capability"]) == (0, "Tesla K80", "3.7")
    assert dev["sm_clock_hz"] == 823.5e6  # coreClockRate 823500 kHz
    assert dev["memory_bandwidth_bytes_per_s"] == 240.48e9  # 240480000 kB/s
    assert dev["l2_bytes"] == 1572864


def test_database_without_kernel_rows_is_no_kernel_data(tmp_path: Path) -> None:
    path = make_nvprof_db(tmp_path / "empty.nvprof", kernels=False)
    with pytest.raises(NoKernelData, match="no kernel activity"):
        parsers.read(path)


def test_kernel_name_id_missing_from_string_table_is_malformed(tmp_path: Path) -> None:
    path = make_nvprof_db(tmp_path / "bad.nvprof")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL SET name = 77 WHERE _id_ = 2")
    conn.commit()
    conn.close()
    with pytest.raises(MalformedInput, match="kernel name id 77 is not in StringTable"):
        parsers.read(path)


def test_kernel_table_without_start_column_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "old.nvprof"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE Version(version INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(_id_ INTEGER PRIMARY KEY, stop INT, name INT);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 5, 1);"
    )
    conn.close()
    with pytest.raises(MalformedInput, match="CUPTI_ACTIVITY_KIND_KERNEL has no column start"):
        parsers.read(path)


def test_damaged_cells_are_missing_values_not_schema_errors(tmp_path: Path) -> None:
    """SQLite stores any type in any column: text or fractions where CUPTI writes integers (a
    damaged file) are missing values, never a SchemaError or a raw ValueError."""
    path = make_nvprof_db(tmp_path / "run.nvprof")
    conn = sqlite3.connect(path)
    conn.executescript(
        "UPDATE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL SET gridX = 'x', correlationId = 'y',"
        " staticSharedMemory = 1.5 WHERE _id_ = 1;"
        "UPDATE CUPTI_ACTIVITY_KIND_DEVICE SET id = 'abc', coreClockRate = 'fast',"
        " numMultiprocessors = 'many', l2CacheSize = 'big', computeCapabilityMajor = 9e999;"
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 'oops' WHERE _id_ = 1;"
    )
    conn.commit()
    conn.close()
    prof = parsers.read(path)
    first = prof.launches.iloc[0]
    assert pd.isna(first["grid_x"]) and pd.isna(first["correlation_id"])
    assert pd.isna(first["static_shared_bytes"])
    assert prof.launches["grid_x"].iloc[1] == 64
    dev = prof.devices.iloc[0]
    assert dev["name"] == "Tesla K80" and pd.isna(dev["device_id"])
    assert pd.isna(dev["sm_clock_hz"]) and pd.isna(dev["compute_capability"])
    assert pd.isna(prof.api_calls["result"].iloc[0])
