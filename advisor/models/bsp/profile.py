"""Per-thread BSP counts taken from a profile instead of the source (seed 000 §IV; MODELS.md §3).

The paper counts Comp, ld0/st0 and ld1/st1 from the source and takes the L1/L2 hit rates from a
profile.  Here all of them come from one profiled kernel: launch-level counts divided by the
number of threads t = grid size × block size.  Every quantity is an average over the kernel's
launches (per-launch rows) or the per-invocation average of a summary (nvprof ``Avg``).

Canonical metrics used (``advisor/data/metric_map.csv`` names; first one present wins):

========  ==========================================================================
t         launches ``grid_x·grid_y·grid_z × block_x·block_y·block_z``; else metrics
          ``grid_size × block_size`` (Nsight Compute ``launch__grid_size``/``__block_size``)
ld1       Σ ``gld_inst_{8,16,32,64,128}bit`` (thread-level, nvprof Kepler–Pascal) / t;
          else 32 × ``inst_executed_global_loads`` (warp-level) / t
st1       Σ ``gst_inst_*bit`` / t; else 32 × ``inst_executed_global_stores`` / t
ld0, st0  32 × ``inst_executed_shared_loads`` / t, 32 × ``inst_executed_shared_stores`` / t
Comp      (``thread_inst_executed`` − memory instructions) / t at one cycle per instruction
          (the paper counts one cycle per FMA), memory instructions = ``inst_compute_ld_st``
          when present, else (ld0 + st0 + ld1 + st1) · t; without ``thread_inst_executed``,
          32 × ``inst_executed`` stands in for it
L1 rate   ``l1_cache_global_hit_rate`` (Fermi/Kepler), else ``global_hit_rate``, else
          ``tex_cache_hit_rate`` (Maxwell+ / ncu ``l1tex__t_sector_hit_rate``)
L2 rate   ``l2_l1_read_hit_rate`` (Fermi/Kepler), else ``l2_tex_read_hit_rate``, else
          ``l2_tex_hit_rate`` (ncu ``lts__t_sector_hit_rate``)
DRAM B    (``dram_read_bytes`` + ``dram_write_bytes``) / t, else 32 B ×
          (``dram_read_transactions`` + ``dram_write_transactions``) / t (both of a pair
          needed); else none (the roofline form then counts the missed accesses × word)
word      mean width (bits / 8) of the ``gld_inst_*bit`` and ``gst_inst_*bit`` counts, else 4 B
========  ==========================================================================

Warp-level counts × 32 assume full warps (a divergent kernel is over-counted; λ absorbs it, as it
absorbs divergence in the paper).  Required: t, ld1, st1 and Comp's instruction count; missing
ones raise :class:`~advisor.errors.NoKernelData` naming them and the profiler options that
collect them.  Shared counts and hit rates are optional: when absent they are taken as 0 and the
result says so in ``assumed``.  Hit rates of L1 and L2 are fractions of different request streams
in the profilers; if they add up to more than 1, L2 is reduced to 1 − L1 (noted in ``assumed``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor.errors import NoKernelData, UsageError
from advisor.models.bsp import ThreadCounts
from advisor.profile import Profile

#: lanes per warp: warp-level instruction counts are multiplied by it (full warps assumed)
WARP_SIZE = 32
GLD_THREAD_METRICS = tuple(f"gld_inst_{bits}bit" for bits in (8, 16, 32, 64, 128))
GST_THREAD_METRICS = tuple(f"gst_inst_{bits}bit" for bits in (8, 16, 32, 64, 128))
L1_RATE_METRICS = ("l1_cache_global_hit_rate", "global_hit_rate", "tex_cache_hit_rate")
L2_RATE_METRICS = ("l2_l1_read_hit_rate", "l2_tex_read_hit_rate", "l2_tex_hit_rate")
#: measured DRAM traffic, in the order tried: bytes, then 32-byte transactions (sectors)
DRAM_BYTE_METRICS = ("dram_read_bytes", "dram_write_bytes")
DRAM_SECTOR_METRICS = ("dram_read_transactions", "dram_write_transactions")
DRAM_SECTOR_BYTES = 32
#: every canonical metric :func:`counts_from_profile` may read (the module docstring's table)
METRICS: tuple[str, ...] = (
    "grid_size",
    "block_size",
    "inst_executed_global_loads",
    "inst_executed_global_stores",
    "inst_executed_shared_loads",
    "inst_executed_shared_stores",
    "thread_inst_executed",
    "inst_executed",
    "inst_compute_ld_st",
    *GLD_THREAD_METRICS,
    *GST_THREAD_METRICS,
    *L1_RATE_METRICS,
    *L2_RATE_METRICS,
    *DRAM_BYTE_METRICS,
    *DRAM_SECTOR_METRICS,
)
COLLECT_HINT = (
    "collect them with nvprof --metrics inst_executed_global_loads,inst_executed_global_stores,"
    "inst_executed_shared_loads,inst_executed_shared_stores,thread_inst_executed,"
    "global_hit_rate,l2_tex_read_hit_rate --print-gpu-trace (Kepler: --metrics all) or ncu "
    "--metrics smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,"
    "smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,"
    "smsp__thread_inst_executed.sum,launch__grid_size,launch__block_size"
)


@dataclass(frozen=True)
class ProfileCounts:
    """Per-thread counts of one profiled kernel and where each came from."""

    kernel: str
    device: str | None
    launches: int
    measured_s: float | None
    counts: ThreadCounts
    sources: tuple[tuple[str, str], ...]
    assumed: tuple[str, ...]


def pick_kernel(profile: Profile, wanted: str | None) -> str:
    """The kernel to model: the only one, or the one whose name contains ``wanted``."""
    names = profile.kernel_names()
    if not names:
        raise UsageError("the profile names no kernel; give a profile with kernel metrics")
    if wanted is None:
        if len(names) == 1:
            return names[0]
        raise UsageError(
            f"the profile holds {len(names)} kernels; choose one with --kernel "
            f"({'; '.join(names[:8])}{' ...' if len(names) > 8 else ''})"
        )
    exact = [n for n in names if n == wanted]
    matches = exact or [n for n in names if wanted in n]
    if len(matches) != 1:
        what = "no kernel" if not matches else f"{len(matches)} kernels"
        raise UsageError(f"--kernel {wanted!r} matches {what}; kernels: {'; '.join(names[:8])}")
    return matches[0]


def _metric_means(profile: Profile, kernel: str) -> dict[str, float]:
    """Mean value per canonical metric over the kernel's rows (launches or summaries)."""
    frame = profile.metrics
    rows = frame[frame["kernel"].eq(kernel).fillna(False) & frame["value"].notna()]
    if rows.empty:
        return {}
    means = pd.to_numeric(rows["value"], errors="coerce").groupby(rows["metric"]).mean()
    return {str(k): float(v) for k, v in means.items() if math.isfinite(float(v))}


