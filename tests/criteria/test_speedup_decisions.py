"""The speedup Decisions taken from the tuning-step measurements (docs/criteria.md): P1 (p from
the level's measured utilization), P2 (the roofline bound of the overall potential), A1 (the
application figure), G1 (LOADBALANC_SM from the launch configuration, "grid too small"), V1
(predicated-off lanes), V2 (partial warps from the launch configuration), and the DEVICESYNC
warp activity from the Speed Of Light cycles.

Every expected number is computed by hand in the comment beside it.
"""

from __future__ import annotations

import pytest

from advisor.criteria import evaluate
from advisor.criteria.divergence import PARTIAL_WARPS
from advisor.criteria.engine.analysis import COMPUTED, to_json
from advisor.criteria.loadbalanc_sm import GRID_TOO_SMALL, launch_balance
from tests.criteria.test_criteria_engine import DEVICE, criterion, launch, make_profile, metric


def _profile(rows: list[tuple[str, float]], **config: int) -> object:
    """One 1 ms launch (the 400 ns launch floor, Decision L1, caps none of these figures)."""
    dims = {"grid_x": 1, "grid_y": 1, "grid_z": 1, "block_x": 256, "block_y": 1, "block_z": 1}
    dims.update(config)
    return make_profile([launch(0, 1e6, **dims)], [metric(0, n, v) for n, v in rows])


def test_p1_level_share_is_the_measured_utilization() -> None:
    # L1 criterion 0.125 (requested 4096 B of 32 x 1024 B transferred); L1/TEX at 88 % of peak:
    # SP = 1 / ((1 - 0.88) + 0.88 x 0.125) = 1 / 0.23 = 4.348
    rows = [
        ("global_load_requested_bytes", 4096.0),
        ("global_store_requested_bytes", 0.0),
        ("gld_transactions", 1024.0),
        ("gst_transactions", 0.0),
        ("l1tex_throughput_pct_of_peak", 0.88),
    ]
    c = criterion(evaluate(_profile(rows, grid_x=160), DEVICE), "L1_GRANULARITY")
    assert c.status == COMPUTED and c.value == pytest.approx(0.125)
    assert c.level_share_frac == pytest.approx(0.88)
    assert c.speedups.amdahl == pytest.approx(1 / 0.23)
    assert c.inputs["p_l1_frac"] == pytest.approx(0.88)


def test_p1_a_level_barely_used_promises_little() -> None:
    # the same waste at 5 % utilization: 1 / (0.95 + 0.05 x 0.125) = 1.0457
    rows = [
        ("global_load_requested_bytes", 4096.0),
        ("global_store_requested_bytes", 0.0),
        ("gld_transactions", 1024.0),
        ("gst_transactions", 0.0),
        ("l1tex_throughput_pct_of_peak", 0.05),
    ]
    c = criterion(evaluate(_profile(rows, grid_x=160), DEVICE), "L1_GRANULARITY")
    assert c.speedups.amdahl == pytest.approx(1 / (0.95 + 0.05 * 0.125))


def test_p2_the_roofline_bounds_the_overall_potential() -> None:
    # Memory SOL 97 % (a saturated L1) would promise 1.03x; DRAM at 20 % and FP32 at
    # (400 + 0.5 x 200) / 5000 = 10 % of peak bound it at 1 / 0.2 = 5x
    rows = [
        ("memory_throughput_pct_of_peak", 0.97),
        ("compute_throughput_pct_of_peak", 0.5),
        ("dram_throughput_pct_of_peak", 0.2),
        ("flop_rate_sp_fma_per_cycle", 400.0),
        ("flop_rate_sp_add_per_cycle", 200.0),
        ("flop_rate_sp_mul_per_cycle", 0.0),
        ("flop_peak_sp_fma_per_cycle", 5000.0),
    ]
    analysis = evaluate(_profile(rows, grid_x=160), DEVICE)
    kernel = analysis.kernels[0]
    assert kernel.throughputs.arithmetic_frac == pytest.approx(0.1)
    assert kernel.throughputs.bound_frac == pytest.approx(0.2)
    assert kernel.potential_speedup == pytest.approx(5.0)
    assert kernel.bound == "memory"  # the bottleneck is still the busiest unit


