"""The criteria engine on many launches: launches with identical inputs are collapsed into one
unit, and the analysis is the same, number for number, as with one unit per launch."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from advisor.criteria import evaluate
from advisor.criteria.engine import gathering
from advisor.criteria.engine.analysis import COMPUTED, to_json
from advisor.criteria.engine.gathering import gather
from advisor.profile import Profile, Provenance
from tests.criteria.test_criteria_engine import DEVICE

N = 20_000
#: per-kernel summary values (nvprof --metrics without --print-gpu-trace): every launch reads them
SUMMARY = {
    "warp_execution_efficiency": 0.8,
    "achieved_occupancy": 0.5,
    "gld_transactions": 1e6,
    "gst_transactions": 2e5,
    "active_warps": 4e7,
    "active_cycles": 1e6,
    "dram_read_throughput": 1e11,
    "dram_write_throughput": 5e10,
}
#: values whose recipes read each launch's duration (the launches are then read one by one)
BY_DURATION = {"flop_count_sp": 3e9, "gpu_time_duration": 2e5}


def _profile(n: int = N, summary: dict[str, float] = SUMMARY) -> Profile:
    """n launches of kernels a, b, c with 2 launch configurations each; b's second
    configuration has no durations (equal weights); two launches of c have metric rows."""
    rng = np.random.default_rng(7)
    kernel = rng.integers(0, 3, n)
    config = rng.integers(0, 2, n)
    duration = rng.integers(1_000, 500_000, n).astype(float)
    duration[(kernel == 1) & (config == 1)] = np.nan
    start = np.cumsum(np.nan_to_num(duration) + rng.integers(100, 5_000, n))
    launches = pd.DataFrame(
        {
            "launch_id": np.arange(n),
            "name": np.array(["a", "b", "c"])[kernel],
            "device_id": 0,
            "start_ns": start.astype(float),
            "duration_ns": duration,
            "grid_x": np.where(config == 0, 128, 4096),
            "block_x": np.where(config == 0, 256, 128),
            "registers_per_thread": np.where(config == 0, 32, 64),
        }
    )
    rows: list[dict[str, Any]] = [
        {"launch_id": None, "kernel": k, "metric": m, "tool_metric": m, "value": v * (i + 1)}
        for i, k in enumerate("abc")
        for m, v in summary.items()
    ]
    own = [int(i) for i in np.flatnonzero(kernel == 2)[:2]]
    rows += [
        {"launch_id": lid, "kernel": "c", "metric": m, "tool_metric": m, "value": v}
        for lid, v in zip(own, (0.25, 0.75), strict=True)
        for m in ("warp_execution_efficiency",)
    ]
    return Profile(
        provenance=(Provenance(path="many.csv", format="hand", profiler="nvprof"),),
        launches=launches,
        metrics=pd.DataFrame(rows),
    )


@pytest.fixture(scope="module")
def profile() -> Profile:
    return _profile()


def _one_unit_per_launch(
    names: pd.Series, config: dict[str, np.ndarray], own: np.ndarray
) -> np.ndarray:
    """A group per launches row: nothing is collapsed (the per-launch reference)."""
    group = np.arange(len(names), dtype=np.int64)
    group[own] = -1
    return group


def test_identical_launches_are_collapsed(profile: Profile) -> None:
    kernels = {k.name: k for k in gather(profile)}
    # a: 2 configurations; b: 2 (its second without durations); c: 2 + 2 launches with metrics
    assert [len(kernels[k].units) for k in "abc"] == [2, 2, 4]
    assert sum(u.count for k in kernels.values() for u in k.units) == N
    assert [k.launches for k in kernels.values()] == [
        int((profile.launches["name"] == k).sum()) for k in "abc"
    ]


def _same_as_per_launch(profile: Profile, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    collapsed = to_json(evaluate(profile, DEVICE))
    with monkeypatch.context() as patch:
        patch.setattr(gathering, "_groups", _one_unit_per_launch)
        assert all(u.count == 1 for k in gather(profile) for u in k.units)
        per_launch = to_json(evaluate(profile, DEVICE))
    assert json.dumps(collapsed, sort_keys=True) == json.dumps(per_launch, sort_keys=True)
    return collapsed


def test_collapsed_analysis_equals_the_per_launch_one(
    profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _same_as_per_launch(profile, monkeypatch)
    computed = [
        name
        for k in data["kernels"]
        for name, c in k["criteria"].items()
        if c["status"] == COMPUTED and c["scope"] == "kernel"
    ]
    assert {"DIVERGENCE", "LOADBALANC_WARP", "THROUGHPUT_OCCUPANCY"} <= set(computed)


def test_recipes_reading_the_duration_see_each_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    # flop_count_sp / duration / peak reads every launch's own duration
    profile = _profile(6_000, {**SUMMARY, **BY_DURATION})
    assert len(gather(profile)[0].units) == 2
    data = _same_as_per_launch(profile, monkeypatch)
    a = next(k for k in data["kernels"] if k["name"] == "a")
    assert a["throughputs"]["compute_method"] == "single-precision FLOPs / duration / peak FP32"
    # per launch flops / (duration * 1e-9) / peak; weighted by duration the mean is
    # sum(flops / peak) / sum(duration * 1e-9) = n * 3e9 / 15e12 / (sum(duration) * 1e-9)
    durations = profile.launches.loc[profile.launches["name"] == "a", "duration_ns"].to_numpy()
    expected = len(durations) * 3e9 / 15e12 / (durations.sum() * 1e-9)
    assert a["throughputs"]["compute_frac"] == pytest.approx(min(1.0, expected))


def test_means_over_collapsed_units_by_hand(profile: Profile) -> None:
    analysis = evaluate(profile, DEVICE)
    a = next(k for k in analysis.kernels if k.name == "a")
    rows = profile.launches[profile.launches["name"] == "a"]
    durations = rows["duration_ns"].to_numpy()
    assert a.launches == len(rows)
    assert a.duration_ns == pytest.approx(durations.sum())
    divergence = next(c for c in a.criteria if c.name == "DIVERGENCE")
    assert divergence.status == COMPUTED
    assert divergence.value == pytest.approx(0.8)
    assert divergence.launches_used == len(rows)
    # c: two launches with their own warp efficiency (0.25, 0.75), the others the summary 2.4
    # clamped to 1 per unit: the duration-weighted mean over all of c's launches
    c_rows = profile.launches[profile.launches["name"] == "c"]
    own = {int(i): v for i, v in zip(c_rows["launch_id"][:2], (0.25, 0.75), strict=True)}
    weights = c_rows["duration_ns"].to_numpy()
    values = np.array([own.get(int(i), 2.4) for i in c_rows["launch_id"]])
    c = next(k for k in analysis.kernels if k.name == "c")
    div_c = next(x for x in c.criteria if x.name == "DIVERGENCE")
    assert div_c.value == pytest.approx(min(1.0, float((weights * values).sum() / weights.sum())))


def test_only_the_paper_level_share_reads_each_launchs_duration() -> None:
    """A recipe needing ``launch.duration_ns`` makes the engine split every collapsed unit into
    its launches: a criterion doing so for every trace costs a million-launch trace seconds per
    kernel.  Only the paper's level share (transactions x latency / warp-cycles, the last
    recipe of p, read when a profile has metrics) does; UM_MIGRATION reads per-launch shares of
    the duration (advisor.criteria.engine.migrations) and the launch-configuration recipes
    none."""
    from advisor.criteria import SPECS
    from advisor.criteria.engine.inputs import DURATION

    readers = {
        spec.name
        for spec in SPECS
        for recipe in spec.recipes
        if DURATION in (*recipe.needs, *recipe.optional) and "latency" not in recipe.label
    }
    assert readers == set()
