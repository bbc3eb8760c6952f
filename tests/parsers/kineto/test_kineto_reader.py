"""The Kineto trace reader (parsers/kineto/) on hand-built traces."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import parsers
from advisor.errors import MalformedInput, NoKernelData, UnrecognisedFormat
from parsers.kineto.stream import sniff_kineto
from tests.parsers.kineto.trace_builder import (
    BASE_US,
    call,
    kernel,
    op,
    step_events,
    write_trace,
)


@pytest.fixture(params=[False, True], ids=["plain", "gzip"])
def step(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return write_trace(tmp_path / "trace.data", step_events(), compress=request.param)


def test_detected_from_content_plain_and_gzip(step: Path) -> None:
    assert parsers.detect(step) == "kineto"


def test_launches_with_configuration_and_operator(step: Path) -> None:
    launches = parsers.read(step).launches
    assert list(launches["name"].astype(str)) == [
        "gemm_kernel", "copy_kernel", "copy_kernel", "add_kernel", "mul_kernel"
    ]  # fmt: skip
    gemm = launches.iloc[0]
    # times from the first timed event (aten::linear at 0 us), in ns
    assert gemm["start_ns"] == 40_000.0 and gemm["duration_ns"] == 20_000.0
    assert (gemm["grid_x"], gemm["block_x"], gemm["registers_per_thread"]) == (216, 256, 32)
    assert gemm["static_shared_bytes"] == 1024.0 and gemm["dynamic_shared_bytes"] == 0.0
    assert gemm["device"] == "NVIDIA A100-SXM4-80GB" and gemm["stream"] == 7
    # the outermost operator around the launch call: aten::linear, not aten::addmm
    assert list(launches["operator"].astype(str)) == [
        "aten::linear", "aten::linear", "aten::linear", "aten::add", "aten::mul"
    ]  # fmt: skip


def test_transfers_api_calls_and_syncs(step: Path) -> None:
    profile = parsers.read(step)
    (t,) = profile.transfers.itertuples()
    assert (t.kind, t.src_kind, t.dst_kind, t.bytes) == ("DtoH", "Device", "Pageable", 4.0)
    calls = profile.api_calls.set_index("correlation_id")
    assert calls.loc[4, "name"] == "cudaStreamSynchronize"
    assert calls.loc[4, "sync_kind"] == "Stream Sync"
    assert calls.loc[4, "operator"] == "aten::item"
    assert calls["sync_kind"].notna().sum() == 1  # only the call the cuda_sync event names


def test_devices_from_device_properties(step: Path) -> None:
    (d,) = parsers.read(step).devices.itertuples()
    assert (d.name, d.compute_capability, d.sm_count, d.max_warps_per_sm) == (
        "NVIDIA A100-SXM4-80GB", "8.0", 108, 64
    )  # fmt: skip


def test_nanosecond_timestamps_are_kept(tmp_path: Path) -> None:
    # 1.7e15 us with three decimals: a float64 would round to a quarter microsecond
    text = (
        '{"schemaVersion": 1, "traceEvents": ['
        f'{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {BASE_US}.001, '
        '"dur": 1.001, "args": {"device": 0, "stream": 7, "correlation": 1}},'
        f'{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {BASE_US}.005, '
        '"dur": 0.002, "args": {"device": 0, "stream": 7, "correlation": 2}}]}'
    )
    path = tmp_path / "ns.json"
    path.write_text(text)
    launches = parsers.read(path).launches
    assert list(launches["start_ns"]) == [0.0, 4.0]
    assert list(launches["duration_ns"]) == pytest.approx([1001.0, 2.0])


def test_sync_kind_from_call_names_without_cuda_sync_events(tmp_path: Path) -> None:
    events = [e for e in step_events() if e.get("cat") != "cuda_sync"]
    profile = parsers.read(write_trace(tmp_path / "t.json", events))
    kinds = profile.api_calls.set_index("correlation_id")["sync_kind"]
    assert kinds[4] == "Stream Sync" and kinds.notna().sum() == 1
    assert any("no cuda_sync events" in n for n in profile.provenance[0].notes)


def test_cupti_counters_become_mapped_metrics(tmp_path: Path) -> None:
    ranges = [
        {"ph": "X", "cat": "cuda_profiler_range", "name": "gemm", "pid": 0, "tid": 0,
         "ts": BASE_US, "dur": 5,
         "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 100}},
        {"ph": "X", "cat": "cuda_profiler_range", "name": "gemm", "pid": 0, "tid": 0,
         "ts": BASE_US + 5, "dur": 5,
         "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 300}},
    ]  # fmt: skip
    profile = parsers.read(write_trace(tmp_path / "c.json", ranges))
    assert len(profile.launches) == 2 and profile.launches["start_ns"].isna().all()
    assert set(profile.metrics["metric"].astype(str)) == {"flop_count_sp_fma"}
    assert list(profile.metrics["value"]) == [100.0, 300.0]


def test_amd_trace_is_refused_saying_what_it_holds(tmp_path: Path) -> None:
    amd = {"id": 0, "name": "AMD Radeon Graphics", "computeMajor": 9, "computeMinor": 0}
    events = [op("aten::add", 0, 10), call("hipLaunchKernel", 1, 2, 1), kernel("k", 5, 1, 1)]
    path = write_trace(tmp_path / "amd.json", events, devices=[amd])
    with pytest.raises(UnrecognisedFormat, match=r"AMD GPU \(ROCm: 1 hip\* API calls, 1 kernels"):
        parsers.read(path)


def test_cpu_only_trace_is_no_kernel_data(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "cpu.json", [op("aten::add", 0, 10), op("aten::mul", 20, 5)])
    with pytest.raises(NoKernelData, match=r"CPU events only \(2 CPU operators\)"):
        parsers.read(path)


def test_damaged_json_is_malformed(tmp_path: Path, step: Path) -> None:
    raw = step.read_bytes()
    text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[: len(text) // 2])
    with pytest.raises(MalformedInput, match="not valid JSON"):
        parsers.read(cut)


def test_sniff_rejects_other_json() -> None:
    assert not sniff_kineto(b'{"name": "A100", "sm_count": 108}')
    assert not sniff_kineto(b"[1, 2, 3]")
    assert sniff_kineto(b'{"traceEvents": [')
    assert sniff_kineto(gzip.compress(b'{\n "schemaVersion": 1, "distributedInfo": {}'))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the keys before traceEvents, nested values whole; those after it are not read
        (
            b'{"schemaVersion": 1, "deviceProperties": [{"id": 0, "n": [1, {"a": 2}]}], '
            b'"": {"": 3}, "traceEvents": [{"ph": "X"}], "after": 4}',
            {"schemaVersion": 1, "deviceProperties": [{"id": 0, "n": [1, {"a": 2}]}], "": {"": 3}},
        ),
        (b'{"a": 1, "b": {"c": 2}}', {"a": 1, "b": {"c": 2}}),  # no traceEvents at all
        (b'{"a": 1, "b": {"c": ', {"a": 1}),  # cut short inside a value: that key is left out
        (b'[{"a": 1}]', {}),  # not an object
        (b'{"traceEvents": []}', {}),
    ],
)
def test_read_header_keys_before_the_events(tmp_path: Path, text: bytes, expected: dict) -> None:
    from parsers.kineto.stream import read_header

    path = tmp_path / "t.json"
    path.write_bytes(text)
    assert read_header(str(path)) == expected
