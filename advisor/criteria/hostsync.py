"""HOSTSYNC: how much of the application's GPU span the kernels keep the GPU busy.

Seed 002, section IV-A::

    HOSTSYNC = sum_i KernelExeTime_i / (KernelStart_N + KernelExeTime_N - KernelStart_1)

computed per application from a timeline: every kernel launch with its start and duration
(nvprof ``--print-gpu-trace``, nsys ``cuda_gpu_trace`` or its SQLite export).  The paper's kernels
run one after another; with streams they can overlap and the plain sum would exceed the span, so
the numerator is the length of the *union* of the kernel intervals (equal to the sum when no two
kernels overlap) and the denominator the span from the first start to the last end.  With several
devices, busy time and span are summed over devices.  Zero-denominator policy: a span of 0 (one
launch of zero duration) is not applicable.

Nsight Compute cannot give it: it serializes kernels and replays each one, so its start times are
not a timeline.  Per-kernel summaries (total time per kernel) have no start times either.
Potential speedup: 1 / HOSTSYNC (seed 002, section V).

Who caused the idle: where the launches carry the correlation id of the API call that issued
them (a PyTorch trace, nsys), the busiest compute stream's own gaps, launch delay and queue
length say whether the host sets its pace (:class:`advisor.models.host.StreamPace`).  When it
does not (the host runs ahead, the stream waits on other streams, events or communication),
the result has the variant ``host_ahead``: its title and actions do not blame the host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from advisor.criteria.engine import collect
from advisor.criteria.engine.analysis import (
    COMPUTED,
    NOT_APPLICABLE,
    NOT_COMPUTABLE,
    CriterionResult,
    Speedups,
)
from advisor.criteria.engine.common import clamp01, inverse
from advisor.criteria.engine.spec import APPLICATION, CriterionSpec, Needs
from advisor.models.host import blocks
from advisor.profile import Profile
from parsers import heap

if TYPE_CHECKING:
    from advisor.models.host import StreamPace

NAME = "HOSTSYNC"
#: the variant of a trace whose busiest compute stream is not host-bound (the host runs ahead,
#: the GPU waits on other streams, events or communication): the idle is not the host's doing
HOST_AHEAD = "host_ahead"


def busy_ns(intervals: Sequence[tuple[float, float]]) -> float:
    """Length of the union of [start, end) intervals."""
    total = 0.0
    current_start: float | None = None
    current_end = 0.0
    for start, end in sorted(intervals):
        if current_start is None or start > current_end:
            if current_start is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_start is not None:
        total += current_end - current_start
    return total


def hostsync_value(intervals: Sequence[tuple[float, float]]) -> tuple[float, float, float] | None:
    """(HOSTSYNC, busy ns, span ns) of one device's kernel intervals; None for a zero span."""
    if not intervals:
        return None
    span = max(e for _, e in intervals) - min(s for s, _ in intervals)
    if not span > 0:
        return None
    busy = busy_ns(intervals)
    return clamp01(busy / span), busy, span


def interval_union(
    starts: np.ndarray, ends: np.ndarray, in_place: bool = False
) -> tuple[float, float, float] | None:
    """:func:`hostsync_value` on arrays (the same numbers: the union is summed block by block in
    start order, as :func:`busy_ns` does).  ``in_place``: ``ends`` is the caller's scratch array,
    which may be overwritten."""
    if not len(starts):
        return None
    span = float(ends.max() - starts.min())
    if not span > 0:
        return None
    if bool((ends < starts).any()):  # negative durations: the plain loop's semantics
        return hostsync_value(list(zip(starts.tolist(), ends.tolist(), strict=True)))
    block_starts, block_ends = blocks(starts, ends, scratch=in_place)  # in start order
    busy = float(np.cumsum(block_ends - block_starts)[-1])
    return clamp01(busy / span), busy, span


