"""PyTorch profiler (Kineto) traces: the Chrome-trace JSON ``torch.profiler`` writes.

Registers the format ``kineto``: ``*.pt.trace.json`` / ``*.json.gz`` as ``torch.profiler``
(``tensorboard_trace_handler``, ``export_chrome_trace``) or Kineto's on-demand tracing writes
them, one file per rank.  Recognised from the content: a JSON object whose start names
``traceEvents`` or ``schemaVersion`` with ``deviceProperties``/``distributedInfo``, plain or
gzip-compressed.  It is a binary format for the registry: the file is streamed from its path
(:mod:`parsers.kineto.stream`), never held whole in memory.

What becomes of the events (:mod:`parsers.kineto.events`, :mod:`parsers.kineto.frames`):
``kernel`` -> ``launches`` (with the launching PyTorch operator in ``operator``),
``gpu_memcpy``/``gpu_memset`` -> ``transfers``, ``cuda_runtime``/``cuda_driver`` -> ``api_calls``
(with ``operator`` and ``sync_kind`` from the ``cuda_sync`` events), ``deviceProperties`` ->
``devices``, ``cuda_profiler_range`` counters -> ``metrics`` (their names are Nsight Compute
metric names, mapped by the metric map).

A trace of another accelerator (AMD ROCm: ``hip*`` calls or an AMD device; Meta MTIA:
``mtia_*`` events) and a trace without GPU activity (CPU only) are refused with a message that
says what they hold (exit 3).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from advisor.errors import MalformedInput, NoKernelData, UnrecognisedFormat
from advisor.profile import Profile, Provenance
from parsers.kineto import frames
from parsers.kineto.events import (
    COUNTERS,
    CPU_OP,
    KERNEL,
    MEMCPY,
    MEMSET,
    SYNC,
    Collector,
    EndBeyondInt64,
)
from parsers.kineto.stream import is_gzip, iter_events, read_header, sniff_kineto
from parsers.registry import BinaryFormat, Selection, register

FORMAT = "kineto"
NVIDIA_ONLY = "cuda-advisor reads the traces of NVIDIA (CUDA) GPUs only"


def read_kineto(path: str, selected: Selection) -> Profile:
    """The profile of one Kineto trace (``selected``, the registry's metric selection, is
    applied by :func:`parsers.read`)."""
    header = read_header(path)
    try:
        col = Collector().add_all(iter_events(path))
    except EndBeyondInt64 as exc:  # a time the 64-bit nanosecond columns cannot hold
        raise MalformedInput(
            path, "an event's start plus duration is beyond the 64-bit nanosecond range "
            f"(about 292 years since the epoch): {exc}",
        ) from None  # fmt: skip
    _check_nvidia(path, header, col)
    names = frames.device_names(header)
    t0 = frames.origin(col)
    call_ops = frames.outer_operators(col)
    launches = frames.launches(col, t0, call_ops, names)
    has_kernels = len(launches) > 0
    metrics, counted = frames.counter_metrics(col, names, has_kernels)
    if not has_kernels and len(counted):
        launches = counted
    transfers = frames.transfers(col, t0, call_ops)
    device_ids = pd.concat([launches["device_id"], transfers["device_id"]]).dropna()
    used = {int(d) for d in device_ids.unique()}  # the few distinct ids, not every row
    provenance = Provenance(
        path=path,
        format=FORMAT,
        profiler="kineto",
        modes=_modes(col),
        profiler_version=_version(header),
        notes=tuple(_notes(header, col, launches, path)),
    )
    return Profile(
        provenance=(provenance,),
        launches=launches,
        transfers=transfers,
        api_calls=frames.api_calls(col, t0, call_ops),
        devices=frames.devices(header, used),
        metrics=metrics,
    )


def _modes(col: Collector) -> tuple[str, ...]:
    found = {
        "kernels": len(col.kernels["start"]),
        "transfers": len(col.transfers["start"]),
        "cuda-api": len(col.runtime["start"]),
        "operators": len(col.ops["start"]),
        "cuda-sync": len(col.syncs),
        "cupti-counters": len(col.counters),
    }
    return tuple(mode for mode, count in found.items() if count)


def _version(header: dict[str, Any]) -> str | None:
    schema_version = header.get("schemaVersion")
    return f"trace schema {schema_version}" if schema_version is not None else None


def _notes(header: dict[str, Any], col: Collector, launches: pd.DataFrame, path: str) -> list[str]:
    notes = []
    info = header.get("distributedInfo")
    if isinstance(info, dict) and info.get("rank") is not None:
        size = info.get("world_size")
        notes.append(f"rank {info['rank']}" + (f" of {size}" if size is not None else ""))
    if is_gzip(path):
        notes.append("gzip-compressed")
    if len(col.kernels["start"]):
        notes.append(
            "Kineto's 'shared memory' is static + dynamic shared memory per block: kept whole "
            "as static_shared_bytes"
        )
        without = int(launches["operator"].isna().sum())
        if without:
            notes.append(f"{without:,} of {len(launches):,} launches have no PyTorch operator")
    if col.counters and not len(col.kernels["start"]):
        notes.append(
            f"CUPTI range profiler: {len(col.counters):,} kernels replayed for their counters "
            "(no timeline, as with Nsight Compute)"
        )
    if not col.syncs and len(col.runtime["start"]):
        notes.append("no cuda_sync events: synchronizations are found from the CUDA call names")
    return notes


def _check_nvidia(path: str, header: dict[str, Any], col: Collector) -> None:
    """Refuse a trace of another accelerator, or one without GPU activity, saying what it
    holds."""
    cats = col.categories
    hip = sum(n for name, n in col.runtime_names.items() if name.lower().startswith("hip"))
    devices = [str(d).strip() for d in frames.device_names(header).values()]
    amd = [d for d in devices if "AMD" in d or "Radeon" in d or "Instinct" in d]
    gpu = len(col.kernels["start"]) + len(col.transfers["start"]) + len(col.counters)
    if hip or amd:
        board = f"; device {amd[0]}" if amd else ""
        raise UnrecognisedFormat(
            path,
            f"a PyTorch profiler (Kineto) trace of an AMD GPU (ROCm: {hip:,} hip* API calls, "
            f"{_holding(cats)}{board}); {NVIDIA_ONLY}",
        )
    mtia = {c: n for c, n in cats.items() if c.startswith("mtia")}
    if mtia and not gpu:
        held = ", ".join(f"{n:,} {c}" for c, n in sorted(mtia.items()))
        raise UnrecognisedFormat(
            path,
            f"a PyTorch profiler (Kineto) trace of Meta MTIA accelerators ({held} events, "
            f"{_holding(cats)}), no CUDA activity; {NVIDIA_ONLY}",
        )
    if not gpu:
        raise NoKernelData(
            path,
            f"a PyTorch profiler (Kineto) trace without GPU activity: it holds CPU events only "
            f"({_holding(cats)}); profile with activities=[ProfilerActivity.CPU, "
            "ProfilerActivity.CUDA]",
        )


_LABELS = (
    (KERNEL, "kernels"),
    (MEMCPY, "memcpy"),
    (MEMSET, "memset"),
    (CPU_OP, "CPU operators"),
    ("user_annotation", "user annotations"),
    (SYNC, "syncs"),
    (COUNTERS, "counter ranges"),
)


def _holding(cats: Counter[str]) -> str:
    parts = [f"{cats[c]:,} {label}" for c, label in _LABELS if cats.get(c)]
    return ", ".join(parts) if parts else "no timed events"


register(
    BinaryFormat(
        name=FORMAT,
        profiler="kineto",
        description="PyTorch profiler (Kineto) trace JSON, plain or gzip: kernels with their "
        "PyTorch operators, memcpy/memset, CUDA API calls and syncs, devices, CUPTI counters",
        sniff=sniff_kineto,
        read=read_kineto,
        priority=40,
    )
)
