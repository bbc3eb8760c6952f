"""NVIDIA Nsight Compute's estimate beside the advisor's (advisor/report/nvidia.py): matched to
the criterion, converted to a multiplier 1 / (1 - fraction), shown in the criteria table, in each
hint and in the Markdown, "—" when no matching rule has an estimate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parsers
from advisor.render import report as render
from advisor.report import build as report
from advisor.report.nvidia import (
    PAIRINGS,
    NvidiaEstimate,
    combined,
    estimate,
    matching_rules,
    speedup_of,
)
from tests.cli_helpers import run
from tests.report.test_hint_ranking import _rule, hand_built


def test_fraction_to_multiplier() -> None:
    assert speedup_of(0.4892177196341205) == pytest.approx(1.9578, abs=1e-4)
    assert speedup_of(0.0) == 1.0
    assert speedup_of(0.9666666666666667) == pytest.approx(30.0)
    assert speedup_of(1.0) is None and speedup_of(-0.1) is None and speedup_of(None) is None


def test_the_largest_matching_global_estimate_is_taken() -> None:
    rules = [
        _rule("SharedMemoryConflicts", 0.4892177196341205, text="Shared Load Bank Conflicts"),
        _rule("SharedMemoryConflicts", 0.4882640788551067, text="Shared Store Bank Conflicts"),
        _rule("UncoalescedSharedAccess", 0.022813814998497148),
        _rule("IssueSlotUtilization", 0.83, speedup_type="local"),  # no criterion's rule
        _rule("TheoreticalOccupancy", 0.9, speedup_type="local"),
        _rule("TheoreticalOccupancy", 0.3333333333333333),
    ]
    shmem = estimate(rules, "SHMEM_EFFICIENCY")
    assert shmem is not None
    assert shmem.rules == ("SharedMemoryConflicts",) and not shmem.local
    assert shmem.label == "1.96x (SharedMemoryConflicts)"
    # a global estimate wins over a larger local one (local = a part of the kernel, not its time)
    occupancy = estimate(rules, "THROUGHPUT_OCCUPANCY")
    assert occupancy is not None and occupancy.speedup == pytest.approx(1.5)
    assert not occupancy.local
    # no paired rule: no estimate
    assert estimate(rules, "DIVERGENCE") is None
    assert estimate(rules, "HOSTSYNC") is None and "HOSTSYNC" not in PAIRINGS


def test_a_paired_rule_that_fired_without_an_estimate_is_shown_as_fired() -> None:
    """Nsight Compute before 2023 gives no estimated speedup: a paired rule that fired (OPT,
    WRN) still says NVIDIA saw the bottleneck, never "—"; one that only informs (INF) does not."""
    warned = dict(_rule("ThreadDivergence", None), rule_type="WRN")
    e = estimate([warned], "DIVERGENCE")
    assert e is not None and e.speedup is None and e.rules == ("ThreadDivergence",)
    assert e.label == "fired, no estimate (ThreadDivergence)" and e.cell == "fired, no estimate"
    assert estimate([_rule("SharedMemoryConflicts", None)], "SHMEM_EFFICIENCY") is not None
    info = dict(_rule("ThreadDivergence", None), rule_type="INF")
    assert estimate([info], "DIVERGENCE") is None
    # an estimate wins over a rule that fired without one
    both = estimate([warned, _rule("ThreadDivergence", 0.2)], "DIVERGENCE")
    assert both is not None and both.speedup == pytest.approx(1.25)
    # several kernels: the fired rules are named, no speedup is made up
    grouped = combined([(0.3, e), (0.1, None)])
    assert grouped is not None and grouped.speedup is None
    assert grouped.label == "fired, no estimate (ThreadDivergence)"
    with_number = combined([(0.3, e), (0.1, both)])
    assert with_number is not None
    assert with_number.speedup == pytest.approx(0.4 / (0.3 + 0.1 / 1.25))


def test_a_local_estimate_is_shown_only_alone_and_marked() -> None:
    only_local = estimate([_rule("AchievedOccupancy", 0.2, "local")], "LOADBALANC_WARP")
    assert only_local is not None and only_local.local
    assert only_local.label == "1.25x (AchievedOccupancy; local)"


def test_rule_matching_uses_the_message_where_the_rule_is_generic() -> None:
    small_grid = _rule("LaunchConfiguration", 0.97, text="Small Grid: only 1 block")
    tail = _rule("LaunchConfiguration", 0.5, text="Tail Effect: a partial wave")
    assert matching_rules([small_grid, tail], "LOADBALANC_SM") == [small_grid]
    l1 = _rule("MemoryCacheAccessPattern", 0.1, text="L1TEX Global Load: 4 of 32 bytes")
    l2 = _rule("MemoryCacheAccessPattern", 0.2, text="L2 Load: 8 of 32 bytes")
    assert matching_rules([l1, l2], "L1_GRANULARITY") == [l1]
    assert matching_rules([l1, l2], "L2_GRANULARITY") == [l2]


def test_combined_over_kernels_counts_kernels_without_an_estimate_as_1x() -> None:
    a = NvidiaEstimate(speedup=2.0, fraction=0.5, rules=("SharedMemoryConflicts",))
    both = combined([(0.3, a), (0.1, None)])
    assert both is not None
    assert both.speedup == pytest.approx(0.4 / (0.3 / 2.0 + 0.1))
    assert both.label == f"{0.4 / 0.25:.2f}x (SharedMemoryConflicts; 1 of 2 kernels)"
    assert combined([(0.3, None)]) is None
    assert combined([(0.3, a)]) == a


def test_report_shows_nvidia_beside_ours(samples: Path) -> None:
    built = report.build(hand_built(), parsers.read(samples / "synthetic_ncu_details.csv"))
    k1 = next(d for d in built.details if d.row.name == "k1()")
    views = {c.name: c for c in k1.criteria}
    assert views["SHMEM_EFFICIENCY"].nvidia is not None
    assert views["SHMEM_EFFICIENCY"].nvidia.label == "2.00x (SharedMemoryConflicts)"
    assert k1.hints[0].nvidia_text == "NVIDIA: 2.00x (SharedMemoryConflicts)"
    k4 = next(d for d in built.details if d.row.name == "k4()")
    assert k4.hints[0].nvidia is None and k4.hints[0].nvidia_text == "NVIDIA: —"
    # the grouped entry: NVIDIA's estimates combined like ours (k3 has none: 1x)
    shmem = built.summary.top_hints[0]
    expected = 0.898 / (0.4 / 2.0 + 0.3 / 1.25 + 0.198)
    assert shmem.nvidia is not None and shmem.nvidia.speedup == pytest.approx(expected)
    assert shmem.nvidia_text == f"NVIDIA: {expected:.2f}x (SharedMemoryConflicts; 2 of 3 kernels)"
    marker = built.summary.top_hints[-1]
    assert marker.nvidia_text == "NVIDIA: 100x (LaunchConfiguration)"  # no decimals from 100x

    html = render.html(built)
    assert '<td class="nvidia">2.00x (SharedMemoryConflicts)</td>' in html
    assert '<td class="nvidia">—</td>' in html  # DIVERGENCE of k4: no rule
    assert '(<span class="nvidia">NVIDIA: 2.00x (SharedMemoryConflicts)</span>)' in html
    md = render.markdown(built)
    assert f"(NVIDIA: {expected:.2f}x (SharedMemoryConflicts; 2 of 3 kernels))" in md
    assert "(NVIDIA: —)" in md


def test_real_report_bank_conflicts_beside_nvidia(real_profiles: Path, tmp_path: Path) -> None:
    """CUDA_Learning's shared-memory example: 32-way bank conflicts (NVIDIA estimates 48.9 % of
    setColReadCol's time, 1.96x) and one-block kernels (LOADBALANC_SM on all seven)."""
    pytest.importorskip("ncu_report")
    path = real_profiles / "reports" / "CUDA_Learning" / "shared_report.ncu-rep"
    out, md, js = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.json"
    code, _, err = run(
        "report", str(path), "-o", str(out), "--markdown", str(md), "--json", str(js)
    )
    assert code == 0, err
    data = json.loads(js.read_text(encoding="utf-8"))
    hints = data["application"]["hints"]
    criteria = [h["criterion"] for h in hints]
    assert len(criteria) == len(set(criteria))  # one entry per criterion
    assert criteria.index("SHMEM_EFFICIENCY") < 3  # was 8th behind seven one-block hints
    html = out.read_text(encoding="utf-8")
    assert '<td class="nvidia">1.96x (SharedMemoryConflicts)</td>' in html
    assert "NVIDIA: 30.00x (LaunchConfiguration)" in md.read_text(encoding="utf-8")


def test_real_marker_kernels_rank_last(tuning_families: Path, tmp_path: Path) -> None:
    """ece408's milestone 2: two one-thread marker kernels (0.004 % of the GPU time each) with
    kernel speedups of 449x-485x rank after the convolution (99.99 %)."""
    pytest.importorskip("ncu_report")
    path = tuning_families / "ece408fa23/Project/nv_nsight_cu_cli/m2baseline_analysis_file.ncu-rep"
    js = tmp_path / "r.json"
    code, _, err = run("report", str(path), "--json", str(js))
    assert code == 0, err
    data = json.loads(js.read_text(encoding="utf-8"))
    shares = {k["name"]: k["share_of_gpu_time"] for k in data["kernels"]}
    hints = data["application"]["hints"]
    assert hints and hints[0]["kernel"].startswith("conv_forward_kernel")
    seen_small = False
    for h in hints:
        small = shares[h["kernel"]] < 0.01
        assert small or not seen_small  # no large kernel's hint after a small one's
        seen_small |= small
    assert seen_small
