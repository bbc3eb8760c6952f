"""Potential speedups (seed 002, section V; MODELS.md §1 Decisions 3-4), the bound of a kernel,
its overall potential speedup, and the application figure.

* Inverse form (HOSTSYNC, DIVERGENCE, LOADBALANC_*, THROUGHPUT/OCCUPANCY): SP = 1 / criterion,
  the same in the paper's and the Amdahl reading.
* Level form (L1_GRANULARITY, L2_GRANULARITY, SHMEM_EFFICIENCY): the paper prints
  SP = (1 / criterion) * p, with p = L1% / L2% / ShMem%; **Decision 4** makes the default the
  Amdahl form SP = 1 / ((1 - p) + p * criterion), only the time at that level shrinking.
* DEVICESYNC: the paper's (1 - (TotActiveWarps / |Warps|) / CLK_cycles) * StallSync is a fraction
  x of the kernel's time; **Decision 3**: SP = 1 / (1 - x); the literal form reports x.
* p = sum(transactions at the level * latency of the level) / total cycles of the kernel, with the
  latencies of the device characterization.  The transactions are issued by all the kernel's
  warps and each one makes its warp wait the level's latency, so "total cycles" is counted the
  same way: warp-cycles, the resident warps summed over every SM cycle (``active_warps``, ncu
  ``sm__warps_active.sum``; or achieved warps per SM x active SM cycles).  p is then the share of
  the warps' time spent waiting on that level.  Overlap between the transactions of one warp is
  ignored, so p is an upper bound; it is clamped to 1.
* Overall: PotentialSpeedup = 1 / MEMTHR if memory-bound, 1 / ARITHTHR if compute-bound, with
  MEMTHR / ARITHTHR the achieved fraction of peak weighted by F_DRAMThr / F_ARITHThr.  The memory
  side uses the busiest memory unit when the profiler reports it (Nsight Compute's "Memory
  Throughput", which covers L1, L2 and DRAM), else DRAM.  Bound: whichever side is higher;
  **latency-bound** when both are below :data:`LATENCY_BOUND_BELOW_FRAC`.
* Application: Amdahl over the kernels' shares of GPU time; never a product of speedups.

Speedups are computed from a kernel's aggregated (duration-weighted) values, so every figure in
the report can be recomputed by hand from the values printed beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from advisor.criteria.engine.common import Context, aux_mean, clamp01
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.speedup_forms import AMDAHL as AMDAHL  # the names, re-exported
from advisor.speedup_forms import PAPER as PAPER
from advisor.speedup_forms import SPEEDUP_FORMS as SPEEDUP_FORMS

#: Below this fraction of peak on both memory and compute a kernel is latency-bound: the threshold
#: of Nsight Compute's SOL rule ("below 60 % of peak typically indicate latency issues").
LATENCY_BOUND_BELOW_FRAC = 0.6


# --------------------------------------------------------------------------- the forms


def level_speedup_amdahl(criterion: float, p: float) -> float | None:
    """Decision 4: SP = 1 / ((1 - p) + p * criterion)."""
    remaining = (1.0 - p) + p * criterion
    return 1.0 / remaining if remaining > 0 else None


def level_speedup_paper(criterion: float, p: float) -> float | None:
    """Seed 002, section V, literally: SP = (1 / criterion) * p (None for a criterion of 0)."""
    return p / criterion if criterion > 0 else None


def devicesync_fraction(inactivity: float, stall_sync: float) -> float:
    """x = (1 - (TotActiveWarps / |Warps|) / CLK_cycles) * StallSync (seed 002, section V)."""
    return clamp01(inactivity) * clamp01(stall_sync)


def devicesync_speedup_amdahl(x: float) -> float | None:
    """Decision 3: SP = 1 / (1 - x)."""
    return 1.0 / (1.0 - x) if x < 1 else None


# --------------------------------------------------------------------------- p = L1% / L2% / ShMem%


def _warp_cycles_recipes() -> list[tuple[str, tuple[str, ...], Callable[[Values], float]]]:
    """Total warp-cycles of the kernel: resident warps summed over every SM cycle."""
    return [
        ("active warp-cycles (active_warps)", ("active_warps",), lambda v: v["active_warps"]),
        (
            "achieved warps per SM x active SM cycles",
            ("achieved_active_warps_per_sm", "active_cycles"),
            lambda v: v["achieved_active_warps_per_sm"] * v["active_cycles"],
        ),
        (
            "achieved occupancy x max warps x active SM cycles",
            ("achieved_occupancy", "device.max_warps_per_sm", "active_cycles"),
            lambda v: v["achieved_occupancy"] * v["device.max_warps_per_sm"] * v["active_cycles"],
        ),
        (
            "achieved occupancy x max warps x duration x SM clock x SMs",
            (
                "achieved_occupancy",
                "device.max_warps_per_sm",
                "launch.duration_ns",
                "device.boost_clock_hz",
                "device.sm_count",
            ),
            lambda v: (
                v["achieved_occupancy"]
                * v["device.max_warps_per_sm"]
                * v["launch.duration_ns"]
                * 1e-9
                * v["device.boost_clock_hz"]
                * v["device.sm_count"]
            ),
        ),
    ]


#: memory level -> (latency key, alternatives of transaction counters summed)
LEVEL_TRANSACTIONS: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    "l1": ("l1", (("gld_transactions", "gst_transactions"),)),
    "l2": (
        "l2",
        (
            ("l2_tex_read_transactions", "l2_tex_write_transactions"),
            ("l2_read_transactions", "l2_write_transactions"),
        ),
    ),
    "shared": ("shared", (("shared_load_transactions", "shared_store_transactions"),)),
}


def level_share_frac(
    transactions: float, latency_cycles: float, warp_cycles: float
) -> float | None:
    """p = transactions * latency / total warp-cycles, clamped to [0, 1] (None for 0 cycles)."""
    if not warp_cycles > 0:
        return None
    return clamp01(transactions * latency_cycles / warp_cycles)


#: Decision P1 (docs/criteria.md): p measured as the level's own utilization, first.  A level
#: running at a fraction u of its peak spends u of the kernel's time moving data; removing the
#: unused bytes (criterion c) shrinks that part to u * c, so SP = 1 / ((1 - u) + u * c) -- the
#: Amdahl form with p = u.  A kernel that waits on memory without loading the level (latency
#: bound, tiny grids) is thus not promised what a bandwidth-bound one gets; the paper's
#: latency-weighted count below stays the fallback.  level -> recipes of the measured p
MEASURED_LEVEL_SHARE: dict[str, tuple[Recipe, ...]] = {
    "l1": (
        Recipe(
            "L1/TEX throughput % of peak (measured utilization)",
            ("l1tex_throughput_pct_of_peak",),
            lambda v: clamp01(v["l1tex_throughput_pct_of_peak"]),
            tools=("ncu",),
        ),
        Recipe(
            "texture/L1 cache utilization level / 10 (nvprof, measured)",
            ("tex_utilization",),
            lambda v: clamp01(v["tex_utilization"] / 10.0),
            tools=("nvprof",),
        ),
    ),
    "l2": (
        Recipe(
            "L2 throughput % of peak (measured utilization)",
            ("l2_throughput_pct_of_peak",),
            lambda v: clamp01(v["l2_throughput_pct_of_peak"]),
            tools=("ncu",),
        ),
        Recipe(
            "L2 sectors from L1/TEX % of peak (measured utilization, memory chart)",
            ("l2_tex_sectors_pct_of_peak",),
            lambda v: clamp01(v["l2_tex_sectors_pct_of_peak"]),
            tools=("ncu",),
        ),
        Recipe(
            "L2 utilization level / 10 (nvprof, measured)",
            ("l2_utilization",),
            lambda v: clamp01(v["l2_utilization"] / 10.0),
            tools=("nvprof",),
        ),
    ),
    "shared": (
        Recipe(
            "shared wavefronts / active SM cycles (one wavefront per SM cycle, measured)",
            ("shared_load_transactions", "shared_store_transactions", "active_cycles"),
            lambda v: (
                clamp01(
                    (v["shared_load_transactions"] + v["shared_store_transactions"])
                    / v["active_cycles"]
                )
                if v["active_cycles"] > 0
                else None
            ),
            tools=("ncu",),
        ),
        Recipe(
            "shared memory utilization level / 10 (nvprof, measured)",
            ("shared_utilization",),
            lambda v: clamp01(v["shared_utilization"] / 10.0),
            tools=("nvprof",),
        ),
    ),
}


def level_recipes(level: str, form: str = "measured") -> list[Recipe]:
    """Recipes for p at ``level`` ("l1", "l2", "shared"): the measured utilization first
    (Decision P1), then the paper's transactions x latency / warp-cycles; ``form="latency"``
    gives the paper's recipes only."""
    latency_key, alternatives = LEVEL_TRANSACTIONS[level]
    lat = f"device.latency_{latency_key}_cycles"
    out: list[Recipe] = list(MEASURED_LEVEL_SHARE[level]) if form == "measured" else []
    for counters in alternatives:
        for label, needs, cycles in _warp_cycles_recipes():

            def formula(
                v: Values,
                counters: tuple[str, ...] = counters,
                cycles: Callable[[Values], float] = cycles,
            ) -> float | None:
                return level_share_frac(sum(v[c] for c in counters), v[lat], cycles(v))

            out.append(
                Recipe(
                    label=f"({' + '.join(counters)}) x {latency_key} latency / {label}",
                    needs=(*counters, lat, *needs),
                    formula=formula,
                )
            )
    return out


