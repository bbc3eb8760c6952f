"""The activities and the busiest stream's pace (advisor/models/host.py) read on arrays against
the frame formulation they replaced (a mask over each table, pieces joined, a mask and a group
over the kernels' frame): the same activities, column for column, and the same
:class:`~advisor.models.host.StreamPace`, on random profiles with untimed launches and
transfers, missing device and stream ids, communication kernels, calls without a correlation id
and repeated ids."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from advisor.communication import communication_mask
from advisor.models import host
from advisor.profile import Profile, Provenance

_READ = ["device_id", "stream", "start_ns", "duration_ns", "correlation_id"]


def _activities_by_frames(profile: Profile) -> pd.DataFrame:
    """activities() as a mask over each table and a concatenate of the pieces."""
    parts: dict[str, list[np.ndarray]] = {c: [] for c in ("device", "stream", "start", "end")}
    corr = []
    for frame in (profile.launches, profile.transfers):
        timed = frame.loc[frame["start_ns"].notna() & frame["duration_ns"].notna(), _READ]
        parts["device"].append(timed["device_id"].to_numpy(dtype=float, na_value=-1.0))
        parts["stream"].append(timed["stream"].to_numpy(dtype=float, na_value=-1.0))
        parts["start"].append(timed["start_ns"].to_numpy(float))
        parts["end"].append((timed["start_ns"] + timed["duration_ns"]).to_numpy(float))
        corr.append(timed["correlation_id"].to_numpy(dtype=float, na_value=np.nan))
    columns = {c: np.concatenate(p) for c, p in parts.items()}
    wanted = np.concatenate(corr)
    api = profile.api_calls.dropna(subset=["correlation_id"])
    first = api.drop_duplicates("correlation_id", keep="first")
    by_id = first.set_index(first["correlation_id"].astype("int64"))
    keys = pd.Index(np.where(np.isnan(wanted), -1.0, wanted).astype(np.int64))
    call = by_id["start_ns"].reindex(keys).to_numpy(float)
    call_end = call + by_id["duration_ns"].reindex(keys).to_numpy(float)
    return pd.DataFrame({**columns, "call": call, "call_end": call_end})


def _pace_by_frames(profile: Profile) -> host.StreamPace | None:
    """stream_pace() with a mask and a groupby over the kernels' frame."""
    acts = _activities_by_frames(profile)
    launches = profile.launches
    timed = (launches["start_ns"].notna() & launches["duration_ns"].notna()).to_numpy()
    n = int(timed.sum())
    if not n:
        return None
    kernels = acts[["device", "stream", "start", "end", "call"]].iloc[:n]
    compute = kernels[~communication_mask(launches)[timed]]
    if compute.empty:
        return None
    best = None
    for (device, stream), group in compute.groupby(["device", "stream"], sort=True):
        s, e = host.blocks(group["start"].to_numpy(float), group["end"].to_numpy(float))
        busy = float((e - s).sum())
        if best is None or busy > best[0]:
            best = (busy, float(device), float(stream))
    assert best is not None
    busy, device, stream = best
    mine = compute[(compute["device"] == device) & (compute["stream"] == stream)]
    if mine["call"].isna().all():
        return None
    on_stream = acts[(acts["device"] == device) & (acts["stream"] == stream)]
    (split,), _ = host.idle_split(profile, on_stream)
    delay = (mine["start"] - mine["call"]).dropna().to_numpy(float)
    queue = host._queue_at_calls(on_stream)
    span = float(on_stream["end"].max() - on_stream["start"].min())
    median_queue = float(np.median(queue)) if len(queue) else None
    if span > 0 and split.host_wait_ns >= host.HOST_BOUND_SHARE * span:
        pace = host.HOST
    elif median_queue is not None and median_queue >= 1:
        pace = host.GPU
    elif span > 0 and split.other_ns >= host.HOST_BOUND_SHARE * span:
        pace = host.DEPENDENCIES
    else:
        pace = host.GPU
    return host.StreamPace(
        device_id=host._id(device),
        stream=host._id(stream),
        kernels=len(mine),
        busy_ns=busy,
        span_ns=span,
        idle=split,
        launch_delay_median_ns=float(np.median(delay)) if len(delay) else None,
        queue_median=median_queue,
        pace=pace,
    )


def _ints(
    rng: np.random.Generator, low: int, high: int, n: int, missing: float
) -> pd.arrays.IntegerArray:
    values = rng.integers(low, high, size=n)
    return pd.arrays.IntegerArray(values, rng.random(n) < missing)


def _profile(seed: int, untimed: float, missing: float, comm: float) -> Profile:
    """Launches and transfers on a few devices and streams (some ids missing, some rows without
    a start or duration), API calls with some ids missing and some repeated."""
    rng = np.random.default_rng(seed)
    n, m, calls = 400, 60, 500
    names = np.where(
        rng.random(n) < comm,
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        rng.choice(["gemm", "add", "softmax"], size=n),
    )
    start = np.round(rng.uniform(0, 1e6, size=n))
    start[rng.random(n) < untimed] = np.nan
    launches = pd.DataFrame(
        {
            "launch_id": range(n),
            "name": names,
            "device_id": _ints(rng, 0, 2, n, missing),
            "stream": _ints(rng, 7, 10, n, missing),
            "start_ns": start,
            "duration_ns": np.round(rng.uniform(0, 5e3, size=n)),
            "correlation_id": _ints(rng, 0, calls + 50, n, missing),
        }
    )
    tstart = np.round(rng.uniform(0, 1e6, size=m))
    tstart[rng.random(m) < untimed] = np.nan
    transfers = pd.DataFrame(
        {
            "kind": "HtoD",
            "start_ns": tstart,
            "duration_ns": np.round(rng.uniform(0, 2e4, size=m)),
            "device_id": _ints(rng, 0, 2, m, missing),
            "stream": _ints(rng, 7, 10, m, missing),
            "correlation_id": _ints(rng, 0, calls + 50, m, missing),
        }
    )
    api = pd.DataFrame(
        {
            "name": "cudaLaunchKernel",
            "start_ns": np.round(rng.uniform(-2e4, 1e6, size=calls)),
            "duration_ns": np.round(rng.uniform(0, 3e3, size=calls)),
            "correlation_id": _ints(rng, 0, calls, calls, missing),  # repeats some ids
        }
    )
    return Profile(
        provenance=(Provenance(path="random", format="test", profiler="nsys"),),
        launches=launches,
        transfers=transfers,
        api_calls=api,
    )


CASES = [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.1, 0.0), (0.1, 0.1, 0.2), (0.0, 0.0, 1.0)]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("untimed", "missing", "comm"), CASES)
def test_activities_and_pace_match_the_frame_reading(
    seed: int, untimed: float, missing: float, comm: float
) -> None:
    profile = _profile(seed, untimed, missing, comm)
    expected = _activities_by_frames(profile)
    acts = host.activities(profile)
    pd.testing.assert_frame_equal(acts, expected, check_exact=True)
    lean = host.activities(profile, call_end=False)
    assert list(lean.columns) == [c for c in expected.columns if c != "call_end"]
    pd.testing.assert_frame_equal(lean, expected.drop(columns="call_end"), check_exact=True)
    pace = host.stream_pace(profile)
    assert pace == _pace_by_frames(profile)
    assert host.stream_pace(profile, acts) == pace
    if comm == 1.0:  # communication kernels only: no compute stream
        assert pace is None
    elif comm == 0.0:
        assert pace is not None and pace.kernels > 0
