"""The columns of a :class:`~parsers.kineto.events.Collector` -> the schema's frames.

* Times: nanoseconds from the trace's first timed event (the epoch-based integers of the
  collector minus the smallest start), so float64 keeps every nanosecond.
* ``launches.operator`` / ``api_calls.operator``: the PyTorch operator that made the CUDA call,
  the outermost ``cpu_op`` on the calling thread whose interval holds the call's start (what the
  user's code called: ``aten::linear`` rather than the ``aten::addmm`` inside it,
  ``autograd::engine::evaluate_function: AddmmBackward0`` for its backward); a kernel or a
  transfer gets the operator of the API call with its correlation id (the call the ``ac2g``
  flow links it to).  Missing where no operator holds the call (a launch from a thread the
  profiler records no operators for).
* ``api_calls.sync_kind``: the ``cuda_sync_kind`` of the ``cuda_sync`` event with the call's
  correlation id (``Stream Sync``, ``Event Sync``, ``Context Sync``, ``Stream Wait Event``); in
  a trace without ``cuda_sync`` events, the kind a synchronizing call's name implies
  (:data:`SYNC_CALLS`).
* ``launches.static_shared_bytes``: Kineto's ``shared memory`` is the launch's static plus
  dynamic shared memory; it is kept whole in ``static_shared_bytes`` (``dynamic_shared_bytes``
  0), and the provenance says so.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from advisor import schema
from parsers.frames import metric_record
from parsers.kineto.events import MISSING, Collector
from parsers.names import compute_capability, transfer_kind

#: the synchronization kind of a blocking CUDA call, for traces without ``cuda_sync`` events
SYNC_CALLS = {
    "cudaDeviceSynchronize": "Context Sync",
    "cudaCtxSynchronize": "Context Sync",
    "cuCtxSynchronize": "Context Sync",
    "cudaStreamSynchronize": "Stream Sync",
    "cuStreamSynchronize": "Stream Sync",
    "cudaEventSynchronize": "Event Sync",
    "cuEventSynchronize": "Event Sync",
}


def _i64(values: array) -> np.ndarray:
    """An ``array("q")`` column as int64 values (a view, empty for an empty column)."""
    return np.frombuffer(values, dtype=np.int64)


def _int_column(values: array) -> pd.arrays.IntegerArray:
    data = _i64(values)
    return pd.arrays.IntegerArray(data.copy(), data == MISSING)


def _floats(values: array) -> np.ndarray:
    return np.frombuffer(values, dtype=np.float64).copy()


def _starts(values: array, t0: int) -> np.ndarray:
    raw = _i64(values)
    return np.where(raw == MISSING, np.nan, (raw - t0).astype(np.float64))


def origin(col: Collector) -> int:
    """The smallest start of any timed event (0 when there is none)."""
    firsts = []
    for cols in (col.kernels, col.transfers, col.runtime, col.ops):
        starts = _i64(cols["start"])
        known = starts[starts != MISSING]
        if len(known):
            firsts.append(int(known.min()))
    return min(firsts) if firsts else 0


def outer_operators(col: Collector) -> np.ndarray:
    """Per API call, the name code of the outermost operator on its thread that holds the
    call's start; -1 where none does."""
    calls = col.runtime
    out = np.full(len(calls["start"]), -1, dtype=np.int64)
    if not len(col.ops["start"]) or not len(out):
        return out
    op_thread, op_start = _i64(col.ops["thread"]), _i64(col.ops["start"])
    op_end, op_name = _i64(col.ops["end"]), _i64(col.ops["name"])
    call_thread, call_start = _i64(calls["thread"]), _i64(calls["start"])
    for thread in np.unique(call_thread):
        ops = np.flatnonzero(op_thread == thread)
        if not len(ops):
            continue
        order = ops[np.lexsort((-op_end[ops], op_start[ops]))]
        starts, ends = op_start[order], op_end[order]
        reach = np.maximum.accumulate(ends)
        outer = np.concatenate([[True], starts[1:] >= reach[:-1]])  # not inside an earlier op
        top = order[outer]
        rows = np.flatnonzero(call_thread == thread)
        at = np.searchsorted(op_start[top], call_start[rows], side="right") - 1
        inside = (at >= 0) & (call_start[rows] < op_end[top][np.maximum(at, 0)])
        out[rows[inside]] = op_name[top[at[inside]]]
    return out


def _names(codes: np.ndarray, words: list[str]) -> pd.Series:
    return pd.Series(schema.categorical_of(codes, words))


