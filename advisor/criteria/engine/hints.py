"""Hints: every criterion below its threshold, with the evidence, the gain and what to do.

Thresholds are named constants with the reason for their value.  Actions are those the papers
name (seed 002, sections IV-VI; MODELS.md "Hints") plus the modern equivalents users expect
(CUDA graphs, cooperative-groups grid sync, vectorized loads, swizzling).  Hints are ranked by
potential speedup (largest first; hints without an estimate last, then in criterion order).
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor.criteria.engine.analysis import CriterionResult, Hint
from advisor.criteria.engine.speedups import application_gain

#: Idle gaps above a fifth of the span between the first kernel's start and the last kernel's
#: end are visible in the application time; below that, launch overhead rarely dominates.
HOSTSYNC_MIN = 0.8
#: A fifth of all stalls at barriers means barriers, not memory or math, hold warps back.
DEVICESYNC_MIN = 0.8
#: Fewer than 80 % of the lanes active (about 25 of 32 threads) is visible divergence; Nsight
#: Compute's thread-divergence guidance starts from a similar share of inactive threads.
DIVERGENCE_MIN = 0.8
#: Achieved warps 20 % below what the configuration allows point at tail effects or imbalance
#: (Nsight Compute's achieved-occupancy rule reports gaps of this size).
LOADBALANC_WARP_MIN = 0.8
#: The average SM busy less than 80 % of the busiest one's time: a fifth of the GPU idles.
LOADBALANC_SM_MIN = 0.8
#: A tenth of the moved bytes unused already wastes bandwidth worth recovering: Nsight Compute's
#: uncoalesced-access rules report kernels with 12-18 % excessive sectors.  The ranking by
#: potential speedup keeps such hints low when the kernel spends little time at that level.
L1_GRANULARITY_MIN = 0.9
L2_GRANULARITY_MIN = 0.9
#: More than a fifth of the shared transactions are bank-conflict replays.
SHMEM_EFFICIENCY_MIN = 0.8
#: The seed's formula falls below 0.8 only when both DRAM throughput and the unused occupancy
#: are substantial (e.g. MEMTHR 0.4 with occupancy 0.5): raising occupancy should pay off.
THROUGHPUT_OCCUPANCY_MIN = 0.8

THRESHOLDS: dict[str, float] = {
    "HOSTSYNC": HOSTSYNC_MIN,
    "DEVICESYNC": DEVICESYNC_MIN,
    "DIVERGENCE": DIVERGENCE_MIN,
    "LOADBALANC_WARP": LOADBALANC_WARP_MIN,
    "LOADBALANC_SM": LOADBALANC_SM_MIN,
    "L1_GRANULARITY": L1_GRANULARITY_MIN,
    "L2_GRANULARITY": L2_GRANULARITY_MIN,
    "SHMEM_EFFICIENCY": SHMEM_EFFICIENCY_MIN,
    "THROUGHPUT_OCCUPANCY": THROUGHPUT_OCCUPANCY_MIN,
}

TITLES: dict[str, str] = {
    "HOSTSYNC": "the GPU idles between kernels (host synchronization)",
    "DEVICESYNC": "warps stall at barriers (device synchronization)",
    "DIVERGENCE": "thread divergence: many lanes of each warp are inactive",
    "LOADBALANC_WARP": "fewer active warps per SM than the launch allows (warp load balance)",
    "LOADBALANC_SM": "SMs are unevenly loaded (workload imbalance across SMs)",
    "L1_GRANULARITY": "uncoalesced global access: L1 moves bytes nobody asked for",
    "L2_GRANULARITY": "uncoalesced global access: L2 transactions carry unused bytes",
    "SHMEM_EFFICIENCY": "shared-memory bank conflicts replay shared accesses",
    "THROUGHPUT_OCCUPANCY": "low occupancy limits the DRAM throughput",
}

ACTIONS: dict[str, tuple[str, ...]] = {
    "HOSTSYNC": (
        "merge small kernels so the host launches and synchronizes less often",
        "replace kernel-boundary synchronization by inter-block (grid) synchronization: "
        "cooperative-groups grid.sync() in one persistent kernel",
        "batch small host-device transfers into fewer, larger ones (pinned memory, async copies)",
        "capture the launch sequence in a CUDA graph to cut launch overhead",
        "overlap transfers and kernels with streams (see the streams model)",
    ),
    "DEVICESYNC": (
        "organize the work warp-centrically so a warp cooperates on one item and needs no "
        "block-wide barrier (warp shuffles, cooperative-groups tiled partitions)",
        "remove barriers that order nothing; reduce a log2(BLOCKSIZE)-step barrier tree to one "
        "barrier followed by warp-level steps",
        "balance the work between the warps of a block so none waits long at __syncthreads()",
    ),
    "DIVERGENCE": (
        "compute more elements per thread so branches depend on data less often",
        "use instruction-level parallelism (independent operations per thread)",
        "regroup data or threads so the threads of a warp take the same branch",
        "replace short branches by predicated / branch-free arithmetic",
    ),
    "LOADBALANC_WARP": (
        "regroup threads so a warp cooperates on one work item instead of one thread per item",
        "reduce tail effects: more, smaller blocks, or a grid-stride loop over the work",
        "give warps of a block comparable amounts of work",
    ),
    "LOADBALANC_SM": (
        "launch enough blocks to fill every SM (at least a few waves of blocks)",
        "split uneven work items so no single block runs much longer than the others",
        "use a persistent-threads / work-queue scheme for irregular work",
    ),
    "L1_GRANULARITY": (
        "make consecutive threads access consecutive addresses (coalesced access)",
        "use a structure-of-arrays layout instead of an array of structures",
        "reorganize the thread blocks and resize the memory tiles to the 32 B sector / 128 B line",
        "load through shared memory and transpose there; use vectorized loads (float4) when "
        "each thread reads contiguous data",
    ),
    "L2_GRANULARITY": (
        "align the data structures to 32 B sectors and access them contiguously",
        "use a structure-of-arrays layout instead of an array of structures",
        "reorganize the thread blocks and resize the memory tiles",
    ),
    "SHMEM_EFFICIENCY": (
        "pad shared arrays (e.g. [32][33]) so a column access hits 32 different banks",
        "swizzle the shared-memory index (XOR the column with the row) to spread the banks",
        "read shared memory row-wise and let each thread access consecutive 4-byte words",
    ),
    "THROUGHPUT_OCCUPANCY": (
        "re-configure the block size to raise the theoretical occupancy",
        "use fewer registers per thread (__launch_bounds__, -maxrregcount)",
        "use less shared memory per block, or a larger shared-memory carve-out",
        "keep more bytes in flight per thread (vectorized loads, unrolled independent loads)",
    ),
}


def hint_for(
    result: CriterionResult,
    kernel: str | None,
    form: str,
    share_of_gpu_time: float | None,
) -> Hint | None:
    """The hint of one criterion result, or None when it is fine (or not computed)."""
    threshold = THRESHOLDS[result.name]
    if result.value is None or result.value >= threshold:
        return None
    speedup = result.speedups.pick(form)
    gain = speedup if kernel is None else application_gain(share_of_gpu_time, speedup)
    evidence = {"value": result.value, **dict(result.inputs)}
    if result.level_share_frac is not None:
        evidence["level_share_frac"] = result.level_share_frac
    return Hint(
        criterion=result.name,
        kernel=kernel,
        value=result.value,
        threshold=threshold,
        potential_speedup=speedup,
        application_speedup=gain,
        title=TITLES[result.name],
        evidence=evidence,
        actions=ACTIONS[result.name],
    )


def rank(hints: Sequence[Hint], by_application: bool = False) -> tuple[Hint, ...]:
    """Largest potential speedup first; hints without an estimate last, in criterion order."""
    order = list(THRESHOLDS)

    def key(h: Hint) -> tuple[int, float, int, str]:
        gain = h.application_speedup if by_application else h.potential_speedup
        return (
            0 if gain is not None else 1,
            -(gain or 0.0),
            order.index(h.criterion),
            h.kernel or "",
        )

    return tuple(sorted(hints, key=key))
