"""Each criterion formula and speedup form on hand-picked numbers (hand computation in comments).

Sources: seed 002 (sections IV-V) and MODELS.md §1 Decisions 1, 3 and 4.
"""

from __future__ import annotations

import pytest

from advisor.criteria import (
    devicesync,
    divergence,
    hostsync,
    l1_granularity,
    loadbalanc_sm,
    loadbalanc_warp,
    shmem_efficiency,
)
from advisor.criteria.engine import levels
from advisor.criteria.engine.occupancy import (
    SM_LIMITS,
    limits_for,
    resident_blocks_per_sm,
    theoretical_warps_per_sm,
)
from advisor.criteria.engine.speedups import (
    amdahl_combine,
    application_gain,
    application_potential,
    classify_bound,
    devicesync_fraction,
    devicesync_speedup_amdahl,
    level_share_frac,
    level_speedup_amdahl,
    level_speedup_paper,
    overall_speedup,
    potential_bound,
)
from advisor.criteria.throughput_occupancy import throughput_occupancy

# --------------------------------------------------------------------------- HOSTSYNC


def test_hostsync_serial_kernels_is_sum_over_span() -> None:
    # kernels [0,100) [150,250) [400,500): busy 300, span 500 -> 0.6 (the paper's sum / span)
    value, busy, span = hostsync.hostsync_value([(0, 100), (150, 250), (400, 500)])  # type: ignore[misc]
    assert (busy, span) == (300, 500)
    assert value == pytest.approx(0.6)


def test_hostsync_overlapping_kernels_count_once() -> None:
    # [0,100) [150,250) [200,300) [400,500): union = 100 + 150 + 100 = 350 over span 500 -> 0.7;
    # the plain sum (400) would give 0.8
    assert hostsync.busy_ns([(0, 100), (150, 250), (200, 300), (400, 500)]) == 350
    result = hostsync.hostsync_value([(0, 100), (150, 250), (200, 300), (400, 500)])
    assert result is not None
    assert result[0] == pytest.approx(0.7)


def test_hostsync_zero_span_is_not_applicable() -> None:
    assert hostsync.hostsync_value([(5, 5)]) is None
    assert hostsync.hostsync_value([]) is None


# --------------------------------------------------------------------------- DEVICESYNC


def test_devicesync_is_one_minus_stall_sync() -> None:
    # nvprof stall_sync 14.45 % -> 1 - 0.1445 = 0.8555
    assert devicesync.devicesync_from_stall_sync(0.1445) == pytest.approx(0.8555)


def test_ncu_stall_share_excludes_selected_and_not_issued() -> None:
    values = {
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 2.0,
        "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio": 0.5,
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 4.0,
        "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": 3.0,
        "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio": 1.0,
    }
    reasons = devicesync.stall_reasons(values, "per issue active (WarpStateStats)")
    assert sorted(reasons) == ["barrier", "long_scoreboard", "membar", "wait"]
    # (2.0 + 0.5) / (2.0 + 0.5 + 4.0 + 3.0) = 2.5 / 9.5 = 0.263158
    assert devicesync.stall_sync_share(reasons) == pytest.approx(2.5 / 9.5)
    pcsamp = {
        "smsp__pcsamp_warps_issue_stalled_barrier": 30.0,
        "smsp__pcsamp_warps_issue_stalled_barrier_not_issued": 29.0,
        "smsp__pcsamp_warps_issue_stalled_wait": 70.0,
    }
    # 30 / (30 + 70) = 0.3: the _not_issued subset is not counted twice
    share = devicesync.stall_sync_share(devicesync.stall_reasons(pcsamp, "PC sampling"))
    assert share == pytest.approx(0.3)


def test_ncu_stall_share_without_stalls_is_none() -> None:
    assert devicesync.stall_sync_share({}) is None
    assert devicesync.stall_sync_share({"barrier": 0.0, "wait": 0.0}) is None


def test_devicesync_speedup_decision_3() -> None:
    # x = (1 - warp activity) * StallSync = (1 - 0.4) * 0.25 = 0.15; SP = 1 / (1 - 0.15) = 1.17647
    x = devicesync_fraction(0.6, 0.25)
    assert x == pytest.approx(0.15)
    assert devicesync_speedup_amdahl(x) == pytest.approx(1 / 0.85)
    assert devicesync_speedup_amdahl(1.0) is None


# --------------------------------------------------------------------------- DIVERGENCE