def _positions(values: np.ndarray, known: Sequence[int]) -> np.ndarray:
    """Each value's position in the sorted ``known`` ids, -1 where it is not one of them."""
    if not len(known):
        return np.full(len(values), -1, dtype=np.int64)
    ids = np.asarray(known, dtype=np.int64)
    at = np.clip(np.searchsorted(ids, values), 0, len(ids) - 1)
    return np.where(ids[at] == values, at, -1)


def _per_code(
    codes: np.ndarray, words: list[str], parse: Callable[[str], tuple[Any, ...]], width: int
) -> list[np.ndarray]:
    """``parse`` of each row's name, as ``width`` object columns: each distinct name parsed
    once, the rows filled by indexing (code -1: None)."""
    used = np.unique(codes[codes >= 0]).tolist()
    tables = [np.full(len(words) + 1, None, dtype=object) for _ in range(width)]
    for c in used:
        for table, part in zip(tables, parse(words[c]), strict=True):
            table[c] = part
    return [table[codes] for table in tables]


def _operators_by_corr(col: Collector, call_ops: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """The operator code of each GPU activity: that of the API call with its correlation id."""
    call_corr = _i64(col.runtime["corr"]) if len(call_ops) else None
    if call_corr is None or not len(corr):
        return np.full(len(corr), -1, dtype=np.int64)
    order = np.argsort(call_corr, kind="stable")
    sorted_corr = call_corr[order]
    at = np.clip(np.searchsorted(sorted_corr, corr), 0, len(sorted_corr) - 1)
    found = (sorted_corr[at] == corr) & (corr != MISSING)
    return np.where(found, call_ops[order][at], -1)


def launches(
    col: Collector, t0: int, call_ops: np.ndarray, device_names: Mapping[int, str]
) -> pd.DataFrame:
    k = col.kernels
    words: list[str] = col.names.values  # every name is kept as a str
    device_id = _int_column(k["device"])
    corr, names = _i64(k["corr"]), _i64(k["name"])
    shared = _floats(col.kernel_floats["shared"])
    known = sorted(device_names)
    dev_words = [device_names[d] for d in known]
    dev_index = _positions(np.asarray(device_id.to_numpy(dtype=np.int64, na_value=MISSING)), known)
    frame = {
        "name": _names(names, words),
        "device": pd.Series(schema.categorical_of(dev_index, dev_words)),
        "device_id": device_id,
        "context": _int_column(k["context"]),
        "stream": _int_column(k["stream"]),
        "start_ns": _starts(k["start"], t0),
        "duration_ns": _floats(col.kernel_floats["duration"]),
        **{f"{a}_{x}": _int_column(k[f"{a}_{x}"]) for a in ("grid", "block") for x in "xyz"},
        "registers_per_thread": _int_column(k["registers"]),
        "static_shared_bytes": shared,
        "dynamic_shared_bytes": np.where(np.isnan(shared), np.nan, 0.0),
        "correlation_id": _int_column(k["corr"]),
        "operator": _names(_operators_by_corr(col, call_ops, corr), words),
        "collective": _names(_i64(k["collective"]), words),
    }
    out = pd.DataFrame(frame)
    out.insert(0, "launch_id", np.arange(len(out), dtype=np.int64))
    return out


def transfers(col: Collector, t0: int, call_ops: np.ndarray) -> pd.DataFrame:
    t = col.transfers
    words: list[str] = col.names.values
    codes = _i64(t["name"])
    parts = _per_code(codes, words, _transfer_parts, 3)
    return pd.DataFrame(
        {
            "kind": parts[0],
            "bytes": _floats(col.transfer_floats["bytes"]),
            "start_ns": _starts(t["start"], t0),
            "duration_ns": _floats(col.transfer_floats["duration"]),
            "device_id": _int_column(t["device"]),
            "context": _int_column(t["context"]),
            "stream": _int_column(t["stream"]),
            "src_kind": parts[1],
            "dst_kind": parts[2],
            "correlation_id": _int_column(t["corr"]),
        }
    )


def _transfer_parts(name: str) -> tuple[str, str | None, str | None]:
    """``Memcpy HtoD (Pageable -> Device)`` -> (``HtoD``, ``Pageable``, ``Device``);
    ``Memset (Device)`` -> (``memset``, ``Device``, None)."""
    head, _, tail = name.partition("(")
    kinds = [p.strip() for p in tail.rstrip(") ").split("->")] if tail else []
    words = head.split()
    if words and words[0].lower() == "memset":
        return "memset", (kinds[0] if kinds else None), None
    kind = transfer_kind(f"[CUDA memcpy {words[1]}]") if len(words) > 1 else None
    src = kinds[0] if kinds else None
    dst = kinds[1] if len(kinds) > 1 else None
    return kind or "memcpy", src, dst


def api_calls(col: Collector, t0: int, call_ops: np.ndarray) -> pd.DataFrame:
    r = col.runtime
    words: list[str] = col.names.values
    codes, corr = _i64(r["name"]), _i64(r["corr"])
    if col.syncs:
        synced = sorted(col.syncs)
        table = np.array([*(col.syncs[c] for c in synced), None], dtype=object)
        kinds = table[_positions(corr, synced)]  # position -1: the last slot, None
    else:
        (kinds,) = _per_code(codes, words, lambda w: (SYNC_CALLS.get(w),), 1)
    return pd.DataFrame(
        {
            "name": _names(codes, words),
            "start_ns": _starts(r["start"], t0),
            "duration_ns": _floats(col.runtime_floats["duration"]),
            "process_id": _int_column(r["pid"]),
            "thread_id": _int_column(r["tid"]),
            "correlation_id": _int_column(r["corr"]),
            "operator": _names(call_ops, words),
            "sync_kind": pd.array(kinds, dtype="string"),
        }
    )


def devices(header: Mapping[str, Any], used: set[int]) -> pd.DataFrame:
    """The ``deviceProperties`` entries of the devices the trace's GPU activity ran on (every
    entry when none is known)."""
    rows = []
    for props in _device_entries(header):
        device_id = props.get("id")
        if used and device_id not in used:
            continue
        threads = props.get("maxThreadsPerMultiprocessor")
        warp = props.get("warpSize") or 32
        rows.append(
            {
                "device_id": device_id,
                "name": props.get("name"),
                "compute_capability": compute_capability(
                    props.get("computeMajor"), props.get("computeMinor")
                ),
                "sm_count": props.get("numSms"),
                "max_warps_per_sm": threads // warp if isinstance(threads, int) else None,
                "max_threads_per_sm": threads,
                "registers_per_sm": props.get("regsPerMultiprocessor"),
                "shared_bytes_per_sm": props.get("sharedMemPerMultiprocessor"),
            }
        )
    return pd.DataFrame(rows) if rows else schema.empty("devices")


def _device_entries(header: Mapping[str, Any]) -> list[dict[str, Any]]:
    entries = header.get("deviceProperties")
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), int)]


