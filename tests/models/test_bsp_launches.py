"""The BSP predictions' launches grouped by kernel once (advisor/models/bsp/profile.py,
``launches_by_kernel``: the names' and devices' categorical codes, grid x block multiplied in
place) against :func:`kernel_launches` of each kernel's rows, on random launches with missing
names, devices and sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from advisor.models.bsp import profile as bsp_profile
from advisor.profile import Profile, Provenance

PROV = Provenance(path="random", format="test", profiler="nsys")


def _sizes(rng: np.random.Generator, n: int, high: int) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(rng.integers(1, high, size=n), rng.random(n) < 0.05)


@pytest.mark.parametrize("seed", range(4))
def test_launches_by_kernel_match_each_kernels_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 2000
    names = rng.choice(np.array(["k_a", "k_b", "zeta", "alpha", None], dtype=object), size=n)
    devices = rng.choice(np.array(["GPU B", "GPU A", None], dtype=object), size=n)
    duration = rng.lognormal(8, 1, size=n)
    duration[rng.random(n) < 0.05] = np.nan
    launches = pd.DataFrame(
        {
            "launch_id": range(n),
            "name": names,
            "device": devices,
            "start_ns": np.arange(n, dtype=float),
            "duration_ns": duration,
            **{
                d: _sizes(rng, n, 1024 if d.startswith("block") else 70000)
                for d in bsp_profile._DIMS
            },
        }
    )
    prof = Profile(provenance=(PROV,), launches=launches)
    wanted = ["zeta", "k_a", "missing", "alpha", "k_b", "k_a"]
    grouped = bsp_profile.launches_by_kernel(prof, wanted)
    assert list(grouped) == ["zeta", "k_a", "missing", "alpha", "k_b"]
    for name in grouped:
        one = bsp_profile.kernel_launches(prof.launches[prof.launches["name"] == name])
        got = grouped[name]
        assert (got.count, got.devices) == (one.count, one.devices)
        assert got.threads.tolist() == one.threads.tolist()
        assert got.durations.tolist() == one.durations.tolist()
    assert grouped["missing"].count == 0
    assert sum(grouped[k].count for k in grouped) == int(pd.Series(names).notna().sum())


def test_codes_of_text_and_of_a_categorical_name_the_same_rows() -> None:
    text = pd.Series(["b", None, "a", "b", "c"], dtype=object)
    for column in (text, text.astype("category")):
        codes, names = bsp_profile._codes(column)
        assert [names[c] if c >= 0 else None for c in codes.tolist()] == text.tolist()
