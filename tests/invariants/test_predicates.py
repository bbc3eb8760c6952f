"""Each report invariant catches the fault it names: a hand-built analysis JSON with the fault
breaks it, the same JSON without the fault holds it (the walk over real inputs relies on these
predicates, so a predicate that never fires would pass every report)."""

from __future__ import annotations

import copy
from typing import Any

from advisor.report import invariants

NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"


def _report() -> dict[str, Any]:
    """A consistent two-kernel report: one compute kernel, one NCCL kernel, a trace."""
    return {
        "application": {
            "HOSTSYNC": {"value": 0.5, "inputs": {"idle_ns": 50.0, "span_ns": 100.0}},
            "hints": [{"criterion": "LOADBALANC_SM", "kernel": "gemm", "kernels": ["gemm"]}],
        },
        "kernels": [
            {"name": "gemm", "potential_speedup": 2.0, "hints": [{"criterion": "LOADBALANC_SM"}]},
            {"name": NCCL, "potential_speedup": None, "hints": []},
        ],
        "host": {
            "span_ns": 100.0,
            "devices": [{"device_id": 0, "span_ns": 100.0}],
            "idle": {
                "host_wait_ns": 10.0,
                "launch_delay_ns": 5.0,
                "other_ns": 35.0,
                "idle_ns": 50.0,
            },
            "idle_by_stream": [{"device_id": 0, "stream": 7, "idle_ns": 60.0}],
        },
        "communication": {
            "kernels": [NCCL],
            "communication_ns": 30.0,
            "exposed_ns": 20.0,
            "span_ns": 100.0,
            "devices": [],
        },
        "bsp_other_gpus": [
            {"gpu": "H100", "kernels": [{"name": "gemm", "predicted_ms": 0.2, "floor_ms": 0.1}]}
        ],
    }


def test_the_consistent_report_holds_every_invariant() -> None:
    assert invariants.check(_report(), None) == []


def test_a_prediction_under_its_floor_is_caught() -> None:
    data = _report()
    data["bsp_other_gpus"][0]["kernels"][0]["predicted_ms"] = 0.09
    assert invariants.predictions_not_under_floor(data) == [
        "H100: gemm: predicted 0.09 ms under its floor 0.1 ms"
    ]


def test_waits_summed_over_streams_above_the_span_are_caught() -> None:
    data = _report()
    data["host"]["idle"]["host_wait_ns"] = 90.0  # 90 + 5 + 35 > 100
    assert len(invariants.waits_within_span(data)) == 1
    data = _report()
    data["host"]["idle_by_stream"][0]["idle_ns"] = 160.0
    assert "stream 7" in invariants.waits_within_span(data)[0]
    data = _report()
    data["communication"]["exposed_ns"] = 40.0
    assert invariants.waits_within_span(data) == [
        "communication: exposed time above the communication time"
    ]


def test_a_launch_hint_on_a_collective_is_caught() -> None:
    data = _report()
    data["kernels"][1]["hints"] = [{"criterion": "LOADBALANC_SM", "title": "grid too small"}]
    assert invariants.no_launch_hint_on_collectives(data) == [
        f"communication kernel {NCCL}: LOADBALANC_SM hint"
    ]
    data = _report()
    data["application"]["hints"][0]["kernels"].append(NCCL)
    assert len(invariants.no_launch_hint_on_collectives(data)) == 1
    # a kernel the trace names a collective (Kineto 'Collective name') counts too
    data = copy.deepcopy(_report())
    data["communication"]["kernels"].append("gemm")
    assert invariants.no_launch_hint_on_collectives(data) != []


def test_a_markdown_figure_missing_from_the_json_is_caught() -> None:
    data = {
        "kernels": [{"name": "k", "duration_ns": 1_240_000.0, "share_of_gpu_time": 0.4965}],
        "application": {"HOSTSYNC": {"value": 0.1736}},
        "verdict": {"the_whole_application": 5.7603},
    }
    good = "`k` 1.24 ms, 49.7% of GPU time · HOSTSYNC 0.17 · up to 5.76x"
    assert invariants.markdown_numbers_in_json(data, good) == []
    assert invariants.markdown_numbers_in_json(data, good.replace("1.24 ms", "1.42 ms")) == [
        "the Markdown's 1.42 ms is no time of the JSON"
    ]
    assert invariants.markdown_numbers_in_json(data, good.replace("0.17", "0.71")) == [
        "the Markdown's HOSTSYNC 0.71 is no value of the JSON"
    ]
    assert invariants.markdown_numbers_in_json(data, good.replace("5.76x", "5.92x")) == [
        "the Markdown's 5.92x is no number of the JSON"
    ]
    assert invariants.markdown_numbers_in_json(data, good.replace("49.7%", "47.4%")) == [
        "the Markdown's 47.4% is no share of the JSON"
    ]


def test_large_speedups_and_values_just_below_a_threshold_are_checked_too() -> None:
    """``1,208x`` (no decimals from 100x on) and ``LOADBALANC_SM 0.797`` (more decimals just
    below a threshold) are figures of the JSON like any other."""
    data = {"application": {"potential_speedup": 1207.93}, "kernels": [{"value": 0.7967}]}
    good = "up to 1,208x · LOADBALANC_SM 0.797"
    assert invariants.markdown_numbers_in_json(data, good) == []
    assert invariants.markdown_numbers_in_json(data, good.replace("1,208x", "1,508x")) == [
        "the Markdown's 1,508x is no number of the JSON"
    ]
    assert invariants.markdown_numbers_in_json(data, good.replace("0.797", "0.786")) == [
        "the Markdown's LOADBALANC_SM 0.786 is no value of the JSON"
    ]


def test_a_speedup_that_promises_a_launch_under_the_floor_is_caught() -> None:
    """A 5 µs launch at 30x would run in 167 ns, under the 400 ns floor (Decision L1)."""
    kernel = {
        "name": "k",
        "duration_ns": 5_000.0,
        "launches": 1,
        "potential_speedup": 12.5,  # exactly 400 ns: allowed
        "criteria": {"LOADBALANC_SM": {"scope": "kernel", "potential_speedup": 30.0}},
        "hints": [],
    }
    assert invariants.no_launch_under_floor({"kernels": [kernel]}) == [
        "k: LOADBALANC_SM 30.00x makes a 5000 ns launch 167 ns, under the 400 ns floor"
    ]
    kernel["criteria"]["LOADBALANC_SM"]["potential_speedup"] = 12.5
    assert invariants.no_launch_under_floor({"kernels": [kernel]}) == []