def test_divergence_counts() -> None:
    # 2,400 thread instructions over 32 x 100 warp instructions = 2400 / 3200 = 0.75
    assert divergence.executed_over_potential(2400, 100) == pytest.approx(0.75)
    assert divergence.executed_over_potential(0, 0) is None


# --------------------------------------------------------------------------- load balance


def test_warp_balance() -> None:
    # 24 achieved warps per active cycle over 32 theoretical -> 0.75
    assert loadbalanc_warp.warp_balance(24.0, 32.0) == pytest.approx(0.75)
    assert loadbalanc_warp.warp_balance(24.0, 0.0) is None


def test_sm_balance() -> None:
    # max 1000, avg 250 active cycles: 1 - (1000 - 250) / 1000 = 0.25 (= avg / max)
    assert loadbalanc_sm.sm_balance(1000.0, 250.0) == pytest.approx(0.25)
    # one busy SM out of 128 (seq_align): avg = max / 128 -> 1 / 128
    assert loadbalanc_sm.sm_balance(128.0, 1.0) == pytest.approx(1 / 128)
    assert loadbalanc_sm.sm_balance(0.0, 0.0) is None


def test_occupancy_register_limited_on_cc70() -> None:
    limits = SM_LIMITS["7.0"]
    # 256 threads = 8 warps; 32 regs: 32 x 32 = 1024 regs/warp -> 64 warps -> 8 blocks = 64 warps
    assert theoretical_warps_per_sm(limits, 256, 32) == 64
    # 64 regs: 2048 regs/warp -> 65536 / 2048 = 32 warps -> 4 blocks of 8 warps = 32 warps
    assert resident_blocks_per_sm(limits, 256, 64) == 4
    assert theoretical_warps_per_sm(limits, 256, 64) == 32


def test_occupancy_shared_memory_limited_on_cc86() -> None:
    limits = limits_for("8.6")
    assert limits is not None
    # 128 threads = 4 warps, 40 regs: ceil(1280 / 256) x 256 = 1280/warp -> 51 warps -> 48
    # (granularity 4) -> 12 blocks; warps: 48 / 4 = 12; blocks cap 16;
    # shared 20000 B + 1024 reserved = 21024 -> 165 x 128 = 21120 -> 102400 // 21120 = 4 blocks
    assert resident_blocks_per_sm(limits, 128, 40, 20000) == 4
    assert theoretical_warps_per_sm(limits, 128, 40, 20000) == 16


def test_occupancy_limits_lookup() -> None:
    assert limits_for(8.6) == SM_LIMITS["8.6"]
    assert limits_for("6.1") == SM_LIMITS["6.1"]
    assert limits_for("7.3") == SM_LIMITS["7.2"]  # closest lower of the same major
    assert limits_for(None) is None
    assert limits_for("x") is None
    assert resident_blocks_per_sm(SM_LIMITS["8.0"], 0) == 0


# --------------------------------------------------------------------------- granularity


def test_granularity_decision_1_requested_over_transferred() -> None:
    # 8192 requested bytes over 512 sectors x 32 B = 16384 moved -> 0.5 (the paper's printed
    # formula, transferred / requested, would give 2.0)
    assert levels.requested_over_transferred(8192, 16384) == pytest.approx(0.5)
    assert levels.requested_over_transferred(8192, 0) is None


def test_granularity_efficiencies_weighted_by_transactions() -> None:
    # loads 25 % efficient over 300 transactions, stores 100 % over 100:
    # (0.25 x 300 + 1.0 x 100) / 400 = 175 / 400 = 0.4375
    assert l1_granularity.weighted_efficiency(0.25, 300, 1.0, 100) == pytest.approx(0.4375)
    assert l1_granularity.weighted_efficiency(0.25, 0, 1.0, 0) is None


# --------------------------------------------------------------------------- SHMEM


def test_shmem_ideal_over_actual() -> None:
    # 64 shared instructions, 2048 wavefronts (32-way conflicts on half of them) -> 64 / 2048
    assert shmem_efficiency.ideal_over_actual(64, 2048) == pytest.approx(0.03125)
    assert shmem_efficiency.ideal_over_actual(0, 0) is None


def test_shmem_requests_from_transactions_per_request() -> None:
    # loads 3,072,000 tx at 1.2 per request = 2,560,000 requests; stores 128,000 at 1.0:
    # (2,560,000 + 128,000) / (3,072,000 + 128,000) = 2,688,000 / 3,200,000 = 0.84
    assert shmem_efficiency.requests_over_transactions(
        3_072_000, 1.2, 128_000, 1.0
    ) == pytest.approx(0.84)
    # a kernel without stores: per-request value of stores is irrelevant
    assert shmem_efficiency.requests_over_transactions(100, 2.0, 0, 0.0) == pytest.approx(0.5)
    assert shmem_efficiency.requests_over_transactions(0, 0.0, 0, 0.0) is None


