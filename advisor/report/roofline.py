"""The roofline of the report: per kernel, arithmetic intensity (FLOP per DRAM byte) and
achieved FLOP/s against the device's peak FLOP/s and DRAM bandwidth (Williams, Waterman and
Patterson's roofline; the peaks are FORMATS.md section 5's, from ``advisor/data/gpus.csv``).

Per kernel, every count is the mean over its launches (per-launch metric rows, or nvprof's
per-invocation ``Avg``); canonical metric names of ``advisor/data/metric_map.csv``:

=========  ===================================================================================
FLOP       per precision p in sp, dp, hp: ``flop_count_p`` (nvprof; an FMA counts 2), else
           ``flop_count_p_add + flop_count_p_mul + 2 × flop_count_p_fma`` when all three are
           there (Nsight Compute ``smsp__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}
           _pred_on.sum``); the kernel's FLOP = the sum over the precisions found
bytes      ``dram_bytes``, else ``dram_read_bytes + dram_write_bytes``, else
           32 × (``dram_read_transactions + dram_write_transactions``) (32-byte DRAM sectors)
time       the kernel's GPU time over its launches (the analysis' ``duration_ns / launches``)
=========  ===================================================================================

intensity = FLOP / bytes; achieved = FLOP / time; attainable = min(peak, bandwidth × intensity),
with the FP64 peak when FP64 operations are the majority and the FP32 peak otherwise (the GPU
database has no FP16 peak).  Zero-denominator policy: a kernel with no DRAM bytes has no
intensity (listed, not drawn); one without a time has no achieved rate (listed, not drawn).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from advisor.profile import Profile

#: kernels placed on the roofline (the ones with the largest share of GPU time that have counts)
ROOFLINE_KERNELS = 20
#: bytes per DRAM transaction (sector) in nvprof and Nsight Compute
DRAM_SECTOR_BYTES = 32.0
PRECISIONS = ("sp", "dp", "hp")
#: every canonical metric the roofline may read (the module docstring's table)
METRICS: tuple[str, ...] = (
    *(f"flop_count_{p}" for p in PRECISIONS),
    *(f"flop_count_{p}_{op}" for p in PRECISIONS for op in ("add", "mul", "fma")),
    "dram_bytes",
    "dram_read_bytes",
    "dram_write_bytes",
    "dram_read_transactions",
    "dram_write_transactions",
)
#: the profiler commands that collect the roofline's counts (./APP is the program)
COLLECT = (
    (
        "nvprof",
        "nvprof --metrics flop_count_sp,flop_count_dp,flop_count_hp,dram_read_transactions,"
        "dram_write_transactions --print-gpu-trace ./APP",
    ),
    (
        "ncu",
        "ncu --metrics smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,"
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
        "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,"
        "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,"
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,"
        "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum ./APP",
    ),
)
METHOD = (
    "intensity = FLOP / DRAM bytes, achieved = FLOP / kernel time (means per launch); "
    "roof = min(peak FLOP/s, DRAM bandwidth × intensity)"
)


@dataclass(frozen=True)
class RooflinePoint:
    """One kernel on the roofline (values per launch)."""

    rank: int
    kernel: str
    flop: float
    dram_bytes: float
    duration_ns: float | None
    intensity: float | None  # FLOP / byte; None without DRAM traffic
    achieved_flops: float | None  # FLOP/s; None without a time
    attainable_flops: float | None  # the roof at this intensity
    precision: str  # "fp32" | "fp64" | "fp16": the precision with the most FLOP
    flop_source: str
    bytes_source: str

    @property
    def drawn(self) -> bool:
        return bool(self.intensity and self.achieved_flops)

    @property
    def frac_of_roof(self) -> float | None:
        if self.achieved_flops is None or not self.attainable_flops:
            return None
        return self.achieved_flops / self.attainable_flops


@dataclass(frozen=True)
class Roofline:
    """The roofline's points and ceilings, or (no points) what to collect."""

    points: tuple[RooflinePoint, ...]
    peak_fp32_flops: float | None
    peak_fp64_flops: float | None
    peak_dram_bytes_per_s: float | None
    device: str | None
    method: str
    kernels_with_counts: int
    collect: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]

    @property
    def drawable(self) -> bool:
        return any(p.drawn for p in self.points) and bool(
            self.peak_fp32_flops and self.peak_dram_bytes_per_s
        )


