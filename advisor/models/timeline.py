"""Stream-able HtoD → kernel → DtoH sequences found in a GPU timeline (input of seed 004's models).

Seed 004 §2 describes the unit its models split into streams: "one memory copy from host to
device, which transfers input data; one kernel launch, which uses these input data; and one memory
copy from device to host, which transfers results".  :func:`find_sequences` finds that shape in a
:class:`~advisor.profile.Profile` that has a timeline (``launches.start_ns`` and ``transfers`` with
kinds ``HtoD`` / ``DtoH``: nvprof ``--print-gpu-trace``, nsys ``cuda_gpu_trace``, nvprof or nsys
SQLite).

The rule, per (device, stream), over kernels, HtoD and DtoH copies in start-time order:

1. a sequence opens with one or more consecutive HtoD copies,
2. continues with one or more kernel launches,
3. and closes with one or more DtoH copies; the next HtoD or kernel ends it.

t_Thd, t_E and t_Tdh of a sequence are the busy times of its HtoD copies, kernels and DtoH copies
(:func:`busy_ns`: the sum of their durations within one stream).

A kernel that follows no HtoD run, a DtoH that follows no kernel, and an HtoD run followed
directly by a DtoH belong to no sequence (they are counted in :class:`Timeline`).  Other transfer
kinds (memset, DtoD, PtoP, unified-memory migrations) are ignored: they neither count in a
sequence nor break one.  Sequences of *different* streams of one device whose time spans overlap
are one workload that the application has already split over streams; they are merged into one
:class:`Sequence` whose ``streams`` lists them all (its stage times are the busy times over all of
them, its measured time the merged span).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from advisor.errors import InputError
from advisor.profile import Profile

HTOD = "HtoD"
DTOH = "DtoH"
KERNEL = "kernel"
#: at equal start times, order a kernel before the DtoH that reads its result and after an HtoD
_KIND_RANK = {HTOD: 0, KERNEL: 1, DTOH: 2}

TRACE_HINT = (
    "the streams model needs a GPU timeline with start times and memcpy rows: "
    "nvprof --print-gpu-trace --csv, nsys stats --report cuda_gpu_trace, "
    "or an nvprof / nsys SQLite export"
)


Interval = tuple[float, float]  # (start_ns, end_ns)


@dataclass(frozen=True)
class Sequence:
    """One HtoD → kernel(s) → DtoH workload with the time intervals of its operations."""

    device: str
    streams: tuple[int | None, ...]  # one entry per stream; None where the trace has no stream
    htod: tuple[Interval, ...]
    kernel: tuple[Interval, ...]
    dtoh: tuple[Interval, ...]
    kernels: tuple[str, ...]  # distinct kernel names, first-seen order
    grid_blocks: int | None  # blocks of the largest launch, summed over the merged streams

    @cached_property
    def htod_ns(self) -> float:
        """t_Thd: time during which at least one HtoD copy runs (:func:`busy_ns`)."""
        return busy_ns(self.htod)

    @cached_property
    def kernel_ns(self) -> float:
        """t_E: time during which at least one kernel runs."""
        return busy_ns(self.kernel)

    @cached_property
    def dtoh_ns(self) -> float:
        """t_Tdh: time during which at least one DtoH copy runs."""
        return busy_ns(self.dtoh)

    @property
    def htod_count(self) -> int:
        return len(self.htod)

    @property
    def kernel_count(self) -> int:
        return len(self.kernel)

    @property
    def dtoh_count(self) -> int:
        return len(self.dtoh)

    @cached_property
    def start_ns(self) -> float:
        return min(start for start, _ in self.htod + self.kernel + self.dtoh)

    @cached_property
    def end_ns(self) -> float:
        return max(end for _, end in self.htod + self.kernel + self.dtoh)

    @property
    def measured_ns(self) -> float:
        """Wall time of the sequence in the trace: first start to last end."""
        return self.end_ns - self.start_ns


def busy_ns(intervals: tuple[Interval, ...]) -> float:
    """Length of the union of ``intervals``.

    Within one stream operations do not overlap and this is the sum of their durations; in a
    merged multi-stream sequence, copies of one direction (or concurrent kernels) that run at the
    same time share the copy engine (or the SMs), so the union, not the sum, is the stage's time.
    """
    total = 0.0
    run_start, run_end = -math.inf, -math.inf
    for start, end in sorted(intervals):
        if start > run_end:
            total += max(0.0, run_end - run_start) if math.isfinite(run_start) else 0.0
            run_start, run_end = start, end
        else:
            run_end = max(run_end, end)
    if math.isfinite(run_start):
        total += run_end - run_start
    return total


@dataclass(frozen=True)
class Timeline:
    """The sequences of a profile and what was left out of them."""

    sequences: tuple[Sequence, ...]
    unmatched_kernels: int = 0
    unmatched_htod: int = 0
    unmatched_dtoh: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


def find_sequences(profile: Profile) -> Timeline:
    """Sequences of ``profile`` by the rule in the module docstring, ordered by start time.

    Raises :class:`InputError` (exit 3) naming what trace is needed when the profile has no
    start times, no HtoD/DtoH copies, or no complete sequence.
    """
    ops = _operations(profile)
    found = _scan(ops)
    matched = {
        HTOD: sum(len(q.htod) for q in found),
        KERNEL: sum(len(q.kernel) for q in found),
        DTOH: sum(len(q.dtoh) for q in found),
    }
    counts = ops["op"].value_counts()
    unmatched = {k: int(counts.get(k, 0)) - matched[k] for k in matched}
    if not found:
        seen = ", ".join(f"{int(counts.get(k, 0))} {k}" for k in (HTOD, KERNEL, DTOH))
        raise InputError(
            profile.path,
            f"no HtoD copy -> kernel -> DtoH copy sequence in any stream (found {seen}); "
            f"{TRACE_HINT}, of a run that copies inputs, launches kernels and copies results back",
        )
    merged = merge_overlapping(found)
    notes = []
    if any(len(s.streams) > 1 for s in merged):
        notes.append("sequences on different streams that overlap in time are merged into one")
    return Timeline(
        sequences=tuple(merged),
        unmatched_kernels=unmatched[KERNEL],
        unmatched_htod=unmatched[HTOD],
        unmatched_dtoh=unmatched[DTOH],
        notes=tuple(notes),
    )


def _operations(profile: Profile) -> pd.DataFrame:
    """Kernels, HtoD and DtoH copies as one frame (op, device, stream_key, start_ns, ...)."""
    launches = profile.launches
    transfers = profile.transfers
    copies = transfers[transfers["kind"].isin([HTOD, DTOH])]
    if len(launches) == 0 and len(copies) == 0:
        summaries = len(profile.kernel_summary) or len(profile.transfer_summary)
        what = "only summaries, no timeline" if summaries else "no kernel launches or copies"
        raise InputError(profile.path, f"the file holds {what}; {TRACE_HINT}")
    if len(launches) and launches["start_ns"].isna().all():
        raise InputError(
            profile.path,
            f"the kernel launches have no start times (a summary or metrics export); {TRACE_HINT}",
        )
    if len(copies) == 0:
        raise InputError(profile.path, f"no host<->device copies in the timeline; {TRACE_HINT}")
    kernels = pd.DataFrame(
        {
            "op": KERNEL,
            "name": launches["name"],
            "device": launches["device"],
            "stream": launches["stream"],
            "start_ns": launches["start_ns"],
            "duration_ns": launches["duration_ns"],
            "blocks": launches["grid_x"] * launches["grid_y"] * launches["grid_z"],
        }
    )
    moves = pd.DataFrame(
        {
            "op": copies["kind"],
            "name": copies["kind"],
            "device": copies["device"],
            "stream": copies["stream"],
            "start_ns": copies["start_ns"],
            "duration_ns": copies["duration_ns"],
            "blocks": pd.array([pd.NA] * len(copies), dtype="Int64"),
        }
    )
    frames = [f for f in (kernels, moves) if len(f)]
    ops = pd.concat(frames, ignore_index=True)
    ops = ops.dropna(subset=["start_ns", "duration_ns"])
    ops["device"] = ops["device"].fillna("").astype(str)
    ops["stream_key"] = ops["stream"].astype("Int64").fillna(-1).astype(int)
    ops["rank"] = ops["op"].map(_KIND_RANK).astype(int)
    return ops.sort_values(["start_ns", "rank"], kind="stable").reset_index(drop=True)


def _scan(ops: pd.DataFrame) -> list[Sequence]:
    """The sequences of every (device, stream), streams in (device, stream) order, each in time
    order, on arrays: ``ops`` (time-ordered) cut into runs of one kind; a sequence is an HtoD run
    followed directly by a kernel run and a DtoH run (the rule of the module docstring: any other
    run ends or breaks what is open, and its operations belong to no sequence)."""
    device = ops["device"].to_numpy(dtype=object)
    stream = ops["stream_key"].to_numpy(dtype=np.int64)
    dev_codes, devices = pd.factorize(pd.Series(device), sort=True)
    labels = [str(d) for d in devices]
    order = np.lexsort((stream, dev_codes))  # stable: time order within a stream
    kind = ops["rank"].to_numpy(dtype=np.int64)[order]
    place = dev_codes[order].astype(np.int64)
    key_stream = stream[order]
    # a run: consecutive operations of one kind in one (device, stream)
    cut = np.ones(len(order), dtype=bool)
    cut[1:] = (kind[1:] != kind[:-1]) | (place[1:] != place[:-1])
    cut[1:] |= key_stream[1:] != key_stream[:-1]
    heads = np.flatnonzero(cut)
    ends = np.concatenate([heads[1:], [len(order)]])
    first = np.array([], dtype=np.int64)
    if len(heads) >= 3:
        kinds, where, on = kind[heads], place[heads], key_stream[heads]
        first = np.flatnonzero(
            (where[2:] == where[:-2])
            & (on[2:] == on[:-2])
            & (kinds[:-2] == _KIND_RANK[HTOD])
            & (kinds[1:-1] == _KIND_RANK[KERNEL])
            & (kinds[2:] == _KIND_RANK[DTOH])
        )
    start = ops["start_ns"].to_numpy(dtype=float)[order]
    end = start + ops["duration_ns"].to_numpy(dtype=float)[order]
    names = ops["name"].to_numpy(dtype=object)[order]
    blocks = ops["blocks"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)[order]
    out: list[Sequence] = []
    for r in first.tolist():
        a, k, d, z = int(heads[r]), int(heads[r + 1]), int(heads[r + 2]), int(ends[r + 2])
        known = blocks[k:d][~np.isnan(blocks[k:d])]
        stream_id = int(key_stream[a])
        out.append(
            Sequence(
                device=labels[place[a]],
                streams=(None if stream_id < 0 else stream_id,),
                htod=_intervals(start, end, a, k),
                kernel=_intervals(start, end, k, d),
                dtoh=_intervals(start, end, d, z),
                kernels=tuple(dict.fromkeys(str(n) for n in names[k:d].tolist())),
                grid_blocks=int(known.max()) if len(known) else None,
            )
        )
    return out


def _intervals(start: np.ndarray, end: np.ndarray, a: int, b: int) -> tuple[Interval, ...]:
    return tuple(zip(start[a:b].tolist(), end[a:b].tolist(), strict=True))


def merge_overlapping(sequences: list[Sequence]) -> list[Sequence]:
    """Merge sequences of one device whose spans overlap (already streamed); order by start."""
    groups: list[list[Sequence]] = []
    group_end = 0.0
    for seq in sorted(sequences, key=lambda s: (s.device, s.start_ns, _stream_sort(s))):
        last = groups[-1] if groups else None
        if last is not None and last[0].device == seq.device and seq.start_ns < group_end:
            last.append(seq)
            group_end = max(group_end, seq.end_ns)
        else:
            groups.append([seq])
            group_end = seq.end_ns
    out = [group[0] if len(group) == 1 else _combine(group) for group in groups]
    return sorted(out, key=lambda s: (s.start_ns, s.device))


def _stream_sort(seq: Sequence) -> int:
    first = seq.streams[0]
    return -1 if first is None else first


def _combine(group: list[Sequence]) -> Sequence:
    """One sequence of ``group`` (sequences of one device, in merge order)."""
    blocks = [q.grid_blocks for q in group]
    return Sequence(
        device=group[0].device,
        streams=tuple(sorted({s for q in group for s in q.streams}, key=_none_first)),
        htod=tuple(i for q in group for i in q.htod),
        kernel=tuple(i for q in group for i in q.kernel),
        dtoh=tuple(i for q in group for i in q.dtoh),
        kernels=tuple(dict.fromkeys(k for q in group for k in q.kernels)),
        grid_blocks=None if all(b is None for b in blocks) else sum(b or 0 for b in blocks),
    )


def _none_first(stream: int | None) -> float:
    return -math.inf if stream is None else float(stream)
