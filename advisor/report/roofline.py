"""The roofline of the report: per kernel, arithmetic intensity (FLOP per DRAM byte) and
achieved FLOP/s against the device's peak FLOP/s and DRAM bandwidth (Williams, Waterman and
Patterson's roofline; the peaks are the report's own Nsight Compute peak counters when it holds
them, else FORMATS.md section 5's, from ``advisor/data/gpus.csv``).

FLOP and bytes are computed per launch (the metric rows of one launch; nvprof's per-kernel
``Avg`` rows, which name no launch, count as one launch) from the first family of the table the
launch holds, then averaged over the kernel's launches that have them.  Canonical metric names of
``advisor/data/metric_map.csv``; p is each of sp, dp, hp:

=========  ===================================================================================
FLOP       per precision p, the first of:

           1. ``flop_count_p`` (nvprof; an FMA counts 2), or ``flop_count_p.sum``;
           2. ``flop_count_p_add + flop_count_p_mul + 2 × flop_count_p_fma`` when all three are
              there (Nsight Compute ``smsp__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}
              _pred_on.sum``);
           3. ``(flop_rate_p_add_per_cycle + flop_rate_p_mul_per_cycle + 2 ×
              flop_rate_p_fma_per_cycle) × cycles`` (Nsight Compute's roofline counters
              ``smsp__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum
              .per_cycle_elapsed``; the FMA rate is required, a missing add or mul rate counts 0
              and is left out of the recipe shown), with cycles below;

           the kernel's FLOP = the sum over the precisions found.  Only when no precision has
           one of these: 4. ``flop_p_efficiency × peak_p × duration`` (nvprof's FLOP
           efficiencies, achieved over peak FLOP/s; peak_p is the peak below, FP16 only with
           the report's own FP16 peak).  Nsight Compute's ``flop_sp_efficiency`` (ops of
           fadd, fmul and ffma over the FMA peak) counts an add or a multiply as an FMA, so
           family 4 overstates its add and mul FLOP; the report's roofline counters (family 3)
           come in the same section and take precedence.
bytes      ``dram_bytes``, else ``dram_read_bytes + dram_write_bytes``, else
           32 × (``dram_read_transactions + dram_write_transactions``) (32-byte DRAM sectors),
           else ``dram_throughput × duration``, else
           ``(dram_read_throughput + dram_write_throughput) × duration``
cycles     ``sm_frequency × gpu_time_duration``, else ``elapsed_cycles``, else
           ``sm_frequency × time``
duration   the launch's ``gpu_time_duration``, else the kernel's time per launch
time       the kernel's GPU time over its launches (the analysis' ``duration_ns / launches``)
=========  ===================================================================================

Why cycles = ``sm_frequency × gpu_time_duration``: the ``.sum.per_cycle_elapsed`` of an
smsp-level counter is its device-wide sum divided by the elapsed cycles of one SM sub-partition,
``smsp__cycles_elapsed.avg``; ``sm_frequency`` is Nsight Compute's
``smsp__cycles_elapsed.avg.per_second`` (= ``smsp__cycles_elapsed.avg / gpu__time_duration``),
so the product gives that divisor back and rate × cycles is the device-wide count.  It is also
how Nsight Compute's own roofline (section ``SpeedOfLight_RooflineChart``) computes the achieved
FLOP/s: the rates × ``smsp__cycles_elapsed.avg.per_second``.  ``elapsed_cycles``
(``gpc__cycles_elapsed.max``) counts the slowest GPC's cycles, a little more than
``smsp__cycles_elapsed.avg`` (0.3 % on the CudaCode naive GEMM report), so it is only the
fallback.

Peaks: per precision, 2 × ``flop_peak_p_fma_per_cycle`` (the device's FMA thread instructions
per cycle, ``sm__sass_thread_inst_executed_op_{f,d,h}fma_pred_on.sum.peak_sustained``) × the SM
clock (``sm_frequency`` of the same launch; the median over the profile's launches), as Nsight
Compute draws its roof; without ``sm_frequency`` the database's boost clock.  A precision the
report gives no peak for takes the GPU database's (FP32 and FP64; the database has no FP16).
The DRAM bandwidth is the database's.

intensity = FLOP / bytes; achieved = FLOP / time; attainable = min(peak, bandwidth × intensity),
with the peak of the precision with the most FLOP (FP16 against FP32 when there is no FP16
peak).  Zero-denominator policy: a kernel with no DRAM bytes has no intensity (listed, not
drawn); one without a time has no achieved rate (listed, not drawn).
"""

