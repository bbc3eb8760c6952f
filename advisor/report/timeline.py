"""The report's timeline: kernels and transfers by stream and the GPU's idle gaps (the evidence
of HOSTSYNC, seed 002), bounded to :data:`TIMELINE_MAX_INTERVALS` intervals for the chart."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from advisor.models.timeline.arrays import lexsort
from advisor.profile import Profile

#: intervals drawn on the timeline chart (the longest are kept: a chart cannot show more)
TIMELINE_MAX_INTERVALS = 2000
#: an idle gap between GPU activities shorter than this share of the span is not highlighted
IDLE_GAP_MIN_FRAC = 0.01


@dataclass(frozen=True)
class Interval:
    stream: str
    kind: str  # "kernel" | "HtoD" | "DtoH" | other transfer kinds
    start_ns: float
    end_ns: float


@dataclass(frozen=True)
class Timeline:
    intervals: tuple[Interval, ...]
    gaps: tuple[tuple[float, float], ...]  # idle (start_ns, end_ns) on the whole GPU
    span_ns: tuple[float, float]
    dropped: int  # intervals left off the chart


def timeline(profile: Profile) -> Timeline | None:
    """Kernels and transfers by stream with the GPU's idle gaps, or None without start times.

    Activities are ordered by (start, end, kind), the sort stable; the chart keeps the
    :data:`TIMELINE_MAX_INTERVALS` longest (the first of equal durations in that order)."""
    frames = []
    for frame, kind in ((profile.launches, None), (profile.transfers, "transfer")):
        if frame.empty or "start_ns" not in frame or "duration_ns" not in frame:
            continue
        frames.append((frame, kind))
    if not frames:
        return None
    kinds: list[np.ndarray] = []
    labels: list[str] = ["kernel"]
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
    rows = np.flatnonzero(~(np.isnan(start) | np.isnan(duration)))
    if len(rows) == 0:
        return None
    start, duration, kind = start[rows], duration[rows], rank[np.concatenate(kinds)[rows]]
    end = start + duration
    order = lexsort((kind, end, start))
    span = (float(start.min()), float(end.max()))
    gaps = _gaps(start[order], end[order], span)
    kept = order[_longest(duration[order], TIMELINE_MAX_INTERVALS)]
    kept = kept[np.lexsort((kind[kept], end[kept], start[kept]))]
    streams = pd.concat([f["stream"] for f, _ in frames], ignore_index=True)
    intervals = tuple(
        Interval(_stream(s), names[k], a, b)
        for s, k, a, b in zip(
            streams.iloc[rows[kept]].tolist(),
            kind[kept].tolist(),
            start[kept].tolist(),
            end[kept].tolist(),
            strict=True,
        )
    )
    return Timeline(intervals, gaps, span, dropped=len(rows) - len(kept))


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
    """:func:`timeline` on a frame (kinds that are missing sort last)."""
    parts = []
    for frame, kind in frames:
        f = frame[["start_ns", "duration_ns", "stream"]].copy()
        f["kind"] = "kernel" if kind is None else frame["kind"].astype(str)
        parts.append(f)
    df = pd.concat(parts, ignore_index=True).dropna(subset=["start_ns", "duration_ns"])
    if df.empty:
        return None
    df["end_ns"] = df["start_ns"] + df["duration_ns"]
    df = df.sort_values(["start_ns", "end_ns", "kind"], kind="mergesort")
    span = (float(df["start_ns"].min()), float(df["end_ns"].max()))
    gaps = _gaps(df["start_ns"].to_numpy(dtype=float), df["end_ns"].to_numpy(dtype=float), span)
    kept = df.nlargest(TIMELINE_MAX_INTERVALS, "duration_ns", keep="first").sort_values(
        ["start_ns", "end_ns", "kind"], kind="mergesort"
    )
    intervals = tuple(
        Interval(_stream(s), str(k), float(a), float(b))
        for s, k, a, b in zip(
            kept["stream"], kept["kind"], kept["start_ns"], kept["end_ns"], strict=True
        )
    )
    return Timeline(intervals, gaps, span, dropped=len(df) - len(kept))


def _gaps(
    starts: np.ndarray, ends: np.ndarray, span: tuple[float, float]
) -> tuple[tuple[float, float], ...]:
    """Idle intervals of the union of activities (sorted by start) longer than
    :data:`IDLE_GAP_MIN_FRAC` of the span: where a start lies beyond the furthest end so far."""
    minimum = IDLE_GAP_MIN_FRAC * (span[1] - span[0])
    if len(starts) < 2:
        return ()
    reach = np.maximum.accumulate(ends)[:-1]  # the furthest end before each later activity
    later = starts[1:]
    idle = (later > reach) & (later - reach > minimum)
    return tuple((float(a), float(b)) for a, b in zip(reach[idle], later[idle], strict=True))


def _stream(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "?"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