def metric_means_by_kernel(profile: Profile, kernels: list[str]) -> dict[str, dict[str, float]]:
    """:func:`_metric_means` of each of ``kernels`` (:func:`means_by_kernel`: a raw Nsight
    Compute page holds some 370,000 rows, and filtering all of them per kernel took most of the
    report's BSP predictions)."""
    wanted = list(dict.fromkeys(kernels))
    out: dict[str, dict[str, float]] = {k: {} for k in wanted}
    for kernel, means in means_by_kernel(profile.metrics, wanted).items():
        out[kernel] = {metric: mean for metric, mean in means if math.isfinite(mean)}
    return out


#: the most rows :func:`means_by_kernel` groups at once (whole kernels: a larger kernel alone)
_ROWS_AT_ONCE = 1 << 16


def means_by_kernel(
    frame: pd.DataFrame, kernels: list[str] | None = None
) -> dict[str, list[tuple[str, float]]]:
    """Per kernel (those of ``kernels``, else every kernel in the order pandas sorts them), the
    mean value of each metric over its rows with a value, in metric order: what
    ``value.groupby([kernel, metric]).mean()`` gives (or the same grouping of one kernel's
    rows), float for float.  The wanted kernels are taken in runs of up to
    :data:`_ROWS_AT_ONCE` rows, and each run's rows, in their order, are grouped once by the
    pair (the kernel's place in the list, the metric's code, which sorts as the metric names
    do); pandas adds each group's values in row order either way.  Grouping every row by
    kernel and metric at once held full-length work arrays (the report's peak memory on a raw
    page), and grouping one kernel at a time cost a pandas grouping per kernel."""
    if frame.empty:
        return {}
    kernel, kernel_names = _sorted_codes(frame["kernel"])
    metric, metric_names = _sorted_codes(frame["metric"])
    column = frame["value"]
    if column.dtype == np.float64:  # the schema's: read in place, not copied
        value = column.to_numpy()
    else:
        value = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    where = {str(name): k for k, name in enumerate(kernel_names)}
    names = [n for n in dict.fromkeys(where if kernels is None else kernels) if n in where]
    if not names:
        return {}
    # the wanted kernels' rows grouped by (the kernel's place in ``names``, metric), a run of
    # kernels of up to _ROWS_AT_ONCE rows at a time: each group's values are added in row
    # order, as a grouping of one kernel's rows adds them, without work arrays of every row
    rank = np.full(len(kernel_names) + 1, -1, dtype=np.int32)  # the last: a missing kernel
    rank[[where[n] for n in names]] = np.arange(len(names), dtype=np.int32)
    place = rank[kernel]
    usable = (place >= 0) & (metric >= 0) & ~np.isnan(value)
    rows_of = np.bincount(place[usable], minlength=len(names)).tolist()
    width = len(metric_names)
    metric_text = [str(m) for m in metric_names]
    out: dict[str, list[tuple[str, float]]] = {}
    first = 0
    while first < len(names):
        last, rows = first + 1, rows_of[first]
        while last < len(names) and rows + rows_of[last] <= _ROWS_AT_ONCE:
            rows += rows_of[last]
            last += 1
        at = np.flatnonzero(usable & (place >= first) & (place < last))
        key = place[at].astype(np.int64) * width + metric[at]
        means = pd.Series(value[at]).groupby(key).mean()
        del at, key
        groups = means.index.to_numpy()
        which, codes, numbers = groups // width, (groups % width).tolist(), means.tolist()
        bounds = np.searchsorted(which, np.arange(first, last + 1)).tolist()
        for j in range(first, last):
            lo, hi = bounds[j - first], bounds[j - first + 1]
            if lo < hi:
                out[names[j]] = [
                    (metric_text[c], numbers[i]) for i, c in enumerate(codes[lo:hi], lo)
                ]
        first = last
    return out


