"""The criteria on real profiler output: facts visible in the raw data.

Files are read in place from ``../shared/real_profiles`` (the ``real_profiles`` fixture skips
without them, except under CI=true).  ``.ncu-rep`` files also need NVIDIA's ``ncu_report``
module: without it those tests skip, except under CI=true where its absence is an error.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import parsers
from advisor.criteria import evaluate
from advisor.criteria.engine.analysis import COMPUTED, NOT_COMPUTABLE
from advisor.devices.resolve import resolve_device
from advisor.profile import merge


def analyse(*paths: Path) -> Any:
    profile = merge([parsers.read(str(p)) for p in paths])
    return evaluate(profile, resolve_device(profile, None))


def crit(analysis: Any, kernel: str, name: str) -> Any:
    k = next(k for k in analysis.kernels if k.name.startswith(kernel))
    return next(c for c in k.criteria if c.name == name)


def test_shared_report_bank_conflict_kernels_score_low(
    real_profiles: Path, ncu_module: ModuleType
) -> None:
    # The report's own rule: "992 bank conflicts, which represent 96.88% of the overall 1024
    # wavefronts for shared loads" in setColReadCol, setRowReadCol and setRowReadColDyn.
    # Source counters: setColReadCol ideal 64 / actual 2048 wavefronts = 0.03125;
    # setRowReadCol and setRowReadColDyn 64 / 1056 = 0.0606.  The padded variants (Ipad) and
    # setRowReadRow have 64 / 64 = 1.
    a = analyse(real_profiles / "reports/CUDA_Learning/shared_report.ncu-rep")
    assert crit(a, "setColReadCol", "SHMEM_EFFICIENCY").value == pytest.approx(64 / 2048)
    assert crit(a, "setRowReadCol(", "SHMEM_EFFICIENCY").value == pytest.approx(64 / 1056)
    assert crit(a, "setRowReadColDyn(", "SHMEM_EFFICIENCY").value == pytest.approx(64 / 1056)
    for ok in ("setRowReadRow", "setRowReadColIpad", "setRowReadColDynIpad"):
        assert crit(a, ok, "SHMEM_EFFICIENCY").value == pytest.approx(1.0)
    warmup = crit(a, "warmup", "SHMEM_EFFICIENCY")
    assert warmup.status == "not_applicable"  # no shared instruction at all
    k = next(k for k in a.kernels if k.name.startswith("setColReadCol"))
    assert "SHMEM_EFFICIENCY" in [h.criterion for h in k.hints]
    assert any(r["rule"] == "SharedMemoryConflicts" for r in k.ncu_rules)


def test_seq_align_one_busy_sm_scores_low_on_sm_balance(
    real_profiles: Path, ncu_module: ModuleType
) -> None:
    # fill_matrix runs one block on a 128-SM RTX 4090: sm__cycles_active.max = 1,124,124,
    # .avg = 8,782.22 (max / avg = 128) -> 1 - (max - avg) / max = avg / max = 1 / 128
    a = analyse(real_profiles / "reports/seq_align/profile.ncu-rep")
    c = crit(a, "fill_matrix", "LOADBALANC_SM")
    assert c.status == COMPUTED
    assert c.value == pytest.approx(1 / 128, rel=1e-3)
    assert c.speedups.amdahl == pytest.approx(128, rel=1e-3)
    assert c.inputs["sm_cycles_active_max"] == pytest.approx(1_124_124)
    assert a.application.hostsync.status == NOT_COMPUTABLE  # ncu only: no timeline
    assert "serializes" in a.application.hostsync.notes[0]


def test_hostsync_from_nvprof_gpu_trace_matches_hand_computation(real_profiles: Path) -> None:
    # matrixMul_trace.csv: 301 launches of matrixMulCUDA on one stream (no overlap).
    # Sum of the Duration column over the kernel rows = 23.031098 ms; first start
    # 587.796940 ms; last kernel starts at 611.326221 ms and lasts 0.076354 ms -> ends
    # 611.402575 ms; span = 611.402575 - 587.796940 = 23.605635 ms.
    # HOSTSYNC = 23.031098 / 23.605635 = 0.975661
    a = analyse(real_profiles / "csv/magus_nvprof/gtx1080ti/matrixMul_trace.csv")
    h = a.application.hostsync
    assert h.value == pytest.approx(23.031098 / 23.605635, abs=1e-6)
    assert h.inputs["kernel_launches"] == 301
    assert h.inputs["span_ns"] == pytest.approx(23_605_635, abs=1)
    assert h.speedups.amdahl == pytest.approx(23.605635 / 23.031098, abs=1e-6)


def test_hostsync_overlapping_streams_use_the_union(real_profiles: Path) -> None:
    # trace_2cke_23000.csv: two kernels on streams 13 and 14:
    # 528.970104 ms + 66.145 us -> ends 529.036249 ms; 529.003769 ms + 79.040 us -> ends
    # 529.082809 ms.  The paper's sum / span = 145.185 / 112.705 = 1.288 (> 1); the union is the
    # whole span -> HOSTSYNC = 1.
    a = analyse(real_profiles / "csv/magus_nvprof/gtx950_multistream/trace_2cke_23000.csv")
    h = a.application.hostsync
    assert h.value == pytest.approx(1.0)
    assert h.inputs["kernel_time_sum_ns"] == pytest.approx(145_185, abs=1)
    assert h.inputs["span_ns"] == pytest.approx(112_705, abs=1)
    assert any("overlap" in n for n in h.notes)


def test_nvprof_trace_and_metrics_merged(real_profiles: Path) -> None:
    # matrixMul on a GTX 1080 Ti: stall_sync 14.45461 % -> DEVICESYNC 0.8554539;
    # warp_execution_efficiency 100 % -> DIVERGENCE 1; shared loads 3,072,000 tx at 1.2 per
    # request + stores 128,000 at 1.0 -> (2,560,000 + 128,000) / 3,200,000 = 0.84;
    # achieved occupancy 0.935178 x 64 warps over 1024-thread blocks, 27 regs, 8 KB shared on
    # cc 6.1 -> 2 blocks x 32 warps = 64 -> LOADBALANC_WARP 0.935178
    folder = real_profiles / "csv/magus_nvprof/gtx1080ti"
    a = analyse(folder / "matrixMul_trace.csv", folder / "matrixMul_metrics.csv")
    assert a.device["name"] == "GeForce GTX 1080 Ti"
    k = a.kernels[0]
    assert k.launches == 301
    assert crit(a, "void matrixMulCUDA", "DEVICESYNC").value == pytest.approx(0.8554539)
    # Decision V1: warp_nonpred_execution_efficiency 99.79 % (warp_execution_efficiency 100 %)
    divergence = crit(a, "void matrixMulCUDA", "DIVERGENCE")
    assert divergence.value == pytest.approx(0.9979275, abs=1e-6)
    assert divergence.method.startswith("non-predicated")
    assert crit(a, "void matrixMulCUDA", "SHMEM_EFFICIENCY").value == pytest.approx(0.84)
    assert crit(a, "void matrixMulCUDA", "LOADBALANC_WARP").value == pytest.approx(0.935178)
    # nvprof has no per-SM cycles: the launch configuration gives it (Decision G1)
    lb_sm = crit(a, "void matrixMulCUDA", "LOADBALANC_SM")
    assert lb_sm.status == COMPUTED and lb_sm.method.startswith("launch configuration")
    assert a.application.hostsync.value == pytest.approx(0.975661, abs=1e-6)


def test_uncoalesced_naive_conv_scores_low_on_l1(
    real_profiles: Path, ncu_module: ModuleType
) -> None:
    # hpca naive conv2d on an A100, 4 launches: source-counter ideal / actual global sectors
    # about 1.27e9 / 4.89e9 = 0.26 on average; Nsight Compute flags UncoalescedGlobalAccess.
    a = analyse(real_profiles / "reports/hpca-gpu-memory-profiling/naive.ncu-rep")
    c = crit(a, "kernel_conv2d_baseline", "L1_GRANULARITY")
    assert c.value == pytest.approx(0.26, abs=0.01)
    k = a.kernels[0]
    assert k.launches == 4
    assert any(r["rule"] == "UncoalescedGlobalAccess" for r in k.ncu_rules)
