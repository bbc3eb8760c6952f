"""THROUGHPUT/OCCUPANCY: how much more DRAM throughput full occupancy could bring.

Seed 002, section IV-H::

    THROUGHPUT/OCCUPANCY = 1                               if MEMTHR ~ 1
                         = 1 - (1 - occ) * MEMTHR          otherwise
    MEMTHR = AchievedThroughput / (TheoreticalPeakThroughput * F_DRAMThr)

MEMTHR is the kernel's DRAM throughput over the device's peak (ncu
``gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed``, or (DRAM bytes read + written) /
duration, or nvprof ``dram_read_throughput + dram_write_throughput``, over the peak of the device
database), weighted by F_DRAMThr at the measured fraction.  "MEMTHR ~ 1" is
``MEMTHR >= MEMTHR_SATURATED_FRAC``.  ``occ`` depends on the launch configuration (block size,
grid, shared memory): the theoretical occupancy -- ncu ``sm__maximum_warps_per_active_cycle_pct``
or the occupancy calculation of :mod:`advisor.criteria.engine.occupancy` (through
:func:`advisor.criteria.engine.balance.calculated_theoretical_warps`); only when neither is
possible the achieved occupancy stands in (said in a note).  Potential speedup: 1 / criterion.
"""

from __future__ import annotations

from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.balance import calculated_theoretical_warps
from advisor.criteria.engine.common import Context, Scored, absent, aux_mean, inverse, score
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.spec import CriterionSpec, Needs
from advisor.criteria.engine.speedups import dram_fraction_recipes, weighted_by_f

NAME = "THROUGHPUT_OCCUPANCY"

#: Within 10 % of the (F-weighted) peak the DRAM bus is effectively saturated: seed 002 sets the
#: criterion to 1 there, because more resident warps cannot raise the throughput further.
MEMTHR_SATURATED_FRAC = 0.9


def throughput_occupancy(memthr: float, occupancy: float) -> float:
    """1 if MEMTHR ~ 1 else 1 - (1 - occ) * MEMTHR."""
    if memthr >= MEMTHR_SATURATED_FRAC:
        return 1.0
    return 1.0 - (1.0 - occupancy) * memthr


def _calculated_occupancy(v: Values) -> float | None:
    warps = calculated_theoretical_warps(v)
    if warps is None:
        return None
    return warps / v["device.max_warps_per_sm"]


OCCUPANCY_RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "theoretical occupancy",
        ("theoretical_occupancy",),
        lambda v: v["theoretical_occupancy"],
        tools=("ncu",),
    ),
    Recipe(
        "theoretical warps per SM / max warps per SM",
        ("theoretical_active_warps_per_sm", "device.max_warps_per_sm"),
        lambda v: v["theoretical_active_warps_per_sm"] / v["device.max_warps_per_sm"],
        tools=("ncu",),
    ),
    Recipe(
        "occupancy calculation from the launch configuration",
        ("launch.block_threads", "device.compute_capability", "device.max_warps_per_sm"),
        _calculated_occupancy,
        optional=("launch.registers_per_thread", "launch.shared_bytes_per_block"),
    ),
)

ACHIEVED_FALLBACK = Recipe(
    "achieved occupancy (theoretical occupancy unavailable)",
    ("achieved_occupancy",),
    lambda v: v["achieved_occupancy"],
)


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    dram = score(kernel, dram_fraction_recipes(), ctx)
    occ = aux_mean(kernel, OCCUPANCY_RECIPES, ctx)
    notes: tuple[str, ...] = ()
    if occ is None:
        occ = aux_mean(kernel, (ACHIEVED_FALLBACK,), ctx)
        if occ is not None:
            notes = (
                "no launch configuration or theoretical occupancy: the achieved "
                "occupancy stands in for occ",
            )
    if not isinstance(dram, Scored) or occ is None:
        recipes = (*dram_fraction_recipes(), *OCCUPANCY_RECIPES)
        if isinstance(dram, Scored):
            recipes = OCCUPANCY_RECIPES
        elif occ is not None:
            recipes = tuple(dram_fraction_recipes())
        return absent(NAME, kernel, recipes, ctx)
    memthr = weighted_by_f(dram.raw, ctx, "F_DRAMThr")
    value = throughput_occupancy(memthr, occ.raw)
    inputs = {
        **dram.inputs,
        **occ.inputs,
        "dram_throughput_frac": dram.raw,
        "F_DRAMThr": ctx.device.F("F_DRAMThr", dram.raw),
        "MEMTHR": memthr,
        "occupancy_frac": occ.raw,
    }
    return CriterionResult(
        name=NAME,
        status=COMPUTED,
        value=value,
        raw_value=value,
        speedups=Speedups(paper=inverse(value), amdahl=inverse(value)),
        method=f"{dram.recipe.label}; occ: {occ.recipe.label}",
        inputs=inputs,
        launches_used=dram.launches_used,
        notes=notes,
    )


SPEC = CriterionSpec(
    name=NAME,
    order=9,
    threshold=0.8,
    threshold_reason=(
        "The seed's formula falls below 0.8 only when both DRAM throughput and the unused "
        "occupancy are substantial (e.g. MEMTHR 0.4 with occupancy 0.5): raising occupancy "
        "should pay off."
    ),
    title="low occupancy limits the DRAM throughput",
    actions=(
        "re-configure the block size to raise the theoretical occupancy",
        "use fewer registers per thread (__launch_bounds__, -maxrregcount)",
        "use less shared memory per block, or a larger shared-memory carve-out",
        "keep more bytes in flight per thread (vectorized loads, unrolled independent loads)",
    ),
    short_label="occup.",
    recipes=(*dram_fraction_recipes(), *OCCUPANCY_RECIPES, ACHIEVED_FALLBACK),
    needs=Needs(
        ncu_metrics=(
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "sm__maximum_warps_per_active_cycle_pct",
        ),
        ncu_sections=("Occupancy",),
        nvprof_metrics=("dram_read_throughput", "dram_write_throughput", "achieved_occupancy"),
    ),
    evaluate=evaluate,
)