from __future__ import annotations

import math
import statistics
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from advisor.models.bsp.profile import means_by_kernel
from advisor.profile import Profile

#: kernels placed on the roofline (the ones with the largest share of GPU time that have counts)
ROOFLINE_KERNELS = 20
#: bytes per DRAM transaction (sector) in nvprof and Nsight Compute
DRAM_SECTOR_BYTES = 32.0
PRECISIONS = ("sp", "dp", "hp")
OPS = ("add", "mul", "fma")
_NAMES = {"sp": "fp32", "dp": "fp64", "hp": "fp16"}
#: every canonical metric the roofline may read (the module docstring's table)
METRICS: tuple[str, ...] = (
    *(f"flop_count_{p}" for p in PRECISIONS),
    *(f"flop_count_{p}.sum" for p in PRECISIONS),
    *(f"flop_count_{p}_{op}" for p in PRECISIONS for op in OPS),
    *(f"flop_rate_{p}_{op}_per_cycle" for p in PRECISIONS for op in OPS),
    *(f"flop_peak_{p}_fma_per_cycle" for p in PRECISIONS),
    *(f"flop_{p}_efficiency" for p in PRECISIONS),
    "sm_frequency",
    "elapsed_cycles",
    "gpu_time_duration",
    "dram_bytes",
    "dram_read_bytes",
    "dram_write_bytes",
    "dram_read_transactions",
    "dram_write_transactions",
    "dram_throughput",
    "dram_read_throughput",
    "dram_write_throughput",
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
DATABASE_PEAKS = "the GPU database (FP32 = 2 × SMs × FP32 cores per SM × boost clock)"


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
    #: FP16 peak FLOP/s: only from the report's own counters (the database has none)
    peak_fp16_flops: float | None = None
    #: where the FLOP/s peaks come from (the report's counters, the database, or both)
    peak_source: str = DATABASE_PEAKS

    @property
    def drawable(self) -> bool:
        return any(p.drawn for p in self.points) and bool(
            self.peak_fp32_flops and self.peak_dram_bytes_per_s
        )


@dataclass(frozen=True)
class _Peak:
    """One precision's peak FLOP/s from the report: 2 × FMA per cycle × SM clock."""

    flops: float
    fma_per_cycle: float
    clock_hz: float
    clock_source: str


def build_roofline(
    profile: Profile,
    kernels: Sequence[Mapping[str, Any]],
    device: Mapping[str, Any],
    limit: int = ROOFLINE_KERNELS,
) -> Roofline:
    """The roofline of ``kernels`` (analysis JSON kernels, in the report's rank order)."""
    values = device.get("values") or {}
    database = {
        "sp": _positive(values.get("device.peak_fp32_flops")),
        "dp": _positive(values.get("device.peak_fp64_flops")),
        "hp": None,
    }
    bandwidth = _positive(values.get("device.peak_dram_bytes_per_s"))
    launches = kernel_launch_metrics(profile)
    measured = report_peaks(
        (m for ms in launches.values() for m in ms),
        _positive(values.get("device.boost_clock_hz")),
    )
    peaks = {p: measured[p].flops if p in measured else database[p] for p in PRECISIONS}
    points: list[RooflinePoint] = []
    with_counts = 0
    for rank, k in enumerate(kernels, start=1):
        per_launch = _time_per_launch_ns(k)
        duration_s = per_launch * 1e-9 if per_launch else None
        counts = _kernel_counts(launches.get(str(k["name"]), ()), duration_s, peaks)
        if counts is None:
            continue
        with_counts += 1
        if len(points) < limit:
            flop, dram = counts
            points.append(_point(rank, k, flop, dram, peaks, bandwidth))
    peak32, peak64, peak16 = peaks["sp"], peaks["dp"], peaks["hp"]
    notes = []
    if with_counts > len(points):
        notes.append(f"{with_counts - len(points)} more kernels with counts are not drawn")
    if points and (peak32 is None or bandwidth is None):
        notes.append("the device's peak FLOP/s or DRAM bandwidth is unknown; no roof drawn")
    if measured and points:
        notes.append(_peaks_note(measured, database))
    if peak16 is None and any(p.precision == "fp16" for p in points):
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
        peak_fp16_flops=peak16,
        peak_source=_peak_source(measured),
    )


