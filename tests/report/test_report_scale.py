"""A long trace stays a bounded report: the timeline keeps the longest intervals and says how
many it left off, so the HTML size does not grow with the number of launches."""

from __future__ import annotations

import numpy as np
import pandas as pd

from advisor.criteria import evaluate
from advisor.profile import Profile, Provenance
from advisor.render import report as render
from advisor.report import build as report
from advisor.report.timeline import TIMELINE_MAX_INTERVALS, timeline

LAUNCHES = 60_000
HTML_LIMIT_BYTES = 5_000_000


def long_trace(n: int) -> Profile:
    """``n`` launches of 30 kernels on 4 streams, back to back with short gaps (seeded)."""
    rng = np.random.default_rng(0)
    kernel = rng.integers(0, 30, n)
    duration = rng.uniform(1e3, 5e4, n)
    start = np.cumsum(duration + rng.exponential(2e3, n)) - duration
    names = np.array([f"void k{i}<float, 4>(float *, int)" for i in range(30)], dtype=object)
    launches = pd.DataFrame(
        {
            "launch_id": np.arange(n),
            "name": names[kernel],
            "device_id": 0,
            "stream": 7 + kernel % 4,
            "start_ns": start,
            "duration_ns": duration,
            "grid_x": 1024,
            "block_x": 256,
            "registers_per_thread": 32,
        }
    )
    provenance = Provenance(path="long.csv", format="nsys-csv", profiler="nsys")
    return Profile(provenance=(provenance,), launches=launches)


def test_long_trace_html_is_bounded_and_says_what_was_left_off() -> None:
    profile = long_trace(LAUNCHES)
    chart = timeline(profile)
    assert chart is not None
    assert len(chart.intervals) == TIMELINE_MAX_INTERVALS
    assert chart.dropped == LAUNCHES - TIMELINE_MAX_INTERVALS
    # the kept intervals are the longest ones
    shortest_kept = min(i.end_ns - i.start_ns for i in chart.intervals)
    durations = np.sort(profile.launches["duration_ns"].to_numpy())
    assert shortest_kept >= durations[-TIMELINE_MAX_INTERVALS] - 1e-6
    html = render.html(report.build(evaluate(profile), profile))
    assert len(html.encode("utf-8")) < HTML_LIMIT_BYTES
    assert f"{LAUNCHES - TIMELINE_MAX_INTERVALS} shortest intervals not drawn" in html


def test_idle_gaps_are_found_on_columns() -> None:
    # three kernels: [0, 10), [5, 20), then idle until 100, [100, 110): one gap (20, 100)
    launches = pd.DataFrame(
        {"launch_id": [0, 1, 2], "name": ["k"] * 3, "stream": [7, 7, 7],
         "start_ns": [0.0, 5.0, 100.0], "duration_ns": [10.0, 15.0, 10.0]}
    )  # fmt: skip
    profile = Profile(provenance=(Provenance("t.csv", "nsys-csv", "nsys"),), launches=launches)
    chart = timeline(profile)
    assert chart is not None and chart.gaps == ((20.0, 100.0),)
    assert chart.span_ns == (0.0, 110.0) and chart.dropped == 0
