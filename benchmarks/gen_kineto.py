"""Large synthetic PyTorch profiler (Kineto) traces for the scale benchmark and the tests.

The trace is the Chrome-trace JSON ``torch.profiler`` writes (``traceEvents`` of ``ph: "X"``
events, times in microseconds with three decimals, as Kineto writes them since 2024): a
``deviceProperties`` block naming one synthetic A100, and per GPU activity of the shared timeline
(:func:`benchmarks.gen_common.timeline`: a few dozen kernels, a tenth memcpy/memset, six
streams)

* a ``cpu_op`` (one operator per four activities, named from a list of ATen operators),
* the ``cuda_runtime`` call that launched it (``cudaLaunchKernel``, ``cudaMemcpyAsync``,
  ``cudaMemsetAsync``) inside that operator, with its correlation id,
* the ``ac2g`` flow start/end pair that links the call to the GPU activity,
* the ``kernel`` (grid, block, registers, shared memory, occupancy estimate), ``gpu_memcpy`` or
  ``gpu_memset`` event,

and every 64th operator an ``aten::item`` with a ``cudaStreamSynchronize`` and its ``cuda_sync``
event.  Each event is written over several lines, as Kineto does.  The top-level key
``synthetic`` says the file is generated.  ``n`` counts the GPU activities.

Run ``python benchmarks/gen_kineto.py OUT.json [--n N] [--seed S] [--gzip]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

try:
    from benchmarks import gen_common as g
except ImportError:  # run as a script from benchmarks/
    import gen_common as g  # type: ignore[no-redef]

DEFAULT_N = 500_000
PID = 4242
TID = 4242
OPERATORS = (
    "aten::addmm",
    "aten::add_",
    "aten::copy_",
    "aten::softmax",
    "aten::layer_norm",
    "aten::mul",
    "aten::convolution",
    "aten::sum",
)
OPS_PER_GROUP = 4
SYNC_EVERY = 64
BASE_US = 1_700_000_000_000_000.0
DEVICE = {
    "id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85031714816,
    "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "regsPerMultiprocessor": 65536,
    "warpSize": 32, "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
    "numSms": 108, "sharedMemPerBlockOptin": 166912,
}  # fmt: skip


def _us(ns: float) -> str:
    return f"{BASE_US + ns / 1000.0:.3f}"


def _event(cat: str, name: str, pid: int, tid: int, ts: str, dur: float, args: str) -> str:
    return (
        f'  {{\n    "ph": "X", "cat": "{cat}", "name": {json.dumps(name)}, "pid": {pid}, '
        f'"tid": {tid},\n    "ts": {ts}, "dur": {dur / 1000.0:.3f},\n    "args": {{\n'
        f"      {args}\n    }}\n  }}"
    )


def _flow(ph: str, corr: int, pid: int, tid: int, ts: str) -> str:
    end = ', "bp": "e"' if ph == "f" else ""
    return (
        f'  {{\n    "ph": "{ph}", "id": {corr}, "pid": {pid}, "tid": {tid}, "ts": {ts},\n'
        f'    "cat": "ac2g", "name": "ac2g"{end}\n  }}'
    )


def events(n: int, seed: int) -> Iterator[str]:
    """The trace's events as JSON texts, in the timeline's order."""
    tl = g.timeline(n, seed)
    for group in range(0, n, OPS_PER_GROUP):
        rows = range(group, min(n, group + OPS_PER_GROUP))
        first = int(tl.start_ns[rows[0]])
        op_start = max(0.0, first - 20_000.0)
        op_dur = 2_000.0 * len(rows) + 1_000.0
        op_id = group // OPS_PER_GROUP
        op = OPERATORS[op_id % len(OPERATORS)]
        yield _event("cpu_op", op, PID, TID, _us(op_start), op_dur, f'"External id": {op_id}')
        for j, i in enumerate(rows):
            yield from _activity(tl, i, op_start + 500.0 + 2_000.0 * j, op_id)
        if op_id % SYNC_EVERY == SYNC_EVERY - 1:
            yield from _sync(tl, rows[-1], op_start + op_dur, op_id)


def _activity(tl: g.Timeline, i: int, call_ns: float, op_id: int) -> Iterator[str]:
    corr = int(tl.correlation_id[i])
    stream = int(tl.stream[i])
    start = int(tl.start_ns[i])
    dur = float(tl.duration_ns[i])
    common = (
        f'"External id": {op_id}, "device": 0, "context": 1, "stream": {stream}, '
        f'"correlation": {corr}'
    )
    if tl.is_kernel[i]:
        api, cat, name = "cudaLaunchKernel", "kernel", g.KERNEL_NAMES[int(tl.kernel[i])]
        grid = [int(x) for x in tl.grid[i]]
        block = [int(x) for x in tl.block[i]]
        smem = int(tl.static_smem_bytes[i]) + int(tl.dynamic_smem_bytes[i])
        args = (
            f'{common}, "queued": 0, "registers per thread": {int(tl.registers[i])}, '
            f'"shared memory": {smem}, "blocks per SM": 1.5, "warps per SM": 12.0, '
            f'"grid": {grid}, "block": {block}, "est. achieved occupancy %": 18'
        )
    else:
        kind, src, dst = g.TRANSFERS[int(tl.transfer[i])]
        nbytes = int(tl.bytes[i])
        if kind == "memset":
            api, cat, name = "cudaMemsetAsync", "gpu_memset", "Memset (Device)"
        else:
            api, cat, name = "cudaMemcpyAsync", "gpu_memcpy", f"Memcpy {kind} ({src} -> {dst})"
        args = f'{common}, "bytes": {nbytes}, "memory bandwidth (GB/s)": {nbytes / dur:.3f}'
    call_ts = _us(call_ns)
    api_args = f'"External id": {op_id}, "cbid": 211, "correlation": {corr}'
    yield _event("cuda_runtime", api, PID, TID, call_ts, 1_500.0, api_args)
    yield _flow("s", corr, PID, TID, call_ts)
    gpu_ts = _us(start)
    yield _event(cat, name, 0, stream, gpu_ts, dur, args)
    yield _flow("f", corr, 0, stream, gpu_ts)


def _sync(tl: g.Timeline, last: int, at_ns: float, op_id: int) -> Iterator[str]:
    """An ``aten::item`` that waits for the last activity's stream."""
    corr = 10 * int(tl.correlation_id[last]) + 1
    stream = int(tl.stream[last])
    end = float(tl.start_ns[last] + tl.duration_ns[last])
    wait = max(1_000.0, end - at_ns)
    yield _event("cpu_op", "aten::item", PID, TID, _us(at_ns), wait + 2_000.0, "")
    api_args = f'"External id": {op_id}, "cbid": 131, "correlation": {corr}'
    yield _event(
        "cuda_runtime", "cudaStreamSynchronize", PID, TID, _us(at_ns + 500), wait, api_args
    )
    sync_args = (
        f'"External id": {op_id}, "cuda_sync_kind": "Stream Sync", "stream": {stream}, '
        f'"correlation": {corr}, "device": 0, "context": 1'
    )
    yield _event("cuda_sync", "Stream Sync", 0, stream, _us(at_ns + 500), wait, sync_args)


