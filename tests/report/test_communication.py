"""Communication kernels (advisor/communication.py): the classifier, the overlap and exposed
figures on a hand-built trace, the launch-configuration criteria n/a for them, and the busiest
compute stream's pace (advisor/models/host.py); then the invariants on a real 16-rank trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import parsers
from advisor import communication as cm
from advisor import pipeline
from advisor.criteria import evaluate
from advisor.models import host
from advisor.profile import Profile
from advisor.report.host_view import host_view
from tests.parsers.kineto.trace_builder import call, kernel, write_trace

NCCL = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (NCCL, True),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", True),
        ("void rcclKernel_AllGather(ncclWork*)", True),
        ("mscclKernel_Sum_float_Simple_false(int, int)", True),
        ("void at::native::vectorized_elementwise_kernel<4>(int)", False),
        ("ampere_sgemm_128x64_nn", False),
        (None, False),
    ],
)
def test_classifier_by_name(name: str | None, expected: bool) -> None:
    assert cm.is_communication_name(name) is expected


@pytest.mark.parametrize(
    "name",
    [
        *("NcClKernel", "xRCCLy", "MsCcL_sum", "mccl", "n ccl", "ncc"),
        *("m\u017fccl_sum", "\u0130nccl", "k\u212a"),  # not ASCII: the pattern's case folding
    ],
)
def test_classifier_answers_as_the_case_blind_pattern(name: str) -> None:
    # ASCII names take a lowered search, others the pattern: both answer as the pattern does
    # (the long s U+017F matches "s" ignoring case, so "m\u017fccl" is MSCCL's)
    assert cm.is_communication_name(name) is (cm.NAME_PATTERN.search(name) is not None)


def test_collective_arg_marks_a_kernel_without_a_library_name() -> None:
    frame = pd.DataFrame(
        {
            "name": ["custom_all_reduce", "gemm", "ncclDevKernel_Broadcast"],
            "collective": pd.Series(["allreduce", None, None], dtype="category"),
        }
    )
    assert cm.communication_mask(frame).tolist() == [True, False, True]


def test_categorical_names_classified_as_their_texts() -> None:
    # the schema's categorical names are classified through their codes: the same mask as the
    # texts, a missing name (code -1) not communication, an unused category harmless
    names = [NCCL, "gemm", None, NCCL, "void rcclKernel_AllGather(ncclWork*)", "gemm"]
    as_text = pd.DataFrame({"name": pd.Series(names, dtype="object")})
    categorical = pd.Categorical(names, categories=[*sorted({n for n in names if n}), "unused"])
    as_category = pd.DataFrame({"name": categorical})
    expected = [True, False, False, True, True, False]
    assert cm.communication_mask(as_text).tolist() == expected
    assert cm.communication_mask(as_category).tolist() == expected


def _trace(tmp_path: Path, extra_args: dict[str, Any] | None = None) -> Profile:
    """Device 0, times in us: NCCL on stream 20 over [0, 100) and [200, 260); computation on
    stream 7 over [50, 120) and [230, 240); launch calls of every kernel issued at 0 (the host
    far ahead)."""
    comm1 = kernel(NCCL, 0, 100, 1, stream=20)
    comm2 = kernel(NCCL, 200, 60, 2, stream=20)
    if extra_args:
        comm2["args"] |= extra_args
    events = [
        comm1,
        comm2,
        kernel("gemm", 50, 70, 3),
        kernel("gemm", 230, 10, 4),
        *(call("cudaLaunchKernel", 0.1 * i, 0.1, i) for i in range(1, 5)),
    ]
    for e in events[:4]:
        e["args"]["grid"] = [2, 1, 1]  # far fewer blocks than the A100's 108 SMs
    return parsers.read(write_trace(tmp_path / "comm.json", events))


def test_overlap_and_exposed_time_on_a_known_timeline(tmp_path: Path) -> None:
    comm = cm.communication(_trace(tmp_path))
    assert comm is not None
    # communication 100 + 60 us; computation alongside: [50, 100) and [230, 240): 60 us
    assert comm.launches == 2
    assert comm.communication_ns == pytest.approx(160_000)
    assert comm.overlapped_ns == pytest.approx(60_000)
    assert comm.exposed_ns == pytest.approx(100_000)
    assert comm.overlap_frac == pytest.approx(60 / 160)
    assert comm.share_of_gpu_time == pytest.approx(160 / 240)


def test_intersection_of_unions_matches_a_sampled_count() -> None:
    rng = np.random.default_rng(3)
    a = cm.blocks(s := rng.integers(0, 1000, 40).astype(float), s + rng.integers(1, 50, 40))
    b = cm.blocks(t := rng.integers(0, 1000, 40).astype(float), t + rng.integers(1, 50, 40))
    grid = np.arange(0, 1100) + 0.5  # one sample per unit of time
    inside_a = ((grid[:, None] >= a[0]) & (grid[:, None] < a[1])).any(axis=1)
    inside_b = ((grid[:, None] >= b[0]) & (grid[:, None] < b[1])).any(axis=1)
    assert cm.intersection_ns(a, b) == pytest.approx(float((inside_a & inside_b).sum()))


def test_no_communication_no_figures(tmp_path: Path) -> None:
    events = [kernel("gemm", 0, 10, 1), call("cudaLaunchKernel", 0, 1, 1)]
    profile = parsers.read(write_trace(tmp_path / "plain.json", events))
    assert cm.communication(profile) is None
    view = host_view(profile)
    assert view is not None and view.communication is None
    assert "communication" not in pipeline.analyse_profile(profile).data


def test_launch_configuration_criteria_not_applicable_to_communication(tmp_path: Path) -> None:
    analysis = evaluate(_trace(tmp_path))
    by_name = {k.name: {c.name: c for c in k.criteria} for k in analysis.kernels}
    for criterion in cm.NOT_FOR_COMMUNICATION:
        result = by_name[NCCL][criterion]
        assert result.status == "not_applicable"
        assert "communication kernel" in result.notes[0]
    # the same two-block grid on a computation kernel is still judged
    assert by_name["gemm"]["LOADBALANC_SM"].status == "computed"
    nccl = next(k for k in analysis.kernels if k.name == NCCL)
    assert not nccl.hints


def test_collective_arg_read_from_the_trace(tmp_path: Path) -> None:
    profile = _trace(tmp_path, {"Collective name": "allreduce"})
    assert profile.launches["collective"].dropna().tolist() == ["allreduce"]


def test_pace_of_a_stream_the_host_runs_ahead_of(tmp_path: Path) -> None:
    profile = _trace(tmp_path)
    pace = host.stream_pace(profile)
    assert pace is not None
    assert (pace.stream, pace.kernels) == (7, 2)
    # both gemm calls issued at 0.3 and 0.4 us: the second was queued behind the first
    assert pace.idle.host_wait_ns == 0
    assert pace.launch_delay_median_ns == pytest.approx((49.7 + 229.6) / 2 * 1000)
    assert pace.queue_median == pytest.approx(0.5)
    assert pace.pace != host.HOST


@pytest.fixture(scope="module")
def nccl_run(real_profiles: Path) -> pipeline.Run:
    path = real_profiles / "kineto/negative_queue_length_values_check/rank0.json.gz"
    return pipeline.analyse_profile(parsers.read(path))


def test_real_trace_invariants(nccl_run: pipeline.Run) -> None:
    data = json.loads(pipeline.json_text(nccl_run.data))
    h = data["host"]
    span = h["span_ns"]
    # figures over streams are unions over time: never above the span
    assert h["idle"]["idle_ns"] <= span
    assert h["idle"]["idle_ns"] == pytest.approx(span - h["devices"][0]["busy_ns"])
    comm = data["communication"]
    assert comm["communication_ns"] <= span
    assert comm["exposed_ns"] + comm["overlapped_ns"] == pytest.approx(comm["communication_ns"])
    assert comm["kernels"] == [NCCL]
    assert 0.005 < comm["overlap_frac"] < 0.03  # HTA 0.5.0: 1.47 %
    # no communication kernel carries a launch-configuration or occupancy hint
    for k in data["kernels"]:
        if cm.is_communication_name(k["name"]):
            assert not k["hints"]
            criteria = k["criteria"]
            assert all(criteria[c]["status"] == "not_applicable" for c in cm.NOT_FOR_COMMUNICATION)
    # stream 7 starts its kernels long after their launch: the host is ahead, not the cause
    pace = h["busiest_stream"]
    assert pace["stream"] == 7 and not pace["host_bound"]
    assert pace["idle"]["host_wait_ns"] == 0
    assert pace["launch_delay_median_ns"] > 100e6
    assert data["application"]["HOSTSYNC"]["variant"] == "host_ahead"
    first = next(x for x in data["application"]["hints"] if x["criterion"] == "HOSTSYNC")
    assert "host runs ahead" in first["title"]


def test_real_trace_headline_does_not_blame_the_host(nccl_run: pipeline.Run) -> None:
    from advisor.render.markdown import markdown

    text = markdown(pipeline.build(nccl_run))
    verdict = text.split("\n\n", 1)[0]
    assert "wait 1.16 s for the host" not in verdict
    assert "host runs ahead" in verdict
    assert "GPU sets the pace" in verdict
    hints = text.split("#### Hints", 1)[1].split("###", 1)[0]
    assert not [line for line in hints.splitlines() if "grid too small" in line and "nccl" in line]