def level_share(
    kernel: KernelData, level: str, ctx: Context
) -> tuple[float, dict[str, float]] | None:
    """The kernel's p at ``level`` and its inputs, or None when it cannot be computed."""
    scored = aux_mean(kernel, level_recipes(level), ctx)
    if scored is None:
        return None
    return scored.raw, {**scored.inputs, f"p_{level}_frac": scored.raw}


# --------------------------------------------------------------------------- bound and overall


def _duration_s(v: Values) -> float:
    return (v.get("launch.duration_ns") or v["gpu_time_duration"]) * 1e-9


def dram_fraction_recipes() -> list[Recipe]:
    """Achieved DRAM throughput over the device's peak (before F_DRAMThr)."""
    peak = "device.peak_dram_bytes_per_s"
    return [
        Recipe(
            "Nsight Compute DRAM throughput % of peak",
            ("dram_throughput_pct_of_peak",),
            lambda v: v["dram_throughput_pct_of_peak"],
            tools=("ncu",),
        ),
        Recipe(
            "(DRAM bytes read + written) / duration / peak bandwidth",
            ("dram_read_bytes", "dram_write_bytes", "gpu_time_duration", peak),
            lambda v: (v["dram_read_bytes"] + v["dram_write_bytes"]) / _duration_s(v) / v[peak],
            tools=("ncu",),
        ),
        Recipe(
            "(DRAM read + write throughput) / peak bandwidth",
            ("dram_read_throughput", "dram_write_throughput", peak),
            lambda v: (v["dram_read_throughput"] + v["dram_write_throughput"]) / v[peak],
            tools=("nvprof",),
        ),
    ]