def build_roofline(
    profile: Profile,
    kernels: Sequence[Mapping[str, Any]],
    device: Mapping[str, Any],
    limit: int = ROOFLINE_KERNELS,
) -> Roofline:
    """The roofline of ``kernels`` (analysis JSON kernels, in the report's rank order)."""
    values = device.get("values") or {}
    peak32 = _positive(values.get("device.peak_fp32_flops"))
    peak64 = _positive(values.get("device.peak_fp64_flops"))
    bandwidth = _positive(values.get("device.peak_dram_bytes_per_s"))
    means = kernel_metric_means(profile)
    points: list[RooflinePoint] = []
    with_counts = 0
    for rank, k in enumerate(kernels, start=1):
        counts = means.get(str(k["name"]))
        flop = _flop(counts) if counts else None
        dram = _dram_bytes(counts) if counts else None
        if flop is None or dram is None:
            continue
        with_counts += 1
        if len(points) < limit:
            points.append(_point(rank, k, flop, dram, peak32, peak64, bandwidth))
    notes = []
    if with_counts > len(points):
        notes.append(f"{with_counts - len(points)} more kernels with counts are not drawn")
    if points and (peak32 is None or bandwidth is None):
        notes.append("the device's peak FLOP/s or DRAM bandwidth is unknown; no roof drawn")
    if any(p.precision == "fp16" for p in points):
        notes.append("FP16 kernels are drawn against the FP32 peak (no FP16 peak in the database)")
    skipped = [p for p in points if not p.drawn]
    if skipped:
        notes.append(
            f"{len(skipped)} kernel(s) not drawn: no DRAM traffic, no FLOP or no time "
            "(listed in the table)"
        )
    return Roofline(
        points=tuple(points),
        peak_fp32_flops=peak32,
        peak_fp64_flops=peak64,
        peak_dram_bytes_per_s=bandwidth,
        device=device.get("name"),
        method=METHOD,
        kernels_with_counts=with_counts,
        collect=() if points else COLLECT,
        notes=tuple(notes),
    )


def kernel_metric_means(profile: Profile) -> dict[str, dict[str, float]]:
    """Kernel name -> canonical metric -> mean value over the kernel's rows (finite only)."""
    frame = profile.metrics
    rows = frame[frame["kernel"].notna() & frame["value"].notna()]
    if rows.empty:
        return {}
    values = pd.to_numeric(rows["value"], errors="coerce")
    means = values.groupby([rows["kernel"], rows["metric"]]).mean().dropna()
    out: dict[str, dict[str, float]] = {}
    for (kernel, metric), value in means.items():
        out.setdefault(str(kernel), {})[str(metric)] = float(value)
    return out


def _point(
    rank: int,
    k: Mapping[str, Any],
    flop: tuple[float, dict[str, float], str],
    dram: tuple[float, str],
    peak32: float | None,
    peak64: float | None,
    bandwidth: float | None,
) -> RooflinePoint:
    total, by_precision, flop_source = flop
    dram_bytes, bytes_source = dram
    launches = int(k.get("launches") or 0)
    duration = k.get("duration_ns")
    per_launch = float(duration) / launches if duration and launches > 0 else None
    intensity = total / dram_bytes if dram_bytes > 0 else None
    achieved = total / (per_launch * 1e-9) if per_launch else None
    dominant = max(PRECISIONS, key=lambda p: (by_precision.get(p, 0.0), p == "sp"))
    peak = peak64 if dominant == "dp" and peak64 else peak32
    attainable = (
        min(peak, bandwidth * intensity) if peak and bandwidth and intensity is not None else None
    )
    return RooflinePoint(
        rank=rank,
        kernel=str(k["name"]),
        flop=total,
        dram_bytes=dram_bytes,
        duration_ns=per_launch,
        intensity=intensity,
        achieved_flops=achieved,
        attainable_flops=attainable,
        precision={"sp": "fp32", "dp": "fp64", "hp": "fp16"}[dominant],
        flop_source=flop_source,
        bytes_source=bytes_source,
    )


def _flop(m: Mapping[str, float]) -> tuple[float, dict[str, float], str] | None:
    """(FLOP, FLOP per precision, recipe) or None when no precision has a count."""
    by_precision: dict[str, float] = {}
    sources: list[str] = []
    for p in PRECISIONS:
        parts = [f"flop_count_{p}_{op}" for op in ("add", "mul", "fma")]
        if f"flop_count_{p}" in m:
            by_precision[p] = m[f"flop_count_{p}"]
            sources.append(f"flop_count_{p}")
        elif all(name in m for name in parts):
            by_precision[p] = m[parts[0]] + m[parts[1]] + 2.0 * m[parts[2]]
            sources.append(f"({parts[0]} + {parts[1]} + 2 × {parts[2]})")
    if not by_precision:
        return None
    return sum(by_precision.values()), by_precision, " + ".join(sources)


def _dram_bytes(m: Mapping[str, float]) -> tuple[float, str] | None:
    if "dram_bytes" in m:
        return m["dram_bytes"], "dram_bytes"
    if "dram_read_bytes" in m and "dram_write_bytes" in m:
        return m["dram_read_bytes"] + m["dram_write_bytes"], "dram_read_bytes + dram_write_bytes"
    if "dram_read_transactions" in m and "dram_write_transactions" in m:
        total = DRAM_SECTOR_BYTES * (m["dram_read_transactions"] + m["dram_write_transactions"])
        return total, "32 × (dram_read_transactions + dram_write_transactions)"
    return None


def _positive(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 and number != float("inf") else None
