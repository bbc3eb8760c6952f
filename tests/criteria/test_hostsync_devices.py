"""HOSTSYNC's kernel intervals read on the launches' arrays (advisor/criteria/hostsync.py)
against the frame formulation they replaced (a mask over the launches, a sorted ``groupby`` of
the device ids): the same busy time, span, kernel time and transfers in the span, bit for bit,
on random launches over several devices, some without a device id, a start or a duration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from advisor.criteria.hostsync import evaluate_hostsync, interval_union
from advisor.profile import Profile, Provenance


def _by_groupby(profile: Profile) -> dict[str, float]:
    launches = profile.launches[["start_ns", "duration_ns", "device_id"]]
    timed = launches[launches["start_ns"].notna() & launches["duration_ns"].notna()]
    busy_total = span_total = sum_total = 0.0
    for _, group in timed.groupby(timed["device_id"].fillna(-1), sort=True):
        starts = group["start_ns"].to_numpy(dtype=float)
        result = interval_union(starts, starts + group["duration_ns"].to_numpy(dtype=float))
        if result is None:
            continue
        busy_total += result[1]
        span_total += result[2]
        sum_total += float(group["duration_ns"].sum())
    moves = profile.transfers.dropna(subset=["start_ns", "duration_ns"])
    first = float(timed["start_ns"].min())
    last = float((timed["start_ns"] + timed["duration_ns"]).max())
    inside = moves[(moves["start_ns"] >= first) & (moves["start_ns"] < last)]
    return {
        "kernel_launches": float(len(timed)),
        "kernel_time_sum_ns": sum_total,
        "kernel_busy_ns": busy_total,
        "span_ns": span_total,
        "idle_ns": span_total - busy_total,
        "transfers_in_span": float(len(inside)),
        "transfer_time_in_span_ns": float(inside["duration_ns"].sum()),
    }


def _profile(seed: int, devices: int, untimed: float, missing: float) -> Profile:
    rng = np.random.default_rng(seed)
    n, m = 3000, 200
    start = rng.uniform(0, 1e7, size=n)  # fractions: sums that depend on the order
    start[rng.random(n) < untimed] = np.nan
    duration = rng.lognormal(8, 1.5, size=n)
    duration[rng.random(n) < untimed / 2] = np.nan
    device = rng.integers(0, devices, size=n)
    launches = pd.DataFrame(
        {
            "launch_id": range(n),
            "name": rng.choice(["gemm", "add"], size=n),
            "device_id": pd.arrays.IntegerArray(device, rng.random(n) < missing),
            "start_ns": start,
            "duration_ns": duration,
        }
    )
    transfers = pd.DataFrame(
        {
            "kind": "HtoD",
            "start_ns": rng.uniform(-1e6, 1.1e7, size=m),
            "duration_ns": rng.lognormal(9, 1, size=m),
        }
    )
    return Profile(
        provenance=(Provenance(path="random", format="test", profiler="nsys"),),
        launches=launches,
        transfers=transfers,
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("devices", "untimed", "missing"), [(1, 0.0, 0.0), (1, 0.1, 0.0), (3, 0.0, 0.0), (3, 0.1, 0.1)]
)
def test_hostsync_on_arrays_matches_the_groupby(
    seed: int, devices: int, untimed: float, missing: float
) -> None:
    profile = _profile(seed, devices, untimed, missing)
    result = evaluate_hostsync(profile)
    expected = _by_groupby(profile)
    assert {k: result.inputs[k] for k in expected} == expected  # exact floats
    assert result.launches_used == int(expected["kernel_launches"])
    assert result.value == min(1.0, expected["kernel_busy_ns"] / expected["span_ns"])
