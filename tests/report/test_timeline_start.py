"""The report's timeline starts at the first kernel: the set-up before it is one annotated band
(not drawn, not shaded as idle), only streams with an activity drawn get a row, and the idle
shading covers only the stretches without a kernel inside HOSTSYNC's span.

Hand-built timelines with the expected numbers worked out in the comments, and the real nvprof
database ``reports/GPU_ML/timeline.nvvp`` (2 s of set-up before 141 ms of kernels).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.criteria.hostsync import evaluate_hostsync
from advisor.profile import Profile, Provenance
from advisor.render import charts
from advisor.report.timeline import Setup, timeline

PROV = Provenance(path="hand.csv", format="test", profiler="nvprof")
GPU_ML = "reports/GPU_ML/timeline.nvvp"

Op = tuple[str, int, float, float]  # kind ("HtoD", "DtoH", "memset") or kernel name, stream,
# start ns, duration ns


def _profile(ops: list[Op]) -> Profile:
    copies = [o for o in ops if o[0] in ("HtoD", "DtoH", "memset")]
    kernels = [o for o in ops if o not in copies]

    def frame(rows: list[Op], first: str) -> pd.DataFrame:
        return pd.DataFrame(
            {
                first: [r[0] for r in rows],
                "device": "GPU",
                "device_id": 0,
                "stream": pd.array([r[1] for r in rows], dtype="Int64"),
                "start_ns": pd.array([r[2] for r in rows], dtype=float),
                "duration_ns": pd.array([r[3] for r in rows], dtype=float),
            }
        )

    return Profile(
        provenance=(PROV,), launches=frame(kernels, "name"), transfers=frame(copies, "kind")
    )


#: set-up: an HtoD copy [0, 100) on stream 1 and a memset [50, 60) on stream 9, both over before
#: the first kernel; an HtoD copy [950, 1050) on stream 4 that runs past the first kernel's start;
#: kernels A [1000, 1100) on stream 2, B [1400, 1500) on stream 2, C [1450, 1600) on stream 3;
#: an HtoD copy [1150, 1250) on stream 1 between them and a DtoH copy [1600, 1700) after them
HAND: list[Op] = [
    ("HtoD", 1, 0.0, 100.0),
    ("memset", 9, 50.0, 10.0),
    ("HtoD", 4, 950.0, 100.0),
    ("A", 2, 1000.0, 100.0),
    ("HtoD", 1, 1150.0, 100.0),
    ("B", 2, 1400.0, 100.0),
    ("C", 3, 1450.0, 150.0),
    ("DtoH", 1, 1600.0, 100.0),
]


def test_the_timeline_starts_at_the_first_kernel() -> None:
    tl = timeline(_profile(HAND))
    assert tl is not None
    # HOSTSYNC's span: first kernel start 1000 .. last kernel end 1450 + 150 = 1600; the axis
    # runs on to the DtoH copy's end 1700
    assert tl.kernel_span_ns == (1000.0, 1600.0)
    assert tl.span_ns == (1000.0, 1700.0)
    # set-up 0 .. 1000 = 1 µs holding the HtoD copy and the memset (2 transfers, streams 1 and 9)
    assert tl.setup == Setup(0.0, 1000.0, 2, 2)
    assert tl.setup.label() == "set-up: 1.00 µs before the first kernel"
    # drawn: the copy that straddles the first kernel, the three kernels, the HtoD copy in the
    # gap and the DtoH copy; not the two set-up transfers
    assert [(i.kind, i.stream, i.start_ns, i.end_ns) for i in tl.intervals] == [
        ("HtoD", "4", 950.0, 1050.0),
        ("kernel", "2", 1000.0, 1100.0),
        ("HtoD", "1", 1150.0, 1250.0),
        ("kernel", "2", 1400.0, 1500.0),
        ("kernel", "3", 1450.0, 1600.0),
        ("DtoH", "1", 1600.0, 1700.0),
    ]
    assert tl.dropped == 0


def test_idle_is_only_where_no_kernel_runs_inside_hostsyncs_span() -> None:
    tl = timeline(_profile(HAND))
    assert tl is not None
    # kernels cover [1000, 1100) and [1400, 1600): one stretch without a kernel, 1100 .. 1400
    # (300 ns > 1 % of the 600 ns span), though an HtoD copy runs in it; the set-up 0 .. 1000
    # and the DtoH copy after 1600 are not idle
    assert tl.gaps == ((1100.0, 1400.0),)
    # the shading is HOSTSYNC's idle time: busy 100 + 200 = 300 of a 600 ns span
    hostsync = evaluate_hostsync(_profile(HAND))
    assert hostsync.inputs["span_ns"] == 600.0 and hostsync.inputs["idle_ns"] == 300.0
    assert sum(b - a for a, b in tl.gaps) == hostsync.inputs["idle_ns"]
    assert hostsync.value == pytest.approx(0.5)


def test_no_set_up_when_a_kernel_comes_first() -> None:
    # kernel [0, 10), DtoH copy [10, 20), kernel [500, 510): axis 0 .. 510, gap 10 .. 500
    tl = timeline(_profile([("k", 7, 0.0, 10.0), ("DtoH", 7, 10.0, 10.0), ("k", 7, 500.0, 10.0)]))
    assert tl is not None
    assert tl.setup is None and tl.span_ns == (0.0, 510.0) and tl.gaps == ((10.0, 500.0),)


def test_transfers_only_start_at_the_first_transfer_without_idle_time() -> None:
    # no kernel: no HOSTSYNC span, so nothing is idle and nothing is set-up
    tl = timeline(_profile([("HtoD", 7, 100.0, 10.0), ("DtoH", 7, 900.0, 10.0)]))
    assert tl is not None
    assert tl.setup is None and tl.kernel_span_ns is None and tl.gaps == ()
    assert tl.span_ns == (100.0, 910.0) and len(tl.intervals) == 2


def test_small_gaps_are_not_shaded() -> None:
    # kernels [0, 1000) and [1005, 2000): the 5 ns gap is under 1 % of the 2000 ns span
    tl = timeline(_profile([("k", 7, 0.0, 1000.0), ("k", 7, 1005.0, 995.0)]))
    assert tl is not None and tl.gaps == ()


def _tick_labels(svg: str) -> list[str]:
    return re.findall(r">(stream [^<]*)<", svg)


def test_chart_has_the_set_up_band_and_rows_only_for_streams_drawn() -> None:
    tl = timeline(_profile(HAND))
    assert tl is not None
    svg = str(charts.timeline_chart(tl))
    assert "set-up: 1.00 µs before" in svg and "the first kernel" in svg
    assert "(2 transfers on 2 streams," in svg and "not drawn)" in svg
    # stream 9 holds only the set-up memset: no row for it
    assert _tick_labels(svg) == ["stream 1", "stream 2", "stream 3", "stream 4"]
    assert "time since the first kernel (ms)" in svg


def test_chart_without_set_up_has_no_band() -> None:
    tl = timeline(_profile([("k", 7, 0.0, 10.0), ("k", 7, 500.0, 10.0)]))
    assert tl is not None and tl.setup is None
    svg = str(charts.timeline_chart(tl))
    assert "set-up" not in svg and _tick_labels(svg) == ["stream 7"]


# --- the real nvvp database --------------------------------------------------------------------


def test_real_gpu_ml_timeline_starts_at_the_first_kernel(real_profiles: Path) -> None:
    profile = parsers.read(real_profiles / GPU_ML)
    tl = timeline(profile)
    assert tl is not None
    # rows (ns): first activity HtoD stream 7 at 2707431270; first kernel stream 14 at
    # 4735306305; last kernel stream 14 at 4876623374 + 5024 = 4876628398; last activity DtoH
    # stream 47 at 4876674701 + 7968 = 4876682669
    assert tl.kernel_span_ns == (4735306305.0, 4876628398.0)
    assert tl.span_ns == (4735306305.0, 4876682669.0)
    # set-up: 4735306305 - 2707431270 = 2027875035 ns; 20 transfers end before the first
    # kernel: 12 HtoD copies on stream 7 and 8 memsets on streams 32-35 and 42-45
    assert tl.setup == Setup(2707431270.0, 4735306305.0, 20, 9)
    assert tl.setup.label() == "set-up: 2.03 s before the first kernel"
    # only the streams with an activity after the first kernel get a row
    assert sorted({i.stream for i in tl.intervals}, key=int) == [
        "7",
        "14",
        "15",
        "22",
        "24",
        "46",
        "47",
    ]
    # stretches without a kernel over 1 % of the 141.32 ms span: the stream 15 kernel at
    # 4740669389 + 1280 = 4740670669 to the stream 14 kernel at 4792460601 (HtoD copies of
    # streams 46 and 47 run there), and the stream 14 kernel at 4819723123 + 4403317 =
    # 4824126440 to the stream 14 kernel at 4830298221
    assert tl.gaps == ((4740670669.0, 4792460601.0), (4824126440.0, 4830298221.0))
    first, last = tl.kernel_span_ns
    assert all(first <= a < b <= last for a, b in tl.gaps)
    # the shading is part of HOSTSYNC's idle time (the rest: gaps under 1.41 ms)
    idle = evaluate_hostsync(profile).inputs["idle_ns"]
    assert sum(b - a for a, b in tl.gaps) == pytest.approx(57961713.0) and idle > 57961713.0


def test_real_gpu_ml_chart(real_profiles: Path) -> None:
    tl = timeline(parsers.read(real_profiles / GPU_ML))
    assert tl is not None
    svg = str(charts.timeline_chart(tl))
    assert "set-up: 2.03 s before" in svg and "(20 transfers on 9 streams," in svg
    assert _tick_labels(svg) == [f"stream {s}" for s in (7, 14, 15, 22, 24, 46, 47)]
