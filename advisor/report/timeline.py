"""The report's timeline: kernels and transfers by stream from the first kernel on, and the
time inside HOSTSYNC's span when no kernel runs (HOSTSYNC's evidence, seed 002), bounded to
:data:`TIMELINE_MAX_INTERVALS` intervals for the chart.

Where it starts.  A profile often opens with seconds of set-up before the first kernel
(context creation, allocations, input copies, memsets).  On one time axis that set-up leaves
the kernels squeezed against the right edge, so the timeline starts at the first kernel's start:
the activities that end by then are the set-up, summed up in :class:`Setup` (the chart shows it
as one annotated band, "set-up: 2.03 s before the first kernel", neither drawn to scale nor
shaded as idle).  An activity that starts before the first kernel and runs past it is drawn (cut
at the axis).  The axis ends at the last end of any activity, so the copies of results after the
last kernel are drawn.  A profile without kernels starts at its first activity, with no set-up
and no idle time.

Idle time.  HOSTSYNC (:mod:`advisor.criteria.hostsync`) counts the GPU as idle where no kernel
runs between the first kernel's start and the last kernel's end.  ``gaps`` are those stretches
(no kernel of any device running) longer than :data:`IDLE_GAP_MIN_FRAC` of that span; copies
may run inside them and are drawn over the shading.  On one device and with every gap above the
threshold, the gaps add up to HOSTSYNC's ``idle_ns``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from advisor.models.timeline.arrays import lexsort
from advisor.profile import Profile
from advisor.render.display import duration

#: intervals drawn on the timeline chart (the longest are kept: a chart cannot show more)
TIMELINE_MAX_INTERVALS = 2000
#: a stretch without kernels shorter than this share of HOSTSYNC's span is not highlighted
IDLE_GAP_MIN_FRAC = 0.01
#: the label of kernel launches among the transfer kinds
KERNEL = "kernel"


@dataclass(frozen=True)
class Interval:
    stream: str
    kind: str  # "kernel" | "HtoD" | "DtoH" | other transfer kinds
    start_ns: float
    end_ns: float


@dataclass(frozen=True)
class Setup:
    """What happens on the GPU before the first kernel: not drawn, one band on the chart."""

    start_ns: float  # the first activity's start
    end_ns: float  # the first kernel's start
    activities: int  # transfers (copies, memsets) that end by the first kernel: not drawn
    streams: int  # the streams they run on

    @property
    def duration_ns(self) -> float:
        return self.end_ns - self.start_ns

    def label(self) -> str:
        """``set-up: 2.03 s before the first kernel``."""
        return f"set-up: {duration(self.duration_ns)} before the first kernel"


@dataclass(frozen=True)
class Timeline:
    intervals: tuple[Interval, ...]  # drawn: those in ``span_ns``, the longest kept
    gaps: tuple[tuple[float, float], ...]  # no kernel running, inside ``kernel_span_ns``
    span_ns: tuple[float, float]  # the chart's axis: first kernel's start to the last end
    dropped: int  # intervals in ``span_ns`` left off the chart
    setup: Setup | None = None  # activities before the first kernel (None: nothing before it)
    kernel_span_ns: tuple[float, float] | None = None  # HOSTSYNC's span (None: no kernel)


def timeline(profile: Profile) -> Timeline | None:
    """Kernels and transfers by stream from the first kernel on, the stretches without a
    kernel inside HOSTSYNC's span and the set-up before it (module docstring); None without
    start times.

    Activities are ordered by (start, end, kind), the sort stable; the chart keeps the
    :data:`TIMELINE_MAX_INTERVALS` longest of those drawn (the first of equal durations in that
    order)."""
    frames = []
    for frame, kind in ((profile.launches, None), (profile.transfers, "transfer")):
        if frame.empty or "start_ns" not in frame or "duration_ns" not in frame:
            continue
        frames.append((frame, kind))
    if not frames:
        return None
    kinds: list[np.ndarray] = []
    labels: list[str] = [KERNEL]
    for frame, kind in frames:
        if kind is None:
            kinds.append(np.zeros(len(frame), dtype=np.int64))
            continue
        if frame["kind"].isna().any():  # not a trace the arrays below are written for
            return _timeline_frame(frames)
        codes, values = pd.factorize(frame["kind"].astype(str))
        kinds.append(codes.astype(np.int64) + len(labels))
        labels += [str(v) for v in values]
    names = sorted(set(labels))
    rank = np.array([names.index(label) for label in labels], dtype=np.int64)
    start = np.concatenate([_floats(f["start_ns"]) for f, _ in frames])
    duration = np.concatenate([_floats(f["duration_ns"]) for f, _ in frames])
    launch = np.concatenate([np.full(len(f), kind is None) for f, kind in frames])
    rows = np.flatnonzero(~(np.isnan(start) | np.isnan(duration)))
    if len(rows) == 0:
        return None
    code = np.concatenate(kinds)[rows]
    start, duration, kind, launch = start[rows], duration[rows], rank[code], launch[rows]
    end = start + duration
    streams = pd.concat([f["stream"] for f, _ in frames], ignore_index=True).iloc[rows]
    order = lexsort((kind, end, start))
    kernel_span = None
    t0 = float(start.min())
    if launch.any():
        kernel_span = (float(start[launch].min()), float(end[launch].max()))
        t0 = kernel_span[0]
    drawn = (start >= t0) | (end > t0)
    setup = None
    if float(start.min()) < t0:
        before = streams[~drawn]
        setup = Setup(float(start.min()), t0, int((~drawn).sum()), before.map(_stream).nunique())
    gaps: tuple[tuple[float, float], ...] = ()
    if kernel_span is not None:
        kernels = order[launch[order]]
        gaps = _gaps(start[kernels], end[kernels], kernel_span)
    order = order[drawn[order]]
    kept = order[_longest(duration[order], TIMELINE_MAX_INTERVALS)]
    kept = kept[np.lexsort((kind[kept], end[kept], start[kept]))]
    intervals = tuple(
        Interval(_stream(s), names[k], a, b)
        for s, k, a, b in zip(
            streams.iloc[kept].tolist(),
            kind[kept].tolist(),
            start[kept].tolist(),
            end[kept].tolist(),
            strict=True,
        )
    )
    span = (t0, float(end.max()))
    return Timeline(intervals, gaps, span, len(order) - len(kept), setup, kernel_span)


def _longest(duration: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` longest durations, longest first, the first of equal ones first
    (``DataFrame.nlargest(n, keep="first")``): the candidates found by a partial sort."""
    negative = -duration
    candidates = np.arange(len(duration))
    if len(duration) > n:
        candidates = np.flatnonzero(negative <= np.partition(negative, n - 1)[n - 1])
    return candidates[np.argsort(negative[candidates], kind="stable")][:n]


