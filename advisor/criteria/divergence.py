"""DIVERGENCE: the share of a warp's lanes that do work in each instruction it issues.

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

Decision V3 (docs/criteria.md, "DIVERGENCE across a tuning step"): the value stays the share of
lanes at work per issued warp instruction -- 1 / value bounds the time idle lanes cost an
issue-bound kernel -- but the hint says what the data shows about the cause, and the evidence
gives the count the share hides:

* ``idle_lane_slots`` = (1 - raw value) x 32 x ``inst_executed`` where the warp instructions are
  known: the lane slots issued without work.  A step that removes fully active instructions (the
  ``tid % (2*s)`` modulo of an interleaved reduction) lowers the share while it removes no idle
  lane, so versions are compared by this count (``compare`` lists it), not by the share;
* the branch data, where collected (nvprof ``branch_efficiency`` / ``divergent_branch``, ncu
  ``smsp__sass_average_branch_targets_threads_uniform.pct`` /
  ``smsp__sass_branch_targets_threads_divergent.sum``), picks the variant: under
  :data:`UNIFORM_BRANCHES_MIN` of the branches warp-uniform is divergent branching
  (:data:`DIVERGENT_BRANCHES`: make the conditions warp-uniform); at or above it, or no divergent
  branch at all, the idle lanes are predicated-off lanes or a phase where few threads of a warp
  have work (:data:`FEW_ACTIVE_LANES`: more elements per thread, warp shuffles).  Without branch
  data the generic actions lead with warp-uniform conditions.
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
#: the evidence the cause is read from (Decision V3), read when present; the raw Nsight Compute
#: name of the divergent branch count is read too (its unit, "branches", keeps it unmapped)
NCU_DIVERGENT_BRANCHES = "smsp__sass_branch_targets_threads_divergent.sum"
CAUSE_EVIDENCE = ("inst_executed", "branch_efficiency", "divergent_branch", NCU_DIVERGENT_BRANCHES)
#: Decision V3: at least this share of warp-uniform branches is not divergent branching
UNIFORM_BRANCHES_MIN = 0.9
#: variants of a computed value by cause (Decision V3)
DIVERGENT_BRANCHES = "divergent_branches"
FEW_ACTIVE_LANES = "few_active_lanes"
#: per-instruction sums (parsers.ncu.source_counters.criterion_sums): predicated-on thread
#: instructions and warp instructions
SOURCE_LANES = ("source.thread_inst_executed_true", "source.inst_executed")


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
        optional=CAUSE_EVIDENCE,
    ),
    Recipe(
        "predicated-on thread_inst_executed / (32 * inst_executed)",
        ("not_predicated_off_thread_inst_executed", "inst_executed"),
        lambda v: executed_over_potential(
            v["not_predicated_off_thread_inst_executed"], v["inst_executed"]
        ),
        optional=CAUSE_EVIDENCE[1:],
    ),
    Recipe(
        "warp execution efficiency (nvprof warp_execution_efficiency, "
        "ncu smsp__thread_inst_executed_per_inst_executed.ratio / 32)",
        ("warp_execution_efficiency",),
        lambda v: v["warp_execution_efficiency"] if v["warp_execution_efficiency"] > 0 else None,
        optional=CAUSE_EVIDENCE,
    ),
    Recipe(
        "thread_inst_executed / (32 * inst_executed)",
        ("thread_inst_executed", "inst_executed"),
        lambda v: executed_over_potential(v["thread_inst_executed"], v["inst_executed"]),
        optional=CAUSE_EVIDENCE[1:],
    ),
    # after every kernel-level recipe: the predicated-on lanes summed over the instructions of
    # the per-instruction counters, read only when none of the above fits
    # (advisor.criteria.engine.instruction_sums; docs/criteria.md, "Per-instruction recipes")
    Recipe(
        "predicated-on thread instructions / (32 * warp instructions), summed over the "
        "instructions (Nsight Compute source counters)",
        SOURCE_LANES,
        lambda v: executed_over_potential(v[SOURCE_LANES[0]], v[SOURCE_LANES[1]]),
        tools=("ncu",),
        optional=CAUSE_EVIDENCE,
        fallback=True,
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
    inputs = {**scored.inputs, "F_Divergence": factor}
    idle = idle_lane_slots(scored.raw, inputs.get("inst_executed", inputs.get(SOURCE_LANES[1])))
    if idle is not None:
        inputs["idle_lane_slots"] = idle
    variant, notes = cause(inputs)
    return CriterionResult(
        name=NAME,
        status=COMPUTED,
        value=value,
        raw_value=scored.raw,
        speedups=Speedups(paper=inverse(value), amdahl=inverse(value)),
        method=scored.recipe.label,
        inputs=inputs,
        launches_used=scored.launches_used,
        variant=variant or "",
        notes=notes,
    )


def idle_lane_slots(share: float, inst_executed: float | None) -> float | None:
    """Decision V3: (1 - share) x 32 x warp instructions, the lane slots issued without work;
    None without the warp instructions."""
    if inst_executed is None or not inst_executed >= 0:
        return None
    return float(round((1.0 - share) * WARP_SIZE * inst_executed))


def cause(inputs: dict[str, float]) -> tuple[str | None, tuple[str, ...]]:
    """Decision V3: (variant, notes) from the branch data among ``inputs``: divergent branching
    (under :data:`UNIFORM_BRANCHES_MIN` of the branches warp-uniform), few active lanes (at or
    above it, or no divergent branch), or no variant without branch data."""
    uniform = inputs.get("branch_efficiency")
    divergent = inputs.get("divergent_branch", inputs.get(NCU_DIVERGENT_BRANCHES))
    notes: list[str] = []
    if "idle_lane_slots" in inputs:
        notes.append(
            f"{inputs['idle_lane_slots']:,.0f} lane slots per launch issued without work (32 x "
            "warp instructions - thread instructions at work): compare versions by this count; "
            "the share also moves with the fully active instructions around the idle lanes"
        )
    if divergent == 0 or (uniform is not None and uniform >= UNIFORM_BRANCHES_MIN):
        shown = "no branch diverged" if divergent == 0 else f"{uniform:.0%} of branches uniform"
        notes.append(
            f"{shown}: the idle lanes are predicated-off lanes or a phase in which few threads "
            "of a warp have work, not divergent branching"
        )
        return FEW_ACTIVE_LANES, tuple(notes)
    if uniform is not None and uniform > 0:
        notes.append(f"{1 - uniform:.0%} of the branches diverged within a warp")
        return DIVERGENT_BRANCHES, tuple(notes)
    if divergent is not None and divergent > 0:
        notes.append(f"{divergent:,.0f} divergent branches")
        return DIVERGENT_BRANCHES, tuple(notes)
    return None, tuple(notes)


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


#: the lead action without branch data or for divergent branching (Decision V3)
_WARP_UNIFORM = (
    "make branch conditions warp-uniform so whole warps idle instead of lanes within a warp "
    "(a reduction: sequential addressing, if (tid < s), instead of interleaved "
    "if (tid % (2*s) == 0))"
)
#: the action for a phase with few active lanes, "more elements per thread" where it fits
_FEW_ACTIVE = (
    "where a phase leaves few threads of a warp with work (a reduction's last steps), give each "
    "thread more elements first (add while loading) so that phase is a smaller share, and finish "
    "the last 32 values with warp shuffles (__shfl_down_sync), which keep every lane busy"
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
    title=(
        "inactive lanes: many lanes of each warp issue no work (divergent branches, "
        "predicated-off lanes or phases with few active threads)"
    ),
    actions=(
        _WARP_UNIFORM,
        _FEW_ACTIVE,
        "regroup data or threads so the threads of a warp take the same branch",
        "collect the branch data (ncu SourceCounters section: branch efficiency, divergent "
        "branches) to tell divergent branches from phases with few active threads",
    ),
    variants={
        DIVERGENT_BRANCHES: (
            "thread divergence: the lanes of a warp take different branches, many lanes idle",
            (
                _WARP_UNIFORM,
                "regroup data or threads so the threads of a warp take the same branch",
                "replace short divergent branches by branch-free arithmetic all lanes execute "
                "(select, min/max)",
            ),
        ),
        FEW_ACTIVE_LANES: (
            "inactive lanes without divergent branching: predicated-off lanes or phases in "
            "which few threads of a warp have work",
            (
                _FEW_ACTIVE,
                "where a condition leaves whole warps without work, keep it warp-uniform so those "
                "warps skip the instructions instead of issuing them with every lane "
                "predicated off",
                "make the number of threads per block a multiple of 32",
            ),
        ),
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
