"""Small hand-built Kineto traces for the tests (written into a test's tmp_path)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

#: every timestamp is this many microseconds since the epoch plus the value given
BASE_US = 1_700_000_000_000_000
A100 = {
    "id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0,
    "maxThreadsPerMultiprocessor": 2048, "warpSize": 32, "regsPerMultiprocessor": 65536,
    "sharedMemPerMultiprocessor": 167936, "numSms": 108,
}  # fmt: skip


def op(name: str, ts: float, dur: float, tid: int = 1) -> dict[str, Any]:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid,
            "ts": BASE_US + ts, "dur": dur, "args": {}}  # fmt: skip


def call(name: str, ts: float, dur: float, corr: int, tid: int = 1) -> dict[str, Any]:
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": tid,
            "ts": BASE_US + ts, "dur": dur, "args": {"correlation": corr, "cbid": 211}}  # fmt: skip


def kernel(name: str, ts: float, dur: float, corr: int, stream: int = 7) -> dict[str, Any]:
    args = {
        "device": 0, "context": 1, "stream": stream, "correlation": corr,
        "registers per thread": 32, "shared memory": 1024, "grid": [216, 1, 1],
        "block": [256, 1, 1], "est. achieved occupancy %": 50,
    }  # fmt: skip
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
            "ts": BASE_US + ts, "dur": dur, "args": args}  # fmt: skip


def copy(name: str, ts: float, dur: float, corr: int, nbytes: int, stream: int = 7) -> dict:
    cat = "gpu_memset" if name.startswith("Memset") else "gpu_memcpy"
    args = {"device": 0, "context": 1, "stream": stream, "correlation": corr, "bytes": nbytes}
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream,
            "ts": BASE_US + ts, "dur": dur, "args": args}  # fmt: skip


def sync(ts: float, dur: float, corr: int, kind: str = "Stream Sync") -> dict[str, Any]:
    args = {"cuda_sync_kind": kind, "stream": 7, "correlation": corr, "device": 0}
    return {"ph": "X", "cat": "cuda_sync", "name": kind, "pid": 0, "tid": 7,
            "ts": BASE_US + ts, "dur": dur, "args": args}  # fmt: skip


def step_events() -> list[dict[str, Any]]:
    """One training-like step (microseconds from BASE_US; the figures the tests check are
    computed by hand in tests/report/test_host.py):

    thread 1: aten::linear [0, 100) holds aten::addmm [10, 60) and the launches of gemm (call 20,
    corr 1) and two copy kernels on stream 8 (calls 22, 24); aten::add [100, 120) launches add
    (call 105); aten::item [120, 160) copies 4 bytes DtoH (call 121) and syncs the stream
    (cudaStreamSynchronize [126, 130), corr 4); aten::mul [170, 180) launches mul (call 172).
    GPU, stream 7: gemm [40, 60), add [108, 110), memcpy [126, 127), mul [190, 200);
    stream 8: copy [50, 55), copy [70, 75).
    """
    return [
        op("aten::linear", 0, 100),
        op("aten::addmm", 10, 50),
        call("cudaLaunchKernel", 20, 10, 1),
        kernel("gemm_kernel", 40, 20, 1),
        call("cudaLaunchKernel", 22, 2, 6),
        kernel("copy_kernel", 50, 5, 6, stream=8),
        call("cudaLaunchKernel", 24, 2, 7),
        kernel("copy_kernel", 70, 5, 7, stream=8),
        op("aten::add", 100, 20),
        call("cudaLaunchKernel", 105, 5, 2),
        kernel("add_kernel", 108, 2, 2),
        op("aten::item", 120, 40),
        op("aten::_local_scalar_dense", 121, 30),
        call("cudaMemcpyAsync", 121, 4, 3),
        copy("Memcpy DtoH (Device -> Pageable)", 126, 1, 3, 4),
        call("cudaStreamSynchronize", 126, 4, 4),
        sync(127, 3, 4),
        op("aten::mul", 170, 10),
        call("cudaLaunchKernel", 172, 3, 5),
        kernel("mul_kernel", 190, 10, 5),
        {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": BASE_US + 20, "cat": "ac2g", "name": "ac2g"},
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "python"}},
    ]


def write_trace(
    path: Path,
    events: list[dict[str, Any]],
    devices: list[dict[str, Any]] | None = None,
    compress: bool = False,
    **extra: Any,
) -> Path:
    doc: dict[str, Any] = {"schemaVersion": 1, "deviceProperties": devices or [A100], **extra}
    doc["traceEvents"] = events
    doc["traceName"] = "synthetic test trace"
    text = json.dumps(doc, indent=1).encode()
    path.write_bytes(gzip.compress(text) if compress else text)
    return path