def _floats(column: pd.Series) -> np.ndarray:
    return column.to_numpy(dtype=float, na_value=np.nan)


def _timeline_frame(frames: list[tuple[pd.DataFrame, str | None]]) -> Timeline | None:
    """:func:`timeline` on a frame, row by row where it can (kinds that are missing sort as
    their text)."""
    parts = []
    for frame, kind in frames:
        f = frame[["start_ns", "duration_ns", "stream"]].copy()
        f["kind"] = KERNEL if kind is None else frame["kind"].astype(str)
        f["launch"] = kind is None
        parts.append(f)
    df = pd.concat(parts, ignore_index=True).dropna(subset=["start_ns", "duration_ns"])
    if df.empty:
        return None
    df["end_ns"] = df["start_ns"] + df["duration_ns"]
    df = df.sort_values(["start_ns", "end_ns", "kind"], kind="mergesort")
    launches = df[df["launch"]]
    first_activity = float(df["start_ns"].min())
    t0 = first_activity
    kernel_span = None
    gaps: tuple[tuple[float, float], ...] = ()
    if not launches.empty:
        kernel_span = (float(launches["start_ns"].min()), float(launches["end_ns"].max()))
        t0 = kernel_span[0]
        gaps = _gaps_loop(
            list(zip(launches["start_ns"].tolist(), launches["end_ns"].tolist(), strict=True)),
            kernel_span,
        )
    drawn = df[(df["start_ns"] >= t0) | (df["end_ns"] > t0)]
    before = df.drop(drawn.index)
    setup = None
    if first_activity < t0:
        on = {_stream(s) for s in before["stream"]}
        setup = Setup(first_activity, t0, len(before), len(on))
    kept = drawn.nlargest(TIMELINE_MAX_INTERVALS, "duration_ns", keep="first").sort_values(
        ["start_ns", "end_ns", "kind"], kind="mergesort"
    )
    intervals = tuple(
        Interval(_stream(s), str(k), float(a), float(b))
        for s, k, a, b in zip(
            kept["stream"], kept["kind"], kept["start_ns"], kept["end_ns"], strict=True
        )
    )
    span = (t0, float(df["end_ns"].max()))
    return Timeline(intervals, gaps, span, len(drawn) - len(kept), setup, kernel_span)


def _gaps(
    starts: np.ndarray, ends: np.ndarray, span: tuple[float, float]
) -> tuple[tuple[float, float], ...]:
    """Stretches outside the union of the kernels (sorted by start) longer than
    :data:`IDLE_GAP_MIN_FRAC` of HOSTSYNC's ``span``: where a start lies beyond the furthest
    end so far."""
    minimum = IDLE_GAP_MIN_FRAC * (span[1] - span[0])
    if len(starts) < 2:
        return ()
    reach = np.maximum.accumulate(ends)[:-1]  # the furthest end before each later kernel
    later = starts[1:]
    idle = (later > reach) & (later - reach > minimum)
    return tuple((float(a), float(b)) for a, b in zip(reach[idle], later[idle], strict=True))


def _gaps_loop(
    kernels: list[tuple[float, float]], span: tuple[float, float]
) -> tuple[tuple[float, float], ...]:
    """:func:`_gaps` one kernel after the other (kernels sorted by start)."""
    minimum = IDLE_GAP_MIN_FRAC * (span[1] - span[0])
    found = []
    reach = -math.inf
    for i, (start, end) in enumerate(kernels):
        if i and start > reach and start - reach > minimum:
            found.append((reach, start))
        reach = max(reach, end)
    return tuple(found)


def _stream(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "?"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