def write_kineto(path: Path, n: int, seed: int, compress: bool = False) -> None:
    """Write the synthetic trace of ``n`` GPU activities to ``path`` (gzip with ``compress``)."""
    opener: Callable[..., IO[str]] = gzip.open if compress else open  # type: ignore[assignment]
    head = {
        "schemaVersion": 1,
        "synthetic": "generated by benchmarks/gen_kineto.py; not a real profile",
        "deviceProperties": [DEVICE],
        "distributedInfo": {"rank": 0},
    }
    with opener(path, "wt", encoding="utf-8") as out:
        text = json.dumps(head, indent=2)[:-2]  # leave the object open
        out.write(text + ',\n  "traceEvents": [\n')
        batch: list[str] = []
        first = True
        for event in events(n, seed):
            batch.append(event)
            if len(batch) == 10_000:
                out.write(("" if first else ",\n") + ",\n".join(batch))
                first, batch = False, []
        if batch:
            out.write(("" if first else ",\n") + ",\n".join(batch))
        out.write('\n  ],\n  "traceName": "synthetic_kineto"\n}\n')


GENERATORS: dict[str, tuple[Callable[[Path, int, int], None], int, bool]] = {
    "kineto-json": (write_kineto, DEFAULT_N, False),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=DEFAULT_N)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gzip", action="store_true", help="write it gzip-compressed")
    args = ap.parse_args()
    write_kineto(args.out, args.n, args.seed, compress=args.gzip)


if __name__ == "__main__":
    main()