def evaluate_hostsync(profile: Profile) -> CriterionResult:
    """HOSTSYNC of the application, or why it cannot be computed."""
    starts_all, durations_all, devices = _timed_launches(profile.launches)
    if not len(starts_all):
        return _absent(profile)
    busy_total = span_total = sum_total = 0.0
    for rows in _by_device(devices):
        starts = starts_all if rows is None else starts_all[rows]
        durations = durations_all if rows is None else durations_all[rows]
        result = interval_union(starts, starts + durations, in_place=True)
        if result is None:
            continue
        _, busy, span = result
        busy_total += busy
        span_total += span
        sum_total += float(durations.sum())
    if not span_total > 0:
        return CriterionResult(
            name=NAME,
            status=NOT_APPLICABLE,
            scope="application",
            notes=("the kernels of the timeline span no time (zero durations)",),
        )
    value = clamp01(busy_total / span_total)
    inputs = {
        "kernel_launches": float(len(starts_all)),
        "kernel_time_sum_ns": sum_total,
        "kernel_busy_ns": busy_total,
        "span_ns": span_total,
        "idle_ns": span_total - busy_total,
    }
    inputs.update(_transfers_in_span(profile, starts_all, durations_all))
    notes: tuple[str, ...] = ()
    if sum_total > busy_total * (1 + 1e-9):
        notes = (
            "kernels overlap (streams): the busy time is the union of the kernel intervals, "
            "not their sum",
        )
    variant = ""
    used = len(starts_all)
    # the timed launches' arrays (views of the launches' columns when every launch is timed)
    # are let go before the busiest stream's pace, the analysis' largest step
    del starts_all, durations_all, devices, starts, durations
    heap.give_back()  # and their pages given back, so the pace does not start above them
    pace = _pace(profile)
    if pace is not None:
        inputs.update(
            {
                "busiest_stream": float(pace.stream) if pace.stream is not None else -1.0,
                "busiest_stream_host_wait_ns": pace.idle.host_wait_ns,
                "busiest_stream_other_wait_ns": pace.idle.other_ns,
                "busiest_stream_span_ns": pace.span_ns,
            }
        )
        if pace.launch_delay_median_ns is not None:
            inputs["busiest_stream_launch_delay_median_ns"] = pace.launch_delay_median_ns
        if pace.queue_median is not None:
            inputs["busiest_stream_queue_median"] = pace.queue_median
        if not pace.host_bound:
            variant = HOST_AHEAD
            notes = (*notes, _ahead_note(pace))
    return CriterionResult(
        variant=variant,
        name=NAME,
        status=COMPUTED,
        value=value,
        raw_value=value,
        speedups=Speedups(paper=inverse(value), amdahl=inverse(value)),
        method="union of kernel intervals / (last kernel end - first kernel start), per device",
        inputs=inputs,
        launches_used=used,
        scope="application",
        notes=notes,
    )


def _pace(profile: Profile) -> StreamPace | None:
    """Who sets the pace of the busiest compute stream; None when the launches cannot be tied to
    the calls that issued them (no API calls with correlation ids)."""
    calls = profile.api_calls
    if calls.empty or not calls["correlation_id"].notna().any():
        return None
    from advisor.models.host import stream_pace  # the host view's figure, computed alike

    return stream_pace(profile)


def _ahead_note(pace: StreamPace) -> str:
    delay = pace.launch_delay_median_ns
    queued = pace.queue_median
    return (
        "the host is not what the GPU waits for: the busiest compute stream "
        f"(stream {pace.stream}) waits {pace.idle.host_wait_ns / 1e6:.3g} ms for the host in a "
        f"{pace.span_ns / 1e6:.4g} ms span"
        + (f"; its kernels start a median {delay / 1e6:.3g} ms after their launch call" if delay
           is not None else "")
        + (f" with {queued:g} earlier launches still queued" if queued else "")
        + f"; its {pace.idle.other_ns / 1e6:.4g} ms of other idle is waiting on other streams, "
        "events or communication"
    )  # fmt: skip


