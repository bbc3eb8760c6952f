"""Each kernel's metric means grouped a run of kernels at a time
(advisor.models.bsp.profile.means_by_kernel, at most ``_ROWS_AT_ONCE`` rows a grouping).

Whatever the runs (one kernel each, a few kernels, every kernel at once), the means are those
of a pandas grouping of one kernel's rows by metric, float for float, in the order the kernels
were asked for; the value column is read in place when it is float64 and converted otherwise.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from advisor import pipeline
from advisor.models.bsp import profile as bsp_profile

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu


def _one_kernel_at_a_time(frame: pd.DataFrame, kernel: str) -> list[tuple[str, bytes]]:
    """The reference: one kernel's rows with a value, grouped by metric (sorted), pandas' mean."""
    rows = frame[(frame["kernel"].astype(object) == kernel) & frame["metric"].notna()]
    values = pd.to_numeric(rows["value"], errors="coerce")
    means = values.groupby(rows["metric"].astype(str)).mean().dropna()
    return [(str(m), struct.pack("<d", v)) for m, v in means.items()]


def _bits(means: list[tuple[str, float]]) -> list[tuple[str, bytes]]:
    return [(m, struct.pack("<d", v)) for m, v in means]


@pytest.fixture(scope="module")
def frame(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    page = tmp_path_factory.mktemp("raw") / "raw.csv"
    gen_ncu.write_ncu_raw(page, 240, seed=9)
    return pipeline.read([str(page)]).metrics


@pytest.mark.parametrize("at_once", [1, 700, 5_000, 1 << 16])
def test_any_runs_give_each_kernels_own_means(
    frame: pd.DataFrame, at_once: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bsp_profile, "_ROWS_AT_ONCE", at_once)
    kernels = sorted(str(k) for k in frame["kernel"].dropna().unique())
    asked = [kernels[5], "no such kernel", *kernels[::-2], kernels[5], kernels[0]]
    got = bsp_profile.means_by_kernel(frame, asked)
    assert list(got) == list(dict.fromkeys(k for k in asked if k in kernels))
    for kernel, means in got.items():
        assert _bits(means) == _one_kernel_at_a_time(frame, kernel), kernel
    every = bsp_profile.means_by_kernel(frame)
    assert list(every) == kernels
    assert all(every[k] == got[k] for k in got)


def test_values_that_are_not_float64_are_converted(frame: pd.DataFrame) -> None:
    texts = frame.assign(value=frame["value"].astype(object).where(frame.index % 7 != 0, "n/a"))
    assert texts["value"].dtype == object
    got = bsp_profile.means_by_kernel(texts)
    numbers = texts.assign(value=pd.to_numeric(texts["value"], errors="coerce"))
    assert numbers["value"].dtype == np.float64
    assert got == bsp_profile.means_by_kernel(numbers)
    kernel = next(iter(got))
    assert _bits(got[kernel]) == _one_kernel_at_a_time(texts, kernel)
