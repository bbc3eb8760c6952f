"""Idle split, launch delay, syncs by operator, launch-bound check and operator groups
(advisor/models/host.py, advisor/report/operators.py, host_view.py) on the hand-built step of
tests/parsers/kineto/trace_builder.py (times in us there, ns here)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import parsers
from advisor import pipeline
from advisor.models import host
from advisor.profile import Profile
from advisor.report import operators
from advisor.report.host_view import host_json, host_view
from tests.parsers.kineto.trace_builder import call, kernel, op, step_events, write_trace


@pytest.fixture
def step(tmp_path: Path) -> Profile:
    return parsers.read(write_trace(tmp_path / "step.json", step_events()))


def test_idle_split_by_stream(step: Profile) -> None:
    streams, total = host.idle_split(step)
    by_stream = {s.stream: s for s in streams}
    # stream 7: gemm ends 60, add's call 105 > 60: host wait 45, launch delay 108 - 105 = 3;
    # add ends 110, memcpy's call 121: host 11, delay 126 - 121 = 5; memcpy ends 127, mul's
    # call 172: host 45, delay 190 - 172 = 18
    s7 = by_stream[7]
    assert (s7.host_wait_ns, s7.launch_delay_ns, s7.other_ns) == (101_000, 26_000, 0)
    # stream 8: copy ends 55, the next copy's call (24) was long issued: other 70 - 55 = 15
    s8 = by_stream[8]
    assert (s8.host_wait_ns, s8.launch_delay_ns, s8.other_ns) == (0, 0, 15_000)
    assert total.idle_ns == 142_000


def test_gpu_idle_share_counts_every_activity(step: Profile) -> None:
    (use,) = host.device_use(step)
    # union [40,60] + [70,75] + [108,110] + [126,127] + [190,200] = 38 us over 40 -> 200
    assert (use.busy_ns, use.span_ns) == (38_000, 160_000)
    assert use.idle_frac == pytest.approx(1 - 38 / 160)


def test_launch_delay(step: Profile) -> None:
    delay = host.launch_delay(step)
    assert delay is not None and delay.kernels == 5
    # from the call's start: gemm 20, copy 28 and 46, add 3, mul 18
    assert delay.mean_ns == pytest.approx(115_000 / 5)
    assert delay.median_ns == 20_000
    # from the call's end: 10, 26, 44, -2, 15
    assert delay.mean_after_call_ns == pytest.approx(93_000 / 5)


def test_sync_named_by_operator_with_its_speedup(step: Profile) -> None:
    groups, overall = host.sync_groups(step)
    (item,) = groups
    # cudaStreamSynchronize [126, 130) under aten::item; the GPU idles from 127 (memcpy end)
    # to 190 (mul): charged 190 - max(127, 126) = 63 us; span 160 -> 160 / (160 - 63)
    assert (item.operator, item.calls, item.kinds) == ("aten::item", 1, ("Stream Sync",))
    assert item.blocked_ns == 4_000 and item.idle_after_ns == 63_000
    assert item.potential_speedup == pytest.approx(160 / 97)
    assert overall == pytest.approx(160 / 97)


def test_operator_groups(step: Profile) -> None:
    groups = operators.operator_groups(step)
    assert [g.operator for g in groups] == ["aten::linear", "aten::mul", "aten::add"]
    linear = groups[0]
    # gemm 20 + two copies 5 + 5 = 30 of 42 us of kernel time
    assert (linear.launches, linear.kernels, linear.gpu_time_ns) == (3, 2, 30_000)
    assert linear.share == pytest.approx(30 / 42)
    assert linear.top_kernel == "gemm_kernel"


def test_not_launch_bound(step: Profile) -> None:
    bound = operators.launch_bound(step)
    assert bound is not None
    # only add (2 us on the GPU, its call 5 us) runs shorter than its launch call
    assert (bound.launches, bound.short, bound.hint) == (5, 1, False)


def test_many_tiny_kernels_are_launch_bound(tmp_path: Path) -> None:
    # 30 kernels of 1 us, each launched by a 4 us call: all short -> the hint
    events = [op("aten::add", 0, 400)]
    for i in range(30):
        events += [
            call("cudaLaunchKernel", 1 + 10 * i, 4, i + 1),
            kernel("tiny", 6 + 10 * i, 1, i + 1),
        ]
    profile = parsers.read(write_trace(tmp_path / "tiny.json", events))
    bound = operators.launch_bound(profile)
    assert bound is not None
    assert (bound.short, bound.share, bound.hint) == (30, 1.0, True)
    assert bound.short_call_time_ns == 120_000


def test_host_view_only_for_kineto_and_json(step: Profile, tmp_path: Path) -> None:
    view = host_view(step)
    assert view is not None
    data = host_json(view)
    assert data["gpu_idle_frac"] == pytest.approx(1 - 38 / 160)
    assert data["syncs"][0]["operator"] == "aten::item"
    other = Profile(provenance=step.provenance[:0], launches=step.launches)
    assert host_view(other) is None


def test_launch_delay_after_the_call_is_none_without_call_ends(tmp_path: Path) -> None:
    # launch calls without a duration: their end is unknown, so is the delay after them; the
    # JSON must still be written (no NaN)
    events = step_events()
    for e in events:
        if e.get("cat") == "cuda_runtime":
            e.pop("dur")
    profile = parsers.read(write_trace(tmp_path / "t.json", events))
    view = host_view(profile)
    assert view is not None and view.launch_delay is not None
    assert view.launch_delay.mean_after_call_ns is None
    assert (
        json.loads(pipeline.json_text(host_json(view)))["launch_delay"]["mean_after_call_ns"]
        is None
    )


def test_a_repeated_correlation_id_takes_the_first_call(tmp_path: Path) -> None:
    # a trace whose runtime calls repeat their correlation ids (the calls written twice) used
    # to raise ValueError; the first call of an id is the one a launch is measured from, so
    # the figures are those of the trace without the copies
    events = step_events()
    doubled = events + [
        {**e, "ts": e["ts"] + 1.0} for e in events if e.get("cat") == "cuda_runtime"
    ]
    plain = host_view(parsers.read(write_trace(tmp_path / "plain.json", events)))
    twice = host_view(parsers.read(write_trace(tmp_path / "twice.json", doubled)))
    assert plain is not None and twice is not None
    assert twice.idle_total == plain.idle_total and twice.launch_delay == plain.launch_delay


@pytest.mark.parametrize("ascending", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_first_call_lookup_matches_a_hashed_index(seed: int, ascending: bool) -> None:
    # the sorted look-up (advisor.models.host._first_call) against the pandas formulation it
    # replaced: the first call of each correlation id, reindexed by the wanted ids (missing -1);
    # ``ascending``: ids each once in ascending order (an nsys export), looked up unsorted
    rng = np.random.default_rng(seed)
    ids = rng.integers(-3, 40, size=200)  # repeated ids, negative ones, -1 among them
    if ascending:
        ids = np.unique(ids)
    wanted = rng.integers(-5, 50, size=300)
    first = ~pd.Index(ids).duplicated(keep="first")
    rows = pd.Series(np.arange(len(ids))[first], index=ids[first])
    expected = rows.reindex(wanted).fillna(-1).astype(np.int64).to_numpy()
    assert host._first_call(ids, wanted).tolist() == expected.tolist()


def test_first_call_lookup_without_calls_or_wanted_ids() -> None:
    none = np.zeros(0, dtype=np.int64)
    assert host._first_call(none, np.array([1, -1, 7])).tolist() == [-1, -1, -1]
    assert host._first_call(np.array([3, 3, 1]), none).tolist() == []
    assert host._first_call(np.array([5]), np.array([5, 4, 6])).tolist() == [0, -1, -1]
    assert host._first_call(np.array([2, 5, 9]), np.array([9, 1, 5, 10, 2])).tolist() == [
        2, -1, 1, -1, 0
    ]  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
def test_streams_in_order_match_a_sorted_groupby(seed: int) -> None:
    # the (device, stream) groups of stream_pace without a groupby: the same rows, the pairs in
    # the same ascending order (-1 stands for a missing id)
    rng = np.random.default_rng(seed)
    device = rng.integers(-1, 3, size=500).astype(float)
    stream = rng.choice([-1.0, 7.0, 13.0, 20.0], size=500)
    frame = pd.DataFrame({"device": device, "stream": stream})
    expected = [g.index.tolist() for _, g in frame.groupby(["device", "stream"], sort=True)]
    groups = host._streams_in_order(device, stream)
    assert [sorted(rows.tolist()) for rows in groups] == expected
    assert [rows.tolist() for rows in groups] == expected  # each group in row order (stable)


def test_host_lines_count_launches_as_launches(tmp_path: Path) -> None:
    """The busiest stream's and the launch delay's counts are launches (the step has 5 launches
    of 4 kernels, 3 of the launches on stream 7): the pages say "launches", never "kernels",
    so they do not read against the facts line's count of kernels."""
    from advisor.render import report as render

    path = write_trace(tmp_path / "step.json", step_events())
    built = pipeline.build(pipeline.analyse([str(path)]))
    assert built.host is not None and built.host.pace is not None
    on_stream = built.host.pace.kernels
    assert (on_stream, built.summary.kernels, built.summary.launches) == (3, 4, 5)
    assert built.host.launch_delay is not None and built.host.launch_delay.kernels == 5
    markdown = render.markdown(built)
    assert f"Busiest compute stream 7 ({on_stream} launches, " in markdown
    assert "over 5 launches." in markdown
    assert " kernels, " not in markdown.split("Busiest compute stream")[1].split("\n")[0]
    html = render.html(built)
    assert f"({on_stream} launches, " in html and "median of 5 launches;" in html