def _timed_launches(launches: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The start, duration and device id (-1: none) of every launch with a start and a
    duration, as arrays: the launches' own columns when every launch has both (the usual
    trace; a masked frame and its groups copied three columns twice, 50 MiB of a million
    launches)."""
    starts = launches["start_ns"].to_numpy(float)
    durations = launches["duration_ns"].to_numpy(float)
    devices = launches["device_id"].to_numpy(dtype=np.int64, na_value=-1)
    timed = ~np.isnan(starts) & ~np.isnan(durations)
    if timed.all():
        return starts, durations, devices
    return starts[timed], durations[timed], devices[timed]


def _by_device(devices: np.ndarray) -> Sequence[np.ndarray | None]:
    """The rows of each device id, the ids ascending and each one's rows in launch order (as a
    sorted ``groupby`` visits them); ``[None]`` (every row) when there is one device."""
    if not len(devices) or bool((devices == devices[0]).all()):
        return [None]
    order = np.argsort(devices, kind="stable")
    ordered = devices[order]
    return np.split(order, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1)


def _transfers_in_span(
    profile: Profile, starts: np.ndarray, durations: np.ndarray
) -> dict[str, float]:
    """The transfers that start between the first timed launch's start and the last one's end
    (``starts`` and ``durations`` of the timed launches)."""
    transfers = profile.transfers
    moves = transfers[transfers["start_ns"].notna() & transfers["duration_ns"].notna()]
    if moves.empty:
        return {}
    first = float(starts.min())
    last = float((starts + durations).max())
    inside = moves[(moves["start_ns"] >= first) & (moves["start_ns"] < last)]
    return {
        "transfers_in_span": float(len(inside)),
        "transfer_time_in_span_ns": float(inside["duration_ns"].sum()),
    }


def _absent(profile: Profile) -> CriterionResult:
    tools = {p.profiler for p in profile.provenance}
    if len(profile.launches) and tools <= {"ncu"}:
        why = (
            "only Nsight Compute data: ncu serializes kernels and replays each one, so its "
            "launches have no timeline; collect a trace with nsys or nvprof --print-gpu-trace"
        )
    elif len(profile.launches):
        why = "the launches have no start timestamps; collect a trace (gpu-trace) instead"
    elif len(profile.kernel_summary) or len(profile.metrics):
        why = (
            "only per-kernel summaries (total time per kernel): HOSTSYNC needs each launch's "
            "start and duration from a trace"
        )
    else:
        why = "no kernel launches in the input"
    return CriterionResult(
        name=NAME,
        status=NOT_COMPUTABLE,
        missing=("launch start_ns", "launch duration_ns"),
        collect=collect.commands_for(NAME),
        scope="application",
        notes=(why,),
    )


SPEC = CriterionSpec(
    name=NAME,
    order=1,
    threshold=0.8,
    threshold_reason=(
        "Idle gaps above a fifth of the span between the first kernel's start and the last "
        "kernel's end are visible in the application time; below that, launch overhead rarely "
        "dominates."
    ),
    title="the GPU idles between kernels (host synchronization)",
    actions=(
        "merge small kernels so the host launches and synchronizes less often",
        "replace kernel-boundary synchronization by inter-block (grid) synchronization: "
        "cooperative-groups grid.sync() in one persistent kernel",
        "batch small host-device transfers into fewer, larger ones (pinned memory, async copies)",
        "capture the launch sequence in a CUDA graph to cut launch overhead",
        "overlap transfers and kernels with streams (see the streams model)",
    ),
    variants={
        HOST_AHEAD: (
            "the GPU idles between kernels while the host runs ahead (waits on other streams, "
            "events or communication, not on the host)",
            (
                "overlap communication with computation (gradient bucketing, prefetching the "
                "next collective, computation on another stream while NCCL runs)",
                "balance the work across ranks so collectives do not wait for the slowest one",
                "remove cross-stream waits (cudaStreamWaitEvent, stream synchronizations) that "
                "serialize independent work",
                "the host is ahead: CUDA graphs or fewer host synchronizations will not help; "
                "the busiest stream's own kernels and the exposed communication set the time",
            ),
        ),
    },
    short_label="host sync",
    recipes=(),  # reads the launches' timeline, not metrics
    needs=Needs(timeline=True),
    evaluate=evaluate_hostsync,
    scope=APPLICATION,
)
