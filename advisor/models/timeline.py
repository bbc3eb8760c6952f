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
from collections.abc import Iterator
from dataclasses import dataclass, field

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

    @property
    def htod_ns(self) -> float:
        """t_Thd: time during which at least one HtoD copy runs (:func:`busy_ns`)."""
        return busy_ns(self.htod)

    @property
    def kernel_ns(self) -> float:
        """t_E: time during which at least one kernel runs."""
        return busy_ns(self.kernel)

    @property
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

    @property
    def start_ns(self) -> float:
        return min(start for start, _ in self.htod + self.kernel + self.dtoh)

    @property
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


@dataclass
class _Open:
    """A sequence being built (mutable, internal)."""

    device: str
    stream: int | None
    intervals: dict[str, list[Interval]] = field(
        default_factory=lambda: {HTOD: [], KERNEL: [], DTOH: []}
    )
    kernels: list[str] = field(default_factory=list)
    grid_blocks: int | None = None

    def add(self, row: pd.Series) -> None:
        kind = str(row["op"])
        start = float(row["start_ns"])
        self.intervals[kind].append((start, start + float(row["duration_ns"])))
        if kind == KERNEL:
            name = str(row["name"])
            if name not in self.kernels:
                self.kernels.append(name)
            blocks = row["blocks"]
            if not pd.isna(blocks):
                self.grid_blocks = max(self.grid_blocks or 0, int(blocks))

    def close(self) -> Sequence:
        return Sequence(
            device=self.device,
            streams=(self.stream,),
            htod=tuple(self.intervals[HTOD]),
            kernel=tuple(self.intervals[KERNEL]),
            dtoh=tuple(self.intervals[DTOH]),
            kernels=tuple(self.kernels),
            grid_blocks=self.grid_blocks,
        )


def find_sequences(profile: Profile) -> Timeline:
    """Sequences of ``profile`` by the rule in the module docstring, ordered by start time.

    Raises :class:`InputError` (exit 3) naming what trace is needed when the profile has no
    start times, no HtoD/DtoH copies, or no complete sequence.
    """
    ops = _operations(profile)
    found: list[Sequence] = []
    unmatched = {HTOD: 0, KERNEL: 0, DTOH: 0}
    keys = ops[["device", "stream_key"]].drop_duplicates().sort_values(["device", "stream_key"])
    for device, stream in keys.itertuples(index=False):
        group = ops[(ops["device"] == device) & (ops["stream_key"] == stream)]
        stream_id = None if int(stream) < 0 else int(stream)
        for item in _scan_stream(group, str(device), stream_id):
            if isinstance(item, Sequence):
                found.append(item)
            else:
                unmatched[item] += 1
    if not found:
        counts = ops["op"].value_counts()
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


def _scan_stream(ops: pd.DataFrame, device: str, stream: int | None) -> Iterator[Sequence | str]:
    """Yield the closed sequences of one stream, and the op kind of every unmatched operation."""
    current: _Open | None = None
    phase = ""  # "" (nothing open), HTOD, KERNEL or DTOH: the kind of the last op taken
    for _, row in ops.iterrows():
        op = str(row["op"])
        if op == HTOD:
            if phase in (KERNEL, DTOH) and current is not None:
                yield from _finish(current, phase)
                current, phase = None, ""
            if current is None:
                current = _Open(device=device, stream=stream)
            current.add(row)
            phase = HTOD
        elif op == KERNEL and phase in (HTOD, KERNEL) and current is not None:
            current.add(row)
            phase = KERNEL
        elif op == DTOH and phase in (KERNEL, DTOH) and current is not None:
            current.add(row)
            phase = DTOH
        else:  # a kernel with no HtoD before it, or a DtoH with no kernel before it
            if current is not None:
                yield from _finish(current, phase)
            current, phase = None, ""
            yield op
    if current is not None:
        yield from _finish(current, phase)


def _finish(current: _Open, phase: str) -> Iterator[Sequence | str]:
    """Close ``current``: a sequence when it reached its DtoH phase, else its ops are unmatched."""
    if phase == DTOH:
        yield current.close()
        return
    for kind, intervals in current.intervals.items():
        for _ in intervals:
            yield kind


def merge_overlapping(sequences: list[Sequence]) -> list[Sequence]:
    """Merge sequences of one device whose spans overlap (already streamed); order by start."""
    out: list[Sequence] = []
    for seq in sorted(sequences, key=lambda s: (s.device, s.start_ns, _stream_sort(s))):
        last = out[-1] if out else None
        if last is not None and last.device == seq.device and seq.start_ns < last.end_ns:
            out[-1] = _combine(last, seq)
        else:
            out.append(seq)
    return sorted(out, key=lambda s: (s.start_ns, s.device))


def _stream_sort(seq: Sequence) -> int:
    first = seq.streams[0]
    return -1 if first is None else first


def _combine(a: Sequence, b: Sequence) -> Sequence:
    kernels = list(a.kernels) + [k for k in b.kernels if k not in a.kernels]
    blocks = (
        None
        if a.grid_blocks is None and b.grid_blocks is None
        else ((a.grid_blocks or 0) + (b.grid_blocks or 0))
    )
    return Sequence(
        device=a.device,
        streams=tuple(sorted(set(a.streams) | set(b.streams), key=_none_first)),
        htod=a.htod + b.htod,
        kernel=a.kernel + b.kernel,
        dtoh=a.dtoh + b.dtoh,
        kernels=tuple(kernels),
        grid_blocks=blocks,
    )


def _none_first(stream: int | None) -> float:
    return -math.inf if stream is None else float(stream)
