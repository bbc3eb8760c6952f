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
from advisor.models.timeline.arrays import group_order, lexsort, merged_sequences
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
    """One HtoD → kernel(s) → DtoH workload: its operations' counts, span and busy times."""

    device: str
    streams: tuple[int | None, ...]  # one entry per stream; None where the trace has no stream
    kernels: tuple[str, ...]  # distinct kernel names, first-seen order
    grid_blocks: int | None  # blocks of the largest launch, summed over the merged streams
    start_ns: float  # first start of any of its operations
    end_ns: float  # last end
    htod_ns: float  # t_Thd: time during which at least one HtoD copy runs (:func:`busy_ns`)
    kernel_ns: float  # t_E: time during which at least one kernel runs
    dtoh_ns: float  # t_Tdh: time during which at least one DtoH copy runs
    htod_count: int
    kernel_count: int
    dtoh_count: int

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

    The sequences are cut, merged and measured on arrays (:mod:`advisor.models.timeline.arrays`);
    a trace with a negative duration or a time that is not finite takes the operation-by-operation
    path instead (:func:`_sequences_exact`), which gives the same values for every other trace.
    """
    ops = _operations(profile)
    runs = _runs(ops)
    fast = bool(np.isfinite(ops.start).all() and np.isfinite(ops.end).all())
    fast = fast and bool((ops.end >= ops.start).all())
    found = _sequences_fast(ops, runs) if fast else _sequences_exact(ops, runs)
    counts = np.bincount(ops.rank, minlength=3)
    seen = {HTOD: int(counts[0]), KERNEL: int(counts[1]), DTOH: int(counts[2])}
    if not found:
        listed = ", ".join(f"{seen[k]} {k}" for k in (HTOD, KERNEL, DTOH))
        raise InputError(
            profile.path,
            f"no HtoD copy -> kernel -> DtoH copy sequence in any stream (found {listed}); "
            f"{TRACE_HINT}, of a run that copies inputs, launches kernels and copies results back",
        )
    notes = []
    if any(len(s.streams) > 1 for s in found):
        notes.append("sequences on different streams that overlap in time are merged into one")
    return Timeline(
        sequences=tuple(found),
        unmatched_kernels=seen[KERNEL] - sum(q.kernel_count for q in found),
        unmatched_htod=seen[HTOD] - sum(q.htod_count for q in found),
        unmatched_dtoh=seen[DTOH] - sum(q.dtoh_count for q in found),
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class _Ops:
    """Kernels, HtoD and DtoH copies as arrays in (device, stream, time) order: each
    (device, stream) contiguous, in start-time order within it (a kernel before the DtoH that
    starts with it, after the HtoD)."""

    rank: np.ndarray  # _KIND_RANK of the operation
    place: np.ndarray  # index into ``devices``
    stream: np.ndarray  # stream id, -1 where the trace has none
    start: np.ndarray  # ns
    end: np.ndarray  # ns: start + duration
    name: np.ndarray  # index into ``names`` (kernels), -1 for copies
    blocks: np.ndarray  # grid blocks of a launch (float), NaN for copies or unknown
    devices: list[str]  # device labels, sorted
    names: list[str]  # kernel names


def _operations(profile: Profile) -> _Ops:
    """Kernels, HtoD and DtoH copies of ``profile`` (rows without a start or a duration left
    out), in (device, stream, time) order."""
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
    name_codes, name_values = pd.factorize(launches["name"], use_na_sentinel=False)
    kinds = copies["kind"].to_numpy(dtype=object)
    parts = (launches, copies)
    labels: list[list[str]] = []
    places: list[np.ndarray] = []
    for frame in parts:
        codes, values = pd.factorize(frame["device"])  # NA -> -1: the label ""
        labels.append([str(v) for v in values] + [""])
        places.append(np.where(codes < 0, len(values), codes))
    devices = sorted(set(labels[0] + labels[1]))
    where = {label: i for i, label in enumerate(devices)}
    place = np.concatenate(
        [
            np.array([where[label] for label in frame_labels], dtype=np.int64)[codes]
            for frame_labels, codes in zip(labels, places, strict=True)
        ]
    )
    del places
    rank = np.concatenate(
        [
            np.full(len(launches), _KIND_RANK[KERNEL], dtype=np.int64),
            np.where(kinds == HTOD, _KIND_RANK[HTOD], _KIND_RANK[DTOH]).astype(np.int64),
        ]
    )
    start = np.concatenate([_floats(f["start_ns"]) for f in parts])
    known = np.concatenate([~np.isnan(_floats(f["duration_ns"])) for f in parts])
    rows = np.flatnonzero(~np.isnan(start) & known)
    del known
    # the order is found on the sort keys alone, and each column is then gathered once in
    # that order: the columns are not held both merged and ordered, nor beside the sort's
    # temporaries (a million operations: 8 MB per column)
    time_order = rows[lexsort((rank[rows], start[rows]))]
    del rows
    stream = np.concatenate([f["stream"].to_numpy(dtype=np.int64, na_value=-1) for f in parts])
    order = time_order[group_order(place[time_order], stream[time_order])]
    del time_order
    ops: dict[str, np.ndarray] = {
        "rank": rank[order],
        "place": place[order],
        "stream": stream[order],
        "start": start[order],
    }
    del rank, place, stream, start
    ops["end"] = np.concatenate([_floats(f["duration_ns"]) for f in parts])[order]
    ops["end"] += ops["start"]  # start + duration
    ops["name"] = np.concatenate([name_codes, np.full(len(copies), -1, dtype=np.int64)])[order]
    del name_codes
    ops["blocks"] = np.concatenate([_grid_blocks(launches), np.full(len(copies), np.nan)])[order]
    return _Ops(**ops, devices=devices, names=[str(v) for v in name_values])


def _floats(column: pd.Series) -> np.ndarray:
    """A time column as float64, missing values NaN (no copy when it is float64 already)."""
    return column.to_numpy(dtype=float, na_value=np.nan)


def _grid_blocks(launches: pd.DataFrame) -> np.ndarray:
    """grid_x * grid_y * grid_z of each launch as floats, NaN where a dimension is missing:
    the product taken in int64 (as the ``Int64`` columns multiply) and then made a float."""
    product = np.ones(len(launches), dtype=np.int64)
    missing = np.zeros(len(launches), dtype=bool)
    for dim in ("grid_x", "grid_y", "grid_z"):
        column = launches[dim]
        missing |= column.isna().to_numpy()
        product *= column.to_numpy(dtype=np.int64, na_value=1)
    blocks = product.astype(float)
    blocks[missing] = np.nan
    return blocks


@dataclass(frozen=True)
class _Runs:
    """Runs of ``_Ops``: consecutive operations of one kind in one (device, stream)."""

    heads: np.ndarray  # first operation of each run
    ends: np.ndarray  # one past its last
    first: np.ndarray  # runs that open a sequence: HtoD run, kernel run, DtoH run in a row


def _runs(ops: _Ops) -> _Runs:
    """The runs of ``ops`` and which of them open a sequence (the rule of the module docstring:
    any other run ends or breaks what is open, and its operations belong to no sequence)."""
    kind, place, stream = ops.rank, ops.place, ops.stream
    cut = np.ones(len(kind), dtype=bool)
    cut[1:] = (kind[1:] != kind[:-1]) | (place[1:] != place[:-1]) | (stream[1:] != stream[:-1])
    heads = np.flatnonzero(cut)
    ends = np.concatenate([heads[1:], [len(kind)]]).astype(np.int64)
    first = np.array([], dtype=np.int64)
    if len(heads) >= 3:
        kinds, where, on = kind[heads], place[heads], stream[heads]
        first = np.flatnonzero(
            (where[2:] == where[:-2])
            & (on[2:] == on[:-2])
            & (kinds[:-2] == _KIND_RANK[HTOD])
            & (kinds[1:-1] == _KIND_RANK[KERNEL])
            & (kinds[2:] == _KIND_RANK[DTOH])
        )
    return _Runs(heads, ends, first)


def _sequences_fast(ops: _Ops, runs: _Runs) -> list[Sequence]:
    """:func:`_sequences_exact` on arrays (durations >= 0 and finite times)."""
    if len(runs.first) == 0:
        return []
    cols = merged_sequences(
        ops.rank,
        ops.place,
        ops.stream,
        ops.start,
        ops.end,
        ops.name,
        ops.blocks,
        runs.heads[runs.first],
        runs.ends[runs.first + 2],
    )
    return [
        Sequence(
            device=ops.devices[place],
            streams=streams,
            kernels=tuple(ops.names[i] for i in names),
            grid_blocks=blocks,
            start_ns=start,
            end_ns=end,
            htod_ns=busy[0],
            kernel_ns=busy[1],
            dtoh_ns=busy[2],
            htod_count=counts[0],
            kernel_count=counts[1],
            dtoh_count=counts[2],
        )
        for place, streams, names, blocks, start, end, busy, counts in zip(
            cols.place,
            cols.streams,
            cols.names,
            cols.grid_blocks,
            cols.start_ns,
            cols.end_ns,
            cols.busy_ns,
            cols.counts,
            strict=True,
        )
    ]


# --- the operation-by-operation path: the rule as written (module docstring) ------------------


@dataclass(frozen=True)
class _Intervals:
    """A sequence as lists of its operations' time intervals (before it is measured)."""

    device: str
    streams: tuple[int | None, ...]
    htod: tuple[Interval, ...]
    kernel: tuple[Interval, ...]
    dtoh: tuple[Interval, ...]
    kernels: tuple[str, ...]
    grid_blocks: int | None

    @cached_property
    def start_ns(self) -> float:
        return min(start for start, _ in self.htod + self.kernel + self.dtoh)

    @cached_property
    def end_ns(self) -> float:
        return max(end for _, end in self.htod + self.kernel + self.dtoh)


