"""Where the GPU waits on the host: idle time split by cause, launch delay, and the
synchronizations that drain the GPU, named by the PyTorch operator that made them.

Computed from a trace whose GPU activities (kernels, memcpy, memset) carry the correlation id of
the CUDA call that issued them (a PyTorch profiler / Kineto trace); pure functions of the
:class:`~advisor.profile.Profile`.

Idle split (per device and stream, then summed; the layout of Holistic Trace Analysis's idle
time breakdown).  On each stream the activities are taken in start order; the gap before an
activity is ``start - end of the previous one`` (gaps <= 0 are no idle time).  When the call
that issued the activity started after the previous activity had ended, the GPU ran dry waiting
for the host: ``host wait`` is the gap's part up to the call's start, ``launch delay`` the part
from the call's start to the activity's start (CPU launch -> GPU start).  Any other gap (the
call was issued in time but the activity started later: a dependency on another stream, an
event, queueing) is ``other``.

GPU idle share (per device): ``1 - union of all activity intervals / (last end - first
start)``, kernels and transfers alike (HOSTSYNC, :mod:`advisor.criteria.hostsync`, counts
kernels only).

Synchronizations: the API calls with a ``sync_kind`` that blocks the host (``Stream Sync``,
``Event Sync``, ``Context Sync``; ``Stream Wait Event`` makes a stream wait, not the host).
After a sync returns, the host issues new work that the GPU must wait for: the idle stretch of
the device (no activity on any stream) that holds the sync's end is charged to the sync, from
the later of the stretch's start and the sync's start to the stretch's end.  Removing the sync
would let the host run ahead and close that stretch: potential speedup ``span / (span - charged
idle)`` (Amdahl over the device span, seed 002 section V's form), per operator and in total.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor.profile import Profile

#: the ``sync_kind`` values that block the calling host thread
HOST_SYNCS = ("Stream Sync", "Event Sync", "Context Sync")
#: label of the syncs (and launches) no operator holds
NO_OPERATOR = "(no PyTorch operator)"


@dataclass(frozen=True)
class IdleSplit:
    """Idle time of one stream (or all of them: ``stream`` None) by cause."""

    device_id: int | None
    stream: int | None
    host_wait_ns: float
    launch_delay_ns: float
    other_ns: float

    @property
    def idle_ns(self) -> float:
        return self.host_wait_ns + self.launch_delay_ns + self.other_ns


@dataclass(frozen=True)
class DeviceUse:
    device_id: int | None
    span_ns: float  # first activity start to last activity end
    busy_ns: float  # union of activity intervals

    @property
    def idle_frac(self) -> float:
        return 1.0 - self.busy_ns / self.span_ns if self.span_ns > 0 else 0.0


@dataclass(frozen=True)
class LaunchDelay:
    """CPU launch call start -> kernel start, over the kernels whose call is in the trace."""

    kernels: int
    mean_ns: float
    median_ns: float
    p95_ns: float
    max_ns: float
    #: mean of GPU start - end of the launch call (HTA's launch_delay: the wait once the call
    #: has returned; negative where the kernel started before the call returned); None when no
    #: launch call's end is known
    mean_after_call_ns: float | None


@dataclass(frozen=True)
class SyncGroup:
    """The host synchronizations one operator made."""

    operator: str
    calls: int
    kinds: tuple[str, ...]
    blocked_ns: float  # host time inside the sync calls
    idle_after_ns: float  # device idle charged to them (module docstring)
    potential_speedup: float


#: the columns of ``launches`` and ``transfers`` that :func:`activities` reads
_READ = ["device_id", "stream", "start_ns", "duration_ns", "correlation_id"]


def activities(profile: Profile, call_end: bool = True) -> pd.DataFrame:
    """Kernels (first, in launch-table order) and transfers with (device, stream, start, end,
    the issuing call's start and end): what every function below reads.  Build it once and pass
    it as ``acts`` when calling several of them on one profile
    (:func:`advisor.report.host_view.host_view`).  ``call_end`` False leaves out the call's end
    (``call_end``), which only :func:`launch_delay` reads."""
    return _activities(profile, (_timed(profile.launches), _timed(profile.transfers)), call_end)


def _timed(frame: pd.DataFrame) -> np.ndarray:
    """Per row, whether it has a start and a duration."""
    return (frame["start_ns"].notna() & frame["duration_ns"].notna()).to_numpy()


def _activities(
    profile: Profile,
    timed: tuple[np.ndarray, np.ndarray],
    call_end: bool = True,
    with_calls: bool = True,
) -> pd.DataFrame:
    """:func:`activities` of the launches and transfers rows ``timed`` selects (each with a
    start and a duration); ``with_calls`` False: without the calls' columns, which are then not
    looked up."""
    frames = (profile.launches, profile.transfers)
    total = sum(int(t.sum()) for t in timed)
    # each column allocated once and filled table by table (no pieces joined by a concatenate)
    columns = {c: np.empty(total) for c in ("device", "stream", "start", "end")}
    corr = np.empty(total if with_calls else 0)
    at = 0
    for frame, mask in zip(frames, timed, strict=True):
        # the columns read only, and none copied when every row is timed (the usual trace): a
        # mask over the frame copied them (43 MiB of a million launches), a mask over the whole
        # frame all twenty (137 MiB, its text columns included)
        rows = frame if mask.all() else frame.loc[mask, _READ]
        part = slice(at, at + int(mask.sum()))
        at = part.stop
        columns["device"][part] = rows["device_id"].to_numpy(dtype=float, na_value=-1.0)
        columns["stream"][part] = rows["stream"].to_numpy(dtype=float, na_value=-1.0)
        start = rows["start_ns"].to_numpy(float)
        columns["start"][part] = start
        np.add(start, rows["duration_ns"].to_numpy(float), out=columns["end"][part])
        if with_calls:
            corr[part] = rows["correlation_id"].to_numpy(dtype=float, na_value=np.nan)
        del rows, start
    if not with_calls:
        return pd.DataFrame(columns, copy=False)
    # the calls with a correlation id, their columns read in place when every call has one
    # (the usual trace; a mask copied the whole API-calls frame, 98 MiB of a million calls)
    api = profile.api_calls
    known = api["correlation_id"].notna().to_numpy()
    every = bool(known.all())
    ids = _ids(api["correlation_id"], 0)  # in the column's own width: not copied
    nan_corr = np.isnan(corr)  # read here only: not kept in the frame
    corr[nan_corr] = -1.0
    del nan_corr
    wanted = corr.astype(np.int64)
    n = len(corr)
    del corr
    row = _first_call(ids if every else ids[known], wanted)
    del ids, wanted
    found = row >= 0
    row = row[found]
    # the two call columns filled in place and added to the frame with the others: a column
    # assigned to a frame is copied (two more columns of the million activities at the peak)
    calls = {"call": np.full(n, np.nan)}
    if call_end:
        calls["call_end"] = np.full(n, np.nan)
    for out, col in zip(calls.values(), ("start_ns", "duration_ns"), strict=False):
        values = api[col].to_numpy(float)
        out[found] = (values if every else values[known])[row]
    if call_end:  # the call's end: start + duration (NaN where no call was found)
        calls["call_end"] += calls["call"]
    del row, found
    return pd.DataFrame({**columns, **calls}, copy=False)


def _first_call(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Per ``wanted`` correlation id, the row of its first call in ``ids`` (-1: no call).

    A stable sort and a binary search: a hashed index of a million API calls (looked up with
    ``reindex``) held about 40 MiB per column looked up, beside the sort's 20.  Ids already
    ascending, each once (an Nsight Systems export: calls in time order, ids given in call
    order), are their own sorted keys: no sort and no copy of them."""
    if not len(ids):
        return np.full(len(wanted), -1, dtype=np.int64)
    keys, rows = ids, None  # rows None: the row of each key is its position
    if not bool((ids[1:] > ids[:-1]).all()):
        order = np.argsort(ids, kind="stable")  # equal ids keep their call order: first leads
        ordered = ids[order]
        first = np.ones(len(ordered), dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        keys, rows = ordered[first], order[first]
        del order, ordered, first
    probe = wanted
    if keys.dtype != wanted.dtype:  # searched in the keys' width (numpy would copy the keys to
        info = np.iinfo(keys.dtype)  # the ids'); an id beyond it is not found by the check below
        probe = np.clip(wanted, info.min, info.max).astype(keys.dtype)
    at = np.searchsorted(keys, probe)
    del probe
    np.minimum(at, len(keys) - 1, out=at)
    found = at if rows is None else rows[at]  # filled in place: each a column of activities
    found[keys[at] != wanted] = -1
    return found


def idle_split(
    profile: Profile, acts: pd.DataFrame | None = None
) -> tuple[tuple[IdleSplit, ...], IdleSplit]:
    """Per (device, stream) and in total (module docstring)."""
    acts = activities(profile) if acts is None else acts
    rows = []
    # each group copies the columns read here only (all seven: 60 MiB per million activities)
    timing = acts[["device", "stream", "start", "end", "call"]]
    for (device, stream), group in timing.groupby(["device", "stream"], sort=True):
        g = group[["start", "end", "call"]].sort_values(["start", "end"], kind="mergesort")
        start, end, call = (g[c].to_numpy(float) for c in ("start", "end", "call"))
        prev_end = end[:-1]
        gap = start[1:] - prev_end
        idle = gap > 0
        late_call = idle & ~np.isnan(call[1:]) & (call[1:] > prev_end)
        host = np.where(late_call, np.minimum(call[1:], start[1:]) - prev_end, 0.0)
        delay = np.where(late_call, gap - host, 0.0)
        other = np.where(idle & ~late_call, gap, 0.0)
        rows.append(
            IdleSplit(
                _id(device), _id(stream),
                float(host.sum()), float(delay.sum()), float(other.sum()),
            )
        )  # fmt: skip
    total = IdleSplit(
        None,
        None,
        sum(r.host_wait_ns for r in rows),
        sum(r.launch_delay_ns for r in rows),
        sum(r.other_ns for r in rows),
    )
    return tuple(rows), total


def _id(value: object) -> int | None:
    """A device or stream id of the grouping (-1 stands for a missing one)."""
    number = float(value)  # type: ignore[arg-type]
    return None if number < 0 else int(number)


def blocks(
    start: np.ndarray, end: np.ndarray, scratch: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The union of [start, end) intervals as sorted disjoint blocks (starts, ends).
    ``scratch``: ``end`` is the caller's own array, which may be overwritten (a million
    launches' copy less)."""
    if not len(start):
        return np.zeros(0), np.zeros(0)
    if bool((start[1:] >= start[:-1]).all()) and bool((end >= start).all()):
        # already by start (a trace): ties may stay in any order, as no interval ends before
        # it starts (the same blocks, each up to its largest end); not copied nor sorted
        s, e = start, end
    else:
        order = np.lexsort((end, start))
        s, e = start[order], end[order]
    reach = np.maximum.accumulate(e, out=e if scratch or e is not end else None)
    first = np.concatenate([[True], s[1:] > reach[:-1]])
    heads = np.flatnonzero(first)
    tails = np.concatenate([heads[1:] - 1, [len(s) - 1]])
    return s[heads], reach[tails]


def device_use(profile: Profile, acts: pd.DataFrame | None = None) -> tuple[DeviceUse, ...]:
    acts = activities(profile) if acts is None else acts
    out = []
    for device, group in acts.groupby("device", sort=True):
        s, e = blocks(group["start"].to_numpy(float), group["end"].to_numpy(float))
        out.append(DeviceUse(_id(device), float(e[-1] - s[0]), float((e - s).sum())))
    return tuple(out)


def stream_busy(profile: Profile) -> dict[tuple[int | None, int | None], float]:
    """Union of activity intervals per (device, stream)."""
    acts = activities(profile)
    out: dict[tuple[int | None, int | None], float] = {}
    for (device, stream), group in acts.groupby(["device", "stream"], sort=True):
        s, e = blocks(group["start"].to_numpy(float), group["end"].to_numpy(float))
        key = (_id(device), _id(stream))
        out[key] = float((e - s).sum())
    return out


def launch_delay(profile: Profile, acts: pd.DataFrame | None = None) -> LaunchDelay | None:
    acts = activities(profile) if acts is None else acts
    kernels = acts.iloc[: int(profile.launches["start_ns"].notna().sum())]
    delay = (kernels["start"] - kernels["call"]).dropna().to_numpy(float)
    if not len(delay):
        return None
    after = (kernels["start"] - kernels["call_end"]).dropna().to_numpy(float)
    return LaunchDelay(
        len(delay),
        float(delay.mean()),
        float(np.median(delay)),
        float(np.percentile(delay, 95)),
        float(delay.max()),
        float(after.mean()) if len(after) else None,
    )


def sync_groups(
    profile: Profile, acts: pd.DataFrame | None = None
) -> tuple[tuple[SyncGroup, ...], float]:
    """The host syncs by operator, most charged idle first, and the potential speedup of
    removing them all (1.0 without syncs)."""
    calls = profile.api_calls
    syncs = calls[calls["sync_kind"].isin(HOST_SYNCS) & calls["start_ns"].notna()]
    acts = activities(profile) if acts is None else acts
    if syncs.empty or acts.empty:
        return (), 1.0
    s, e = blocks(acts["start"].to_numpy(float), acts["end"].to_numpy(float))
    span = float(e[-1] - s[0])
    begin = syncs["start_ns"].to_numpy(float)
    done = begin + syncs["duration_ns"].fillna(0).to_numpy(float)
    after = np.searchsorted(s, done, side="right")  # the block starting after the sync's end
    inside_gap = (after > 0) & (after < len(s))
    prev_end = e[np.clip(after - 1, 0, len(e) - 1)]
    inside_gap &= prev_end <= done  # the GPU is idle at the sync's end
    next_start = s[np.clip(after, 0, len(s) - 1)]
    charged = np.where(inside_gap, next_start - np.maximum(prev_end, begin), 0.0)
    charged = np.maximum(charged, 0.0)
    frame = pd.DataFrame(
        {
            "operator": syncs["operator"].astype("object").fillna(NO_OPERATOR).to_numpy(),
            "kind": syncs["sync_kind"].astype(str).to_numpy(),
            "blocked": syncs["duration_ns"].fillna(0).to_numpy(float),
            "charged": charged,
        }
    )
    groups = []
    for operator, g in frame.groupby("operator", sort=True):
        idle = float(g["charged"].sum())
        groups.append(
            SyncGroup(
                str(operator), len(g), tuple(sorted(set(g["kind"]))), float(g["blocked"].sum()),
                idle, _speedup(span, idle),
            )
        )  # fmt: skip
    groups.sort(key=lambda grp: (-grp.idle_after_ns, grp.operator))
    return tuple(groups), _speedup(span, float(charged.sum()))


def _speedup(span: float, removed: float) -> float:
    return span / (span - removed) if span > removed >= 0 and span > 0 else 1.0


def device_idle_split(profile: Profile, acts: pd.DataFrame | None = None) -> tuple[IdleSplit, ...]:
    """The idle time of each device (``stream`` None) by cause, as a union over time: the
    stretches when no activity runs on any of the device's streams, each split by the activity
    that ends it (the earliest-starting one; a tie: the earliest-issued), with the per-stream
    rule of :func:`idle_split`.  Unlike the sum of the per-stream splits (HTA's layout, which
    counts a moment once per idle stream and can exceed the span), the parts add up to the
    device's idle time, at most its span."""
    acts = activities(profile) if acts is None else acts
    out = []
    for device, group in acts.groupby("device", sort=True):
        g = group.sort_values(["start", "call", "end"], kind="mergesort", na_position="last")
        start, end, call = (g[c].to_numpy(float) for c in ("start", "end", "call"))
        reach = np.maximum.accumulate(end)
        opens = np.flatnonzero(start[1:] > reach[:-1]) + 1  # the activity after each stretch
        prev_end = reach[opens - 1]
        gap = start[opens] - prev_end
        issued = call[opens]
        late = ~np.isnan(issued) & (issued > prev_end)
        host = np.where(late, np.minimum(issued, start[opens]) - prev_end, 0.0)
        delay = np.where(late, gap - host, 0.0)
        other = np.where(late, 0.0, gap)
        out.append(
            IdleSplit(_id(device), None, float(host.sum()), float(delay.sum()), float(other.sum()))
        )
    return tuple(out)


#: the share of a stream's span spent waiting for the host (its gaps' host wait) from which the
#: stream is host-bound: HOSTSYNC's threshold (0.8 busy) read as "a fifth of the span idle"
HOST_BOUND_SHARE = 0.2
#: what sets the pace of a stream (:class:`StreamPace`)
HOST, GPU, DEPENDENCIES = "host", "gpu", "dependencies"


@dataclass(frozen=True)
class StreamPace:
    """Who sets the pace of the busiest compute stream (the stream with the most kernel time,
    communication kernels aside): its own gaps, launch delay and queue length.

    ``pace`` is ``host`` when the stream waits for the host at least :data:`HOST_BOUND_SHARE` of
    its span (its gaps' host wait: the GPU ran dry before the next call); else ``gpu`` when at
    the median launch at least one earlier activity of the stream was still queued or running
    (the host is ahead: the GPU sets the pace), or when the stream hardly idles; else
    ``dependencies`` (the stream idles waiting on other streams or events, the host not ahead).
    """

    device_id: int | None
    stream: int | None
    kernels: int
    busy_ns: float  # union of the stream's computation kernels
    span_ns: float  # the stream's first activity start to its last end
    idle: IdleSplit  # the stream's own gaps
    launch_delay_median_ns: float | None  # GPU start - launch call start, its kernels
    queue_median: float | None  # activities of the stream issued before and not ended, at a call
    pace: str

    @property
    def host_wait_share(self) -> float:
        return self.idle.host_wait_ns / self.span_ns if self.span_ns > 0 else 0.0

    @property
    def host_bound(self) -> bool:
        return self.pace == HOST


def stream_pace(
    profile: Profile, acts: pd.DataFrame | None = None, comm: np.ndarray | None = None
) -> StreamPace | None:
    """The pace of the busiest compute stream (:class:`StreamPace`); None without a timed
    computation kernel or without the launch calls of its kernels (no correlation with the
    API calls: nothing says when the host issued them).  ``comm``: per row of
    ``profile.launches``, whether it is a communication kernel
    (:func:`advisor.communication.communication_mask`)."""
    from advisor.communication import communication_mask  # the one classifier

    launches = profile.launches
    timed = _timed(launches)
    n = int(timed.sum())
    if not n:
        return None
    comm = communication_mask(launches) if comm is None else comm
    # the kernels' columns read below only, as arrays: the rows of one stream are gathered from
    # them (a mask or a group over a frame copied every column of the million kernels); without
    # ``acts``, the launches' own columns, their calls not looked up
    if acts is None:
        device_all, stream_all, start_all, end_all = _kernel_columns(launches, timed)
    else:
        device_all, stream_all, start_all, end_all = (
            acts[c].to_numpy(float)[:n] for c in ("device", "stream", "start", "end")
        )
    computation = ~comm[timed]
    # a trace without communication kernels (the usual one) keeps every row: not copied
    compute = None if computation.all() else np.flatnonzero(computation)
    if compute is not None and not len(compute):
        return None
    best: tuple[float, float, float] | None = None
    device_of, stream_of = (
        (device_all, stream_all) if compute is None else (device_all[compute], stream_all[compute])
    )
    for rows in _streams_in_order(device_of, stream_of):
        at = rows if compute is None else compute[rows]  # its kernels, in launch-table order
        s, e = blocks(start_all[at], end_all[at])
        busy = float((e - s).sum())
        if best is None or busy > best[0]:
            best = (busy, float(device_of[rows[0]]), float(stream_of[rows[0]]))
    assert best is not None
    busy, device, stream = best
    del device_of, stream_of, compute, rows, at, start_all, end_all
    # every activity of the stream (its transfers too), in activities order: its kernels first
    kernel_here = (device_all == device) & (stream_all == stream)  # per timed launch
    del device_all, stream_all
    if acts is not None:
        here = np.flatnonzero((acts["device"] == device) & (acts["stream"] == stream))
        on_stream = pd.DataFrame(
            {c: acts[c].to_numpy(float)[here] for c in ("device", "stream", "start", "end", "call")}
        )
    else:
        launch_here = timed.copy()
        launch_here[timed] = kernel_here
        transfers = profile.transfers
        transfer_here = (
            _timed(transfers)
            & (transfers["device_id"].to_numpy(dtype=float, na_value=-1.0) == device)
            & (transfers["stream"].to_numpy(dtype=float, na_value=-1.0) == stream)
        )
        on_stream = _activities(profile, (launch_here, transfer_here), call_end=False)
    # its computation kernels: the first rows of the stream's activities, communication aside
    mine = np.flatnonzero(computation[kernel_here])
    call_all, start_here = on_stream["call"].to_numpy(float), on_stream["start"].to_numpy(float)
    if np.isnan(call_all[mine]).all():
        return None
    streams, _ = idle_split(profile, on_stream)
    delay = start_here[mine] - call_all[mine]
    delay = delay[~np.isnan(delay)]
    queue = _queue_at_calls(on_stream)
    span = float(on_stream["end"].max() - on_stream["start"].min())
    split = streams[0]
    median_queue = float(np.median(queue)) if len(queue) else None
    if span > 0 and split.host_wait_ns >= HOST_BOUND_SHARE * span:
        pace = HOST
    elif median_queue is not None and median_queue >= 1:
        pace = GPU
    elif span > 0 and split.other_ns >= HOST_BOUND_SHARE * span:
        pace = DEPENDENCIES
    else:
        pace = GPU
    return StreamPace(
        device_id=_id(device),
        stream=_id(stream),
        kernels=len(mine),
        busy_ns=busy,
        span_ns=span,
        idle=split,
        launch_delay_median_ns=float(np.median(delay)) if len(delay) else None,
        queue_median=median_queue,
        pace=pace,
    )


def _kernel_columns(
    launches: pd.DataFrame, timed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The device id, stream id (-1: none), start and end of the ``timed`` launches, as
    :func:`_activities` gives them but without copying a column that is already an array of
    every timed launch: the ids in their own integer width (:func:`_ids`: 1 to 4 bytes a launch
    in the schema's narrow columns, where the activities' float columns took 8 each), the
    starts read in place.  Only the ends are new: 8 bytes a launch instead of 32.  The ids
    compare and sort as the float ids do (ids beyond 2**53 aside, which floats would merge)."""
    start = launches["start_ns"].to_numpy(float)
    end = start + launches["duration_ns"].to_numpy(float)
    device, stream = _ids(launches["device_id"], -1), _ids(launches["stream"], -1)
    if not bool(timed.all()):
        start, end, device, stream = start[timed], end[timed], device[timed], stream[timed]
    return device, stream, start, end


def _ids(column: pd.Series, missing: int) -> np.ndarray:
    """An integer id column (the schema's ``Int64``, or a narrower width: advisor.schema.NARROW)
    as an array in its own width, ``missing`` for a missing id: the column's own values, not
    copied, when none is missing."""
    width = getattr(column.dtype, "numpy_dtype", None)
    if width is None or width.kind not in "iu":
        return column.astype("Int64").to_numpy(np.int64, na_value=missing)
    return column.to_numpy(dtype=width, na_value=missing)


def _streams_in_order(device: np.ndarray, stream: np.ndarray) -> list[np.ndarray]:
    """The rows of each (device, stream) pair, the pairs in ascending order as a sorted
    ``groupby`` visits them; without the copy of every column a ``groupby`` makes (about 80 MiB
    for a million kernels)."""
    order = np.lexsort((stream, device))  # by device, then stream; stable
    changes = np.zeros(max(len(order) - 1, 0), dtype=bool)
    for column in (device, stream):  # one sorted copy at a time
        ordered = column[order]
        changes |= ordered[1:] != ordered[:-1]
        del ordered
    return np.split(order, np.flatnonzero(changes) + 1)


def _queue_at_calls(acts: pd.DataFrame) -> np.ndarray:
    """For each activity of one stream whose call is known, how many activities of the stream
    issued before it (those whose call is known) had not ended when its call started (HTA's
    queue length, seen from the call): earlier calls minus the activities ended by then (a
    stream runs its work in issue order, so an activity ended before the call was issued before
    it)."""
    known = acts[acts["call"].notna()]
    if known.empty:
        return np.zeros(0)
    calls = np.sort(known["call"].to_numpy(float), kind="mergesort")
    ends = np.sort(known["end"].to_numpy(float))  # the activities counted in ``issued_before``
    issued_before = np.arange(len(calls))
    ended = np.searchsorted(ends, calls, side="right")
    return np.maximum(issued_before - ended, 0).astype(float)
