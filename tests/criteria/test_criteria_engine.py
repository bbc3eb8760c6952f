"""The criteria engine on hand-built profiles: aggregation, recipes, missing inputs, JSON.

Every expected number is computed by hand in the comment beside it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd
import pytest

from advisor.criteria import CRITERIA, KERNEL_CRITERIA, SPECS, evaluate
from advisor.criteria.engine.analysis import COMPUTED, NOT_APPLICABLE, NOT_COMPUTABLE, to_json
from advisor.criteria.engine.common import Context
from advisor.criteria.engine.hints import THRESHOLDS
from advisor.criteria.engine.inputs import DeviceView, KernelData, Unit
from advisor.profile import Profile, Provenance


def make_profile(
    launches: list[dict[str, Any]] | None = None,
    metrics: list[dict[str, Any]] | None = None,
    profiler: str = "ncu",
    **frames: list[dict[str, Any]],
) -> Profile:
    """A profile from plain rows (columns of advisor.schema)."""
    tables = {name: pd.DataFrame(rows) for name, rows in frames.items()}
    return Profile(
        provenance=(Provenance(path="hand.csv", format="hand", profiler=profiler),),
        launches=pd.DataFrame(launches or []),
        metrics=pd.DataFrame(metrics or []),
        **tables,
    )


def launch(lid: int, duration: float, **extra: Any) -> dict[str, Any]:
    return {"launch_id": lid, "name": "k", "duration_ns": duration, **extra}


def metric(lid: int | None, name: str, value: float, kernel: str = "k") -> dict[str, Any]:
    return {"launch_id": lid, "kernel": kernel, "metric": name, "tool_metric": name, "value": value}


def criterion(analysis: Any, name: str, kernel: str = "k") -> Any:
    k = next(k for k in analysis.kernels if k.name == kernel)
    return next(c for c in k.criteria if c.name == name)


DEVICE = DeviceView(
    name="Test GPU",
    compute_capability="7.0",
    sm_count=80,
    max_warps_per_sm=64,
    boost_clock_hz=1.5e9,
    peak_dram_bytes_per_s=900e9,
    peak_fp32_flops=15e12,
    latencies_cycles={"shared": 20.0, "l1": 30.0, "l2": 200.0, "dram": 500.0},
)


def test_launches_aggregate_weighted_by_duration() -> None:
    # 1000 ns at 0.5 and 3000 ns at 1.0: (1000 x 0.5 + 3000 x 1.0) / 4000 = 0.875
    p = make_profile(
        [launch(0, 1000.0), launch(1, 3000.0)],
        [metric(0, "warp_execution_efficiency", 0.5), metric(1, "warp_execution_efficiency", 1.0)],
    )
    c = criterion(evaluate(p), "DIVERGENCE")
    assert c.status == COMPUTED
    assert c.value == pytest.approx(0.875)
    assert c.launches_used == 2
    # SP = 1 / 0.875 in both forms
    assert c.speedups.amdahl == pytest.approx(1 / 0.875)
    assert c.speedups.paper == pytest.approx(1 / 0.875)


def test_per_kernel_summary_rows_are_used_without_launch_rows() -> None:
    p = make_profile(metrics=[metric(None, "warp_execution_efficiency", 0.6)], profiler="nvprof")
    c = criterion(evaluate(p), "DIVERGENCE")
    assert c.value == pytest.approx(0.6)


def test_characterization_function_weights_the_value() -> None:
    # F_Divergence = 0.5 at any x: 0.875 x 0.5 = 0.4375
    device = DeviceView(f_lookup=lambda name, x: 0.5 if name == "F_Divergence" else 1.0)
    p = make_profile(
        [launch(0, 1000.0), launch(1, 3000.0)],
        [metric(0, "warp_execution_efficiency", 0.5), metric(1, "warp_execution_efficiency", 1.0)],
    )
    c = criterion(evaluate(p, device), "DIVERGENCE")
    assert c.raw_value == pytest.approx(0.875)
    assert c.value == pytest.approx(0.4375)
    assert c.inputs["F_Divergence"] == 0.5


def test_shmem_with_level_share_and_both_forms() -> None:
    # SHMEM = (100 + 100) / (300 + 100) = 0.5; p = 400 tx x 20 cycles / 40,000 warp-cycles = 0.2
    # Amdahl 1 / (0.8 + 0.2 x 0.5) = 1.1111; paper (1 / 0.5) x 0.2 = 0.4
    rows = [
        ("inst_executed_shared_loads", 100.0),
        ("inst_executed_shared_stores", 100.0),
        ("shared_load_transactions", 300.0),
        ("shared_store_transactions", 100.0),
        ("active_warps", 40_000.0),
    ]
    p = make_profile([launch(0, 1000.0)], [metric(0, n, v) for n, v in rows])
    a = evaluate(p, DEVICE)
    c = criterion(a, "SHMEM_EFFICIENCY")
    assert c.value == pytest.approx(0.5)
    assert c.level_share_frac == pytest.approx(0.2)
    assert c.speedups.amdahl == pytest.approx(1 / 0.9)
    assert c.speedups.paper == pytest.approx(0.4)
    paper = evaluate(p, DEVICE, speedup_form="paper")
    assert to_json(paper)["kernels"][0]["criteria"]["SHMEM_EFFICIENCY"][
        "potential_speedup"
    ] == pytest.approx(0.4)
    assert to_json(a)["speedup_form"] == "amdahl"


def test_devicesync_from_ncu_warp_state_ratios_with_speedup() -> None:
    # stall_sync = (2 + 0.5) / (2 + 0.5 + 4 + 3) = 0.263158 -> DEVICESYNC 0.736842
    # warp activity = 0.5 x 0.8 = 0.4 -> x = 0.6 x 0.263158 = 0.157895 -> SP = 1.1875
    prefix = "smsp__average_warps_issue_stalled_"
    rows = [
        (f"{prefix}barrier_per_issue_active.ratio", 2.0),
        (f"{prefix}membar_per_issue_active.ratio", 0.5),
        (f"{prefix}long_scoreboard_per_issue_active.ratio", 4.0),
        (f"{prefix}wait_per_issue_active.ratio", 3.0),
        (f"{prefix}selected_per_issue_active.ratio", 1.0),
        ("achieved_occupancy", 0.5),
        ("sm_efficiency", 0.8),
    ]
    p = make_profile([launch(0, 1000.0)], [metric(0, n, v) for n, v in rows])
    c = criterion(evaluate(p), "DEVICESYNC")
    assert c.value == pytest.approx(1 - 2.5 / 9.5)
    assert c.speedups.paper == pytest.approx(0.6 * 2.5 / 9.5)
    assert c.speedups.amdahl == pytest.approx(1 / (1 - 0.6 * 2.5 / 9.5))
    assert c.speedups.amdahl == pytest.approx(1.1875)
    assert c.inputs["sync_stalls"] == pytest.approx(2.5)
    assert c.inputs["all_stalls"] == pytest.approx(9.5)


def test_devicesync_barrier_alone_is_not_computable() -> None:
    # the sum over all stall reasons cannot be formed from the barrier metric alone
    p = make_profile([launch(0, 1000.0)], [metric(0, "stall_barrier_per_warp_active", 0.3)])
    c = criterion(evaluate(p), "DEVICESYNC")
    assert c.status == NOT_COMPUTABLE
    assert c.value is None
    assert "smsp__warps_issue_stalled_long_scoreboard_per_warp_active.pct" in c.missing
    assert c.collect["ncu"].startswith("ncu --section WarpStateStats --metrics ")


def test_loadbalance_warp_from_occupancy_calculation() -> None:
    # nvprof: achieved 0.5 x 64 = 32 warps; 256 threads, 64 regs on cc 7.0 -> 4 blocks x 8 = 32
    # warps -> LOADBALANC_WARP = 32 / 32 = 1.0; with 32 regs: 64 warps -> 0.5
    for regs, expected in ((64, 1.0), (32, 0.5)):
        p = make_profile(
            [launch(0, 1000.0, block_x=256, block_y=1, block_z=1, registers_per_thread=regs)],
            [metric(None, "achieved_occupancy", 0.5)],
            profiler="nvprof",
        )
        c = criterion(evaluate(p, DEVICE), "LOADBALANC_WARP")
        assert c.value == pytest.approx(expected)
        assert c.method.endswith("occupancy calculation from the launch configuration")
        assert c.inputs["launch.registers_per_thread"] == regs


def test_loadbalance_sm_ncu() -> None:
    # max 1000, avg 250 -> 0.25; SP 4
    p = make_profile(
        [launch(0, 1e6)],  # a 1 ms launch: the 400 ns launch floor caps nothing
        [metric(0, "sm_cycles_active_max", 1000.0), metric(0, "sm_cycles_active_avg", 250.0)],
    )
    c = criterion(evaluate(p), "LOADBALANC_SM")
    assert c.value == pytest.approx(0.25)
    assert c.speedups.amdahl == pytest.approx(4.0)


def test_loadbalance_sm_nvprof_says_why() -> None:
    p = make_profile([launch(0, 1000.0)], [metric(0, "sm_efficiency", 0.9)], profiler="nvprof")
    c = criterion(evaluate(p), "LOADBALANC_SM")
    assert c.status == NOT_COMPUTABLE
    assert any("aggregate-mode off" in n for n in c.notes)
    assert c.collect["nvprof"].startswith("not available")
    # without a launch configuration either, the closest recipe is the launch-based one
    assert set(c.missing) == {"launch.grid_blocks", "launch.block_threads", "device.sm_count"}
    assert "sm__cycles_active.max" in c.collect["ncu"]


def test_loadbalance_sm_from_the_launch_configuration() -> None:
    # Decision G1 on an 80-SM device of cc 7.0 (64 warps per SM: eight 256-thread blocks fit):
    # 90 blocks: 10 SMs get 2, 70 get 1, all in one round -> avg / max = 1;
    # 20 blocks: 20 of 80 SMs busy -> 0.25, speedup 4x
    for blocks, expected in ((90, 1.0), (20, 0.25)):
        dims = {"grid_x": blocks, "grid_y": 1, "grid_z": 1, "block_x": 256, "block_y": 1}
        row = launch(0, 1e6, **dims, block_z=1)
        p = make_profile([row], [], profiler="nvprof")
        c = criterion(evaluate(p, DEVICE), "LOADBALANC_SM")
        assert c.status == COMPUTED and c.value == pytest.approx(expected)
        assert c.speedups.amdahl == pytest.approx(1 / expected)
        assert c.method.startswith("launch configuration")


def test_l1_and_l2_granularity_from_ncu_bytes() -> None:
    # L1: (4096 + 4096) / (32 x (256 + 256)) = 0.5; L2: 8192 / (32 x 100) = 2.56 -> clamped to 1
    rows = [
        ("global_load_requested_bytes", 4096.0),
        ("global_store_requested_bytes", 4096.0),
        ("gld_transactions", 256.0),
        ("gst_transactions", 256.0),
        ("l2_tex_read_transactions", 60.0),
        ("l2_tex_write_transactions", 40.0),
    ]
    p = make_profile([launch(0, 1e6)], [metric(0, n, v) for n, v in rows])
    a = evaluate(p)
    assert criterion(a, "L1_GRANULARITY").value == pytest.approx(0.5)
    assert criterion(a, "L2_GRANULARITY").value == 1.0
    assert criterion(a, "L2_GRANULARITY").raw_value == 1.0


def test_l1_granularity_nvprof_throughputs() -> None:
    # (2e9 + 1e9) / (4e9 + 2e9) = 0.5
    rows = [
        ("gld_requested_throughput", 2e9),
        ("gst_requested_throughput", 1e9),
        ("gld_throughput", 4e9),
        ("gst_throughput", 2e9),
    ]
    p = make_profile(metrics=[metric(None, n, v) for n, v in rows], profiler="nvprof")
    assert criterion(evaluate(p), "L1_GRANULARITY").value == pytest.approx(0.5)


def test_throughput_occupancy_from_ncu() -> None:
    # MEMTHR 0.5, theoretical occupancy 0.25: 1 - 0.75 x 0.5 = 0.625; SP 1.6
    rows = [("dram_throughput_pct_of_peak", 0.5), ("theoretical_occupancy", 0.25)]
    p = make_profile([launch(0, 1000.0)], [metric(0, n, v) for n, v in rows])
    c = criterion(evaluate(p), "THROUGHPUT_OCCUPANCY")
    assert c.value == pytest.approx(0.625)
    assert c.speedups.amdahl == pytest.approx(1.6)


def test_throughput_occupancy_needs_a_peak_for_nvprof_throughputs() -> None:
    rows = [("dram_read_throughput", 300e9), ("dram_write_throughput", 150e9)]
    launches = [launch(0, 1000.0, block_x=256, block_y=1, block_z=1, registers_per_thread=32)]
    p = make_profile(launches, [metric(None, n, v) for n, v in rows], profiler="nvprof")
    unknown = criterion(evaluate(p), "THROUGHPUT_OCCUPANCY")
    assert unknown.status == NOT_COMPUTABLE
    assert "device.peak_dram_bytes_per_s" in unknown.missing
    assert any("--device" in n for n in unknown.notes)
    # with the device: MEMTHR = 450e9 / 900e9 = 0.5; occupancy 64 / 64 = 1 -> criterion 1
    known = criterion(evaluate(p, DEVICE), "THROUGHPUT_OCCUPANCY")
    assert known.value == pytest.approx(1.0)
    assert known.inputs["MEMTHR"] == pytest.approx(0.5)


def test_bound_and_overall_speedup() -> None:
    # memory SOL 0.8 > compute 0.3 -> memory-bound, overall 1 / 0.8 = 1.25
    rows = [("memory_throughput_pct_of_peak", 0.8), ("compute_throughput_pct_of_peak", 0.3)]
    p = make_profile([launch(0, 1000.0)], [metric(0, n, v) for n, v in rows])
    k = evaluate(p).kernels[0]
    assert k.bound == "memory"
    assert k.potential_speedup == pytest.approx(1.25)


def test_application_figure_and_shares() -> None:
    # a: 600 ns memory-bound at 0.5 -> 2x; b: 400 ns, no estimate -> 1x
    # application: 1000 / (300 + 400) = 1.428571; shares 0.6 and 0.4
    p = make_profile(
        [launch(0, 600e3, name="a"), launch(1, 400e3, name="b")],
        [
            metric(0, "memory_throughput_pct_of_peak", 0.5, "a"),
            metric(0, "compute_throughput_pct_of_peak", 0.2, "a"),
        ],
    )
    a = evaluate(p)
    assert [k.name for k in a.kernels] == ["a", "b"]
    assert [k.share_of_gpu_time for k in a.kernels] == [pytest.approx(0.6), pytest.approx(0.4)]
    assert a.application.potential_speedup == pytest.approx(1000 / 700)
    assert a.application.kernels_without_estimate == 1


def test_hostsync_from_hand_timeline_and_ncu_only_reason() -> None:
    # [0,100) [150,250) [400,500): 300 / 500 = 0.6; SP = 1 / 0.6
    p = make_profile(
        [launch(i, 100.0, start_ns=s, device_id=0) for i, s in enumerate((0.0, 150.0, 400.0))],
        profiler="nvprof",
    )
    h = evaluate(p).application.hostsync
    assert h.value == pytest.approx(0.6)
    assert h.speedups.amdahl == pytest.approx(1 / 0.6)
    assert h.inputs["idle_ns"] == pytest.approx(200.0)
    ncu = make_profile([launch(0, 100.0)], profiler="ncu")
    h = evaluate(ncu).application.hostsync
    assert h.status == NOT_COMPUTABLE
    assert "serializes" in h.notes[0]
    assert "nsys profile" in h.collect["nsys"]
    summary = make_profile(
        profiler="nvprof", kernel_summary=[{"name": "k", "calls": 3, "total_ns": 300.0}]
    )
    assert "summaries" in evaluate(summary).application.hostsync.notes[0]


def test_not_applicable_when_no_shared_access() -> None:
    rows = [("shared_efficiency", 0.0)]  # nvprof prints 0 % for kernels without shared accesses
    p = make_profile(metrics=[metric(None, n, v) for n, v in rows], profiler="nvprof")
    c = criterion(evaluate(p), "SHMEM_EFFICIENCY")
    assert c.status == NOT_APPLICABLE
    assert c.value is None


def test_hints_for_low_criteria_ranked_by_speedup() -> None:
    # LOADBALANC_SM 0.25 (SP 4) ranks before DIVERGENCE 0.5 (SP 2); DEVICESYNC 0.9 is fine
    rows = [
        ("warp_execution_efficiency", 0.5),
        ("sm_cycles_active_max", 1000.0),
        ("sm_cycles_active_avg", 250.0),
    ]
    p = make_profile([launch(0, 1e6)], [metric(0, n, v) for n, v in rows])
    k = evaluate(p).kernels[0]
    assert [h.criterion for h in k.hints] == ["LOADBALANC_SM", "DIVERGENCE"]
    first = k.hints[0]
    assert first.potential_speedup == pytest.approx(4.0)
    assert first.threshold == THRESHOLDS["LOADBALANC_SM"]
    assert first.evidence["sm_cycles_active_max"] == 1000.0
    assert first.actions and first.title
    # the kernel is all the GPU time: the application gain equals the kernel's
    assert first.application_speedup == pytest.approx(4.0)


# --------------------------------------------------------------------------- contracts


@pytest.mark.parametrize("name", sorted(KERNEL_CRITERIA))
def test_every_criterion_handles_a_kernel_without_data(name: str) -> None:
    timeline_only = next(s for s in SPECS if s.name == name).needs.timeline
    for units in ((), (Unit(0, None, {}),)):
        kernel = KernelData(
            name="k", units=units, launches=0, duration_ns=None, per_launch_metrics=False
        )
        result = KERNEL_CRITERIA[name](kernel, Context())
        assert result.name == name
        if timeline_only:
            # a kernel criterion read from a trace alone (UM_MIGRATION, Decision U1): without
            # one it is n/a and says what would show it, never a second run on every report
            assert result.status == NOT_APPLICABLE and result.value is None
            assert "timeline" in result.notes[0]
            continue
        assert result.status == NOT_COMPUTABLE
        assert result.value is None
        assert result.missing
        assert set(result.collect) == {"ncu", "nvprof"}


def test_empty_profile_is_analysed_without_crash() -> None:
    empty = make_profile()
    a = evaluate(empty)
    assert a.kernels == ()
    assert a.application.hostsync.status == NOT_COMPUTABLE
    assert a.application.potential_speedup is None
    data = to_json(a)
    json.dumps(data, allow_nan=False)
    # a kernel known only by name (a rule row) gets every criterion, none computable
    only_rule = make_profile(rules=[{"kernel": "k", "rule": "R", "rule_type": "OPT"}])
    k = to_json(evaluate(only_rule))["kernels"][0]
    assert sorted(k["criteria"]) == sorted(CRITERIA)
    assert not any(c["computable"] for c in k["criteria"].values())
    assert k["ncu_rules"][0]["rule"] == "R"


def test_json_has_no_nan_and_the_documented_layout() -> None:
    rows = [("warp_execution_efficiency", float("nan")), ("sm_cycles_active_max", 0.0)]
    # an infinite duration is dropped where the Profile is built: a missing one stays
    p = make_profile([launch(0, math.nan)], [metric(0, n, v) for n, v in rows])
    data = to_json(evaluate(p))
    text = json.dumps(data, allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text
    assert set(data) >= {"schema", "inputs", "device", "application", "kernels", "speedup_form"}
    kernel = data["kernels"][0]
    assert set(kernel) >= {
        "name", "launches", "duration_ns", "share_of_gpu_time", "bound", "criteria",
        "potential_speedup", "hints", "ncu_rules",
    }  # fmt: skip
    for c in kernel["criteria"].values():
        assert set(c) >= {"value", "computable", "potential_speedup", "inputs", "missing"}


def test_bad_speedup_form_is_rejected() -> None:
    with pytest.raises(ValueError, match="speedup form"):
        evaluate(make_profile(), speedup_form="other")


def test_an_unidentified_gpu_keeps_the_compute_capability_its_profile_states() -> None:
    """No characterization (the GPU is not named): the JSON's compute capability is the one
    the profile's device table states, the same as the device.compute_capability value, never
    null beside it."""
    device = {"device_id": 0, "compute_capability": "12.0", "sm_count": 170}
    data = to_json(evaluate(make_profile([launch(0, 1000.0)], [], devices=[device])))
    assert data["device"]["identified"] is False
    assert data["device"]["values"]["device.compute_capability"] == 12.0
    assert data["device"]["compute_capability"] == "12.0"
    nothing = to_json(evaluate(make_profile([launch(0, 1000.0)], [])))["device"]
    assert nothing["compute_capability"] is None
    assert "device.compute_capability" not in nothing["values"]
    named = to_json(evaluate(make_profile([launch(0, 1000.0)], [], devices=[device]), DEVICE))
    assert named["device"]["compute_capability"] == "7.0"  # the characterization's comes first


def test_an_unidentified_gpu_is_said_once() -> None:
    """The device's own note (why it was not identified, what to pass) and the general notes
    do not both say it: the pages listed the two one after the other."""
    profile = make_profile([launch(0, 1000.0)], [])
    why = "device not identified (hand.csv does not name its GPU); inputs are missing"
    said = to_json(evaluate(profile, device_note=why))
    assert said["device"]["note"] == why
    assert not any("not identified" in n for n in said["notes"])
    unsaid = to_json(evaluate(profile))  # no device note: the general note says it
    assert any(n.startswith("the device was not identified") for n in unsaid["notes"])