#: the last :func:`metric_means`: a weak reference to the metrics frame, and its means
_MEANS: list[tuple[weakref.ref[pd.DataFrame], dict[str, list[tuple[str, float]]]]] = []


def metric_means(profile: Profile) -> dict[str, list[tuple[str, float]]]:
    """:func:`advisor.models.bsp.profile.means_by_kernel` of every kernel of the profile's
    metrics, computed once per metrics frame: the report's limiting units
    (:func:`kernel_metric_means`) and its BSP predictions
    (:func:`advisor.report.predictions.build_predictions`) read the same means (on a raw
    Nsight Compute page, some 370,000 rows sorted and grouped each time).  A kernel's means do
    not depend on which other kernels are asked for, so the predictions' subset is read from
    here.  The frame is held weakly: the means do not keep a profile alive."""
    frame = profile.metrics
    kept = _kept_means(frame)
    if kept is not None:
        return kept
    means = means_by_kernel(frame)
    _MEANS[:] = [(weakref.ref(frame), means)]
    return means


def _kept_means(frame: pd.DataFrame) -> dict[str, list[tuple[str, float]]] | None:
    """The means :func:`metric_means` keeps for ``frame``, or None."""
    return _MEANS[0][1] if _MEANS and _MEANS[0][0]() is frame else None


def kernel_metric_means(
    profile: Profile, kernels: Sequence[str] | None = None
) -> dict[str, dict[str, float]]:
    """Kernel name -> canonical metric -> mean value over the kernel's rows (NaN means left
    out; :func:`advisor.models.bsp.profile.means_by_kernel`, one kernel's rows at a time).

    ``kernels``: only those are wanted.  Unless every kernel's means are kept already
    (:func:`metric_means`), only theirs are computed, and not kept: ``report --json`` alone
    reads the limiting units of a few kernels and nothing else (a raw page's 36 kernels of
    some 460 metrics each: about 30 ms).  A kernel's means are the same either way."""
    every = _kept_means(profile.metrics)
    if every is None:
        every = (
            metric_means(profile)
            if kernels is None
            else means_by_kernel(profile.metrics, list(kernels))
        )
    out: dict[str, dict[str, float]] = {}
    for kernel, means in every.items():
        kept = {metric: mean for metric, mean in means if not math.isnan(mean)}
        if kept:
            out[kernel] = kept
    return out


def kernel_launch_metrics(profile: Profile) -> dict[str, list[dict[str, float]]]:
    """Kernel name -> one ``{canonical metric: value}`` per launch, for the names in
    :data:`METRICS` (the mean where a launch has a name twice, finite values only).  A kernel's
    rows that name no launch (nvprof's per-kernel summaries) make one launch of their own."""
    frame = profile.metrics
    if frame.empty:
        return {}
    once = _launch_metrics_once(frame)
    if once is not None:
        return once
    metric = frame["metric"].astype(str)
    rows = frame[frame["kernel"].notna() & frame["value"].notna() & metric.isin(METRICS)]
    if rows.empty:
        return {}
    values = pd.to_numeric(rows["value"], errors="coerce")
    launch = pd.to_numeric(rows["launch_id"], errors="coerce").fillna(-1.0)
    keys = [rows["kernel"].astype(str), launch, metric.loc[rows.index]]
    means = values.groupby(keys).mean()
    grouped: dict[str, dict[float, dict[str, float]]] = {}
    for (kernel, launch_id, name), value in means.items():
        if math.isfinite(value):
            grouped.setdefault(str(kernel), {}).setdefault(launch_id, {})[str(name)] = float(value)
    return {kernel: list(by_launch.values()) for kernel, by_launch in grouped.items()}