def _sequences_exact(ops: _Ops, runs: _Runs) -> list[Sequence]:
    """The sequences of every (device, stream), merged where they overlap, measured with
    :func:`busy_ns`, ordered by start (and device)."""
    found: list[_Intervals] = []
    heads, ends = runs.heads, runs.ends
    for r in runs.first.tolist():
        a, k, d, z = int(heads[r]), int(heads[r + 1]), int(heads[r + 2]), int(ends[r + 2])
        known = ops.blocks[k:d][~np.isnan(ops.blocks[k:d])]
        stream_id = int(ops.stream[a])
        found.append(
            _Intervals(
                device=ops.devices[ops.place[a]],
                streams=(None if stream_id < 0 else stream_id,),
                htod=_intervals(ops.start, ops.end, a, k),
                kernel=_intervals(ops.start, ops.end, k, d),
                dtoh=_intervals(ops.start, ops.end, d, z),
                kernels=tuple(dict.fromkeys(ops.names[i] for i in ops.name[k:d].tolist())),
                grid_blocks=int(known.max()) if len(known) else None,
            )
        )
    return [
        Sequence(
            device=q.device,
            streams=q.streams,
            kernels=q.kernels,
            grid_blocks=q.grid_blocks,
            start_ns=q.start_ns,
            end_ns=q.end_ns,
            htod_ns=busy_ns(q.htod),
            kernel_ns=busy_ns(q.kernel),
            dtoh_ns=busy_ns(q.dtoh),
            htod_count=len(q.htod),
            kernel_count=len(q.kernel),
            dtoh_count=len(q.dtoh),
        )
        for q in _merge_overlapping(found)
    ]


def _intervals(start: np.ndarray, end: np.ndarray, a: int, b: int) -> tuple[Interval, ...]:
    return tuple(zip(start[a:b].tolist(), end[a:b].tolist(), strict=True))


def _merge_overlapping(sequences: list[_Intervals]) -> list[_Intervals]:
    """Merge sequences of one device whose spans overlap (already streamed); order by start."""
    groups: list[list[_Intervals]] = []
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


def _stream_sort(seq: _Intervals) -> int:
    first = seq.streams[0]
    return -1 if first is None else first


def _combine(group: list[_Intervals]) -> _Intervals:
    """One sequence of ``group`` (sequences of one device, in merge order)."""
    blocks = [q.grid_blocks for q in group]
    return _Intervals(
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
