"""DIVERGENCE across a tuning step (Decision V3, docs/criteria.md): the value stays the share of
lanes at work per issued warp instruction, the idle lane slots it hides are given as a count,
the branch data picks the cause, and the actions fit the cause: "more elements per thread" only
for a phase with few active lanes, warp-uniform conditions first otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.criteria import evaluate
from advisor.criteria.divergence import (
    DIVERGENT_BRANCHES,
    FEW_ACTIVE_LANES,
    NCU_DIVERGENT_BRANCHES,
    SPEC,
    UNIFORM_BRANCHES_MIN,
    cause,
    idle_lane_slots,
)
from advisor.report import compare
from tests.criteria.test_criteria_engine import DEVICE, criterion, launch, make_profile, metric

#: a reduction with interleaved tid % (2*s), then sequential addressing: the shares of the real
#: series in docs/criteria.md, the warp instructions and branch efficiencies of the instruction
#: model of benchmarks/reduction_lanes.py (a block of 256 threads, bodies compiled as branches)
INTERLEAVED = {"share": 0.75, "inst": 1646.0, "uniform": 0.65}
SEQUENTIAL = {"share": 0.62, "inst": 639.0, "uniform": 0.96}


def _divergence(rows: list[tuple[str, float]]) -> tuple[Any, Any]:
    profile = make_profile([launch(0, 1000.0, grid_x=160)], [metric(0, n, v) for n, v in rows])
    analysis = evaluate(profile, DEVICE)
    return criterion(analysis, "DIVERGENCE"), analysis


def test_idle_lane_slots_and_the_cause_from_the_branch_data() -> None:
    assert idle_lane_slots(0.75, 1000.0) == 8000.0 and idle_lane_slots(0.75, None) is None
    # no branch data: no variant, the generic actions
    assert cause({})[0] is None
    # most branches diverge: divergent branching
    assert cause({"branch_efficiency": 0.33})[0] == DIVERGENT_BRANCHES
    assert cause({NCU_DIVERGENT_BRANCHES: 47.0})[0] == DIVERGENT_BRANCHES
    # warp-uniform branches, or no divergent branch at all: few active lanes
    assert cause({"branch_efficiency": UNIFORM_BRANCHES_MIN})[0] == FEW_ACTIVE_LANES
    assert cause({"branch_efficiency": 0.0, "divergent_branch": 0.0})[0] == FEW_ACTIVE_LANES


def test_a_divergent_reduction_leads_with_warp_uniform_conditions() -> None:
    c, analysis = _divergence(
        [
            ("warp_nonpred_execution_efficiency", INTERLEAVED["share"]),
            ("inst_executed", INTERLEAVED["inst"]),
            ("branch_efficiency", INTERLEAVED["uniform"]),
        ]
    )
    assert c.value == pytest.approx(0.75) and c.variant == DIVERGENT_BRANCHES
    assert c.inputs["idle_lane_slots"] == 0.25 * 32 * 1646
    hint = next(h for h in analysis.kernels[0].hints if h.criterion == "DIVERGENCE")
    assert hint.title.startswith("thread divergence")
    assert "warp-uniform" in hint.actions[0] and "tid % (2*s)" in hint.actions[0]
    assert not any("more elements per thread" in a for a in hint.actions)


def test_after_sequential_addressing_the_hint_names_the_few_active_lanes() -> None:
    c, analysis = _divergence(
        [
            ("warp_nonpred_execution_efficiency", SEQUENTIAL["share"]),
            ("inst_executed", SEQUENTIAL["inst"]),
            ("branch_efficiency", SEQUENTIAL["uniform"]),
        ]
    )
    # the share is lower than before (0.62 < 0.75): fully active modulo instructions went away
    assert c.value == pytest.approx(0.62) and c.variant == FEW_ACTIVE_LANES
    hint = next(h for h in analysis.kernels[0].hints if h.criterion == "DIVERGENCE")
    assert hint.title.startswith("inactive lanes without divergent branching")
    assert "more elements" in hint.actions[0] and "__shfl_down_sync" in hint.actions[0]
    assert any("not divergent branching" in n for n in c.notes)


def test_the_generic_actions_lead_with_warp_uniform_conditions() -> None:
    assert "warp-uniform" in SPEC.actions[0] and "sequential addressing" in SPEC.actions[0]
    assert "more elements per thread" not in SPEC.actions[0]
    assert "instruction-level parallelism" not in " ".join(SPEC.actions)
    assert "divergent branches, predicated-off lanes or phases" in SPEC.title


def test_compare_lists_the_idle_lane_slots_of_the_step() -> None:
    """The step from interleaved to sequential addressing: the share falls, and the comparison
    shows the count of idle lane slots beside it, so the step is not read as a regression."""

    def version(share: float, inst: float, duration: float) -> dict[str, object]:
        criteria: dict[str, object] = {
            c: {"value": None, "potential_speedup": None} for c in compare.CRITERIA
        }
        criteria["DIVERGENCE"] = {
            "value": share,
            "potential_speedup": 1 / share,
            "inputs": {
                "inst_executed": inst,
                "idle_lane_slots": idle_lane_slots(share, inst),
            },
        }
        kernel = {"name": "reduce", "duration_ns": duration, "potential_speedup": None}
        return {
            "application": {"gpu_time_ns": duration, "potential_speedup": None},
            "kernels": [{**kernel, "criteria": criteria}],
        }

    # a branch-compiled body: the share rises as the idle slots fall
    before = version(0.88, 1646.0, 1.38e6)
    after = version(0.96, 639.0, 1.0e6)
    (k,) = compare.compare([("a", ["x"], before), ("b", ["y"], after)]).checks[0].kernels
    assert k.addressed == "DIVERGENCE"
    # a predicated body: the share falls; the count says the idle lanes did not grow
    before = version(0.82, 1539.0, 1.38e6)
    after = version(0.60, 707.0, 1.0e6)
    (k,) = compare.compare([("a", ["x"], before), ("b", ["y"], after)]).checks[0].kernels
    assert k.addressed is None
    slots = [line for line in k.changes if line.startswith("idle lane slots")]
    assert slots == ["idle lane slots 8,865 → 9,050 (1.02×)"]
    assert "warp instructions 1,539 → 707 (0.46×)" in k.changes
