"""The application's hint list (advisor/criteria/engine/hints.py, ``rank(by_application=True)``):
kernels under a minimum share of GPU time never lead, the same criterion on several kernels is
one entry with the Amdahl gain over them, and the report shows those entries.

Hand-built criterion results with known shares and speedups; every expected gain is computed
here from 1 / ((1 - Σ share) + Σ share / SP)."""

from __future__ import annotations

from pathlib import Path

import pytest

import parsers
from advisor.criteria.engine.analysis import (
    COMPUTED,
    Analysis,
    ApplicationAnalysis,
    CriterionResult,
    Hint,
    KernelAnalysis,
    Speedups,
    Throughputs,
    to_json,
)
from advisor.criteria.engine.hints import (
    MIN_SHARE_OF_GPU_TIME,
    KernelsHint,
    combined_gain,
    combined_speedup,
    group,
    hint_for,
    kernels_of,
    rank,
)
from advisor.render import report as render
from advisor.report import build as report


def _hint(
    criterion: str, kernel: str, share: float | None, speedup: float | None, value: float = 0.1
) -> Hint:
    result = CriterionResult(
        name=criterion, status=COMPUTED, value=value, speedups=Speedups(speedup, speedup)
    )
    hint = hint_for(result, kernel, "amdahl", share)
    assert hint is not None
    return hint


def _gain(share: float, speedup: float) -> float:
    return 1.0 / ((1.0 - share) + share / speedup)


# --- 1. kernels under the minimum share never lead ---------------------------------------------


def test_a_marker_kernel_with_a_huge_speedup_ranks_after_every_larger_kernel() -> None:
    marker = _hint("LOADBALANC_SM", "marker()", 0.002, 500.0)  # gain 1.00199
    big = _hint("DIVERGENCE", "conv()", 0.6, 1.001)  # gain 1.0006, below the marker's
    mid = _hint("SHMEM_EFFICIENCY", "mid()", 0.05, 1.01)  # gain 1.0005
    assert marker.application_speedup == pytest.approx(_gain(0.002, 500.0))
    assert marker.application_speedup > big.application_speedup > mid.application_speedup
    ranked = rank([marker, mid, big], by_application=True)
    assert [h.kernel for h in ranked] == ["conv()", "mid()", "marker()"]
    # a kernel's own list (by potential speedup) is not touched by the minimum
    assert [h.kernel for h in rank([big, marker])] == ["marker()", "conv()"]


def test_the_application_gain_ranks_not_the_kernel_speedup() -> None:
    a = _hint("DIVERGENCE", "a()", 0.6, 1.2)  # gain 1 / (0.4 + 0.5) = 1.111
    b = _hint("SHMEM_EFFICIENCY", "b()", 0.1, 5.0)  # gain 1 / (0.9 + 0.02) = 1.087
    assert a.application_speedup == pytest.approx(1 / 0.9)
    assert b.application_speedup == pytest.approx(1 / 0.92)
    assert [h.kernel for h in rank([b, a], by_application=True)] == ["a()", "b()"]
    assert [h.kernel for h in rank([a, b])] == ["b()", "a()"]


def test_minimum_share_boundary_and_unknown_shares() -> None:
    at = _hint("DIVERGENCE", "at()", MIN_SHARE_OF_GPU_TIME, 1.5)
    under = _hint("SHMEM_EFFICIENCY", "under()", MIN_SHARE_OF_GPU_TIME * 0.99, 400.0)
    unknown = _hint("L1_GRANULARITY", "unknown()", None, 2.0)
    ranked = rank([under, unknown, at], by_application=True)
    # at the minimum is not under it; no share: no estimate (last of the large ones)
    assert [h.kernel for h in ranked] == ["at()", "unknown()", "under()"]


def test_hostsync_is_never_held_back() -> None:
    hostsync = hint_for(
        CriterionResult(name="HOSTSYNC", status=COMPUTED, value=0.5, speedups=Speedups(2.0, 2.0)),
        None,
        "amdahl",
        None,
    )
    assert hostsync is not None and kernels_of(hostsync) == ()
    big = _hint("DIVERGENCE", "k()", 0.9, 1.5)  # gain 1 / (0.1 + 0.6) = 1.43 < 2
    assert [h.criterion for h in rank([big, hostsync], by_application=True)] == [
        "HOSTSYNC",
        "DIVERGENCE",
    ]


# --- 2. the same criterion on several kernels is one entry --------------------------------------