def device_names(header: Mapping[str, Any]) -> dict[int, str]:
    return {
        int(e["id"]): str(e["name"]) for e in _device_entries(header) if e.get("name") is not None
    }


def counter_metrics(
    col: Collector, device_names: Mapping[int, str], has_kernels: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The CUPTI range profiler's counters as ``metrics`` rows (Nsight Compute names, mapped by
    the metric map), and the launches they stand for.

    Without kernel activity in the trace, each range is a launch of its own (no start, no
    duration: the range profiler replays every kernel, like Nsight Compute); with it, the
    counters are per-kernel rows (mean over the kernel's ranges, ``invocations`` = ranges)."""
    rows: list[dict[str, Any]] = []
    launch_rows: list[dict[str, Any]] = []
    if not has_kernels:
        for i, (kernel, device, values) in enumerate(col.counters):
            device_id = device if device != MISSING else None
            name = device_names.get(device) if device_id is not None else None
            launch_rows.append(
                {"launch_id": i, "name": kernel, "device_id": device_id, "device": name}
            )
            for metric, value in values.items():
                rows.append(
                    metric_record(
                        tool="ncu", tool_metric=metric, value=value, unit="", kernel=kernel,
                        launch_id=i, device=name, device_id=device_id,
                        section="cuda_profiler_range",
                    )
                )  # fmt: skip
    else:
        per_kernel: dict[tuple[str, str], list[float]] = {}
        for kernel, _, counted in col.counters:
            for metric, value in counted.items():
                per_kernel.setdefault((kernel, metric), []).append(value)
        for (kernel, metric), found in per_kernel.items():
            rows.append(
                metric_record(
                    tool="ncu", tool_metric=metric, value=sum(found) / len(found), unit="",
                    kernel=kernel, section="cuda_profiler_range", total=sum(found),
                    minimum=min(found), maximum=max(found), invocations=len(found),
                )
            )  # fmt: skip
    metrics = pd.DataFrame(rows) if rows else schema.empty("metrics")
    return metrics, pd.DataFrame(launch_rows) if launch_rows else schema.empty("launches")