def _launch_metrics_once(frame: pd.DataFrame) -> dict[str, list[dict[str, float]]] | None:
    """:func:`kernel_launch_metrics` of metrics rows whose kernel and metric names are the
    schema's categoricals and where no (kernel, launch, metric) has two rows (a raw Nsight
    Compute page: one cell each), so each mean is the value itself: the same dicts in the same
    order as the grouped means (kernels and metrics sorted as strings, launches as numbers),
    built on the categories' codes; None otherwise (the means are then pandas')."""
    kernels, metrics = frame["kernel"], frame["metric"]
    if not (
        isinstance(kernels.dtype, pd.CategoricalDtype)
        and isinstance(metrics.dtype, pd.CategoricalDtype)
    ):
        return None
    number = frame["value"].to_numpy(dtype=float, na_value=np.nan)
    wanted = metrics.cat.categories.isin(METRICS)
    metric = metrics.cat.codes.to_numpy()
    kernel = kernels.cat.codes.to_numpy()
    rows = np.flatnonzero((kernel >= 0) & ~np.isnan(number) & (metric >= 0) & wanted[metric])
    if not len(rows):
        return {}
    launch = pd.to_numeric(frame["launch_id"], errors="coerce").to_numpy(dtype=float, na_value=-1.0)
    kernel_names, kernel_rank = _sorted_names(kernels.cat.categories)
    metric_names, metric_rank = _sorted_names(metrics.cat.categories)
    kernel, metric = kernel_rank[kernel[rows]], metric_rank[metric[rows]]
    launch, number = launch[rows], number[rows]
    order = np.lexsort((metric, launch, kernel))
    kernel, launch, metric, number = kernel[order], launch[order], metric[order], number[order]
    same_launch = (kernel[1:] == kernel[:-1]) & (launch[1:] == launch[:-1])
    if bool((same_launch & (metric[1:] == metric[:-1])).any()):
        return None
    finite = np.isfinite(number)
    kernel, launch, metric, number = kernel[finite], launch[finite], metric[finite], number[finite]
    starts = np.flatnonzero(
        np.concatenate(([True], (kernel[1:] != kernel[:-1]) | (launch[1:] != launch[:-1])))
    ).tolist()
    ends = [*starts[1:], len(number)]
    names = metric_names[metric].tolist()
    numbers = number.tolist()
    out: dict[str, list[dict[str, float]]] = {}
    for k, a, b in zip(kernel[starts].tolist(), starts, ends, strict=True):
        launch_values = dict(zip(names[a:b], numbers[a:b], strict=True))
        out.setdefault(kernel_names[k], []).append(launch_values)
    return out


def _sorted_names(categories: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """The categories as strings, distinct and sorted, and each category's place among them."""
    names, place = np.unique(
        np.array([str(c) for c in categories], dtype=object), return_inverse=True
    )
    return names, place.astype(np.int64)


def report_peaks(
    launches: Iterable[Mapping[str, float]], clock_hz: float | None = None
) -> dict[str, _Peak]:
    """Per precision with ``flop_peak_p_fma_per_cycle``: 2 × that × the SM clock, the median
    over the launches (``sm_frequency`` of each launch; ``clock_hz`` where none has one)."""
    with_clock: dict[str, list[tuple[float, float]]] = {p: [] for p in PRECISIONS}
    without: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    for m in launches:
        for p in PRECISIONS:
            per_cycle = _positive(m.get(f"flop_peak_{p}_fma_per_cycle"))
            if per_cycle is None:
                continue
            freq = _positive(m.get("sm_frequency"))
            if freq is not None:
                with_clock[p].append((per_cycle, freq))
            else:
                without[p].append(per_cycle)
    out: dict[str, _Peak] = {}
    for p in PRECISIONS:
        if with_clock[p]:
            per_cycle = statistics.median(c for c, _ in with_clock[p])
            freq = statistics.median(f for _, f in with_clock[p])
            flops = statistics.median(2.0 * c * f for c, f in with_clock[p])
            out[p] = _Peak(flops, per_cycle, freq, "sm_frequency")
        elif without[p] and clock_hz:
            per_cycle = statistics.median(without[p])
            out[p] = _Peak(2.0 * per_cycle * clock_hz, per_cycle, clock_hz, "database boost clock")
    return out


def _kernel_counts(
    launches: Iterable[Mapping[str, float]],
    duration_s: float | None,
    peaks: Mapping[str, float | None],
) -> tuple[tuple[float, dict[str, float], str], tuple[float, str]] | None:
    """The kernel's (FLOP, FLOP per precision, recipe) and (bytes, recipe): per launch, each
    averaged over the launches that have it; None without both."""
    flops: list[tuple[float, dict[str, float], str]] = []
    drams: list[tuple[float, str]] = []
    for m in launches:
        flop = _flop(m, duration_s, peaks)
        if flop is not None:
            flops.append(flop)
        dram = _dram_bytes(m, duration_s)
        if dram is not None:
            drams.append(dram)
    if not flops or not drams:
        return None
    n = float(len(flops))
    by_precision: dict[str, float] = {}
    for _, parts, _ in flops:
        for p, value in parts.items():
            by_precision[p] = by_precision.get(p, 0.0) + value / n
    total = sum(f for f, _, _ in flops) / n
    flop_source = _sources(s for _, _, s in flops)
    dram_bytes = sum(b for b, _ in drams) / len(drams)
    return (total, by_precision, flop_source), (dram_bytes, _sources(s for _, s in drams))


def _sources(recipes: Iterable[str]) -> str:
    """The distinct recipes in first-seen order (launches may differ in what they hold)."""
    return "; ".join(dict.fromkeys(recipes))


def _time_per_launch_ns(k: Mapping[str, Any]) -> float | None:
    launches = int(k.get("launches") or 0)
    duration = k.get("duration_ns")
    return float(duration) / launches if duration and launches > 0 else None


def _point(
    rank: int,
    k: Mapping[str, Any],
    flop: tuple[float, dict[str, float], str],
    dram: tuple[float, str],
    peaks: Mapping[str, float | None],
    bandwidth: float | None,
) -> RooflinePoint:
    total, by_precision, flop_source = flop
    dram_bytes, bytes_source = dram
    per_launch = _time_per_launch_ns(k)
    intensity = total / dram_bytes if dram_bytes > 0 else None
    achieved = total / (per_launch * 1e-9) if per_launch else None
    dominant = max(PRECISIONS, key=lambda p: (by_precision.get(p, 0.0), p == "sp"))
    peak = peaks.get(dominant) or peaks.get("sp")
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
        precision=_NAMES[dominant],
        flop_source=flop_source,
        bytes_source=bytes_source,
    )


