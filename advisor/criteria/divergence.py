"""DIVERGENCE: the share of a warp's thread slots that execute each instruction.

Seed 002, section IV-C: ``DIVERGENCE = (#ExeInstructions / #PotExeInstructions) * F_Divergence``
-- thread instructions executed over the thread instructions 32-wide warps could have executed:

* nvprof ``warp_execution_efficiency``; Nsight Compute
  ``smsp__thread_inst_executed_per_inst_executed.ratio`` / 32 (the metric map canonicalises it to
  ``warp_execution_efficiency``);
* or the counters: ``thread_inst_executed / (32 * inst_executed)``.

Decision V1 (docs/criteria.md): the predicated-on variants come first -- nvprof
``warp_nonpred_execution_efficiency``, ncu
``smsp__thread_inst_executed_pred_on_per_inst_executed.ratio`` / 32, or
``not_predicated_off_thread_inst_executed / (32 * inst_executed)`` -- because a compiler turns short
divergent branches into predicated instructions, whose predicated-off lanes do no work although
the warp counts them as active.

F_Divergence (Decision 5) is evaluated at the measured ratio; it is 1 without a measured device
characterization.  Zero-denominator policy: a kernel that executed no instruction is n/a.
Potential speedup: 1 / DIVERGENCE (seed 002, section V).
"""

from __future__ import annotations

from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import (
    Context,
    Scored,
    absent,
    clamp01,
    inverse,
    not_applicable,
    score,
)
from advisor.criteria.engine.inputs import KernelData, Recipe
from advisor.criteria.engine.spec import CriterionSpec, Needs

NAME = "DIVERGENCE"
WARP_SIZE = 32


def executed_over_potential(thread_inst_executed: float, inst_executed: float) -> float | None:
    """thread_inst_executed / (32 * inst_executed); None when no instruction ran."""
    if not inst_executed > 0:
        return None
    return thread_inst_executed / (WARP_SIZE * inst_executed)


RECIPES: tuple[Recipe, ...] = (
    # Decision V1: threads predicated off are idle lanes too (compilers predicate short divergent
    # branches instead of branching), so the predicated-on counts come first
    Recipe(
        "non-predicated warp execution efficiency (nvprof warp_nonpred_execution_efficiency, "
        "ncu smsp__thread_inst_executed_pred_on_per_inst_executed.ratio / 32)",
        ("warp_nonpred_execution_efficiency",),
        lambda v: (
            v["warp_nonpred_execution_efficiency"]
            if v["warp_nonpred_execution_efficiency"] > 0
            else None
        ),
    ),
    Recipe(
        "predicated-on thread_inst_executed / (32 * inst_executed)",
        ("not_predicated_off_thread_inst_executed", "inst_executed"),
        lambda v: executed_over_potential(
            v["not_predicated_off_thread_inst_executed"], v["inst_executed"]
        ),
    ),
    Recipe(
        "warp execution efficiency (nvprof warp_execution_efficiency, "
        "ncu smsp__thread_inst_executed_per_inst_executed.ratio / 32)",
        ("warp_execution_efficiency",),
        lambda v: v["warp_execution_efficiency"] if v["warp_execution_efficiency"] > 0 else None,
    ),
    Recipe(
        "thread_inst_executed / (32 * inst_executed)",
        ("thread_inst_executed", "inst_executed"),
        lambda v: executed_over_potential(v["thread_inst_executed"], v["inst_executed"]),
    ),
)


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    scored = score(kernel, RECIPES, ctx)
    if scored is None:
        return absent(NAME, kernel, RECIPES, ctx)
    if not isinstance(scored, Scored):
        return not_applicable(NAME, "the kernel executed no instruction")
    factor = ctx.device.F("F_Divergence", scored.raw)
    value = clamp01(scored.raw * factor)
    return CriterionResult(
        name=NAME,
        status=COMPUTED,
        value=value,
        raw_value=scored.raw,
        speedups=Speedups(paper=inverse(value), amdahl=inverse(value)),
        method=scored.recipe.label,
        inputs={**scored.inputs, "F_Divergence": factor},
        launches_used=scored.launches_used,
    )


SPEC = CriterionSpec(
    name=NAME,
    order=3,
    threshold=0.8,
    threshold_reason=(
        "Fewer than 80 % of the lanes active (about 25 of 32 threads) is visible divergence; "
        "Nsight Compute's thread-divergence guidance starts from a similar share of inactive "
        "threads."
    ),
    title="thread divergence: many lanes of each warp are inactive",
    actions=(
        "compute more elements per thread so branches depend on data less often",
        "use instruction-level parallelism (independent operations per thread)",
        "regroup data or threads so the threads of a warp take the same branch",
        "replace short branches by predicated / branch-free arithmetic",
    ),
    short_label="diverg.",
    recipes=RECIPES,
    needs=Needs(
        ncu_metrics=(
            "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
            "smsp__thread_inst_executed_per_inst_executed.ratio",
        ),
        nvprof_metrics=("warp_nonpred_execution_efficiency", "warp_execution_efficiency"),
    ),
    evaluate=evaluate,
)