#: the compute recipe that is a unit's busy share (Speed Of Light), not a FLOP rate: like the
#: Memory SOL, it is not weighted by F_ARITHThr, which is measured on FLOP rates
SM_SOL_LABEL = "Nsight Compute SM throughput % of peak (Compute SOL)"


def compute_fraction_recipes() -> list[Recipe]:
    """Achieved arithmetic throughput over peak (before F_ARITHThr; the Speed Of Light SM
    throughput, :data:`SM_SOL_LABEL`, is never weighted)."""
    return [
        Recipe(
            SM_SOL_LABEL,
            ("compute_throughput_pct_of_peak",),
            lambda v: v["compute_throughput_pct_of_peak"],
            tools=("ncu",),
        ),
        Recipe(
            "max(FLOP efficiency single, double)",
            ("flop_sp_efficiency", "flop_dp_efficiency"),
            lambda v: max(v["flop_sp_efficiency"], v["flop_dp_efficiency"]),
            tools=("nvprof",),
        ),
        Recipe(
            "FLOP efficiency single",
            ("flop_sp_efficiency",),
            lambda v: v["flop_sp_efficiency"],
            tools=("nvprof",),
        ),
        Recipe(
            "single-precision FLOPs / duration / peak FP32",
            ("flop_count_sp", "gpu_time_duration", "device.peak_fp32_flops"),
            lambda v: v["flop_count_sp"] / _duration_s(v) / v["device.peak_fp32_flops"],
        ),
    ]