#: per precision, the names :func:`_flop` reads: the count, its ``.sum`` spelling, the counts
#: per operation and the rates per operation (written once, not per launch)
_FLOP_NAMES = {
    p: (
        f"flop_count_{p}",
        f"flop_count_{p}.sum",
        [f"flop_count_{p}_{op}" for op in OPS],
        [f"flop_rate_{p}_{op}_per_cycle" for op in OPS],
    )
    for p in PRECISIONS
}


def _flop(
    m: Mapping[str, float],
    duration_s: float | None = None,
    peaks: Mapping[str, float | None] | None = None,
) -> tuple[float, dict[str, float], str] | None:
    """(FLOP, FLOP per precision, recipe) of one launch's metrics ``m``, or None when no
    precision has a count (the module docstring's families 1 to 4).  ``duration_s`` is the
    launch's time where ``m`` has no ``gpu_time_duration``; ``peaks`` the FLOP/s peaks per
    precision the efficiencies (family 4) multiply."""
    by_precision: dict[str, float] = {}
    terms: list[tuple[str, str]] = []  # (recipe, factor) per precision
    cycles = _cycles(m, duration_s)
    for p in PRECISIONS:
        count, count_sum, parts, rates = _FLOP_NAMES[p]
        if count in m:
            by_precision[p] = m[count]
            terms.append((count, ""))
        elif count_sum in m:
            by_precision[p] = m[count_sum]
            terms.append((count_sum, ""))
        elif all(name in m for name in parts):
            by_precision[p] = m[parts[0]] + m[parts[1]] + 2.0 * m[parts[2]]
            terms.append((f"({parts[0]} + {parts[1]} + 2 × {parts[2]})", ""))
        elif rates[2] in m and cycles is not None:
            present = [name for name in rates[:2] if name in m]
            per_cycle = sum(m[name] for name in present) + 2.0 * m[rates[2]]
            by_precision[p] = per_cycle * cycles[0]
            terms.append((f"({' + '.join([*present, f'2 × {rates[2]}'])})", cycles[1]))
    if not by_precision:
        duration = _duration(m, duration_s)
        for p in PRECISIONS:
            efficiency = m.get(f"flop_{p}_efficiency")
            peak = (peaks or {}).get(p)
            if efficiency is not None and peak and duration is not None:
                by_precision[p] = efficiency * peak * duration[0]
                terms.append((f"flop_{p}_efficiency × peak {_NAMES[p].upper()}", duration[1]))
    if not by_precision:
        return None
    return sum(by_precision.values()), by_precision, _recipe(terms)