def test_p2_without_dram_or_flops_the_busiest_unit_is_used_and_said() -> None:
    rows = [("memory_throughput_pct_of_peak", 0.5), ("compute_throughput_pct_of_peak", 0.25)]
    kernel = evaluate(_profile(rows, grid_x=160), DEVICE).kernels[0]
    assert kernel.potential_speedup == pytest.approx(2.0)
    assert kernel.throughputs.bound_method.startswith("busiest unit")


def test_a1_application_figure_is_na_when_nothing_is_known() -> None:
    data = to_json(evaluate(make_profile([launch(0, 1000.0)], []), DEVICE))
    assert data["application"]["potential_speedup"] is None
    assert data["application"]["potential_speedup_basis"].startswith("not computable")


def test_g1_launch_balance_by_hand() -> None:
    assert launch_balance(1, 30, 2) == pytest.approx(1 / 30)  # one block: 1 of 30 SMs busy
    assert launch_balance(160, 30, 2) == pytest.approx(1.0)  # 5-6 blocks each, 3 rounds all
    # 61 blocks, 30 SMs, 1 block at a time: one SM runs 3 rounds, 29 run 2 -> (3 + 58) / 30 / 3
    assert launch_balance(61, 30, 1) == pytest.approx((3 + 29 * 2) / 30 / 3)
    assert launch_balance(0, 30, 1) is None


def test_g1_a_grid_smaller_than_the_gpu_is_its_own_hint() -> None:
    # 10 blocks on 80 SMs: value 10 / 80, speedup 8x, titled "grid too small"
    p = _profile([], grid_x=10)
    analysis = evaluate(p, DEVICE)
    c = criterion(analysis, "LOADBALANC_SM")
    assert c.value == pytest.approx(0.125) and c.speedups.amdahl == pytest.approx(8.0)
    assert c.variant == GRID_TOO_SMALL and "grid too small: 10 blocks for 80 SMs" in c.notes
    hint = next(h for h in analysis.kernels[0].hints if h.criterion == "LOADBALANC_SM")
    assert hint.title.startswith("grid too small") and "SM count" in hint.actions[0]
    assert to_json(analysis)["kernels"][0]["criteria"]["LOADBALANC_SM"]["variant"] == GRID_TOO_SMALL
    one = criterion(evaluate(_profile([], grid_x=1), DEVICE), "LOADBALANC_SM")
    assert "grid too small: 1 block for 80 SMs" in one.notes  # the word agrees with its count


def test_v1_predicated_off_lanes_count_as_idle() -> None:
    # 30 of 32 lanes active but only 20 predicated on: 20 / 32 = 0.625, not 0.9375
    rows = [
        ("warp_execution_efficiency", 30 / 32),
        ("not_predicated_off_thread_inst_executed", 20.0 * 1000),
        ("inst_executed", 1000.0),
    ]
    c = criterion(evaluate(_profile(rows, grid_x=160), DEVICE), "DIVERGENCE")
    assert c.value == pytest.approx(0.625)
    assert c.method.startswith("predicated-on")


def test_v2_partial_warps_from_the_launch_configuration() -> None:
    # <<<1,1>>>: one lane of 32, 32x, titled "partial warps"; 48 threads: 48 / 64 = 0.75
    analysis = evaluate(_profile([], block_x=1), DEVICE)
    c = criterion(analysis, "DIVERGENCE")
    assert c.status == COMPUTED and c.value == pytest.approx(1 / 32)
    assert c.speedups.amdahl == pytest.approx(32.0) and c.variant == PARTIAL_WARPS
    assert "blocks of 1 threads" in c.notes[0] and "can only lower" in c.notes[0]
    hint = next(h for h in analysis.kernels[0].hints if h.criterion == "DIVERGENCE")
    assert hint.title.startswith("partial warps") and "multiple of 32" in hint.actions[0]
    c = criterion(evaluate(_profile([], block_x=16, block_y=3), DEVICE), "DIVERGENCE")
    assert c.value == pytest.approx(0.75)
    # a multiple of 32 says nothing about divergence: still not computable, never 1.0
    c = criterion(evaluate(_profile([], block_x=256), DEVICE), "DIVERGENCE")
    assert c.status == "not_computable" and c.value is None
    # a measured efficiency wins over the launch's bound
    rows = [("warp_execution_efficiency", 0.5 / 32)]
    c = criterion(evaluate(_profile(rows, block_x=1), DEVICE), "DIVERGENCE")
    assert c.value == pytest.approx(0.5 / 32) and not c.variant