def test_one_entry_per_criterion_with_the_amdahl_gain_over_its_kernels() -> None:
    a = _hint("SHMEM_EFFICIENCY", "a()", 0.3, 2.0, value=0.05)  # gain 1 / 0.85 = 1.176
    b = _hint("SHMEM_EFFICIENCY", "b()", 0.2, 1.5, value=0.2)  # gain 1 / 0.8667 = 1.154
    c = _hint("SHMEM_EFFICIENCY", "c()", 0.1, None, value=0.3)  # no estimate: counts as 1x
    other = _hint("DIVERGENCE", "d()", 0.4, 2.0)  # gain 1 / 0.8 = 1.25: above a and b alone
    ranked = rank([other, c, b, a], by_application=True)
    assert [h.criterion for h in ranked] == ["SHMEM_EFFICIENCY", "DIVERGENCE"]
    entry = ranked[0]
    assert isinstance(entry, KernelsHint)
    assert entry.kernels == ("a()", "b()", "c()")  # best gain first, no estimate last
    assert entry.kernel == "a()" and entry.value == 0.05  # the first kernel's value
    assert entry.share_of_gpu_time == pytest.approx(0.6)
    expected = 1.0 / ((1.0 - 0.6) + 0.3 / 2.0 + 0.2 / 1.5 + 0.1)
    assert expected == pytest.approx(1.2766, abs=1e-4)
    assert entry.application_speedup == pytest.approx(expected)
    assert entry.potential_speedup == pytest.approx(0.6 / (0.3 / 2.0 + 0.2 / 1.5 + 0.1))
    assert ranked[1].kernels == ("d()",)  # type: ignore[attr-defined]
    assert ranked[1] == other


def test_combined_gain_of_one_kernel_is_its_application_gain() -> None:
    assert combined_gain([(0.25, 4.0)]) == pytest.approx(_gain(0.25, 4.0))
    assert combined_gain([(0.25, None)]) is None
    assert combined_gain([(None, 4.0)]) is None
    assert combined_speedup([(0.25, 4.0), (0.25, None)]) == pytest.approx(0.5 / (0.0625 + 0.25))


def test_small_kernels_do_not_join_a_large_kernels_entry_unless_they_add_up() -> None:
    big = _hint("DIVERGENCE", "conv()", 0.9, 1.3, value=0.78)
    markers = [_hint("DIVERGENCE", f"marker{i}()", 0.0001, 32.0, value=0.03) for i in range(2)]
    other = _hint("L2_GRANULARITY", "tiny_gain()", 0.05, 1.001)
    ranked = rank([*markers, other, big], by_application=True)
    assert [kernels_of(h) for h in ranked] == [
        ("conv()",),
        ("tiny_gain()",),
        ("marker0()", "marker1()"),  # their own entry, last: together 0.02 % of the GPU time
    ]
    # 20 kernels of 0.09 % each are 1.8 % together: listed with the large kernel
    many = [_hint("DIVERGENCE", f"m{i:02d}()", 0.0009, 32.0) for i in range(20)]
    (entry,) = group([big, *many])
    assert len(kernels_of(entry)) == 21
    parts = [(0.9, 1.3)] + [(0.0009, 32.0)] * 20
    assert entry.application_speedup == pytest.approx(combined_gain(parts))


def test_many_small_kernels_together_can_lead() -> None:
    # 50 kernels of 0.5 % each: none reaches the minimum, together they are 25 % of the time
    small = [_hint("SHMEM_EFFICIENCY", f"s{i:02d}()", 0.005, 3.0) for i in range(50)]
    big = _hint("DIVERGENCE", "big()", 0.5, 1.2)  # gain 1 / (0.5 + 0.4167) = 1.091
    ranked = rank([big, *small], by_application=True)
    assert [h.criterion for h in ranked] == ["SHMEM_EFFICIENCY", "DIVERGENCE"]
    assert ranked[0].application_speedup == pytest.approx(1.0 / (0.75 + 0.25 / 3.0))
    # alone, each of them would rank after the big kernel
    assert [h.kernel for h in rank([small[0], big], by_application=True)] == ["big()", "s00()"]


def test_plain_engine_hints_without_a_share_still_rank() -> None:
    """Hints built without :func:`hint_for` (no share known) are ranked by their gain."""
    plain = [
        Hint("DIVERGENCE", k, 0.1, 0.8, sp, g, "t", {}, ())
        for k, sp, g in (("x()", 2.0, 1.1), ("y()", 3.0, 1.3))
    ]
    (entry,) = rank(plain, by_application=True)
    assert kernels_of(entry) == ("y()", "x()")
    assert entry.application_speedup == pytest.approx(1.3)  # no share: the best member's gain
    assert entry.potential_speedup == pytest.approx(3.0)


# --- the report of a hand-built analysis --------------------------------------------------------


def _kernel(
    name: str, share: float, hints: list[Hint], rules: tuple[dict[str, object], ...] = ()
) -> KernelAnalysis:
    criteria = tuple(
        CriterionResult(
            name=h.criterion,
            status=COMPUTED,
            value=h.value,
            speedups=Speedups(h.potential_speedup, h.potential_speedup),
            method="hand-built",
        )
        for h in hints
    )
    return KernelAnalysis(
        name=name,
        launches=1,
        duration_ns=share * 1e6,
        share_of_gpu_time=share,
        bound="memory",
        throughputs=Throughputs(memory_frac=0.5),
        potential_speedup=2.0,
        criteria=criteria,
        hints=rank(hints),
        ncu_rules=rules,
    )


