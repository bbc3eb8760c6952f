"""The roofline's FLOP, byte and peak families (advisor/report/roofline.py), each from hand-built
metric rows with hand-computed FLOP, bytes, intensity and FLOP/s, and the CudaCode naive GEMM
Nsight Compute report, whose FLOPs come only as per-cycle rates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from advisor import pipeline
from advisor.profile import Profile, Provenance
from advisor.render import charts
from advisor.render import report as render
from advisor.report import build as report
from advisor.report.roofline import (
    DATABASE_PEAKS,
    METRICS,
    Roofline,
    RooflinePoint,
    _flop,
    build_roofline,
)

K = "k(float *)"
# a made-up GPU: 10 TFLOP/s FP32, 5 TFLOP/s FP64, 1 TB/s DRAM, 2 GHz boost clock
DEVICE: dict[str, Any] = {
    "name": "Test GPU",
    "values": {
        "device.peak_fp32_flops": 10e12,
        "device.peak_fp64_flops": 5e12,
        "device.peak_dram_bytes_per_s": 1e12,
        "device.boost_clock_hz": 2e9,
    },
}
# two launches, 4 ms of GPU time: 2 ms per launch
KERNEL = {"name": K, "launches": 2, "duration_ns": 4e6}
Row = tuple[int | None, str, float]  # (launch id or None for a per-kernel summary, name, value)


def _profile(rows: Sequence[Row], kernel: str = K) -> Profile:
    metrics = pd.DataFrame(
        {
            "launch_id": pd.array([r[0] for r in rows], dtype="Int64"),
            "kernel": [kernel] * len(rows),
            "metric": [r[1] for r in rows],
            "value": [float(r[2]) for r in rows],
        }
    )
    return Profile(provenance=(Provenance("t.csv", "test", "ncu"),), metrics=metrics)


def _roofline(rows: Sequence[Row], device: Mapping[str, Any] = DEVICE) -> Roofline:
    return build_roofline(_profile(rows), [KERNEL], device)


def _only(rf: Roofline) -> RooflinePoint:
    (point,) = rf.points
    return point


def _close(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-12)


def test_flop_counts_and_dram_bytes() -> None:
    # nvprof per-kernel averages (no launch): 4e9 + 1e9 FLOP, 2e9 bytes -> 2.5 FLOP/B;
    # 5e9 FLOP / 2 ms = 2.5e12 FLOP/s; roof min(10e12, 1e12 x 2.5) = 2.5e12 (FP32 dominates)
    rf = _roofline(
        [(None, "flop_count_sp", 4e9), (None, "flop_count_dp", 1e9), (None, "dram_bytes", 2e9)]
    )
    p = _only(rf)
    assert p.flop == 5e9 and p.dram_bytes == 2e9 and p.intensity == 2.5
    assert _close(p.achieved_flops, 2.5e12) and p.attainable_flops == 2.5e12
    assert p.precision == "fp32" and _close(p.frac_of_roof, 1.0)
    assert p.flop_source == "flop_count_sp + flop_count_dp" and p.bytes_source == "dram_bytes"
    assert rf.drawable and rf.peak_fp32_flops == 10e12 and rf.peak_source == DATABASE_PEAKS
    assert rf.notes == ()


def test_flop_count_sum_and_read_plus_write_bytes() -> None:
    # 3e9 FLOP of flop_count_sp.sum; 1e9 + 5e8 bytes -> 2 FLOP/B; 3e9 / 2 ms = 1.5e12 FLOP/s
    rf = _roofline(
        [(0, "flop_count_sp.sum", 3e9), (0, "dram_read_bytes", 1e9), (0, "dram_write_bytes", 5e8)]
    )
    p = _only(rf)
    assert p.flop == 3e9 and p.dram_bytes == 1.5e9 and p.intensity == 2.0
    assert _close(p.achieved_flops, 1.5e12)
    assert p.flop_source == "flop_count_sp.sum"
    assert p.bytes_source == "dram_read_bytes + dram_write_bytes"


def test_per_operation_counts_and_transactions() -> None:
    # 1e8 + 2e8 + 2 x 3e8 = 9e8 FLOP; 32 x (1e7 + 2.5e6) = 4e8 bytes -> 2.25 FLOP/B;
    # 9e8 / 2 ms = 4.5e11 FLOP/s
    rows: list[Row] = [
        (0, "flop_count_sp_add", 1e8),
        (0, "flop_count_sp_mul", 2e8),
        (0, "flop_count_sp_fma", 3e8),
        (0, "dram_read_transactions", 1e7),
        (0, "dram_write_transactions", 2.5e6),
    ]
    p = _only(_roofline(rows))
    assert p.flop == 9e8 and p.dram_bytes == 4e8 and p.intensity == 2.25
    assert _close(p.achieved_flops, 4.5e11)
    assert p.flop_source == "(flop_count_sp_add + flop_count_sp_mul + 2 × flop_count_sp_fma)"
    assert p.bytes_source == "32 × (dram_read_transactions + dram_write_transactions)"


def test_rates_times_cycles_per_launch_and_throughput_times_duration() -> None:
    # launch 0: (10 + 0 + 2 x 100) FLOP/cycle x 1.5e9 Hz x 1 ms = 210 x 1.5e6 = 3.15e8 FLOP,
    #           1e11 B/s x 1 ms = 1e8 bytes
    # launch 1: (0 + 20 + 2 x 200) x 1.5e9 x 3 ms = 420 x 4.5e6 = 1.89e9 FLOP,
    #           2e11 B/s x 3 ms = 6e8 bytes
    # means: 1.1025e9 FLOP (not 315 x 1.5e9 x 2 ms = 9.45e8, the product of the means),
    # 3.5e8 bytes -> 3.15 FLOP/B; 1.1025e9 / 2 ms = 5.5125e11 FLOP/s
    rows: list[Row] = []
    for launch, (add, mul, fma, ns, throughput) in enumerate(
        ((10, 0, 100, 1e6, 1e11), (0, 20, 200, 3e6, 2e11))
    ):
        rows += [
            (launch, "flop_rate_sp_add_per_cycle", add),
            (launch, "flop_rate_sp_mul_per_cycle", mul),
            (launch, "flop_rate_sp_fma_per_cycle", fma),
            (launch, "sm_frequency", 1.5e9),
            (launch, "gpu_time_duration", ns),
            (launch, "elapsed_cycles", 9e9),  # ignored: sm_frequency x gpu_time_duration first
            (launch, "dram_throughput", throughput),
        ]
    p = _only(_roofline(rows))
    assert _close(p.flop, 1.1025e9) and _close(p.dram_bytes, 3.5e8)
    assert _close(p.intensity, 3.15) and _close(p.achieved_flops, 5.5125e11)
    assert p.precision == "fp32"
    assert p.flop_source == (
        "(flop_rate_sp_add_per_cycle + flop_rate_sp_mul_per_cycle + 2 × "
        "flop_rate_sp_fma_per_cycle) × sm_frequency × gpu_time_duration"
    )
    assert p.bytes_source == "dram_throughput × gpu_time_duration"


def test_rates_times_elapsed_cycles_and_fp64_roof() -> None:
    # FP64: 2 x 50 FMA/cycle (no add or mul rate) x 2e6 elapsed cycles = 2e8 FLOP; FP32 adds
    # 5 x 2e6 = 1e7.  Bytes 32 x (3e6 + 1e6) = 1.28e8 -> 2.1e8 / 1.28e8 = 1.640625 FLOP/B;
    # 2.1e8 / 2 ms = 1.05e11 FLOP/s; roof min(5e12 FP64, 1e12 x 1.640625)
    rows: list[Row] = [
        (0, "flop_rate_dp_fma_per_cycle", 50),
        (0, "flop_rate_sp_add_per_cycle", 5),
        (0, "flop_rate_sp_fma_per_cycle", 0),
        (0, "elapsed_cycles", 2e6),
        (0, "dram_read_transactions", 3e6),
        (0, "dram_write_transactions", 1e6),
    ]
    p = _only(_roofline(rows))
    assert _close(p.flop, 2.1e8) and p.dram_bytes == 1.28e8
    assert _close(p.intensity, 1.640625) and _close(p.achieved_flops, 1.05e11)
    assert p.precision == "fp64" and _close(p.attainable_flops, 1.640625e12)
    assert p.flop_source == (
        "(flop_rate_sp_add_per_cycle + 2 × flop_rate_sp_fma_per_cycle + "
        "2 × flop_rate_dp_fma_per_cycle) × elapsed_cycles"
    )
    # the same rates without any cycles (and without a time) give no FLOP
    assert _flop({"flop_rate_sp_fma_per_cycle": 7.0}) is None
    # with only sm_frequency, the kernel's time per launch: 2 x 7 x 1e9 Hz x 1 ms = 1.4e7
    flop = _flop({"flop_rate_sp_fma_per_cycle": 7.0, "sm_frequency": 1e9}, 1e-3)
    assert flop is not None and _close(flop[0], 1.4e7)
    assert flop[2] == "(2 × flop_rate_sp_fma_per_cycle) × sm_frequency × time"


def test_efficiencies_times_peak_only_without_counts() -> None:
    # nvprof summaries (no launch, no duration): 0.25 x 10e12 FLOP/s x 2 ms = 5e9 FLOP (FP64
    # efficiency 0 adds 0); bytes (3e11 + 1e11) B/s x 2 ms = 8e8 -> 6.25 FLOP/B;
    # achieved 5e9 / 2 ms = 2.5e12 FLOP/s = efficiency x peak
    rows: list[Row] = [
        (None, "flop_sp_efficiency", 0.25),
        (None, "flop_dp_efficiency", 0.0),
        (None, "dram_read_throughput", 3e11),
        (None, "dram_write_throughput", 1e11),
    ]
    p = _only(_roofline(rows))
    assert _close(p.flop, 5e9) and _close(p.dram_bytes, 8e8) and _close(p.intensity, 6.25)
    assert _close(p.achieved_flops, 2.5e12) and p.precision == "fp32"
    assert p.flop_source == (
        "(flop_sp_efficiency × peak FP32 + flop_dp_efficiency × peak FP64) × time"
    )
    assert p.bytes_source == "(dram_read_throughput + dram_write_throughput) × time"
    # a count of any precision wins over every efficiency
    counted = _only(_roofline([*rows, (None, "flop_count_dp", 1e9)]))
    assert counted.flop == 1e9 and counted.flop_source == "flop_count_dp"


def test_peaks_from_the_report_counters() -> None:
    # 2 x 1000 FMA/cycle x 1.5 GHz = 3e12 FP32; 2 x 50 x 1.5e9 = 1.5e11 FP64; FP16 2 x 2000 x
    # 1.5e9 = 6e12.  FP16 kernel: 2 x 300 hfma/cycle x 1.5e9 Hz x 2 ms = 1.8e9 FLOP, 1e8 bytes
    # -> 18 FLOP/B; 9e11 FLOP/s against min(6e12, 1e12 x 18) = 6e12
    rows: list[Row] = [
        (0, "flop_peak_sp_fma_per_cycle", 1000),
        (0, "flop_peak_dp_fma_per_cycle", 50),
        (0, "flop_peak_hp_fma_per_cycle", 2000),
        (0, "flop_rate_hp_fma_per_cycle", 300),
        (0, "sm_frequency", 1.5e9),
        (0, "gpu_time_duration", 2e6),
        (0, "dram_bytes", 1e8),
    ]
    rf = _roofline(rows)
    assert _close(rf.peak_fp32_flops, 3e12) and _close(rf.peak_fp64_flops, 1.5e11)
    assert _close(rf.peak_fp16_flops, 6e12)
    p = _only(rf)
    assert _close(p.flop, 1.8e9) and p.intensity == 18.0 and p.precision == "fp16"
    assert _close(p.achieved_flops, 9e11) and _close(p.attainable_flops, 6e12)
    assert rf.peak_source.startswith("the report's counters for FP32, FP64, FP16")
    assert rf.notes == (
        "peak FLOP/s from the report's counters: FP32 3 TFLOP/s = 2 × "
        "flop_peak_sp_fma_per_cycle 1000 × 1.5 GHz (sm_frequency), GPU database 10 TFLOP/s; "
        "FP64 0.15 TFLOP/s = 2 × flop_peak_dp_fma_per_cycle 50 × 1.5 GHz (sm_frequency), "
        "GPU database 5 TFLOP/s; FP16 6 TFLOP/s = 2 × flop_peak_hp_fma_per_cycle 2000 × "
        "1.5 GHz (sm_frequency)",
    )
    svg = str(charts.roofline_chart(rf))
    assert "FP16 peak 6 TFLOP/s" in svg and "FP32 peak 3 TFLOP/s" in svg


def test_peak_without_sm_frequency_takes_the_boost_clock() -> None:
    # 2 x 1000 x 2 GHz = 4e12 FP32; no FP64 peak in the report: the database's 5e12
    rows: list[Row] = [
        (0, "flop_peak_sp_fma_per_cycle", 1000),
        (0, "flop_count_sp", 1e9),
        (0, "dram_bytes", 1e9),
    ]
    rf = _roofline(rows)
    assert _close(rf.peak_fp32_flops, 4e12) and rf.peak_fp64_flops == 5e12
    assert rf.peak_fp16_flops is None
    assert "(database boost clock)" in rf.notes[0]
    assert rf.peak_source.endswith(f"; FP64 from {DATABASE_PEAKS}")
    # without the boost clock either, the database's peaks
    device = {**DEVICE, "values": {**DEVICE["values"], "device.boost_clock_hz": None}}
    rf = _roofline(rows, device)
    assert rf.peak_fp32_flops == 10e12 and rf.peak_source == DATABASE_PEAKS


def test_zero_denominators_and_missing_families() -> None:
    # no DRAM bytes: listed, no intensity, not drawn; FP16 without an FP16 peak said
    rf = _roofline([(0, "flop_count_hp", 1e6), (0, "dram_bytes", 0.0)])
    p = _only(rf)
    assert p.intensity is None and not p.drawn and not rf.drawable
    assert p.precision == "fp16" and p.attainable_flops is None
    assert any("FP16 kernels are drawn against the FP32 peak" in n for n in rf.notes)
    # FLOP without any byte family (a lone read count): no point, the commands to collect
    rf = _roofline([(0, "flop_count_sp", 1e6), (0, "dram_read_bytes", 1e6)])
    assert rf.points == () and rf.collect and rf.kernels_with_counts == 0


def test_every_name_read_is_kept_by_the_pipeline() -> None:
    assert all(pipeline.is_needed(name) for name in METRICS)


def test_cudacode_naive_report_has_a_roofline(real_profiles: Path) -> None:
    # naive_gemm (M = N = K = 1024) on a GTX 1660 SUPER under Nsight Compute: the FLOPs come
    # only as smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed (about 146
    # FFMA per cycle) x sm_frequency (1.535 GHz) x gpu_time_duration (4.79 ms): about
    # 2 x 1024^3 = 2.15e9 FLOP per launch; dram__bytes_read.sum + dram__bytes_write.sum about
    # 1.51e8 bytes
    path = real_profiles / "reports" / "CudaCode" / "naive.ncu-rep"
    run = pipeline.analyse([str(path)])
    built = report.build(run.analysis, run.profile)
    rf = built.roofline
    assert rf is not None and rf.drawable
    p = _only(rf)
    assert p.kernel.startswith("naive_gemm") and p.drawn and p.precision == "fp32"
    assert math.isclose(p.flop, 2 * 1024**3, rel_tol=0.01)
    assert math.isclose(p.dram_bytes, 1.51e8, rel_tol=0.01)
    assert p.achieved_flops is not None and 1e11 < p.achieved_flops < 1e12  # about 4.5e11
    assert p.intensity is not None and 13 < p.intensity < 15
    assert "flop_rate_sp_fma_per_cycle" in p.flop_source
    # the roof from the report: 2 x 1408 FFMA per cycle x 1.535 GHz = 4.32 TFLOP/s
    assert rf.peak_fp32_flops is not None and math.isclose(
        rf.peak_fp32_flops, 4.32e12, rel_tol=0.01
    )
    assert p.attainable_flops == rf.peak_fp32_flops  # 14 FLOP/B is right of the ridge (12.9)
    html = render.html(built)
    assert '<figure id="roofline-chart"><svg' in html
