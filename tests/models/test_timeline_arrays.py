"""The array paths of the timeline, the streams model and the report's timeline give the values
of the operation-by-operation paths they replace (same floats, same order), and fall back to
them for what they are not written for.

Property tests (hypothesis, ``derandomize=True``) draw small traces with ties, touching and
overlapping operations, several devices and streams, and compare the two paths field by field
with ``==`` (floats must be equal, not close).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parsers
from advisor.models import streams, timeline
from advisor.models.bsp import profile as bsp_profile
from advisor.profile import Profile, Provenance
from advisor.report import timeline as report_timeline

PROV = Provenance(path="hand.csv", format="test", profiler="nvprof")
PROPERTY = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
#: real traces that hold sequences (one merged over two and one over three streams among them)
TRACES = (
    "csv/magus_nvprof/gtx1080ti/matrixMul_trace.csv",
    "csv/magus_nvprof/gtx1080ti/traces_shoc_lev1stencil2d.csv",
    "csv/magus_nvprof/gtx950_multistream/trace_2cke_23000.csv",
    "csv/magus_nvprof/gtx950_multistream/trace_s3_5m.csv",
    "csv/amaris_gpuperfpredict/logs_run_0/vectorAdd-traces.csv",
    "csv/amaris_gpuperfpredict/logs_run_0/matrix_sum_normal-traces.csv",
)

Op = tuple[
    str, str, int | None, float, float, float | None
]  # kind, device, stream, start, dur, grid


def _profile(ops: list[Op]) -> Profile:
    """A profile of ``ops``: kind is HtoD, DtoH, memset or a kernel name."""
    copies = [o for o in ops if o[0] in ("HtoD", "DtoH", "memset")]
    kernels = [o for o in ops if o not in copies]

    def frame(rows: list[Op], first: str) -> pd.DataFrame:
        return pd.DataFrame(
            {
                first: [r[0] for r in rows],
                "device": pd.array([r[1] for r in rows], dtype=object),
                "stream": pd.array([r[2] for r in rows], dtype="Int64"),
                "start_ns": pd.array([r[3] for r in rows], dtype=float),
                "duration_ns": pd.array([r[4] for r in rows], dtype=float),
            }
        )

    launches = frame(kernels, "name").assign(
        grid_x=pd.array([r[5] for r in kernels], dtype="Int64"), grid_y=2, grid_z=1
    )
    return Profile(provenance=(PROV,), launches=launches, transfers=frame(copies, "kind"))


def _values(seqs: list[timeline.Sequence]) -> list[tuple[object, ...]]:
    return [
        (
            s.device,
            s.streams,
            s.kernels,
            s.grid_blocks,
            s.start_ns,
            s.end_ns,
            s.htod_ns,
            s.kernel_ns,
            s.dtoh_ns,
            s.htod_count,
            s.kernel_count,
            s.dtoh_count,
        )
        for s in seqs
    ]


def _both(profile: Profile) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    ops = timeline._operations(profile)
    runs = timeline._runs(ops)
    fast = timeline._sequences_fast(ops, runs)
    return _values(fast), _values(timeline._sequences_exact(ops, runs))


# a coarse grid of starts gives ties, touching and overlapping operations; the offset makes
# the ends inexact (start + duration rounds), so the busy sums must add in the same order
_OP = st.tuples(
    st.sampled_from(["HtoD", "HtoD", "DtoH", "DtoH", "memset", "k1", "k2", "k<3>"]),
    st.sampled_from(["GPU A", "GPU B", ""]),
    st.sampled_from([None, 0, 7, 8, 9]),
    st.integers(0, 60).map(lambda i: 1e9 + 0.1 * i),
    st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0, 2.5, 4.0]),
    st.sampled_from([None, 1, 3, 40]),
)
_KERNEL = st.sampled_from(["k1", "k2", "k<3>"])
#: the shape a sequence has: HtoD copies, kernels, DtoH copies (a memset now and then)
_SHAPE = st.tuples(
    st.lists(st.just("HtoD"), min_size=1, max_size=2),
    st.lists(_KERNEL, min_size=1, max_size=3),
    st.lists(st.sampled_from(["DtoH", "DtoH", "memset"]), min_size=1, max_size=2),
).map(lambda parts: [*parts[0], *parts[1], *parts[2]])


@st.composite
def _trace(draw: st.DrawFn) -> list[Op]:
    """Pieces of streams: mostly the sequence shape, some random kinds; operations of a piece
    one after the other with gaps of 0 (touching) or more, or overlapping by -0.1."""
    ops: list[Op] = []
    for _ in range(draw(st.integers(1, 7))):
        device = draw(st.sampled_from(["GPU A", "GPU B", ""]))
        stream = draw(st.sampled_from([None, 0, 7, 8]))
        t = 1e9 + 0.1 * draw(st.integers(0, 80))
        kinds = draw(st.one_of(_SHAPE, _SHAPE, st.lists(_OP.map(lambda o: o[0]), max_size=5)))
        for kind in kinds:
            duration = draw(st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0, 2.5]))
            grid = draw(st.sampled_from([None, 1, 3, 40]))
            ops.append((kind, device, stream, t, duration, grid))
            t += duration + draw(st.sampled_from([0.0, 0.0, 0.1, 0.3, -0.1]))
    return ops


@PROPERTY
@given(_trace())
def test_array_path_equals_the_exact_path(ops: list[Op]) -> None:
    prof = _profile([*ops, ("HtoD", "GPU A", 7, 1e9 + 3.0, 0.1, None)])
    fast, exact = _both(prof)
    assert fast == exact
    if fast:  # every kernel, HtoD and DtoH is in a sequence or counted as left out
        tl = timeline.find_sequences(prof)
        matched = sum(s.htod_count + s.kernel_count + s.dtoh_count for s in tl.sequences)
        unmatched = tl.unmatched_htod + tl.unmatched_kernels + tl.unmatched_dtoh
        assert matched + unmatched == sum(1 for o in ops if o[0] != "memset") + 1


def test_merged_streams_and_rounded_busy_times() -> None:
    # stream 1: HtoD [t, t+0.3) [t+0.3, t+0.6) touching (one run), k [t+0.6, t+1.6), DtoH;
    # stream 2 overlaps it: HtoD [t+0.1, t+0.8) -> HtoD busy = union [t, t+0.8)
    t = 1e9
    ops: list[Op] = [
        ("HtoD", "G", 1, t, 0.3, None),
        ("HtoD", "G", 1, t + 0.3, 0.3, None),
        ("k1", "G", 1, t + 0.6, 1.0, 3),
        ("DtoH", "G", 1, t + 1.6, 0.2, None),
        ("HtoD", "G", 2, t + 0.1, 0.7, None),
        ("k2", "G", 2, t + 0.8, 1.0, 40),
        ("DtoH", "G", 2, t + 1.8, 0.2, None),
    ]
    fast, exact = _both(_profile(ops))
    assert fast == exact
    (seq,) = timeline.find_sequences(_profile(ops)).sequences
    assert seq.streams == (1, 2) and seq.kernels == ("k1", "k2")
    assert seq.grid_blocks == 3 * 2 + 40 * 2  # each stream's largest launch, summed
    assert seq.htod_ns == (t + 0.1 + 0.7) - t  # one run: the union's end minus its start
    assert (seq.htod_count, seq.kernel_count, seq.dtoh_count) == (3, 2, 2)


def test_a_negative_duration_never_reaches_the_model() -> None:
    ops: list[Op] = [
        ("HtoD", "G", 1, 0.0, 10.0, None),
        ("k1", "G", 1, 10.0, -4.0, 2),  # ends before it starts: dropped by the Profile
        ("k2", "G", 1, 12.0, 4.0, 2),
        ("DtoH", "G", 1, 20.0, 5.0, None),
    ]
    profile = _profile(ops)
    assert list(profile.launches["name"]) == ["k2"]
    assert any("duration -4 ns: dropped" in n for p in profile.provenance for n in p.notes)
    fast, exact = _both(profile)
    assert fast == exact


@pytest.mark.parametrize("trace", TRACES)
def test_real_traces_give_the_same_sequences(real_profiles: Path, trace: str) -> None:
    fast, exact = _both(parsers.read(real_profiles / trace))
    assert fast and fast == exact


# --- the streams model on arrays ----------------------------------------------------------------

_TIME = st.floats(0.0, 50.0, allow_nan=False).filter(lambda v: v == 0 or v > 1e-6)


@PROPERTY
@given(
    st.sampled_from([streams.NO_OVERLAP, streams.CC1, streams.CC2, streams.PIPELINE]),
    st.lists(st.tuples(_TIME, _TIME, _TIME), min_size=1, max_size=8),
    st.sampled_from([0.01, 0.03, 0.1, 0.3, 0.007]),
    st.integers(1, 70),
)
def test_predict_streams_many_equals_one_by_one(
    model: streams.StreamModel,
    times: list[tuple[float, float, float]],
    t_sc: float,
    max_streams: int,
) -> None:
    many = streams.predict_streams_many(
        model,
        [t[0] for t in times],
        [t[1] for t in times],
        [t[2] for t in times],
        t_sc,
        max_streams,
    )
    assert many == [streams.predict_streams(model, *t, t_sc, max_streams) for t in times]


def test_predict_streams_many_on_a_tie_picks_the_smaller_n() -> None:
    # cc 2.x, t_Thd = 2 > t_E = 1, t_Tdh = 0, t_sc = 0.5: eq. (5) 2 + 1/n + 0.5 n
    # n = 1: 3.5, n = 2: 2 + 0.5 + 1 = 3.5, n = 3: 3.83: a tie between 1 and 2 -> n = 1
    (p,) = streams.predict_streams_many(streams.CC2, [2.0], [1.0], [0.0], 0.5, 8)
    assert p.curve_ms[:2] == (3.5, 3.5) and p.optimal_n == 1


def test_predict_streams_many_with_an_infinite_time_goes_one_by_one() -> None:
    # cc 2.x with t_Thd = inf > t_E: eq. (5) is inf at every n
    many = streams.predict_streams_many(streams.CC2, [math.inf, 1.0], [1.0] * 2, [1.0] * 2, 0.01, 4)
    assert many == [
        streams.predict_streams(streams.CC2, math.inf, 1.0, 1.0, 0.01, 4),
        streams.predict_streams(streams.CC2, 1.0, 1.0, 1.0, 0.01, 4),
    ]
    assert math.isinf(many[0].curve_ms[0])


# --- the report's timeline ----------------------------------------------------------------------


@settings(PROPERTY, max_examples=25)
@given(st.one_of(_trace(), st.lists(_OP, min_size=1, max_size=40)), st.integers(1, 6))
def test_report_timeline_equals_the_frame_path(ops: list[Op], keep: int) -> None:
    prof = _profile(ops)
    frames = [(prof.launches, None), (prof.transfers, "transfer")]
    frames = [(f, k) for f, k in frames if not f.empty]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_timeline, "TIMELINE_MAX_INTERVALS", keep)
        tl = report_timeline.timeline(prof)
        assert tl == report_timeline._timeline_frame(frames)
    if tl is None or tl.kernel_span_ns is None:
        return
    # the axis starts at the first kernel; nothing drawn ends before it; idle only inside
    # HOSTSYNC's span (first kernel start .. last kernel end)
    first, last = tl.kernel_span_ns
    assert tl.span_ns[0] == first
    assert all(i.start_ns >= first or i.end_ns > first for i in tl.intervals)
    assert all(first <= a < b <= last for a, b in tl.gaps)


def test_report_timeline_keeps_the_first_of_equal_durations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # three 5 ns kernels and a 12 ns copy [0, 12) that runs past the first kernel's start (10),
    # so it is drawn; two kept: the copy and the earliest 5 ns kernel
    ops: list[Op] = [
        ("k1", "G", 1, 30.0, 5.0, None),
        ("k1", "G", 1, 10.0, 5.0, None),
        ("HtoD", "G", 2, 0.0, 12.0, None),
        ("k1", "G", 1, 20.0, 5.0, None),
    ]
    monkeypatch.setattr(report_timeline, "TIMELINE_MAX_INTERVALS", 2)
    tl = report_timeline.timeline(_profile(ops))
    assert tl is not None
    assert [(i.kind, i.stream, i.start_ns) for i in tl.intervals] == [
        ("HtoD", "2", 0.0),
        ("kernel", "1", 10.0),
    ]
    assert tl.dropped == 2 and tl.span_ns == (10.0, 35.0)
    # the set-up 0 .. 10 holds no activity that ends in it
    assert tl.setup == report_timeline.Setup(0.0, 10.0, 0, 0)


# --- BSP counts from launches grouped once --------------------------------------------------------


def test_launches_by_kernel_give_the_same_counts() -> None:
    launches = pd.DataFrame(
        {
            "name": ["a", "b", "a", "c"],
            "device": "G",
            "start_ns": [0.0, 1.0, 2.0, 3.0],
            "duration_ns": [10.0, 20.0, 30.0, 40.0],
            "grid_x": pd.array([4, 2, 8, None], dtype="Int64"),
            "grid_y": 1,
            "grid_z": 1,
            "block_x": 32,
            "block_y": 1,
            "block_z": 1,
        }
    )
    metrics = pd.DataFrame(
        {
            "kernel": ["a", "a", "a", "b"],
            "metric": [
                "inst_executed_global_loads",
                "inst_executed_global_stores",
                "inst_executed",
                "inst_executed",
            ],
            "value": [8.0, 4.0, 100.0, 5.0],
        }
    )
    prof = Profile(provenance=(PROV,), launches=launches, metrics=metrics)
    rows = bsp_profile.launches_by_kernel(prof, ["a", "b", "c", "missing"])
    assert rows["a"].durations.tolist() == [10.0, 30.0] and rows["a"].devices == ("G",)
    assert rows["a"].threads.tolist() == [128.0, 256.0]
    assert rows["c"].count == 1 and rows["c"].threads.empty  # its grid_x is unknown
    assert rows["missing"].count == 0
    grouped = bsp_profile.counts_from_profile(prof, "a", rows["a"])
    # t = mean(4 * 32, 8 * 32) = 192 threads; ld1 = 32 * 8 / 192; measured mean 20 ns
    assert grouped == bsp_profile.counts_from_profile(prof, "a")
    assert grouped.counts.threads == 192.0 and grouped.measured_s == pytest.approx(20e-9)
    for name in ("b", "c", "missing"):
        with pytest.raises(bsp_profile.NoKernelData) as grouped_error:
            bsp_profile.counts_from_profile(prof, name, rows[name])
        with pytest.raises(bsp_profile.NoKernelData) as plain_error:
            bsp_profile.counts_from_profile(prof, name)
        assert str(grouped_error.value) == str(plain_error.value)


def test_operations_keep_names_devices_and_block_counts() -> None:
    ops = timeline._operations(
        _profile(
            [
                ("k<3>", "GPU B", 4, 5.0, 1.0, 6),
                ("HtoD", "GPU A", None, 0.0, 2.0, None),
                ("k1", "", 4, 1.0, 1.0, None),
            ]
        )
    )
    # (device, stream, time) order: "" < "GPU A" < "GPU B"; no stream is -1
    assert ops.devices == ["", "GPU A", "GPU B"]
    assert ops.place.tolist() == [0, 1, 2] and ops.stream.tolist() == [4, -1, 4]
    assert [ops.names[i] if i >= 0 else None for i in ops.name.tolist()] == ["k1", None, "k<3>"]
    assert np.isnan(ops.blocks[:2]).all() and ops.blocks[2] == 12.0  # 6 x 2 x 1
    assert ops.end.tolist() == [2.0, 2.0, 6.0]


@pytest.mark.parametrize(
    "trace", ["csv/magus_nvprof/gtx1080ti/matrixMul_trace.csv", TRACES[1], TRACES[2]]
)
def test_launches_by_kernel_on_real_traces(real_profiles: Path, trace: str) -> None:
    prof = parsers.read(real_profiles / trace)
    names = prof.kernel_names()
    grouped = bsp_profile.launches_by_kernel(prof, names)
    for name in names:
        one = bsp_profile.kernel_launches(prof.launches[prof.launches["name"] == name])
        got = grouped[name]
        assert (got.count, got.devices) == (one.count, one.devices)
        assert got.threads.tolist() == one.threads.tolist()
        assert got.durations.tolist() == one.durations.tolist()
        assert got.threads.mean() == one.threads.mean()  # the same float, not a close one


def _reference_operations(profile: Profile) -> pd.DataFrame:
    """The operations as the rule orders them, written plainly: kernels then HtoD/DtoH copies,
    rows without a start or a duration dropped, sorted (stably) by device label, stream (none
    first), start and kind rank."""
    launches, transfers = profile.launches, profile.transfers
    copies = transfers[transfers["kind"].isin(["HtoD", "DtoH"])]
    grid = launches["grid_x"] * launches["grid_y"] * launches["grid_z"]
    parts = [
        pd.DataFrame(
            {
                "rank": 1,
                "device": launches["device"].astype(object).fillna("").astype(str),
                "stream": launches["stream"].fillna(-1).astype("int64"),
                "start": launches["start_ns"].astype(float),
                "duration": launches["duration_ns"].astype(float),
                "name": launches["name"].astype(object),
                "blocks": grid.astype("Float64").to_numpy(dtype=float, na_value=np.nan),
            }
        ),
        pd.DataFrame(
            {
                "rank": np.where(copies["kind"] == "HtoD", 0, 2),
                "device": copies["device"].astype(object).fillna("").astype(str),
                "stream": copies["stream"].fillna(-1).astype("int64"),
                "start": copies["start_ns"].astype(float),
                "duration": copies["duration_ns"].astype(float),
                "name": None,
                "blocks": np.nan,
            }
        ),
    ]
    ops = pd.concat(parts, ignore_index=True).dropna(subset=["start", "duration"])
    ops = ops.sort_values(["device", "stream", "start", "rank"], kind="stable")
    return ops.assign(end=ops["start"] + ops["duration"])


@PROPERTY
@given(st.lists(_OP, min_size=1, max_size=40))
def test_operations_are_gathered_in_the_rule_order(ops: list[Op]) -> None:
    prof = _profile([*ops, ("HtoD", "GPU A", 7, 1e9 + 3.0, 0.1, None)])
    got = timeline._operations(prof)
    want = _reference_operations(prof)
    assert got.rank.tolist() == want["rank"].tolist()
    assert [got.devices[p] for p in got.place.tolist()] == want["device"].tolist()
    assert got.stream.tolist() == want["stream"].tolist()
    assert got.start.tolist() == want["start"].tolist()
    assert got.end.tolist() == want["end"].tolist()  # the same start + duration floats
    names = [None if i < 0 else got.names[i] for i in got.name.tolist()]
    assert names == want["name"].tolist()
    np.testing.assert_array_equal(got.blocks, want["blocks"].to_numpy(dtype=float))
    for column in (got.rank, got.place, got.stream, got.name):
        assert column.dtype == np.int64


def test_grid_blocks_multiply_as_integers() -> None:
    """Beyond 2**53 a float product would round differently: the product is taken in int64."""
    launches = pd.DataFrame(
        {
            "grid_x": pd.array([2**31 - 1, 3, None, 5], dtype="Int64"),
            "grid_y": pd.array([65535, 1, 2, None], dtype="Int64"),
            "grid_z": pd.array([65535, 1, 2, 1], dtype="Int64"),
        }
    )
    expected = (launches["grid_x"] * launches["grid_y"] * launches["grid_z"]).astype("Float64")
    got = timeline._grid_blocks(launches)
    np.testing.assert_array_equal(got, expected.to_numpy(dtype=float, na_value=np.nan))
    assert got[0] == float((2**31 - 1) * 65535 * 65535)