def test_devicesync_activity_from_speed_of_light_cycles() -> None:
    # stalls: barrier 1, long_scoreboard 2, wait 1 -> StallSync 0.25, DEVICESYNC 0.75;
    # activity = 0.5 x 800 / 1000 = 0.4 -> x = (1 - 0.4) x 0.25 = 0.15 -> SP = 1 / 0.85
    family = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    rows = [
        (family.format("barrier"), 1.0),
        (family.format("long_scoreboard"), 2.0),
        (family.format("wait"), 1.0),
        ("achieved_occupancy", 0.5),
        ("sm_cycles_active_avg", 800.0),
        ("elapsed_cycles", 1000.0),
    ]
    c = criterion(evaluate(_profile(rows, grid_x=160), DEVICE), "DEVICESYNC")
    assert c.value == pytest.approx(0.75)
    assert c.inputs["warp_activity_frac"] == pytest.approx(0.4)
    assert c.speedups.amdahl == pytest.approx(1 / 0.85)


def test_a1_a_kernel_without_a_bound_counts_with_its_largest_criterion() -> None:
    # no DRAM or FLOP figures: no overall potential; 10 blocks on 80 SMs give LOADBALANC_SM
    # 8x, so the application (one kernel, no timeline) reads 8x, never less than its own hint
    analysis = evaluate(_profile([], grid_x=10), DEVICE)
    assert analysis.kernels[0].potential_speedup is None
    assert analysis.application.potential_speedup == pytest.approx(8.0)
    assert "else its largest criterion's" in analysis.application.potential_speedup_basis


def test_g2_requested_bytes_estimated_from_the_request_count() -> None:
    # no requested bytes, no ideal sectors: 4 sectors per request (32 lanes x 4 B words).
    # requests 100 ld + 100 st -> ideal 800 sectors; L2 sectors 2000 + 1200 = 3200 -> 0.25.
    # p_L2 from the memory chart's L2 sectors at 40 % of peak (Decision P3):
    # SP = 1 / ((1 - 0.4) + 0.4 x 0.25) = 1 / 0.7
    rows = [
        ("global_load_requests", 100.0),
        ("global_store_requests", 100.0),
        ("l2_tex_read_transactions", 2000.0),
        ("l2_tex_write_transactions", 1200.0),
        ("l2_tex_sectors_pct_of_peak", 0.4),
    ]
    c = criterion(evaluate(_profile(rows, grid_x=160), DEVICE), "L2_GRANULARITY")
    assert c.status == COMPUTED and c.value == pytest.approx(0.25)
    assert c.method.startswith("4 sectors per global request")
    assert any("4 B words" in n for n in c.notes)
    assert c.level_share_frac == pytest.approx(0.4)
    assert c.speedups.amdahl == pytest.approx(1 / 0.7)


def test_g2_loads_only_and_a_real_counter_wins() -> None:
    # loads only (a --metrics run of requests and sectors): 8 requests x 4 / 256 sectors = 1/8
    rows = [("global_load_requests", 8.0), ("gld_transactions", 256.0)]
    c = criterion(evaluate(_profile(rows, grid_x=160), DEVICE), "L1_GRANULARITY")
    assert c.value == pytest.approx(0.125)
    assert any("only global loads" in n for n in c.notes)
    # with Nsight Compute's requested bytes the estimate is not used: 4096 / (32 x 256) = 0.5
    rows += [("global_load_requested_bytes", 4096.0), ("global_store_requested_bytes", 0.0)]
    rows += [("gst_transactions", 0.0)]
    c = criterion(evaluate(_profile(rows, grid_x=160), DEVICE), "L1_GRANULARITY")
    assert c.value == pytest.approx(0.5)
    assert not any("4 B words" in n for n in c.notes)