def _recipe(terms: Sequence[tuple[str, str]]) -> str:
    """The FLOP recipe: the precisions' terms summed, a factor they share written once."""
    factors = {factor for _, factor in terms}
    if len(factors) == 1 and "" not in factors:
        (factor,) = factors
        if len(terms) == 1:
            return f"{terms[0][0]} × {factor}"
        body = " + ".join(t[1:-1] if t.startswith("(") and t.endswith(")") else t for t, _ in terms)
        return f"({body}) × {factor}"
    return " + ".join(f"{t} × {f}" if f else t for t, f in terms)


def _cycles(m: Mapping[str, float], duration_s: float | None) -> tuple[float, str] | None:
    """The launch's elapsed SM cycles (the divisor of ``.sum.per_cycle_elapsed``) and how."""
    freq = m.get("sm_frequency")
    if freq is not None and "gpu_time_duration" in m:
        return freq * m["gpu_time_duration"] * 1e-9, "sm_frequency × gpu_time_duration"
    if "elapsed_cycles" in m:
        return m["elapsed_cycles"], "elapsed_cycles"
    if freq is not None and duration_s:
        return freq * duration_s, "sm_frequency × time"
    return None


def _duration(m: Mapping[str, float], duration_s: float | None) -> tuple[float, str] | None:
    """The launch's time in seconds and its name: its own duration, else the kernel's."""
    if "gpu_time_duration" in m:
        return m["gpu_time_duration"] * 1e-9, "gpu_time_duration"
    if duration_s:
        return duration_s, "time"
    return None


def _dram_bytes(
    m: Mapping[str, float], duration_s: float | None = None
) -> tuple[float, str] | None:
    if "dram_bytes" in m:
        return m["dram_bytes"], "dram_bytes"
    if "dram_read_bytes" in m and "dram_write_bytes" in m:
        return m["dram_read_bytes"] + m["dram_write_bytes"], "dram_read_bytes + dram_write_bytes"
    if "dram_read_transactions" in m and "dram_write_transactions" in m:
        total = DRAM_SECTOR_BYTES * (m["dram_read_transactions"] + m["dram_write_transactions"])
        return total, "32 × (dram_read_transactions + dram_write_transactions)"
    duration = _duration(m, duration_s)
    if duration is None:
        return None
    seconds, name = duration
    if "dram_throughput" in m:
        return m["dram_throughput"] * seconds, f"dram_throughput × {name}"
    if "dram_read_throughput" in m and "dram_write_throughput" in m:
        total = (m["dram_read_throughput"] + m["dram_write_throughput"]) * seconds
        return total, f"(dram_read_throughput + dram_write_throughput) × {name}"
    return None


def _peak_source(measured: Mapping[str, _Peak]) -> str:
    if not measured:
        return DATABASE_PEAKS
    names = ", ".join(_NAMES[p].upper() for p in PRECISIONS if p in measured)
    own = f"the report's counters for {names} (2 × FMA per cycle × SM clock)"
    rest = [p for p in ("sp", "dp") if p not in measured]
    if not rest:
        return own
    return f"{own}; {', '.join(_NAMES[p].upper() for p in rest)} from {DATABASE_PEAKS}"


def _peaks_note(measured: Mapping[str, _Peak], database: Mapping[str, float | None]) -> str:
    parts = []
    for p in PRECISIONS:
        if p not in measured:
            continue
        peak = measured[p]
        text = (
            f"{_NAMES[p].upper()} {_flops(peak.flops)} = 2 × flop_peak_{p}_fma_per_cycle "
            f"{peak.fma_per_cycle:.6g} × {peak.clock_hz / 1e9:.4g} GHz ({peak.clock_source})"
        )
        if database.get(p):
            text += f", GPU database {_flops(database[p])}"
        parts.append(text)
    return "peak FLOP/s from the report's counters: " + "; ".join(parts)


def _flops(value: float | None) -> str:
    return f"{(value or 0.0) / 1e12:.4g} TFLOP/s"


def _positive(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 and number != float("inf") else None
