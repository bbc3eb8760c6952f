"""LOADBALANC_WARP: how fully the work keeps the warps an SM can hold resident.

Seed 002, section IV-D::

    LOADBALANC_WARP = (TotActiveWarps / TotActiveCycles) / ((BLOCKSIZE / 32) * #Blocks_per_SM)

achieved active warps per active cycle over the warps the launch can keep resident on an SM
(theoretical occupancy in warps).  Numerator: ncu ``sm__warps_active.avg.per_cycle_active``, or
``active_warps / active_cycles`` (nvprof events, ncu ``sm__warps_active.sum`` /
``sm__cycles_active.sum``), or achieved occupancy * max warps per SM.  Denominator: ncu
``sm__maximum_warps_avg_per_active_cycle``, or theoretical occupancy * max warps, or the
occupancy calculation of :mod:`advisor.criteria.engine.occupancy` from the launch configuration
(block size, registers, shared memory) and the device's per-SM limits where the profile reports
them, else the compute capability's
(:func:`advisor.criteria.engine.balance.calculated_theoretical_warps`).  Zero-denominator policy:
no resident warp is n/a.  Potential speedup: 1 / criterion (seed 002, section V).
"""

from __future__ import annotations

from collections.abc import Callable

from advisor.criteria.engine.analysis import CriterionResult
from advisor.criteria.engine.balance import calculated_theoretical_warps, evaluate_inverse
from advisor.criteria.engine.common import Context
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.spec import CriterionSpec, Needs

NAME = "LOADBALANC_WARP"
#: launch configuration the occupancy calculation reads when the profile has it
_CONFIG_OPTIONAL = ("launch.registers_per_thread", "launch.shared_bytes_per_block")

_Part = tuple[str, tuple[str, ...], Callable[[Values], float | None], tuple[str, ...]]


def warp_balance(achieved_warps: float, theoretical_warps: float) -> float | None:
    """Achieved warps per active cycle / theoretical warps per SM; None without resident warps."""
    if not theoretical_warps > 0:
        return None
    return achieved_warps / theoretical_warps


_NUMERATORS: tuple[_Part, ...] = (
    (
        "achieved active warps per SM",
        ("achieved_active_warps_per_sm",),
        lambda v: v["achieved_active_warps_per_sm"],
        ("ncu",),
    ),
    (
        "active_warps / active_cycles",
        ("active_warps", "active_cycles"),
        lambda v: v["active_warps"] / v["active_cycles"] if v["active_cycles"] > 0 else None,
        ("ncu", "nvprof"),
    ),
    (
        "achieved occupancy * max warps per SM",
        ("achieved_occupancy", "device.max_warps_per_sm"),
        lambda v: v["achieved_occupancy"] * v["device.max_warps_per_sm"],
        ("ncu", "nvprof"),
    ),
)

_DENOMINATORS: tuple[_Part, ...] = (
    (
        "theoretical active warps per SM",
        ("theoretical_active_warps_per_sm",),
        lambda v: v["theoretical_active_warps_per_sm"],
        ("ncu",),
    ),
    (
        "theoretical occupancy * max warps per SM",
        ("theoretical_occupancy", "device.max_warps_per_sm"),
        lambda v: v["theoretical_occupancy"] * v["device.max_warps_per_sm"],
        ("ncu",),
    ),
    (
        "occupancy calculation from the launch configuration",
        ("launch.block_threads", "device.compute_capability"),
        calculated_theoretical_warps,
        ("ncu", "nvprof"),
    ),
)


def _recipes() -> tuple[Recipe, ...]:
    out: list[Recipe] = []
    for n_label, n_needs, n_f, n_tools in _NUMERATORS:
        for d_label, d_needs, d_f, d_tools in _DENOMINATORS:

            def formula(
                v: Values,
                n_f: Callable[[Values], float | None] = n_f,
                d_f: Callable[[Values], float | None] = d_f,
            ) -> float | None:
                num = n_f(v)
                den = d_f(v)
                if num is None or den is None:
                    return None
                return warp_balance(num, den)

            tools = tuple(t for t in n_tools if t in d_tools)
            optional = _CONFIG_OPTIONAL if "launch.block_threads" in d_needs else ()
            out.append(
                Recipe(f"{n_label} / {d_label}", (*n_needs, *d_needs), formula, tools, "", optional)
            )
    return tuple(out)


RECIPES = _recipes()


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    why_na = "no warp of this configuration fits on an SM"
    return evaluate_inverse(NAME, RECIPES, kernel, ctx, why_na)


SPEC = CriterionSpec(
    name=NAME,
    order=4,
    threshold=0.8,
    threshold_reason=(
        "Achieved warps 20 % below what the configuration allows point at tail effects or "
        "imbalance (Nsight Compute's achieved-occupancy rule reports gaps of this size)."
    ),
    title="fewer active warps per SM than the launch allows (warp load balance)",
    actions=(
        "regroup threads so a warp cooperates on one work item instead of one thread per item",
        "reduce tail effects: more, smaller blocks, or a grid-stride loop over the work",
        "give warps of a block comparable amounts of work",
    ),
    short_label="LB warp",
    recipes=RECIPES,
    needs=Needs(
        ncu_metrics=(
            "sm__warps_active.avg.per_cycle_active",
            "sm__maximum_warps_avg_per_active_cycle",
        ),
        ncu_sections=("Occupancy",),
        nvprof_metrics=("achieved_occupancy",),
        nvprof_events=("active_warps", "active_cycles"),
    ),
    evaluate=evaluate,
)
