"""Every report on every real input and every sample holds the report invariants
(:mod:`advisor.report.invariants`): no hint's whole-GPU figure above the application's, no 1.00x
where the inputs are n/a, the lead hint on a hot kernel, no prediction under its physical floor, no
summed wait over the span, no launch-configuration hint on a collective, every Markdown number in
the JSON.

Inputs: ``../shared/real_profiles``, ``../shared/tuning_families`` (each file reported on its own;
skipped with the reason when ``../shared`` is absent, required under ``CI=true``), the samples,
and any folders named in ``CUDA_ADVISOR_INVARIANT_INPUTS`` (``os.pathsep``-separated), so inputs
kept outside the repository are checked the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import report_invariants as walk
from tests.conftest import REAL_PROFILES, SAMPLES, TUNING_FAMILIES


def _params() -> list[object]:
    params: list[object] = []
    for folder, what in ((REAL_PROFILES, "real profiles"), (TUNING_FAMILIES, "tuning families")):
        if folder.is_dir():
            params += [
                pytest.param(
                    p, id=str(p.relative_to(folder.parent)), marks=pytest.mark.real_profiles
                )
                for p in walk.profile_files([folder])
            ]
        else:
            params.append(
                pytest.param(folder, id=f"{what} (absent)", marks=pytest.mark.real_profiles)
            )
    params += [pytest.param(p, id=p.name) for p in walk.profile_files([SAMPLES])]
    extra = os.environ.get("CUDA_ADVISOR_INVARIANT_INPUTS", "")
    for folder in filter(None, extra.split(os.pathsep)):
        params += [pytest.param(p, id=str(p)) for p in walk.profile_files([Path(folder)])]
    return params


@pytest.mark.parametrize("path", _params())
def test_report_holds_every_invariant(path: Path, request: pytest.FixtureRequest) -> None:
    if not path.exists():  # ../shared absent: skip with the reason, or fail under CI=true
        request.getfixturevalue("real_profiles" if "real" in path.name else "tuning_families")
    outcome = walk.report([path])
    assert outcome.exit_code in (0, 3), outcome.error
    assert outcome.violations == [], outcome.violations


def test_the_readme_sample_pair_holds_every_invariant() -> None:
    """The two sample files the README reports on together."""
    outcome = walk.report(
        [SAMPLES / "synthetic_nvprof_gputrace.csv", SAMPLES / "synthetic_nvprof_metrics.csv"]
    )
    assert outcome.exit_code == 0, outcome.error
    assert outcome.violations == []
