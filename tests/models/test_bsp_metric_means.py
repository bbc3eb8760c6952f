"""The metric means of the report's BSP predictions and limiters, computed one kernel's rows at a
time (advisor.models.bsp.profile.means_by_kernel), equal the pandas groupings they replace,
float for float: the per-kernel means of ``_metric_means`` and the (kernel, metric) grouping of
every row that ``advisor.report.roofline.kernel_metric_means`` did, on hand-made rows (missing
values, rows without a kernel or metric, repeated metrics, plain and categorical columns), a
generated raw page, the samples and the real Nsight Compute CSVs (read in place)."""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

import pandas as pd
import pytest

from advisor import pipeline
from advisor.models.bsp import profile as bsp_profile
from advisor.profile import Profile, Provenance
from advisor.report.roofline import kernel_metric_means

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu

REAL_NCU_CSVS = (
    "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64.ncu.csv",
    "csv/roofline_analysis_ncu_b200/torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64.ncu.csv",
    "csv/llmperfopt_rtx5090/ncu/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3/ncu.details.csv",
)


def _bits(means: dict[str, float]) -> list[tuple[str, bytes]]:
    return [(k, struct.pack("<d", v)) for k, v in means.items()]


def _grouped_every_row(profile: Profile) -> dict[str, dict[str, float]]:
    """What kernel_metric_means computed before: every row grouped by kernel and metric."""
    frame = profile.metrics
    rows = frame[frame["kernel"].notna() & frame["value"].notna()]
    values = pd.to_numeric(rows["value"], errors="coerce")
    means = values.groupby([rows["kernel"], rows["metric"]]).mean().dropna()
    out: dict[str, dict[str, float]] = {}
    for (kernel, metric), value in means.items():
        out.setdefault(str(kernel), {})[str(metric)] = float(value)
    return out


def _check(profile: Profile, kernels: list[str]) -> int:
    every = kernel_metric_means(profile)
    expected = _grouped_every_row(profile)
    assert list(every) == list(expected)
    for kernel, means in expected.items():
        assert _bits(every[kernel]) == _bits(means)
    grouped = bsp_profile.metric_means_by_kernel(profile, kernels)
    assert list(grouped) == list(dict.fromkeys(kernels))
    for kernel in kernels:
        assert _bits(grouped[kernel]) == _bits(bsp_profile._metric_means(profile, kernel))
    return sum(len(m) for m in grouped.values())


# the rows include values whose sum overflows to inf on purpose (pandas' reference warns)
@pytest.mark.filterwarnings("ignore:overflow encountered in reduceat:RuntimeWarning")
@pytest.mark.parametrize("categorical", [False, True])
def test_hand_made_rows_give_the_per_kernel_means(categorical: bool) -> None:
    kernel = ["a", "b", "a", None, "a", "b", "a", "c", "b", "b"]
    metric = ["x", "x", "y", "x", "x", "y", "x", "x", None, "y"]
    value = [0.1, 2.0, math.nan, 9.0, 0.2, 1e308, 0.7, math.nan, 4.0, 1e308]  # b, y: inf
    frame = pd.DataFrame({"kernel": kernel, "metric": metric, "value": value})
    if categorical:
        frame = frame.astype({"kernel": "category", "metric": "category"})
    prof = Profile(
        provenance=(Provenance(path="hand.csv", format="test", profiler="ncu"),), metrics=frame
    )
    assert _check(prof, ["a", "b", "c", "missing", "a"]) == 2  # a: x; b: x (y is inf)
    assert kernel_metric_means(prof)["b"]["y"] == math.inf  # the limiters keep it
    means = bsp_profile.metric_means_by_kernel(prof, ["a"])["a"]
    assert list(means) == ["x"] and means["x"] == pytest.approx((0.1 + 0.2 + 0.7) / 3)
    assert "y" not in means  # only a missing value


def test_a_generated_raw_page_and_the_samples_give_the_per_kernel_means(
    tmp_path: Path, samples: Path
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 300, seed=2)
    profile = pipeline.read([str(page)])
    assert _check(profile, profile.kernel_names()) > 36 * 20
    for name in (
        "synthetic_ncu_raw.csv",
        "synthetic_ncu_details.csv",
        "synthetic_nvprof_metrics.csv",
    ):
        profile = pipeline.read([str(samples / name)])
        assert _check(profile, profile.kernel_names()) > 0


@pytest.mark.parametrize("path", REAL_NCU_CSVS)
def test_the_real_ncu_csvs_give_the_per_kernel_means(path: str, real_profiles: Path) -> None:
    profile = pipeline.read([str(real_profiles / path)])
    assert _check(profile, profile.kernel_names()) > 0