# --------------------------------------------------------------------------- THROUGHPUT/OCCUPANCY


def test_throughput_occupancy() -> None:
    # MEMTHR 0.5, occ 0.25: 1 - (1 - 0.25) x 0.5 = 0.625
    assert throughput_occupancy(0.5, 0.25) == pytest.approx(0.625)
    # MEMTHR ~ 1 (>= 0.9): the criterion is 1 whatever the occupancy
    assert throughput_occupancy(0.95, 0.1) == 1.0
    # full occupancy: nothing to gain
    assert throughput_occupancy(0.5, 1.0) == pytest.approx(1.0)


# --------------------------------------------------------------------------- speedups


def test_level_speedup_forms_decision_4() -> None:
    # criterion 0.5, p = 0.2: Amdahl 1 / (0.8 + 0.2 x 0.5) = 1 / 0.9 = 1.1111;
    # the paper's (1 / 0.5) x 0.2 = 0.4 (below 1 for small p: why Decision 4 exists)
    assert level_speedup_amdahl(0.5, 0.2) == pytest.approx(1 / 0.9)
    assert level_speedup_paper(0.5, 0.2) == pytest.approx(0.4)
    assert level_speedup_paper(0.0, 0.2) is None
    # p = 1: both forms are 1 / criterion
    assert level_speedup_amdahl(0.25, 1.0) == pytest.approx(4.0)
    assert level_speedup_paper(0.25, 1.0) == pytest.approx(4.0)


def test_level_share() -> None:
    # 400 shared transactions x 20 cycles over 40,000 warp-cycles = 0.2
    assert level_share_frac(400, 20, 40_000) == pytest.approx(0.2)
    assert level_share_frac(400, 200, 40_000) == 1.0  # clamped
    assert level_share_frac(400, 20, 0) is None


def test_bound_classification() -> None:
    assert classify_bound(0.8, 0.3) == "memory"
    assert classify_bound(0.3, 0.8) == "compute"
    assert classify_bound(0.5, 0.4) == "latency"  # both below 0.6
    assert classify_bound(0.7, None) == "memory"
    assert classify_bound(0.3, None) is None  # the unknown side might be higher
    assert classify_bound(None, None) is None


def test_overall_speedup() -> None:
    # memory-bound at 80 % of peak: 1 / 0.8 = 1.25; latency-bound 0.5 / 0.4: 1 / 0.5 = 2
    assert overall_speedup(0.8) == pytest.approx(1.25)
    assert overall_speedup(0.5) == pytest.approx(2.0)
    assert overall_speedup(None) is None and overall_speedup(0.0) is None
    # Decision P2: the roofline fractions bound the potential, the busiest unit only without them
    roofline = "roofline: max(DRAM, FLOP) fraction of peak"
    assert potential_bound(0.3, 0.1, 0.97, 0.8) == (0.3, roofline)
    assert potential_bound(None, 0.4, 0.97, 0.8) == (
        0.4,
        "roofline: FLOP fraction of peak (no DRAM figures)",
    )
    # a details page: DRAM alone, a looser bound, named as such
    assert potential_bound(0.0006, None, 0.96, 0.11) == (
        0.0006,
        "roofline: DRAM fraction of peak (no FLOP figures)",
    )
    assert potential_bound(None, None, 0.97, 0.8)[0] == 0.97
    assert potential_bound(None, None, None, None) == (None, "")
    # Decision A1: 1 / HOSTSYNC x the kernels' Amdahl; n/a when neither is known
    assert application_potential(0.5, 1.5)[0] == pytest.approx(3.0)
    assert application_potential(None, 1.5)[0] == pytest.approx(1.5)
    assert application_potential(0.5, None)[0] == pytest.approx(2.0)
    assert application_potential(None, None)[0] is None


def test_application_amdahl_never_multiplies() -> None:
    # 600 ns at 2x and 400 ns without estimate: 1000 / (300 + 400) = 1.428571
    assert amdahl_combine([(600.0, 2.0), (400.0, None)]) == pytest.approx(1000 / 700)
    # a kernel with 60 % of the GPU time made 2x faster: 1 / (0.4 + 0.3) = 1.428571
    assert application_gain(0.6, 2.0) == pytest.approx(1 / 0.7)
    assert application_gain(None, 2.0) is None
    assert amdahl_combine([]) is None
