"""The report's per-kernel metric means computed once (advisor.report.roofline.metric_means).

The limiting units and the BSP predictions both read each kernel's metric means; on a raw
Nsight Compute page that is a sort and a grouping of some 370,000 rows, so the report computes
them once per metrics frame.  Checked: the same means as the model's own functions, one
computation per report build, and no profile kept alive by the memo.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from advisor import pipeline
from advisor.models.bsp import profile as bsp_profile
from advisor.report import predictions, roofline
from tests.generated import ncu_page


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ncu_page(tmp_path_factory, "raw", 200, seed=7)


def test_the_means_are_the_models_own(page: Path) -> None:
    profile = pipeline.read([str(page)])
    names = sorted(profile.kernel_names())
    assert len(names) > 3
    wanted = [names[2], "no such kernel", names[0], names[2]]
    assert predictions._finite_means(profile, wanted) == bsp_profile.metric_means_by_kernel(
        profile, wanted
    )
    every = bsp_profile.means_by_kernel(profile.metrics)
    assert roofline.metric_means(profile) == every
    assert roofline.kernel_metric_means(profile) == {
        k: {m: v for m, v in means if v == v} for k, means in every.items()
    }


def test_one_computation_per_build_and_no_profile_kept(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    real = roofline.means_by_kernel

    def spy(frame: Any, kernels: Any = None) -> Any:
        calls.append(frame)
        return real(frame, kernels)

    monkeypatch.setattr(roofline, "means_by_kernel", spy)
    run = pipeline.analyse([str(page)])
    report = pipeline.build(run)  # the pages: the predictions and the roofline chart too
    assert report.predictions is not None and report.predictions.bsp is not None
    assert report.verdict is not None and report.roofline is not None
    assert len(calls) == 1 and calls[0] is run.profile.metrics
    pipeline.build(run, pages=False)
    assert len(calls) == 1  # the same frame: the means kept
    kept = weakref.ref(run.profile.metrics)
    del run, report, calls[:]
    gc.collect()
    assert kept() is None


def test_json_alone_computes_the_limiting_kernels_means_only(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report --json`` alone (no pages) computes the means of the kernels whose limiting unit
    it names, not of every kernel, and names the same units as the pages' build."""
    calls: list[Any] = []
    real = roofline.means_by_kernel

    def spy(frame: Any, kernels: Any = None) -> Any:
        calls.append(kernels)
        return real(frame, kernels)

    run = pipeline.analyse([str(page)])
    monkeypatch.setattr(roofline, "means_by_kernel", spy)
    alone = pipeline.build(run, pages=False)
    assert alone.verdict is not None and alone.verdict.limits
    assert len(calls) == 1 and calls[0] is not None
    assert sorted(calls[0]) == sorted(u.kernel for u in alone.verdict.limits)
    assert len(calls[0]) < len(run.profile.kernel_names())
    assert not roofline._MEANS or roofline._MEANS[0][0]() is not run.profile.metrics
    fresh = pipeline.analyse([str(page)])
    paged = pipeline.build(fresh)
    assert paged.verdict is not None
    assert paged.verdict.limits == alone.verdict.limits