def _rule(
    rule: str, frac: float | None, speedup_type: str | None = "global", text: str = ""
) -> dict[str, object]:
    return {
        "section": "S",
        "rule": rule,
        "rule_type": "OPT",
        "description": text or f"{rule} message",
        "speedup_type": speedup_type,
        "estimated_speedup_frac": frac,
        "launches": 1,
    }


def hand_built() -> Analysis:
    """Three kernels share SHMEM_EFFICIENCY (two with NVIDIA's SharedMemoryConflicts estimate),
    one has DIVERGENCE, a marker kernel (0.2 %) has LOADBALANC_SM at 100x."""
    shares = {"k1()": 0.4, "k2()": 0.3, "k3()": 0.198, "marker()": 0.002, "k4()": 0.1}
    hints = {
        "k1()": [_hint("SHMEM_EFFICIENCY", "k1()", 0.4, 1.5, value=0.05)],
        "k2()": [_hint("SHMEM_EFFICIENCY", "k2()", 0.3, 1.2, value=0.4)],
        "k3()": [_hint("SHMEM_EFFICIENCY", "k3()", 0.198, 1.1, value=0.6)],
        "marker()": [_hint("LOADBALANC_SM", "marker()", 0.002, 100.0, value=0.01)],
        "k4()": [_hint("DIVERGENCE", "k4()", 0.1, 1.8, value=0.5)],
    }
    rules = {
        "k1()": (_rule("SharedMemoryConflicts", 0.5), _rule("UncoalescedSharedAccess", 0.02)),
        "k2()": (_rule("SharedMemoryConflicts", 0.2),),
        "marker()": (_rule("LaunchConfiguration", 0.99, text="Small Grid: one block"),),
    }
    kernels = [_kernel(n, s, hints[n], rules.get(n, ())) for n, s in shares.items()]
    hostsync = CriterionResult(name="HOSTSYNC", status="not_computable", scope="application")
    app_hints = rank([h for k in kernels for h in k.hints], by_application=True)
    return Analysis(
        inputs=(),
        device={"name": None},
        speedup_form="amdahl",
        application=ApplicationAnalysis(
            gpu_time_ns=1e6,
            kernels=len(kernels),
            launches=len(kernels),
            hostsync=hostsync,
            potential_speedup=2.0,
            kernels_without_estimate=0,
            hints=app_hints,
        ),
        kernels=tuple(kernels),
    )


def test_report_lists_the_grouped_entry_with_its_kernels_share_and_gain(samples: Path) -> None:
    analysis = hand_built()
    built = report.build(analysis, parsers.read(samples / "synthetic_ncu_details.csv"))
    top = built.summary.top_hints
    assert [h.criterion for h in top] == ["SHMEM_EFFICIENCY", "DIVERGENCE", "LOADBALANC_SM"]
    shmem = top[0]
    assert shmem.kernels == ("k1()", "k2()", "k3()") and shmem.kernel_count == 3
    assert shmem.share_of_gpu_time == pytest.approx(0.898)
    gain = 1.0 / ((1 - 0.898) + 0.4 / 1.5 + 0.3 / 1.2 + 0.198 / 1.1)
    assert shmem.application_speedup == pytest.approx(gain)
    assert (shmem.value_min, shmem.value_max) == (0.05, 0.6)
    assert shmem.value_text == "0.05–0.60"
    assert "3 kernels (k1(), k2(), k3(), 89.8% of GPU time)" in shmem.sentence
    assert f"(this fix: up to {gain:.2f}x on the whole GPU time)" in shmem.sentence
    # the marker's 100x is last, whatever its gain (1 / (0.998 + 0.00002) = 1.00198)
    assert top[-1].kernels == ("marker()",)
    assert top[-1].share_of_gpu_time == pytest.approx(0.002)
    # each kernel section keeps its own hint
    k2 = next(d for d in built.details if d.row.name == "k2()")
    assert [(h.criterion, h.kernels) for h in k2.hints] == [("SHMEM_EFFICIENCY", ("k2()",))]
    assert k2.hints[0].application_speedup == pytest.approx(_gain(0.3, 1.2))

    html = render.html(built)
    assert html.count('class="top-hint"') == 3
    assert 'data-criterion="SHMEM_EFFICIENCY" data-kernels="3"' in html
    md = render.markdown(built)
    first = next(line for line in md.splitlines() if line.startswith("1. "))
    assert first.startswith(
        "1. **SHMEM_EFFICIENCY** = 0.05–0.60 in 3 kernels (`k1()`, `k2()`, `k3()`), "
        "89.8% of GPU time: "
    )
    assert f"this fix on the whole GPU time: {gain:.2f}x" in first


def test_json_of_a_grouped_entry_names_its_kernels() -> None:
    data = to_json(hand_built())
    entry = data["application"]["hints"][0]
    assert entry["kernels"] == ["k1()", "k2()", "k3()"] and entry["kernel_count"] == 3
    for key in ("criterion", "kernel", "value", "threshold", "potential_speedup"):
        assert key in entry
    single = data["application"]["hints"][1]
    assert "kernels" not in single and single["kernel"] == "k4()"
