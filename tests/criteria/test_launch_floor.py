"""Decision L1: no speedup promises a kernel launch shorter than MIN_LAUNCH_NS (the shortest
launch the real profiles hold is 416 ns): a criterion's potential and the overall potential are
capped at the mean launch time / 400 ns, with a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor import pipeline
from advisor.criteria import _at_launch_floor
from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.speedups import (
    MIN_LAUNCH_NS,
    capped_at_launch,
    launch_cap,
    overall_speedup,
)


def test_the_cap_is_the_launch_time_over_the_floor() -> None:
    assert MIN_LAUNCH_NS == 400.0
    assert launch_cap(5_000.0) == pytest.approx(12.5)
    assert launch_cap(100.0) == 1.0  # a launch under the floor cannot be promised any gain
    assert launch_cap(None) is None and launch_cap(0.0) is None
    assert capped_at_launch(30.0, 5_000.0) == pytest.approx(12.5)
    assert capped_at_launch(3.0, 5_000.0) == 3.0
    assert capped_at_launch(30.0, None) == 30.0
    # the overall potential: 1 / 0.004 of peak is 250x, a 5 µs launch allows 12.5x
    assert overall_speedup(0.004, 5_000.0) == pytest.approx(12.5)
    assert overall_speedup(0.5, 5_000.0) == pytest.approx(2.0)
    assert overall_speedup(None, 5_000.0) is None


@pytest.mark.real_profiles
def test_microsecond_kernels_are_promised_no_launch_under_the_floor(real_profiles: Path) -> None:
    """shared_report's kernels run 2.9-5.3 µs on one block of a 30-SM GPU: "grid too small" was
    30x and the application 216x; each is now at most launch time / 400 ns."""
    run = pipeline.analyse(
        [str(real_profiles / "reports/CUDA_Learning/shared_report.ncu-rep")], None, "amdahl"
    )
    kernels = run.data["kernels"]
    assert kernels
    capped = 0
    for k in kernels:
        cap = k["duration_ns"] / k["launches"] / MIN_LAUNCH_NS
        assert k["potential_speedup"] <= cap * (1 + 1e-12)
        sm = k["criteria"]["LOADBALANC_SM"]
        assert sm["potential_speedup"] == pytest.approx(cap)
        assert any("launch floor" in n for n in sm["notes"])
        capped += 1
    assert capped == len(kernels)
    # the application figure follows: Amdahl over capped kernels, far below the old 216x
    assert run.data["application"]["potential_speedup"] <= max(
        k["duration_ns"] / k["launches"] / MIN_LAUNCH_NS for k in kernels
    )


def _floored(paper: float | None, amdahl: float | None) -> CriterionResult:
    result = CriterionResult(
        name="SHMEM_EFFICIENCY", status=COMPUTED, value=0.03, speedups=Speedups(paper, amdahl)
    )
    return _at_launch_floor(result, 5_000.0)  # a 5 µs launch: capped at 12.5x


def test_the_note_names_the_form_capped_when_the_other_is_below_the_cap() -> None:
    """A report in the Amdahl form shows 1.73x where only the paper form's 1 / value (32x) was
    capped: its note must not say the figure shown was capped."""
    only_paper = _floored(32.0, 1.73)
    assert only_paper.speedups == Speedups(12.5, 1.73)
    assert only_paper.notes == (
        "the paper form's potential speedup capped at the launch floor: a launch of 5 µs "
        "cannot run in under 400 ns",
    )
    both = _floored(32.0, 20.0)
    assert both.speedups == Speedups(12.5, 12.5)
    assert both.notes[0].startswith("potential speedup capped at the launch floor")
    alone = _floored(32.0, None)  # the one figure there is was capped
    assert alone.notes[0].startswith("potential speedup capped at the launch floor")
    assert _floored(3.0, 1.5).notes == ()  # nothing over the cap: no note