def _sorted_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes (-1 where missing) that sort as pandas' groupby sorts the column's values: a
    categorical's own codes (its categories' order), else those of the sorted distinct values."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories
    codes, names = pd.factorize(column, sort=True, use_na_sentinel=True)
    return codes, pd.Index(names)


#: launch configuration columns (t = grid size × block size)
_DIMS = ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]


@dataclass(frozen=True)
class KernelLaunches:
    """What :func:`counts_from_profile` reads from one kernel's launches (profile order)."""

    count: int
    threads: pd.Series  # grid × block size of each launch whose six sizes are all known
    durations: pd.Series  # ns, the known ones
    devices: tuple[str, ...]  # distinct device names, first seen


def kernel_launches(launches: pd.DataFrame) -> KernelLaunches:
    """:class:`KernelLaunches` of ``launches`` (the rows of one kernel)."""
    return KernelLaunches(
        count=len(launches),
        threads=launches[_DIMS].dropna().astype(float).prod(axis=1),
        durations=pd.to_numeric(launches["duration_ns"], errors="coerce").dropna(),
        devices=tuple(launches["device"].dropna().astype(str).unique().tolist()),
    )


def _codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """A name per row as (codes, names), -1 for a missing one: the schema's categorical's own
    codes and categories (no copy: a million launches factorised took 8 MiB of codes each),
    else ``pd.factorize``."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), pd.Index(column.cat.categories, dtype=object)
    codes, names = pd.factorize(column)
    return codes, pd.Index(names)


def launches_by_kernel(profile: Profile, kernels: list[str]) -> dict[str, KernelLaunches]:
    """:func:`kernel_launches` of each of ``kernels``, every launch read once: the names
    compared as codes, grid × block multiplied in the same column order for all launches."""
    launches = profile.launches
    codes, names = _codes(launches["name"])
    where = {name: i for i, name in enumerate(names) if isinstance(name, str)}
    threads = launches[_DIMS[0]].to_numpy(dtype=float, na_value=np.nan, copy=True)
    for column in _DIMS[1:]:  # multiplied in place: the same products, one array
        np.multiply(threads, launches[column].to_numpy(dtype=float, na_value=np.nan), out=threads)
    known = ~np.isnan(threads)  # NaN: a size unknown (six sizes cannot overflow to inf)
    durations = pd.to_numeric(launches["duration_ns"], errors="coerce").to_numpy(dtype=float)
    device_codes, device_names = _codes(launches["device"])
    by_name = np.argsort(codes.astype(np.int16) if len(names) < 2**15 else codes, kind="stable")
    # where each name's rows start in that order: the missing names (-1) first, then each
    # code's count (a search of the sorted codes, without sorting a copy of them)
    named = codes >= 0
    counts = np.bincount(codes[named], minlength=len(names))
    bounds = np.concatenate([[0], np.cumsum(counts)]) + int(len(codes) - named.sum())
    del named, counts
    # every column put in that order once: each kernel's launches are then a slice of it, in
    # the same (launch) order as picking its rows out of each column
    threads, known = threads[by_name], known[by_name]
    durations, device_codes = durations[by_name], device_codes[by_name]
    out: dict[str, KernelLaunches] = {}
    for kernel in dict.fromkeys(kernels):
        at = where.get(kernel)
        rows = slice(bounds[at], bounds[at + 1]) if at is not None else slice(0, 0)
        devices = pd.unique(device_codes[rows])
        timed = durations[rows]
        out[kernel] = KernelLaunches(
            count=len(timed),
            threads=pd.Series(threads[rows][known[rows]], copy=False),  # (new arrays)
            durations=pd.Series(timed[~np.isnan(timed)], copy=False),
            devices=tuple(dict.fromkeys(str(device_names[c]) for c in devices if c >= 0)),
        )
    return out


def _threads(
    profile: Profile, kernel: str, launches: KernelLaunches, metrics: dict[str, float]
) -> tuple[float, str]:
    if not launches.threads.empty:
        return float(launches.threads.mean()), "launches grid × block"
    if "grid_size" in metrics and "block_size" in metrics:
        return metrics["grid_size"] * metrics["block_size"], "metrics grid_size × block_size"
    raise NoKernelData(
        profile.path or "<profile>",
        f"kernel {kernel!r}: no launch configuration (grid and block sizes); "
        "profile with nvprof --print-gpu-trace or ncu (launch__grid_size, launch__block_size)",
    )


def _sum_of(metrics: dict[str, float], names: tuple[str, ...]) -> float | None:
    present = [metrics[n] for n in names if n in metrics]
    return float(sum(present)) if present else None


def _per_thread_memory(
    metrics: dict[str, float], threads: float, thread_level: tuple[str, ...], warp_level: str
) -> tuple[float | None, str]:
    total = _sum_of(metrics, thread_level)
    if total is not None:
        return total / threads, f"Σ {thread_level[0].replace('_8bit', '_*bit')} / t"
    if warp_level in metrics:
        return WARP_SIZE * metrics[warp_level] / threads, f"32 × {warp_level} / t"
    return None, ""


def _dram_bytes(metrics: dict[str, float], threads: float) -> tuple[float | None, str]:
    """Measured DRAM bytes per thread (module docstring), or None."""
    if all(n in metrics for n in DRAM_BYTE_METRICS):
        total = sum(metrics[n] for n in DRAM_BYTE_METRICS)
        return total / threads, "(dram_read_bytes + dram_write_bytes) / t"
    if all(n in metrics for n in DRAM_SECTOR_METRICS):
        total = DRAM_SECTOR_BYTES * sum(metrics[n] for n in DRAM_SECTOR_METRICS)
        return total / threads, "32 × (dram_read_transactions + dram_write_transactions) / t"
    return None, ""


def _word_bytes(metrics: dict[str, float]) -> float | None:
    """Mean bytes per global access from the thread-level width counts, or None."""
    widths = [
        (int(name.split("_")[-1].removesuffix("bit")) / 8, metrics[name])
        for name in (*GLD_THREAD_METRICS, *GST_THREAD_METRICS)
        if name in metrics
    ]
    accesses = sum(count for _, count in widths)
    return sum(b * count for b, count in widths) / accesses if accesses > 0 else None


def _first(metrics: dict[str, float], names: tuple[str, ...]) -> tuple[float | None, str]:
    for name in names:
        if name in metrics:
            return metrics[name], name
    return None, ""


def counts_from_profile(
    profile: Profile,
    kernel: str,
    launches: KernelLaunches | None = None,
    means: dict[str, float] | None = None,
) -> ProfileCounts:
    """Per-thread BSP counts of ``kernel`` (rules in the module docstring).  ``launches`` and
    ``means``: the kernel's launches and metric means when the caller has them
    (:func:`launches_by_kernel`, :func:`metric_means_by_kernel`)."""
    if launches is None:
        frame = profile.launches
        launches = kernel_launches(frame[frame["name"].eq(kernel).fillna(False)])
    metrics = dict(means) if means is not None else _metric_means(profile, kernel)
    threads, threads_src = _threads(profile, kernel, launches, metrics)
    if threads <= 0:
        raise NoKernelData(profile.path or "<profile>", f"kernel {kernel!r}: launch has 0 threads")
    sources: list[tuple[str, str]] = [("threads", threads_src)]
    assumed: list[str] = []
    missing: list[str] = []

    ld1, src = _per_thread_memory(
        metrics, threads, GLD_THREAD_METRICS, "inst_executed_global_loads"
    )
    sources.append(("ld1", src))
    st1, src = _per_thread_memory(
        metrics, threads, GST_THREAD_METRICS, "inst_executed_global_stores"
    )
    sources.append(("st1", src))
    if ld1 is None:
        missing.append("inst_executed_global_loads (or gld_inst_*bit)")
    if st1 is None:
        missing.append("inst_executed_global_stores (or gst_inst_*bit)")

    shared: dict[str, float] = {}
    for key, name in (
        ("ld0", "inst_executed_shared_loads"),
        ("st0", "inst_executed_shared_stores"),
    ):
        if name in metrics:
            shared[key] = WARP_SIZE * metrics[name] / threads
            sources.append((key, f"32 × {name} / t"))
        else:
            shared[key] = 0.0
            assumed.append(f"{key} = 0 ({name} not in the profile)")

    if "thread_inst_executed" in metrics:
        thread_inst, inst_src = metrics["thread_inst_executed"], "thread_inst_executed"
    elif "inst_executed" in metrics:
        thread_inst, inst_src = WARP_SIZE * metrics["inst_executed"], "32 × inst_executed"
    else:
        missing.append("thread_inst_executed (or inst_executed)")
    if missing:
        raise NoKernelData(
            profile.path or "<profile>",
            f"kernel {kernel!r}: the BSP model needs {', '.join(missing)}; {COLLECT_HINT}",
        )
    assert ld1 is not None and st1 is not None  # for mypy: checked through ``missing``
    if "inst_compute_ld_st" in metrics:
        memory_inst, mem_src = metrics["inst_compute_ld_st"], "inst_compute_ld_st"
    else:
        memory_inst = (shared["ld0"] + shared["st0"] + ld1 + st1) * threads
        mem_src = "(ld0 + st0 + ld1 + st1) · t"
    comp = max(thread_inst - memory_inst, 0.0) / threads
    sources.append(("comp", f"({inst_src} − {mem_src}) / t, 1 cycle each"))

    l1_rate, l1_src = _first(metrics, L1_RATE_METRICS)
    l2_rate, l2_src = _first(metrics, L2_RATE_METRICS)
    if l1_rate is None:
        assumed.append("L1 hit rate = 0 (no L1 hit-rate metric in the profile)")
    else:
        sources.append(("l1_hit_rate", l1_src))
    if l2_rate is None:
        assumed.append("L2 hit rate = 0 (no L2 hit-rate metric in the profile)")
    else:
        sources.append(("l2_hit_rate", l2_src))
    l1 = min(max(l1_rate or 0.0, 0.0), 1.0)
    l2 = min(max(l2_rate or 0.0, 0.0), 1.0)
    if l1 + l2 > 1.0:
        assumed.append(f"L2 hit rate {l2:.3f} reduced to 1 − L1 = {1 - l1:.3f}")
        l2 = 1.0 - l1

    dram, dram_src = _dram_bytes(metrics, threads)
    if dram is not None:
        sources.append(("dram_bytes", dram_src))
    word = _word_bytes(metrics)
    if word is not None:
        sources.append(("word_bytes", "mean width of gld_inst_*bit, gst_inst_*bit"))

    durations, devices = launches.durations, launches.devices
    return ProfileCounts(
        kernel=kernel,
        device=devices[0] if len(devices) == 1 else None,
        launches=launches.count,
        measured_s=float(durations.mean()) * 1e-9 if len(durations) else None,
        counts=ThreadCounts(
            threads=threads,
            comp_cycles=comp,
            shared_loads=shared["ld0"],
            shared_stores=shared["st0"],
            global_loads=ld1,
            global_stores=st1,
            l1_hit_rate=l1,
            l2_hit_rate=l2,
            word_bytes=4.0 if word is None else word,
            dram_bytes=dram,
        ),
        sources=tuple(sources),
        assumed=tuple(assumed),
    )


def profiled_time_note(found: ProfileCounts) -> str:
    """Where the counts were measured and the kernel's own time there (a --calibrate candidate)."""
    where = found.device or "an unnamed GPU"
    if found.measured_s is None:
        return f"counts of {found.launches} launch(es) on {where}; the profile holds no duration"
    return (
        f"counts of {found.launches} launch(es) on {where}, mean kernel time "
        f"{found.measured_s * 1e3:.4g} ms"
    )
