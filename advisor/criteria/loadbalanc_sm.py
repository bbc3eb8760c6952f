"""LOADBALANC_SM: how evenly the work fills the SMs.

Seed 002, section IV-E::

    LOADBALANC_SM = 1 - (max_SM ActiveCycles - AvgCycles) / max_SM ActiveCycles  (= avg / max)

from ncu ``sm__cycles_active.max`` and ``.avg``.  nvprof has per-SM active cycles only with
``--aggregate-mode off``, which this advisor does not read, so nvprof profiles leave it not
computable.  Zero-denominator policy: no active SM cycle is n/a.
Potential speedup: 1 / criterion (seed 002, section V).
"""

from __future__ import annotations

from advisor.criteria.engine.analysis import CriterionResult
from advisor.criteria.engine.balance import evaluate_inverse
from advisor.criteria.engine.common import Context
from advisor.criteria.engine.inputs import KernelData, Recipe
from advisor.criteria.engine.spec import CriterionSpec, Needs

NAME = "LOADBALANC_SM"


def sm_balance(max_active_cycles: float, avg_active_cycles: float) -> float | None:
    """1 - (max - avg) / max; None when no SM was active."""
    if not max_active_cycles > 0:
        return None
    return 1.0 - (max_active_cycles - avg_active_cycles) / max_active_cycles


RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "1 - (max - avg) / max of sm__cycles_active",
        ("sm_cycles_active_max", "sm_cycles_active_avg"),
        lambda v: sm_balance(v["sm_cycles_active_max"], v["sm_cycles_active_avg"]),
        tools=("ncu",),
    ),
)


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    notes: tuple[str, ...] = ()
    if "nvprof" in ctx.tools:
        notes = (
            "nvprof gives per-SM active cycles only with --aggregate-mode off, "
            "which this advisor does not read; use Nsight Compute",
        )
    return evaluate_inverse(NAME, RECIPES, kernel, ctx, "no SM was active", notes)


SPEC = CriterionSpec(
    name=NAME,
    order=5,
    threshold=0.8,
    threshold_reason=(
        "The average SM busy less than 80 % of the busiest one's time: a fifth of the GPU idles."
    ),
    title="SMs are unevenly loaded (workload imbalance across SMs)",
    actions=(
        "launch enough blocks to fill every SM (at least a few waves of blocks)",
        "split uneven work items so no single block runs much longer than the others",
        "use a persistent-threads / work-queue scheme for irregular work",
    ),
    short_label="LB SM",
    recipes=RECIPES,
    needs=Needs(
        ncu_metrics=("sm__cycles_active.max", "sm__cycles_active.avg"),
        nvprof_note=(
            "nvprof reports per-SM active cycles only with --aggregate-mode off, a layout this "
            "advisor does not read; use Nsight Compute on Volta and later"
        ),
    ),
    evaluate=evaluate,
)