def _fp_rate_frac(v: Values, precision: str) -> float | None:
    """Achieved over peak FLOP rate of one precision from the Nsight Compute roofline counters:
    (FMA + (add + mul) / 2) thread instructions per cycle over the FMA peak per cycle (an add or
    a multiply is half the FLOPs of an FMA and issues on the same pipe)."""
    peak = v[f"flop_peak_{precision}_fma_per_cycle"]
    if not peak > 0:
        return None
    rate = v[f"flop_rate_{precision}_fma_per_cycle"] + 0.5 * (
        v[f"flop_rate_{precision}_add_per_cycle"] + v[f"flop_rate_{precision}_mul_per_cycle"]
    )
    return rate / peak


def _fp_names(precision: str) -> tuple[str, ...]:
    ops = (f"flop_rate_{precision}_{op}_per_cycle" for op in ("fma", "add", "mul"))
    return (*ops, f"flop_peak_{precision}_fma_per_cycle")


def arithmetic_fraction_recipes() -> list[Recipe]:
    """ARITHTHR of seed 002 measured on the floating-point work alone: achieved FLOP rate over
    the device's peak (Decision P2).  Unlike the SM throughput of Speed Of Light, it cannot be
    beaten by removing instructions: only doing the same FLOPs faster raises it."""

    def both(v: Values) -> float | None:
        known = [x for x in (_fp_rate_frac(v, "sp"), _fp_rate_frac(v, "dp")) if x is not None]
        return max(known) if known else None

    return [
        Recipe(
            "FP32/FP64 FLOP rate / peak (Nsight Compute roofline counters)",
            (*_fp_names("sp"), *_fp_names("dp")),
            both,
            tools=("ncu",),
        ),
        Recipe(
            "FP32 FLOP rate / peak (Nsight Compute roofline counters)",
            _fp_names("sp"),
            lambda v: _fp_rate_frac(v, "sp"),
            tools=("ncu",),
        ),
        *compute_fraction_recipes()[1:],  # nvprof FLOP efficiencies, FLOP counts / peak
    ]


def potential_bound(
    dram: float | None, arithmetic: float | None, memory: float | None, compute: float | None
) -> tuple[float | None, str]:
    """The fraction of peak the overall potential speedup divides by, and which it is.

    Decision P2: the larger of MEMTHR (DRAM) and ARITHTHR measured on FLOPs -- a bound a change
    of the kernel can beat only by moving fewer DRAM bytes or doing fewer FLOPs; with one of the
    two unknown, the other alone (a looser bound, named as such in the method).  The busiest unit
    of Memory Speed Of Light and the SM throughput are not such bounds (a coalescing fix removes
    the L1 wavefronts that saturate one; unrolling the instructions that fill the other), so they
    are used only when the profile gives neither DRAM nor FLOP figures, and said so.
    """
    if dram is not None and arithmetic is not None:
        return max(dram, arithmetic), "roofline: max(DRAM, FLOP) fraction of peak"
    # one side only (a details page has no FLOP counts): a looser bound, and said so -- the same
    # kernel read from its raw page can show a far smaller headroom
    if dram is not None:
        return dram, "roofline: DRAM fraction of peak (no FLOP figures)"
    if arithmetic is not None:
        return arithmetic, "roofline: FLOP fraction of peak (no DRAM figures)"
    fallback = [x for x in (memory, compute) if x is not None]
    if fallback:
        return max(fallback), "busiest unit (Speed Of Light): no DRAM or FLOP figures"
    return None, ""


def memory_fraction_recipes() -> list[Recipe]:
    """The busiest memory unit (ncu "Memory Throughput"), else DRAM."""
    return [
        Recipe(
            "Nsight Compute Memory Throughput % of peak (Memory SOL)",
            ("memory_throughput_pct_of_peak",),
            lambda v: v["memory_throughput_pct_of_peak"],
            tools=("ncu",),
        ),
        *dram_fraction_recipes(),
    ]


def weighted_by_f(raw: float, ctx: Context, function: str) -> float:
    """MEMTHR / ARITHTHR = achieved / (peak * F): raw / F(raw), clamped to [0, 1]."""
    return clamp01(raw / ctx.device.F(function, raw))


