"""Per-SM limits of the ``devices`` table: resident warps, threads, blocks, registers and shared
memory per SM, as the profilers report them.

Real files are read in place (``real_profiles`` fixture); every expected value was read from the
file itself (Nsight Compute ``device__attribute_max_*_per_multiprocessor`` metrics, nvprof's
``CUPTI_ACTIVITY_KIND_DEVICE``, nsys's ``TARGET_INFO_GPU``).  A limit the file does not state is
missing, never 0.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import parsers
from parsers.ncu.rep_frames import RawAction, RawMetric, build_frames
from tests.parsers.test_nsys_sqlite import BASE_DDL, GPU_DDL, KERNEL_DDL, make_export
from tests.parsers.test_nvprof_sqlite import make_nvprof_db

LIMITS = (
    "max_warps_per_sm",
    "max_threads_per_sm",
    "max_blocks_per_sm",
    "registers_per_sm",
    "shared_bytes_per_sm",
)
NA = None  # expected missing


def limits_of(profile: parsers.Profile, row: int = 0) -> tuple[object, ...]:
    device = profile.devices.iloc[row]
    return tuple(None if pd.isna(device[c]) else device[c] for c in LIMITS)


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    ("rel", "gpu", "expected"),
    [
        # Nsight Compute 2023 report, cc 8.0: 164 KiB carve-out = 167936 B
        (
            "reports/hpca-gpu-memory-profiling/naive.ncu-rep",
            "NVIDIA A100-SXM4-40GB",
            (64, 2048, 32, 65536, 167936.0),
        ),
        # an older report (no version stored): no max_blocks_per_multiprocessor attribute
        (
            "reports/MultipleNodesScalingCUDACPPApplications/report.ncu-rep",
            "Tesla V100-SXM2-32GB",
            (64, 2048, NA, 65536, 98304.0),
        ),
        # cc 12.0: the device says 24 resident blocks, the compute-capability table 32
        (
            "reports/GPU-DEMO/ncu_report_optimized.ncu-rep",
            "NVIDIA GeForce RTX 5060 Ti",
            (48, 1536, 24, 65536, 102400.0),
        ),
    ],
)
def test_ncu_rep_reads_the_per_sm_limits(
    real_profiles: Path, rel: str, gpu: str, expected: tuple[object, ...]
) -> None:
    pytest.importorskip("ncu_report")
    profile = parsers.read(real_profiles / rel)
    assert profile.devices["name"].tolist() == [gpu]
    assert limits_of(profile) == expected


@pytest.mark.real_profiles
def test_ncu_raw_csv_reads_the_per_sm_limits(real_profiles: Path) -> None:
    rel = "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64.ncu.csv"
    profile = parsers.read(real_profiles / rel)
    assert profile.devices["name"].tolist() == ["NVIDIA B200"]
    # cc 10.0: 228 KiB = 233472 B of shared memory per SM
    assert limits_of(profile) == (64, 2048, 32, 65536, 233472.0)
    assert str(profile.devices["max_warps_per_sm"].dtype) == "Int64"


@pytest.mark.real_profiles
def test_ncu_raw_csv_reads_the_limits_under_a_metric_selection(real_profiles: Path) -> None:
    """The limits are device facts: read even when the selection names none of them."""
    rel = "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64.ncu.csv"
    profile = parsers.read(real_profiles / rel, metrics=lambda name: name == "gpu_time_duration")
    assert not profile.metrics["tool_metric"].str.startswith("device__attribute_max").any()
    assert limits_of(profile) == (64, 2048, 32, 65536, 233472.0)


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    ("rel", "gpu", "expected"),
    [
        # nvprof database (CUPTI_ACTIVITY_KIND_DEVICE): no threads per SM column
        ("reports/GPU_ML/timeline.nvvp", "TITAN V", (64, NA, 32, 65536, 98304.0)),
        # Fermi, cc 2.1: 48 warps, 8 blocks, 32768 registers, 48 KiB
        ("reports/EM-Algorithm/analysis.nvprof", "GeForce GT 520M", (48, NA, 8, 32768, 49152.0)),
        # nsys export (TARGET_INFO_GPU): maxWarpsPerSm, maxBlocksPerSm, ...; no threads per SM
        (
            "reports/CudaProgramming/streamSimple.sqlite",
            "NVIDIA GeForce RTX 4090",
            (48, NA, 24, 65536, 102400.0),
        ),
    ],
)
def test_sqlite_device_tables_give_the_per_sm_limits(
    real_profiles: Path, rel: str, gpu: str, expected: tuple[object, ...]
) -> None:
    profile = parsers.read(real_profiles / rel)
    assert profile.devices["name"].iloc[0] == gpu
    assert limits_of(profile) == expected


def test_files_without_the_attributes_leave_the_limits_missing(samples: Path) -> None:
    profile = parsers.read(samples / "synthetic_ncu_raw.csv")  # display name and SM count only
    assert limits_of(profile) == (NA,) * len(LIMITS)


def test_report_record_without_limits_and_with_a_fraction() -> None:
    """A hand-made report result: the attributes it has are read, a fraction is missing."""
    action = RawAction(
        name="k",
        metrics=(
            RawMetric("device__attribute_display_name", "", text="GPU X"),
            RawMetric("launch__device_id", "", 0.0),
            RawMetric("device__attribute_max_warps_per_multiprocessor", "", 48.0),
            RawMetric("device__attribute_max_registers_per_multiprocessor", "", 65536.5),
            RawMetric("device__attribute_max_shared_memory_per_multiprocessor", "", 65536.0),
        ),
    )
    devices = build_frames([action]).devices
    row = devices.iloc[0]
    assert row["max_warps_per_sm"] == 48 and row["shared_bytes_per_sm"] == 65536.0
    assert pd.isna(row["registers_per_sm"])  # not a whole number
    assert pd.isna(row["max_threads_per_sm"]) and pd.isna(row["max_blocks_per_sm"])


def test_nvprof_database_limits_zero_and_damaged_cells_are_missing(tmp_path: Path) -> None:
    path = make_nvprof_db(tmp_path / "run.nvprof")
    assert limits_of(parsers.read(path)) == (NA,) * len(LIMITS)  # an older schema: no columns
    conn = sqlite3.connect(path)
    for column in (
        "maxWarpsPerMultiprocessor",
        "maxBlocksPerMultiprocessor",
        "maxRegistersPerMultiprocessor",
        "maxSharedMemoryPerMultiprocessor",
    ):
        conn.execute(f"ALTER TABLE CUPTI_ACTIVITY_KIND_DEVICE ADD COLUMN {column} INT")
    conn.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_DEVICE SET maxWarpsPerMultiprocessor = 64,"
        " maxBlocksPerMultiprocessor = 0, maxRegistersPerMultiprocessor = 'many',"
        " maxSharedMemoryPerMultiprocessor = 114688"
    )
    conn.commit()
    conn.close()
    # K80 (cc 3.7): 64 warps, 112 KiB; 0 and text are missing values, not limits
    assert limits_of(parsers.read(path)) == (64, NA, NA, NA, 114688.0)


def test_nsys_export_limits(tmp_path: Path) -> None:
    ddl = (
        GPU_DDL
        + "ALTER TABLE TARGET_INFO_GPU ADD COLUMN maxWarpsPerSm INTEGER;"
        + "ALTER TABLE TARGET_INFO_GPU ADD COLUMN maxBlocksPerSm INTEGER;"
        + "ALTER TABLE TARGET_INFO_GPU ADD COLUMN maxRegistersPerSm INTEGER;"
        + "ALTER TABLE TARGET_INFO_GPU ADD COLUMN maxShmemPerSm INTEGER;"
        + "UPDATE TARGET_INFO_GPU SET maxWarpsPerSm = 64, maxBlocksPerSm = 32,"
        + " maxRegistersPerSm = 65536, maxShmemPerSm = 167936;"
    )
    path = make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, ddl)
    assert limits_of(parsers.read(path)) == (64, NA, 32, 65536, 167936.0)
    older = make_export(tmp_path / "old.sqlite", BASE_DDL, KERNEL_DDL, GPU_DDL)
    assert limits_of(parsers.read(older)) == (NA,) * len(LIMITS)
