"""Nsight Systems SQLite exports (``nsys export --type sqlite``) read as ``nsys-sqlite``.

Expected values were read from the real exports with the sqlite3 shell; each test names the
query.  Synthetic exports are built in ``tmp_path`` with the table layout of nsys 2023.x.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import parsers
from advisor.cli import main
from advisor.errors import MalformedInput, NoKernelData

REPORTS = "reports"


def test_stream_simple_export(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / REPORTS / "CudaProgramming/streamSimple.sqlite")
    prov = prof.provenance[0]
    assert (prov.format, prov.profiler) == ("nsys-sqlite", "nsys")
    # SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_VERSION'
    assert prov.profiler_version == "2023.3.1.92"
    # SELECT count(*), count(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL -> 16|4
    assert len(prof.launches) == 16 and prof.launches["name"].nunique() == 4
    assert prof.launches["stream"].nunique() == 4  # count(DISTINCT streamId)
    # first kernel by start: 429658647, end - start = 4352, demangledName 'kernel_1()'
    first = prof.launches.iloc[0]
    assert (first["name"], first["start_ns"], first["duration_ns"]) == (
        "kernel_1()",
        429658647,
        4352,
    )
    assert (first["grid_x"], first["block_x"], first["registers_per_thread"]) == (4096, 512, 16)
    # no MEMCPY / MEMSET tables; RUNTIME has 34 rows, 16 of them cudaLaunchKernel_v7000
    assert prof.transfers.empty
    assert len(prof.api_calls) == 34
    assert (prof.api_calls["name"] == "cudaLaunchKernel").sum() == 16
    # globalTid / 0x1000000 % 0x1000000 and globalTid % 0x1000000 -> 6168|6168
    assert set(prof.api_calls["process_id"]) == {6168}
    assert set(prof.api_calls["thread_id"]) == {6168}
    dev = prof.devices.iloc[0]
    # TARGET_INFO_GPU: 'NVIDIA GeForce RTX 4090', 8.9, 128 SMs, 2520000000 Hz, 1008096000000 B/s
    assert (dev["name"], dev["compute_capability"], dev["sm_count"]) == (
        "NVIDIA GeForce RTX 4090",
        "8.9",
        128,
    )
    assert dev["sm_clock_hz"] == 2.52e9 and dev["memory_bandwidth_bytes_per_s"] == 1.008096e12
    assert dev["l2_bytes"] == 75497472
    assert set(prof.launches["device"]) == {"NVIDIA GeForce RTX 4090"}


def test_memfusion_export(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / REPORTS / "memfusion_artifact/report1.sqlite")
    # EXPORT_META_DATA (the 2023.1 name of the metadata table)
    assert prof.provenance[0].profiler_version == "2023.1.2.43"
    # SELECT count(*), count(DISTINCT demangledName), sum(end - start) FROM ..._KERNEL
    # -> 36|14|6415244
    assert len(prof.launches) == 36
    assert prof.launches["name"].nunique() == 14
    assert prof.launches["duration_ns"].sum() == 6415244
    # the kernel with shortName 'sm80_xmma_fprop_implicit_gemm_indexed_wo_smem_...': start
    # 19482309, end - start 854662
    gemm = prof.launches[
        prof.launches["name"].str.startswith("sm80_xmma_fprop_implicit_gemm_indexed_wo_smem")
    ]
    assert gemm[["start_ns", "duration_ns"]].values.tolist() == [[19482309.0, 854662.0]]
    # MEMCPY: 4 rows, copyKind 8 (CUDA_MEMCPY_KIND_DTOD), srcKind = dstKind = 2 ('Device')
    assert prof.transfers["kind"].tolist() == ["DtoD"] * 4
    assert prof.transfers["bytes"].sum() == 512
    assert set(prof.transfers["src_kind"]) == {"Device"} == set(prof.transfers["dst_kind"])
    # RUNTIME: 5668 rows, 5490 of them cuModuleUnload (driver calls share the table)
    assert len(prof.api_calls) == 5668
    assert (prof.api_calls["name"] == "cuModuleUnload").sum() == 5490
    # TARGET_INFO_GPU: 4 rows, all 'NVIDIA GeForce RTX 3090', cuDevice 0..3
    assert prof.devices["device_id"].tolist() == [0, 1, 2, 3]
    assert set(prof.devices["name"]) == {"NVIDIA GeForce RTX 3090"}
    assert set(prof.devices["compute_capability"]) == {"8.6"}


# -- synthetic exports ----------------------------------------------------------------------

BASE_DDL = (
    "CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
    " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
    "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.1.1.59');"
    "INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020'), (2, 'cudaLaunchKernel_v7000'),"
    " (3, 'void scale<float>(float *, int)'), (4, 'scale'), (5, 'cuMemAlloc_v2'),"
    " (6, 'cudaGraphLaunch_v10000');"
    # pid 100, tid 101: (100 << 24) | 101
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 2000, 0, 1677721701, 1, 1, 0, NULL),"
    " (2100, 2200, 0, 1677721701, 2, 2, 0, NULL), (2300, 2400, 1, 1677721701, 3, 5, 0, NULL),"
    " (2500, 2600, 0, 1677721701, 4, 6, 0, NULL);"
)
KERNEL_DDL = (
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
    " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
    " shortName INTEGER NOT NULL, mangledName INTEGER, registersPerThread INTEGER NOT NULL,"
    " gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
    " blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
    " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
    " (3000, 4500, 1, 1, 7, 2, 0, 3, 4, NULL, 18, 80, 1, 1, 128, 1, 1, 0, 48),"
    " (2500, 2900, 1, 1, 7, 4, 0, 3, 4, NULL, 18, 40, 1, 1, 128, 1, 1, 0, 48);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
    " correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,"
    " copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (2000, 2100, 1, 1, 7, 10, 0, 1000000, 1, 1, 2),"
    " (4600, 4700, 1, 1, 7, 11, 0, 65536, 12, 4, 0);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
    " correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL, memKind INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (2950, 2960, 1, 1, 7, 12, 0, 0, 256, 2);"
)
ENUM_DDL = (
    "CREATE TABLE ENUM_CUDA_MEMCPY_OPER(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
    "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),"
    " (12, 'CUDA_MEMCPY_KIND_UVM_DTOH', 'Unified Device-to-Host');"
    "CREATE TABLE ENUM_CUDA_MEM_KIND(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
    "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),"
    " (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),"
    " (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'),"
    " (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed');"
)
GPU_DDL = (
    "CREATE TABLE TARGET_INFO_GPU(vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,"
    " l2CacheSize INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER,"
    " computeMajor INTEGER, computeMinor INTEGER);"
    "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA A100-SXM4-40GB', 41943040,"
    " 1555200000000, 1410000000, 108, 8, 0);"
    "CREATE TABLE TARGET_INFO_CUDA_DEVICE(gpuId INTEGER, cudaId INTEGER, pid INTEGER);"
    "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 1, 100);"
)


def make_export(path: Path, *parts: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript("".join(parts))
    conn.commit()
    conn.close()
    return path


def test_synthetic_export_launches_sorted_by_start(tmp_path: Path) -> None:
    path = make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, ENUM_DDL, GPU_DDL)
    prof = parsers.read(path)
    launches = prof.launches
    assert launches["start_ns"].tolist() == [2500.0, 3000.0]  # as stored, not shifted
    assert launches["duration_ns"].tolist() == [400.0, 1500.0]
    assert launches["correlation_id"].tolist() == [4, 2]
    assert launches["launch_id"].tolist() == [0, 1]
    assert set(launches["name"]) == {"void scale<float>(float *, int)"}  # demangledName
    assert launches["dynamic_shared_bytes"].tolist() == [48.0, 48.0]
    # TARGET_INFO_CUDA_DEVICE maps GPU id 0 to CUDA device 1, the kernels' deviceId
    assert set(launches["device"]) == {"NVIDIA A100-SXM4-40GB"}
    dev = prof.devices.iloc[0]
    assert (dev["device_id"], dev["compute_capability"], dev["sm_count"]) == (1, "8.0", 108)
    assert prof.provenance[0].profiler_version == "2024.1.1.59"


def test_synthetic_transfers_use_the_exports_enums(tmp_path: Path) -> None:
    path = make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, ENUM_DDL, GPU_DDL)
    transfers = parsers.read(path).transfers
    assert transfers["kind"].tolist() == ["HtoD", "memset", "UM-DtoH"]
    # nsys numbers memory kinds from 0 = Pageable (unlike CUPTI's 1 = Pageable)
    assert transfers["src_kind"].tolist() == ["Pinned", "Device", "Managed"]
    assert transfers["dst_kind"].tolist()[0::2] == ["Device", "Pageable"]
    assert transfers["bytes"].tolist() == [1000000.0, 256.0, 65536.0]
    assert transfers["duration_ns"].tolist() == [100.0, 10.0, 100.0]


def test_synthetic_export_without_enum_tables_reads_the_codes_later_exports_define(
    tmp_path: Path,
) -> None:
    # older exports (F07's array_inc_*.sqlite) hold the same copyKind / srcKind codes without
    # the ENUM tables: the kinds are the ones the export with the tables gives
    path = make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, GPU_DDL)
    prof = parsers.read(path)
    assert prof.transfers["kind"].tolist() == ["HtoD", "memset", "UM-DtoH"]
    assert prof.transfers["src_kind"].tolist() == ["Pinned", "Device", "Managed"]
    assert any("ENUM_CUDA_MEMCPY_OPER" in n for n in prof.provenance[0].notes)


def test_synthetic_api_names_drop_the_cupti_version_suffix(tmp_path: Path) -> None:
    path = make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, ENUM_DDL, GPU_DDL)
    api = parsers.read(path).api_calls
    # _v3020/_v7000/_v10000 are CUPTI API versions; cuMemAlloc_v2 is the driver symbol's name
    assert api["name"].tolist() == [
        "cudaMalloc",
        "cudaLaunchKernel",
        "cuMemAlloc_v2",
        "cudaGraphLaunch",
    ]
    assert set(api["process_id"]) == {100} and set(api["thread_id"]) == {101}
    assert api["duration_ns"].tolist() == [1000.0, 100.0, 100.0, 100.0]


def test_export_without_kernel_table_is_no_kernel_activity(tmp_path: Path) -> None:
    path = make_export(tmp_path / "nokernels.sqlite", BASE_DDL, ENUM_DDL, GPU_DDL)
    with pytest.raises(NoKernelData, match="no kernel activity"):
        parsers.read(path)
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 3
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "no kernel activity" in lines[0] and "Traceback" not in result.stderr


def test_kernel_name_id_missing_from_string_ids_is_malformed(tmp_path: Path) -> None:
    path = make_export(
        tmp_path / "bad.sqlite",
        BASE_DDL,
        KERNEL_DDL,
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 99 WHERE correlationId = 4;",
    )
    with pytest.raises(MalformedInput, match="kernel name id 99 is not in StringIds"):
        parsers.read(path)


def test_short_name_used_when_no_demangled_name_column(tmp_path: Path) -> None:
    ddl = (
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT,"
        " shortName INT, correlationId INT);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 30, 0, 4, 1);"
    )
    prof = parsers.read(make_export(tmp_path / "old.sqlite", BASE_DDL, ddl))
    assert prof.launches["name"].tolist() == ["scale"]
    assert pd.isna(prof.launches["grid_x"].iloc[0])  # column absent: missing, not 0
    assert prof.devices.empty


def test_damaged_cells_are_missing_values_not_schema_errors(tmp_path: Path) -> None:
    """Text where the export stores integers, and a device name stored as a blob: missing
    values and decoded text, never a SchemaError."""
    path = make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, ENUM_DDL, GPU_DDL)
    conn = sqlite3.connect(path)
    conn.executescript(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'x' WHERE correlationId = 2;"
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 'many' WHERE correlationId = 10;"
        "UPDATE TARGET_INFO_GPU SET name = X'41ff', smCount = 'lots', clockRate = 'fast';"
    )
    conn.commit()
    conn.close()
    prof = parsers.read(path)
    launches = prof.launches.set_index("correlation_id")
    assert pd.isna(launches.loc[2, "grid_x"]) and launches.loc[4, "grid_x"] == 40
    assert pd.isna(prof.transfers.set_index("correlation_id").loc[10, "bytes"])
    dev = prof.devices.iloc[0]
    assert dev["name"] == "A\ufffd" and pd.isna(dev["sm_count"]) and pd.isna(dev["sm_clock_hz"])


def test_real_unified_memory_migrations_keep_their_cause(tuning_families: Path) -> None:
    # F07 (nsys export without ENUM tables): on-demand migrations during the kernel in b,
    # cudaMemPrefetchAsync before and after it in c
    folder = tuning_families / "cuda-training-series/exercises/hw6/outputs-rtx-3070"
    b = parsers.read(folder / "array_inc_b.sqlite").transfers
    assert set(b["kind"]) == {"UM-HtoD", "UM-DtoH"}
    assert b.groupby("cause").size().to_dict() == {"page fault": 2646, "speculative prefetch": 2816}
    c = parsers.read(folder / "array_inc_c.sqlite").transfers
    assert set(c["cause"]) == {"prefetch"} and len(c) == 128
