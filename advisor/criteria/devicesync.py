"""DEVICESYNC: the share of warp stalls that are synchronization stalls.

Seed 002, section IV-B: ``DEVICESYNC = 1 - StallSync``, StallSync = synchronization stalls over
all stalls.  Inputs (MODELS.md §1, FORMATS.md §4.1):

* nvprof: ``stall_sync`` (already a fraction of the stall samples; the ``stall_*`` sum is ~1);
* Nsight Compute: (barrier + membar stalls) / sum over every stall reason, from one family of
  per-reason metrics -- ``smsp__warp_issue_stalled_<r>_per_warp_active.pct`` (2019-2021 names),
  ``smsp__warps_issue_stalled_<r>_per_warp_active.pct`` (later), the WarpStateStats ratios
  ``smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio``, or the PC-sampling counts
  ``smsp__pcsamp_warps_issue_stalled_<r>`` (without the ``_not_issued`` variants).  The ncu
  values do not sum to 100 like nvprof's, hence the normalisation.  ``selected`` is the issuing
  state, not a stall, and is left out.  Zero-denominator policy: no stall at all is n/a.

Potential speedup (Decision 3): x = (1 - TotActiveWarps / (|Warps| * CLK_cycles)) * StallSync,
SP = 1 / (1 - x), where TotActiveWarps / (|Warps| * CLK_cycles) is the warp activity of the
device: ``active_warps / (max warps per SM * elapsed SM cycles)``, or achieved occupancy times
the share of cycles the SMs are active.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from advisor.criteria.engine import collect
from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import Context, Scored, absent, aux_mean, not_applicable, score
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.means import weighted_mean
from advisor.criteria.engine.spec import CriterionSpec, Needs
from advisor.criteria.engine.speedups import devicesync_fraction, devicesync_speedup_amdahl

NAME = "DEVICESYNC"

#: reasons that are synchronization (seed 002: thread barriers; NVIDIA maps stall_sync to both)
SYNC_REASONS = ("barrier", "membar")
#: states that are not stalls
NOT_STALLS = ("selected",)

#: family label -> regex over metric names capturing the reason
STALL_FAMILIES: dict[str, re.Pattern[str]] = {
    "per warp active %": re.compile(
        r"^smsp__warps?_issue_stalled_([a-z_]+?)_per_warp_active\.pct$"
    ),
    "per issue active (WarpStateStats)": re.compile(
        r"^smsp__average_warps_issue_stalled_([a-z_]+?)_per_issue_active\.ratio$"
    ),
    "PC sampling": re.compile(r"^smsp__pcsamp_warps_issue_stalled_([a-z_]+)$"),
}

#: Reasons every ncu version reports for every kernel (Volta and later).  A family is only
#: normalised when these are present too, so that a profile holding the barrier metric alone
#: (as a ``--metrics`` list might) is not read as "every stall is a barrier stall".
REQUIRED_OTHER_REASONS = ("long_scoreboard", "wait")

#: canonical names the metric map gives to the barrier / membar members of the first family
_CANONICAL = {"stall_barrier_per_warp_active": "barrier", "stall_membar_per_warp_active": "membar"}


def devicesync_from_stall_sync(stall_sync: float) -> float:
    """DEVICESYNC = 1 - StallSync."""
    return 1.0 - stall_sync


def stall_reasons(values: Mapping[str, float], family: str) -> dict[str, float]:
    """reason -> value for one ncu stall family found in ``values``."""
    pattern = STALL_FAMILIES[family]
    out: dict[str, float] = {}
    for name, value in values.items():
        match = pattern.match(name)
        reason = match.group(1) if match else None
        if family == "per warp active %" and name in _CANONICAL:
            reason = _CANONICAL[name]
        if reason is None or reason.endswith("_not_issued") or reason in NOT_STALLS:
            continue
        out[reason] = out.get(reason, 0.0) + value
    return out


def stall_sync_share(reasons: Mapping[str, float]) -> float | None:
    """(barrier + membar) / sum over all reasons; None when there is no stall at all."""
    total = sum(reasons.values())
    if not total > 0:
        return None
    return sum(reasons.get(r, 0.0) for r in SYNC_REASONS) / total


def _family_names(family: str, spelling: str = "warp") -> tuple[str, ...]:
    """The names a family must have: barrier plus :data:`REQUIRED_OTHER_REASONS`."""
    if family == "per warp active %":
        pattern = f"smsp__{spelling}_issue_stalled_{{}}_per_warp_active.pct"
        first = "stall_barrier_per_warp_active"  # canonical name of both spellings
    elif family == "per issue active (WarpStateStats)":
        pattern = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
        first = pattern.format("barrier")
    else:
        pattern = "smsp__pcsamp_warps_issue_stalled_{}"
        first = pattern.format("barrier")
    return (first, *(pattern.format(r) for r in REQUIRED_OTHER_REASONS))


#: recipe label -> stall family, to report the sums a family recipe used
_FAMILY_OF: dict[str, str] = {}


def _family_recipe(family: str, spelling: str = "warp") -> Recipe:
    def formula(v: Values) -> float | None:
        share = stall_sync_share(stall_reasons(v, family))
        return None if share is None else devicesync_from_stall_sync(share)

    label = f"1 - (barrier + membar) / all stall reasons, ncu {family}"
    _FAMILY_OF[label] = family
    return Recipe(label, _family_names(family, spelling), formula, tools=("ncu",))


def _family_sums(kernel: KernelData, recipe: Recipe, extra: Values) -> dict[str, float]:
    """Duration-weighted sync and total stalls of a family recipe, for the evidence."""
    family = _FAMILY_OF.get(recipe.label)
    if family is None:
        return {}
    pairs_sync, pairs_all = [], []
    for unit in kernel.units:
        if not all(n in unit.values or n in extra for n in recipe.needs):
            continue
        reasons = stall_reasons(unit.values, family)
        pairs_sync.append((unit, sum(reasons.get(r, 0.0) for r in SYNC_REASONS)))
        pairs_all.append((unit, sum(reasons.values())))
    if not pairs_all:
        return {}
    return {
        "sync_stalls": weighted_mean(pairs_sync),
        "all_stalls": weighted_mean(pairs_all),
    }


RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "1 - stall_sync (nvprof)",
        ("stall_sync",),
        lambda v: devicesync_from_stall_sync(v["stall_sync"]),
        tools=("nvprof",),
    ),
    _family_recipe("per issue active (WarpStateStats)"),
    _family_recipe("per warp active %", "warps"),
    _family_recipe("per warp active %", "warp"),
    _family_recipe("PC sampling"),
)

#: warp activity = TotActiveWarps / (|Warps| * CLK_cycles)
ACTIVITY_RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "active_warps / (max warps per SM * elapsed SM cycles)",
        ("active_warps", "device.max_warps_per_sm", "elapsed_cycles_sm"),
        lambda v: (
            v["active_warps"] / (v["device.max_warps_per_sm"] * v["elapsed_cycles_sm"])
            if v["elapsed_cycles_sm"] > 0
            else None
        ),
    ),
    Recipe(
        "achieved occupancy * SM efficiency",
        ("achieved_occupancy", "sm_efficiency"),
        lambda v: v["achieved_occupancy"] * v["sm_efficiency"],
    ),
    Recipe(
        "achieved occupancy * SM activity (nvprof sm_activity)",
        ("achieved_occupancy", "sm_activity"),
        lambda v: v["achieved_occupancy"] * v["sm_activity"],
        tools=("nvprof",),
    ),
    Recipe(
        "achieved occupancy * SM active cycles / SM elapsed cycles",
        ("achieved_occupancy", "sm_cycles_active_avg", "sm__cycles_elapsed.avg"),
        lambda v: (
            v["achieved_occupancy"] * v["sm_cycles_active_avg"] / v["sm__cycles_elapsed.avg"]
            if v["sm__cycles_elapsed.avg"] > 0
            else None
        ),
        tools=("ncu",),
    ),
    Recipe(
        "achieved occupancy * SM active cycles / elapsed cycles (Speed Of Light)",
        ("achieved_occupancy", "sm_cycles_active_avg", "elapsed_cycles"),
        lambda v: (
            min(1.0, v["achieved_occupancy"] * v["sm_cycles_active_avg"] / v["elapsed_cycles"])
            if v["elapsed_cycles"] > 0
            else None
        ),
        tools=("ncu",),
    ),
)


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    scored = score(kernel, RECIPES, ctx)
    if scored is None:
        return absent(NAME, kernel, RECIPES, ctx)
    if not isinstance(scored, Scored):
        return not_applicable(NAME, "no warp stalls were recorded for this kernel")
    value = scored.raw
    stall_sync = 1.0 - value
    inputs = {
        **scored.inputs,
        **_family_sums(kernel, scored.recipe, ctx.extra),
        "stall_sync_frac": stall_sync,
    }
    activity = aux_mean(kernel, ACTIVITY_RECIPES, ctx)
    notes: tuple[str, ...] = ()
    speedups = Speedups()
    if activity is None:
        notes = (
            "potential speedup needs the warp activity (achieved_occupancy and sm_efficiency, "
            "or active_warps and elapsed_cycles_sm, or achieved_occupancy, SM active cycles and "
            "elapsed cycles)",
        )
    else:
        x = devicesync_fraction(1.0 - activity.raw, stall_sync)
        speedups = Speedups(paper=x, amdahl=devicesync_speedup_amdahl(x))
        inputs.update(activity.inputs)
        inputs["warp_activity_frac"] = activity.raw
        inputs["sync_stall_time_frac"] = x
    return CriterionResult(
        name=NAME,
        status=COMPUTED,
        value=value,
        raw_value=value,
        speedups=speedups,
        method=scored.recipe.label,
        inputs=inputs,
        launches_used=scored.launches_used,
        collect=collect.commands_for(NAME) if activity is None else {},
        notes=notes,
    )


SPEC = CriterionSpec(
    name=NAME,
    order=2,
    threshold=0.8,
    threshold_reason=(
        "A fifth of all stalls at barriers means barriers, not memory or math, hold warps back."
    ),
    title="warps stall at barriers (device synchronization)",
    actions=(
        "organize the work warp-centrically so a warp cooperates on one item and needs no "
        "block-wide barrier (warp shuffles, cooperative-groups tiled partitions)",
        "remove barriers that order nothing; reduce a log2(BLOCKSIZE)-step barrier tree to one "
        "barrier followed by warp-level steps",
        "balance the work between the warps of a block so none waits long at __syncthreads()",
    ),
    short_label="dev. sync",
    recipes=(*RECIPES, *ACTIVITY_RECIPES),
    needs=Needs(
        ncu_metrics=(
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "sm__cycles_active.avg",
            "sm__cycles_elapsed.avg",
        ),
        ncu_sections=("WarpStateStats",),
        nvprof_metrics=("stall_sync", "achieved_occupancy", "sm_efficiency"),
    ),
    evaluate=evaluate,
    metric_patterns=tuple(STALL_FAMILIES.values()),  # every reason of a family is read
)
