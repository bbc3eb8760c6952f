"""LOADBALANC_WARP and LOADBALANC_SM: how evenly the work fills the warps of an SM and the SMs.

Seed 002, section IV-D::

    LOADBALANC_WARP = (TotActiveWarps / TotActiveCycles) / ((BLOCKSIZE / 32) * #Blocks_per_SM)

achieved active warps per active cycle over the warps the launch can keep resident on an SM
(theoretical occupancy in warps).  Numerator: ncu ``sm__warps_active.avg.per_cycle_active``, or
``active_warps / active_cycles`` (nvprof events, ncu ``sm__warps_active.sum`` /
``sm__cycles_active.sum``), or achieved occupancy * max warps per SM.  Denominator: ncu
``sm__maximum_warps_avg_per_active_cycle``, or theoretical occupancy * max warps, or the
occupancy calculation of :mod:`advisor.criteria.engine.occupancy` from the launch configuration
(block size, registers, shared memory) and the compute capability's limits.

Seed 002, section IV-E::

    LOADBALANC_SM = 1 - (max_SM ActiveCycles - AvgCycles) / max_SM ActiveCycles  (= avg / max)

from ncu ``sm__cycles_active.max`` and ``.avg``.  nvprof has per-SM active cycles only with
``--aggregate-mode off``, which this advisor does not read, so nvprof profiles leave it not
computable.  Zero-denominator policy: no resident warp / no active SM cycle is n/a.
Potential speedups: 1 / criterion (seed 002, section V).
"""

from __future__ import annotations

from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import Context, Scored, absent, inverse, not_applicable, score
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.occupancy import limits_for, theoretical_warps_per_sm

WARP = "LOADBALANC_WARP"
#: launch configuration the occupancy calculation reads when the profile has it
_CONFIG_OPTIONAL = ("launch.registers_per_thread", "launch.shared_bytes_per_block")
SM = "LOADBALANC_SM"


def warp_balance(achieved_warps: float, theoretical_warps: float) -> float | None:
    """Achieved warps per active cycle / theoretical warps per SM; None without resident warps."""
    if not theoretical_warps > 0:
        return None
    return achieved_warps / theoretical_warps


def sm_balance(max_active_cycles: float, avg_active_cycles: float) -> float | None:
    """1 - (max - avg) / max; None when no SM was active."""
    if not max_active_cycles > 0:
        return None
    return 1.0 - (max_active_cycles - avg_active_cycles) / max_active_cycles


def calculated_theoretical_warps(v: Values) -> float | None:
    """(BLOCKSIZE / 32) * #Blocks_per_SM from the launch configuration and the CC's limits."""
    limits = limits_for(v.get("device.compute_capability"))
    if limits is None:
        return None
    return theoretical_warps_per_sm(
        limits,
        v["launch.block_threads"],
        v.get("launch.registers_per_thread", 0.0),
        v.get("launch.shared_bytes_per_block", 0.0),
        v.get("device.max_warps_per_sm"),
    )


_NUMERATORS: tuple[tuple[str, tuple[str, ...], object, tuple[str, ...]], ...] = (
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

_DENOMINATORS: tuple[tuple[str, tuple[str, ...], object, tuple[str, ...]], ...] = (
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


def _warp_recipes() -> tuple[Recipe, ...]:
    out: list[Recipe] = []
    for n_label, n_needs, n_f, n_tools in _NUMERATORS:
        for d_label, d_needs, d_f, d_tools in _DENOMINATORS:

            def formula(v: Values, n_f: object = n_f, d_f: object = d_f) -> float | None:
                num = n_f(v)  # type: ignore[operator]
                den = d_f(v)  # type: ignore[operator]
                if num is None or den is None:
                    return None
                return warp_balance(num, den)

            tools = tuple(t for t in n_tools if t in d_tools)
            optional = _CONFIG_OPTIONAL if "launch.block_threads" in d_needs else ()
            out.append(
                Recipe(f"{n_label} / {d_label}", (*n_needs, *d_needs), formula, tools, "", optional)
            )
    return tuple(out)


WARP_RECIPES = _warp_recipes()

SM_RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "1 - (max - avg) / max of sm__cycles_active",
        ("sm_cycles_active_max", "sm_cycles_active_avg"),
        lambda v: sm_balance(v["sm_cycles_active_max"], v["sm_cycles_active_avg"]),
        tools=("ncu",),
    ),
)


def _evaluate(
    name: str, recipes: tuple[Recipe, ...], kernel: KernelData, ctx: Context, why_na: str
) -> CriterionResult:
    scored = score(kernel, recipes, ctx)
    if scored is None:
        notes: tuple[str, ...] = ()
        if name == SM and "nvprof" in ctx.tools:
            notes = (
                "nvprof gives per-SM active cycles only with --aggregate-mode off, "
                "which this advisor does not read; use Nsight Compute",
            )
        return absent(name, kernel, recipes, ctx, notes)
    if not isinstance(scored, Scored):
        return not_applicable(name, why_na)
    value = scored.raw
    return CriterionResult(
        name=name,
        status=COMPUTED,
        value=value,
        raw_value=value,
        speedups=Speedups(paper=inverse(value), amdahl=inverse(value)),
        method=scored.recipe.label,
        inputs=scored.inputs,
        launches_used=scored.launches_used,
    )


def evaluate_warp(kernel: KernelData, ctx: Context) -> CriterionResult:
    return _evaluate(WARP, WARP_RECIPES, kernel, ctx, "no warp of this configuration fits on an SM")


def evaluate_sm(kernel: KernelData, ctx: Context) -> CriterionResult:
    return _evaluate(SM, SM_RECIPES, kernel, ctx, "no SM was active")
