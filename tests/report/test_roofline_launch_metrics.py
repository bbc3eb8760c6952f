"""The roofline's per-launch metrics (advisor.report.roofline.kernel_launch_metrics) read on the
categories' codes when no (kernel, launch, metric) has two rows, as on a raw Nsight Compute
page: the same dicts, in the same order, as pandas' grouped means.  Checked on a generated raw
page, the sample and the real raw pages (read in place), and on rows that repeat a key.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from advisor import pipeline
from advisor.report import roofline

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu

REAL_RAW_PAGES = (
    "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64.ncu.csv",
    "csv/roofline_analysis_ncu_b200/torch_sdpa_auto__mqa_bf16_b128_ctx4k_p64.ncu.csv",
)


def _both(profile: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = roofline.kernel_launch_metrics(profile)
    with monkeypatch.context() as patch:
        patch.setattr(roofline, "_launch_metrics_once", lambda frame: None)
        grouped = roofline.kernel_launch_metrics(profile)
    return fast, grouped


def _same(fast: Any, grouped: Any) -> None:
    assert fast == grouped
    assert list(fast) == list(grouped)  # kernels in the same order
    for kernel, launches in fast.items():
        for one, other in zip(launches, grouped[kernel], strict=True):
            assert list(one) == list(other)  # metrics in the same order
            assert all(type(v) is float for v in one.values())


def test_a_generated_raw_page_and_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, samples: Path
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 200, seed=7)
    fast, grouped = _both(pipeline.read([str(page)]), monkeypatch)
    _same(fast, grouped)
    assert sum(len(v) for v in fast.values()) == 200  # every launch has roofline counts
    _same(*_both(pipeline.read([str(samples / "synthetic_ncu_raw.csv")]), monkeypatch))


@pytest.mark.parametrize("page", REAL_RAW_PAGES)
def test_the_real_raw_pages(
    page: str, real_profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, grouped = _both(pipeline.read([str(real_profiles / page)]), monkeypatch)
    _same(fast, grouped)
    assert fast


def test_a_repeated_key_or_names_that_are_not_categories_take_the_grouped_means(
    tmp_path: Path,
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 20, seed=2)
    profile = pipeline.read([str(page)])
    frame = profile.metrics
    assert roofline._launch_metrics_once(frame) is not None
    first = frame[frame["metric"].astype(str).isin(roofline.METRICS)].iloc[:1]
    assert roofline._launch_metrics_once(pd.concat([frame, first])) is None  # a mean of two
    plain = frame.assign(metric=frame["metric"].astype(object))
    assert roofline._launch_metrics_once(plain) is None