def classify_bound(memory: float | None, compute: float | None) -> str | None:
    """ "memory", "compute" or "latency" (both below the threshold); None when unknown."""
    known = [x for x in (memory, compute) if x is not None]
    if not known:
        return None
    if memory is not None and compute is not None:
        if max(memory, compute) < LATENCY_BOUND_BELOW_FRAC:
            return "latency"
        return "memory" if memory >= compute else "compute"
    only = known[0]
    if only < LATENCY_BOUND_BELOW_FRAC:
        return None  # the other side might be the higher one
    return "memory" if memory is not None else "compute"


#: the shortest a kernel launch runs on a GPU: no estimate may promise a launch shorter than
#: this (Decision L1, docs/criteria.md).  The shortest launch among the 177 readable real
#: profiles under ../shared is 416 ns (an nvprof GPU trace on a GTX 1080 Ti); Nsight Compute
#: measures no launch under about 1.7 µs there.  400 ns keeps every measured gain within it.
MIN_LAUNCH_NS = 400.0


def launch_cap(launch_ns: float | None) -> float | None:
    """The largest speedup a kernel whose launches take ``launch_ns`` each (mean) can have:
    ``launch_ns / MIN_LAUNCH_NS`` (at least 1); None when the launch time is unknown."""
    if launch_ns is None or not launch_ns > 0:
        return None
    return max(1.0, launch_ns / MIN_LAUNCH_NS)


def capped_at_launch(speedup: float | None, launch_ns: float | None) -> float | None:
    """``speedup`` no larger than :func:`launch_cap` (a physical floor on the launch's time)."""
    cap = launch_cap(launch_ns)
    return speedup if speedup is None or cap is None else min(speedup, cap)


def overall_speedup(bound_frac: float | None, launch_ns: float | None = None) -> float | None:
    """A kernel's overall potential speedup: 1 / the fraction of peak it already uses
    (:func:`potential_bound`; seed 002's 1 / MEMTHR or 1 / ARITHTHR), no larger than the launch
    floor allows (:func:`launch_cap`, Decision L1)."""
    if bound_frac is None or not bound_frac > 0:
        return None
    return capped_at_launch(1.0 / bound_frac, launch_ns)


def application_potential(
    hostsync: float | None, kernels: float | None
) -> tuple[float | None, str]:
    """Decision A1: the application's potential speedup and what it is made of.

    The span from the first kernel's start to the last kernel's end is idle time plus kernel
    time; HOSTSYNC is the kernel share of it.  Removing the idle time and running every kernel at
    its overall potential leaves (kernel time) / S_kernels, so the span shrinks by
    (1 / HOSTSYNC) x S_kernels -- Amdahl over the span, never a product of per-criterion
    speedups.  Either part alone when the other is unknown; None (n/a) when neither is."""
    idle = 1.0 / hostsync if hostsync is not None and hostsync > 0 else None
    if idle is not None and kernels is not None:
        return idle * kernels, (
            "1 / HOSTSYNC (idle GPU time removed) x Amdahl over the kernels' shares of GPU time, "
            "each kernel at its overall potential speedup (else its largest criterion's)"
        )
    if kernels is not None:
        return kernels, (
            "Amdahl over the kernels' shares of GPU time, each kernel at its overall potential "
            "speedup, else its largest criterion's (no timeline: HOSTSYNC not included)"
        )
    if idle is not None:
        return idle, "1 / HOSTSYNC (no kernel has a potential speedup)"
    return None, "not computable: no timeline for HOSTSYNC and no kernel estimate"


def amdahl_combine(parts: Sequence[tuple[float, float | None]]) -> float | None:
    """Application speedup = sum(T_k) / sum(T_k / S_k); kernels without S_k count as 1x."""
    total = sum(t for t, _ in parts)
    if not total > 0:
        return None
    after = sum(t / s if s is not None and s > 0 else t for t, s in parts)
    return total / after if after > 0 else None


def application_gain(share: float | None, speedup: float | None) -> float | None:
    """A kernel-level gain seen on the whole GPU time: 1 / ((1 - share) + share / SP)."""
    if share is None or speedup is None or speedup <= 0:
        return None
    return 1.0 / ((1.0 - share) + share / speedup)
