"""UM_MIGRATION (Decision U1): unified-memory migrations during a kernel, from a trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from advisor import pipeline
from advisor.criteria import evaluate
from advisor.criteria.engine import migrations
from advisor.criteria.engine.analysis import COMPUTED, NOT_APPLICABLE
from advisor.criteria.um_migration import potential, um_share
from tests.criteria.test_criteria_engine import DEVICE, criterion, launch, make_profile

MiB = 1024.0**2


def move(
    start: float,
    duration: float,
    size: float,
    kind: str = "UM-HtoD",
    device: int = 0,
    cause: str | None = None,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "bytes": size,
        "start_ns": start,
        "duration_ns": duration,
        "device_id": device,
        "cause": cause,
    }


def test_formula_and_bound() -> None:
    assert um_share(0.9) == pytest.approx(0.1)
    assert um_share(2.0) == 0.0  # clamped
    assert potential(0.1, None) == pytest.approx(10.0)
    # the migrated bytes read once take a quarter of the kernel's time: at most 4x
    assert potential(0.1, 0.25) == pytest.approx(4.0)
    assert potential(0.0, None) is None


def test_per_launch_bursts_devices_and_prefetches() -> None:
    launches = pd.DataFrame(
        [
            {"start_ns": 1000.0, "duration_ns": 1000.0, "device_id": 0},
            {"start_ns": 5000.0, "duration_ns": 100.0, "device_id": 0},
            {"start_ns": 1000.0, "duration_ns": 1000.0, "device_id": 1},
            {"start_ns": np.nan, "duration_ns": 10.0, "device_id": 0},
            {"start_ns": 9000.0, "duration_ns": -5.0, "device_id": 0},
        ]
    )
    transfers = pd.DataFrame(
        [
            move(500.0, 400.0, 64 * MiB, cause="prefetch"),  # cudaMemPrefetchAsync: not counted
            move(1100.0, 50.0, 2 * MiB, cause="page fault"),
            move(1500.0, 700.0, 4 * MiB),  # no cause (not in every trace): on demand
            move(1200.0, 10.0, 1 * MiB, kind="UM-DtoH"),  # outbound: not counted
            move(1300.0, 10.0, 8 * MiB, device=1),  # the other GPU's launch
        ]
    )
    out = migrations.per_launch(launches, transfers)
    moved, fault = out[migrations.MIGRATED_BYTES_PER_S], out[migrations.FAULT_SHARE]
    # launch 0 (1000 ns): one burst 1100-2200, clipped at the launch's end 2000; shares of the
    # launches' durations
    assert moved[:3].tolist() == [6 * MiB / 1e-6, 0.0, 8 * MiB / 1e-6]  # bytes per second
    assert fault[:3].tolist() == [0.9, 0.0, 0.01]
    assert np.isnan(moved[3:]).all() and np.isnan(fault[3:]).all()  # no start; negative time


def test_bursts_split_at_long_gaps_and_clip_at_the_launch() -> None:
    gap = migrations.BURST_GAP_NS
    # two short migrations far apart inside one long launch are two bursts of 1 us, not the
    # whole stretch between them
    launch = pd.DataFrame([{"start_ns": 0.0, "duration_ns": 4 * gap, "device_id": 0}])
    sparse = pd.DataFrame([move(gap / 2, 1e3, 4096.0), move(3 * gap, 1e3, 4096.0)])
    share = migrations.FAULT_SHARE
    assert migrations.per_launch(launch, sparse)[share][0] == 2e3 / (4 * gap)
    # migrations 0.1 ms apart (a driver servicing batches of faults) are one burst, gaps included
    dense = pd.DataFrame([move(1e5 * k, 1e4, 4096.0) for k in range(10)])
    assert migrations.per_launch(launch, dense)[share][0] == (9e5 + 1e4) / (4 * gap)
    # a burst that began before the launch counts from the launch's start; the next launch of
    # a burst that runs on past its predecessor's end gets only its own part
    two = pd.DataFrame(
        [
            {"start_ns": 100.0, "duration_ns": 100.0, "device_id": 0},
            {"start_ns": 300.0, "duration_ns": 100.0, "device_id": 0},
        ]
    )
    long = pd.DataFrame([move(50.0, 300.0, 4096.0)])  # 50-350
    out = migrations.per_launch(two, long)
    assert out[share].tolist() == [1.0, 0.5]
    assert out[migrations.MIGRATED_BYTES_PER_S].tolist() == [0.0, 0.0]  # it started before both
    starts, ends = migrations.bursts(
        np.array([0.0, 10.0, 20.0 + gap + 1]), np.array([20.0, 15.0, 2 * gap])
    )
    # the second interval ends inside the first: the gap counts from the first one's end (20)
    assert starts.tolist() == [0.0, 20.0 + gap + 1] and ends.tolist() == [20.0, 2 * gap]


def test_computed_weighted_over_launches_and_bounded_by_bandwidth() -> None:
    # launch 0 (1 ms) faults for 0.9 ms moving 64 MiB; launch 1 (1 ms) is clean:
    # 1 - 0.9 / 2 = 0.55; 64 MiB at 900 GB/s = 74.6 us << 0.55 x 2 ms, so S = 1 / 0.55
    p = make_profile(
        [
            launch(0, 1e6, start_ns=0.0, device_id=0),
            launch(1, 1e6, start_ns=2e6, device_id=0),
        ],
        profiler="nsys",
        transfers=[move(1e5, 9e5, 64 * MiB)],
    )
    c = criterion(evaluate(p, DEVICE), "UM_MIGRATION")
    assert c.status == COMPUTED
    assert c.value == pytest.approx(0.55)
    assert c.speedups.amdahl == pytest.approx(1 / 0.55)
    # duration-weighted means: 64 MiB over 2 ms, 0.9 ms of faults over 2 ms
    assert c.inputs[migrations.MIGRATED_BYTES_PER_S] == pytest.approx(64 * MiB / 2e-3)
    assert c.inputs[migrations.FAULT_SHARE] == pytest.approx(0.45)
    # without the device's bandwidth the bound is left out, and said so
    c = criterion(evaluate(p), "UM_MIGRATION")
    assert c.speedups.amdahl == pytest.approx(1 / 0.55)
    assert "bandwidth is unknown" in c.notes[0]
    # a kernel that faults all the time: the bandwidth floor caps the speedup
    tight = make_profile(
        [launch(0, 1e5, start_ns=0.0, device_id=0)],
        profiler="nsys",
        transfers=[move(0.0, 1e5, 64 * MiB)],
    )
    c = criterion(evaluate(tight, DEVICE), "UM_MIGRATION")
    floor = 64 * MiB / 900e9 * 1e9 / 1e5
    assert c.value == 0.0
    assert c.speedups.amdahl == pytest.approx(1 / floor)


def test_not_applicable_without_migrations_or_trace() -> None:
    clean = make_profile([launch(0, 1e6, start_ns=0.0, device_id=0)], profiler="nsys")
    c = criterion(evaluate(clean, DEVICE), "UM_MIGRATION")
    assert c.status == NOT_APPLICABLE and "no unified-memory migration" in c.notes[0]
    ncu = make_profile([launch(0, 1e6)], profiler="ncu")
    c = criterion(evaluate(ncu, DEVICE), "UM_MIGRATION")
    assert c.status == NOT_APPLICABLE and "timeline" in c.notes[0]


def test_real_managed_memory_without_and_with_prefetch(tuning_families: Path) -> None:
    # F07: array_inc on managed memory (RTX 3070 Laptop, nsys export without ENUM tables);
    # b faults on 128 MiB during the kernel (62.3 ms), c prefetches before it (0.89 ms)
    folder = tuning_families / "cuda-training-series/exercises/hw6/outputs-rtx-3070"
    faulting = pipeline.analyse_profile(pipeline.read([str(folder / "array_inc_b.sqlite")]))
    k = faulting.data["kernels"][0]
    c = k["criteria"]["UM_MIGRATION"]
    assert c["status"] == COMPUTED
    assert c["inputs"][migrations.MIGRATED_BYTES_PER_S] == pytest.approx(128 * MiB / 62_307_425e-9)
    # 64 bursts 0.25-0.29 ms apart cover 61.6 of the kernel's 62.3 ms: 1 - 61.6 / 62.3
    assert c["inputs"][migrations.FAULT_SHARE] == pytest.approx(61_599_681 / 62_307_425)
    assert c["value"] == pytest.approx(1 - 61_599_681 / 62_307_425)
    # the bursts, not the bandwidth floor (128 MiB at 448 GB/s = 0.30 ms: 208x), set it
    assert c["potential_speedup"] == pytest.approx(1 / c["value"])
    assert c["inputs"]["transfer_floor_share"] < c["value"]
    assert k["hints"][0]["criterion"] == "UM_MIGRATION"
    prefetched = pipeline.analyse_profile(pipeline.read([str(folder / "array_inc_c.sqlite")]))
    c = prefetched.data["kernels"][0]["criteria"]["UM_MIGRATION"]
    assert c["status"] == NOT_APPLICABLE
