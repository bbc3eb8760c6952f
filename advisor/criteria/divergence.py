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

Decision V2: without any of those counters (a trace: nsys, nvprof gpu-trace), a block size that
is not a multiple of 32 still fixes an upper bound: the last warp of each block runs with
``block threads mod 32`` lanes, so at most ``block threads / (32 * ceil(block threads / 32))`` of
the lanes execute (a ``<<<1,1>>>`` launch: 1/32).  That value is scored, as the variant "partial
warps" with its own actions and a note that branch divergence, not measured, can only lower it.
A block of a multiple of 32 threads tells nothing, and the criterion stays not computable.
"""

from __future__ import annotations

import math

from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import (
    Context,
    Scored,
    absent,
    aux_mean,
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


def warp_lanes_used(block_threads: float) -> float | None:
    """Decision V2: block threads / the lanes of the warps they occupy (1 for a multiple of
    32); None for an empty block."""
    if not block_threads >= 1:
        return None
    return block_threads / (WARP_SIZE * math.ceil(block_threads / WARP_SIZE))


#: Decision V2, the launch configuration's upper bound (used only below 1)
LAUNCH_LANES = (
    Recipe(
        "launch configuration: threads per block / the 32-lane warps they occupy",
        ("launch.block_threads",),
        lambda v: warp_lanes_used(v["launch.block_threads"]),
        fallback=True,
    ),
)
#: the variant of a block size that is not a multiple of 32, scored from the launch alone
PARTIAL_WARPS = "partial_warps"


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    scored = score(kernel, RECIPES, ctx)
    if scored is None:
        lanes = aux_mean(kernel, LAUNCH_LANES, ctx)
        if lanes is not None and lanes.raw < 1.0:
            return _partial_warps(lanes)
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


def _partial_warps(lanes: Scored) -> CriterionResult:
    block = lanes.inputs.get("launch.block_threads")
    shown = f"blocks of {block:g} threads" if block else "the blocks"
    return CriterionResult(
        name=NAME,
        status=COMPUTED,
        value=lanes.raw,
        raw_value=lanes.raw,
        speedups=Speedups(paper=inverse(lanes.raw), amdahl=inverse(lanes.raw)),
        method=lanes.recipe.label,
        inputs=dict(lanes.inputs),
        launches_used=lanes.launches_used,
        variant=PARTIAL_WARPS,
        notes=(
            f"from the launch configuration (Decision V2): {shown} leave lanes of their last "
            "warp idle; branch divergence is not measured here (collect "
            "warp_execution_efficiency) and can only lower the value",
        ),
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
    variants={
        PARTIAL_WARPS: (
            "partial warps: the block size is not a multiple of 32, lanes of each block's last "
            "warp idle",
            (
                "make the number of threads per block a multiple of 32 (the warp size), "
                "e.g. 128 or 256",
                "give each block more threads (a grid-stride or block-stride loop over the work "
                "instead of one thread or a few per block)",
            ),
        ),
    },
    short_label="diverg.",
    recipes=(*RECIPES, *LAUNCH_LANES),
    needs=Needs(
        ncu_metrics=(
            "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
            "smsp__thread_inst_executed_per_inst_executed.ratio",
        ),
        nvprof_metrics=("warp_nonpred_execution_efficiency", "warp_execution_efficiency"),
    ),
    evaluate=evaluate,
)
