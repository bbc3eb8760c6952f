"""The report's timeline: kernels and transfers by stream and the GPU's idle gaps (the evidence
of HOSTSYNC, seed 002), bounded to :data:`TIMELINE_MAX_INTERVALS` intervals for the chart."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

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
    """Kernels and transfers by stream with the GPU's idle gaps, or None without start times."""
    parts = []
    for frame, kind in ((profile.launches, None), (profile.transfers, "transfer")):
        if frame.empty or "start_ns" not in frame or "duration_ns" not in frame:
            continue
        f = frame[["start_ns", "duration_ns", "stream"]].copy()
        f["kind"] = "kernel" if kind is None else frame["kind"].astype(str)
        parts.append(f)
    if not parts:
        return None
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
