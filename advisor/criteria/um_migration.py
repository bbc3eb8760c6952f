"""UM_MIGRATION: how much of a kernel's time is spent without unified-memory page faults.

Not one of seed 002's nine criteria: the project's own (docs/criteria.md, Decision U1), for the
tuning step the nine cannot see -- a kernel on ``cudaMallocManaged`` memory that is not resident
on its GPU faults on first touch, and the driver migrates the pages while the kernel waits.  In
the form of seed 002's criteria, a [0, 1] share, 1 best::

    UM_MIGRATION = 1 - fault time / kernel time

fault time = the part of the launch covered by bursts of on-demand migrations
(:mod:`advisor.criteria.engine.migrations`: ``UM-HtoD``/``UM-DtoD`` transfers of a trace, nsys
or nvprof, not caused by a prefetch; migrations less than 0.5 ms apart are one burst, the gaps
being the driver's service of the next batch of faults), summed over launches, over the
launches' summed time.  Zero-denominator
policy: a kernel during which nothing migrated is n/a; without a trace (Nsight Compute alone,
per-kernel summaries) it is n/a with a note, since migrations are seen only on a timeline.

Potential speedup: 1 / criterion (seed 002, section V, as for its other shares), but never
beyond the kernel reading the migrated bytes once at the GPU's DRAM bandwidth::

    S = T / max(T x UM_MIGRATION, migrated bytes / peak DRAM bandwidth)

the fix (``cudaMemPrefetchAsync`` before the launch) still has the kernel touch those bytes.
Without the device's bandwidth the bound is left out (noted).
"""

from __future__ import annotations

from advisor.criteria.engine import migrations
from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import Context, Scored, aux_mean, not_applicable, score
from advisor.criteria.engine.inputs import KernelData, Recipe
from advisor.criteria.engine.spec import CriterionSpec, Needs

NAME = "UM_MIGRATION"

#: per launch, as shares of its duration (advisor.criteria.engine.migrations)
FAULT_SHARE = migrations.FAULT_SHARE
MIGRATED_BYTES_PER_S = migrations.MIGRATED_BYTES_PER_S


def um_share(fault_share: float) -> float:
    """1 - fault time / kernel time, clamped to [0, 1]."""
    return min(1.0, max(0.0, 1.0 - fault_share))


RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "1 - time with unified-memory migrations outstanding / kernel time (trace)",
        (FAULT_SHARE,),
        lambda v: um_share(v[FAULT_SHARE]),
        tools=(),
        optional=(MIGRATED_BYTES_PER_S,),
    ),
)

#: the migrated bytes read once at the peak DRAM bandwidth, as a share of the kernel's time
TRANSFER_FLOOR = (
    Recipe(
        "migrated bytes / peak DRAM bandwidth / kernel time",
        (MIGRATED_BYTES_PER_S, "device.peak_dram_bytes_per_s"),
        lambda v: (
            v[MIGRATED_BYTES_PER_S] / v["device.peak_dram_bytes_per_s"]
            if v["device.peak_dram_bytes_per_s"] > 0
            else None
        ),
        tools=(),
    ),
)


def potential(share: float, floor: float | None) -> float | None:
    """1 / max(share, floor): the kernel without its fault time, never faster than reading the
    migrated bytes once (``floor``, a share of its time; None: no bound)."""
    bottom = share if floor is None else max(share, floor)
    return 1.0 / bottom if bottom > 0 else None


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    scored = score(kernel, RECIPES, ctx)
    if not isinstance(scored, Scored):
        why = (
            "no trace of this kernel's launches (start times): unified-memory migrations are "
            "seen only on a timeline (nsys, nvprof --print-gpu-trace)"
            if scored is None
            else "the kernel's launches have no duration"
        )
        return not_applicable(NAME, why)
    moved, waited = (
        scored.inputs.get(MIGRATED_BYTES_PER_S, 0.0),
        scored.inputs.get(FAULT_SHARE, 0.0),
    )
    if not (moved > 0 or waited > 0):
        return not_applicable(
            NAME, "no unified-memory migration was recorded during this kernel", scored.inputs
        )
    value = scored.raw
    floor = aux_mean(kernel, TRANSFER_FLOOR, ctx)
    notes: tuple[str, ...] = ()
    if floor is None:
        notes = ("the device's DRAM bandwidth is unknown: the speedup is not bounded by it",)
    speedup = potential(value, None if floor is None else floor.raw)
    inputs = dict(scored.inputs)
    if floor is not None:
        inputs["transfer_floor_share"] = floor.raw
    return CriterionResult(
        name=NAME,
        status=COMPUTED,
        value=value,
        raw_value=value,
        speedups=Speedups(paper=speedup, amdahl=speedup),
        method=scored.recipe.label,
        inputs=inputs,
        launches_used=scored.launches_used,
        notes=notes,
    )


SPEC = CriterionSpec(
    name=NAME,
    order=10,
    threshold=0.8,
    threshold_reason=(
        "More than a fifth of the kernel's time with page faults outstanding: the migrations, "
        "not the kernel's work, set its time."
    ),
    title="the kernel waits on unified-memory page faults (on-demand migration)",
    actions=(
        "prefetch managed memory to the GPU before the launch: cudaMemPrefetchAsync(ptr, bytes, "
        "device, stream), and back to the host (cudaCpuDeviceId) before the CPU reads it",
        "set cudaMemAdvise hints (SetPreferredLocation, SetAccessedBy, SetReadMostly) for data "
        "that stays on one side or is only read",
        "for data the GPU uses heavily, allocate it with cudaMalloc and copy it explicitly "
        "(pinned host memory, cudaMemcpyAsync) instead of managed memory",
    ),
    short_label="UM faults",
    recipes=(*RECIPES, *TRANSFER_FLOOR),
    needs=Needs(timeline=True),
    evaluate=evaluate,
)
