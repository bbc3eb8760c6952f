"""Communication kernels (NCCL, RCCL, MSCCL collectives and send/recv): which kernels they are,
and how much of their time the GPU computes alongside.

Classification, the one place every part of the advisor asks (the criteria, the report, the
host view), for every input format: a kernel is a communication kernel when

* its name holds ``nccl``, ``rccl`` or ``msccl`` in any case (``ncclKernel_SendRecv_…``,
  ``ncclDevKernel_AllReduce_Sum_f32_RING_LL``, ``void rcclKernel…``, ``mscclKernel_…``): the
  rule of Holistic Trace Analysis (HTA), whose kernel type is *communication* when the name holds
  ``nccl``; or
* the trace names the collective it runs (``launches.collective``: a Kineto kernel's
  ``Collective name`` arg, which PyTorch copies from the ``record_param_comms`` operator that
  launched it).

A communication kernel waits for its peers: its duration, grid and occupancy say how long the
other ranks took to arrive and how NCCL sized its channels, not how well the kernel uses the GPU.
The launch-configuration and occupancy criteria are therefore not applicable to it
(:data:`NOT_FOR_COMMUNICATION`, :mod:`advisor.criteria`).

Overlap (per device, then summed over devices; docs/kineto.md): *communication time* is the union
of the communication kernels' intervals, *overlapped* the part of it during which a computation
kernel (any other kernel; copies and memsets are not computation, as in HTA) runs on the same
device, *exposed* the rest.  HTA's ``get_comm_comp_overlap`` gives overlapped / communication
time with communication time the *sum* of the kernels' durations; with one communication kernel at
a time (one NCCL stream) the two are the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor import schema
from advisor.models.host import blocks
from advisor.profile import Profile

#: kernel names of the communication libraries (HTA: "nccl" in the name; RCCL and MSCCL too)
NAME_PATTERN = re.compile(r"nccl|rccl|msccl", re.IGNORECASE)

#: criteria that judge a kernel's launch configuration or occupancy: not applicable to a
#: communication kernel (module docstring)
NOT_FOR_COMMUNICATION = ("LOADBALANC_SM", "LOADBALANC_WARP", "THROUGHPUT_OCCUPANCY")

#: the note of those criteria on a communication kernel
NOT_APPLICABLE_NOTE = (
    "communication kernel (NCCL/RCCL collective or send/recv): its grid, block and occupancy "
    "are sized by the library for its channels, and its time is mostly waiting for the other "
    "ranks, so launch configuration and occupancy say nothing about it"
)


def is_communication_name(name: object) -> bool:
    """Whether a kernel name is that of a communication library's kernel (:data:`NAME_PATTERN`).

    An ASCII name is lowered and searched for the pattern's three words: the same answer (no
    other ASCII letter matches them ignoring case), about eight times faster than the case-blind
    pattern (benchmarks/bench_scale.py, ``nsys-distinct-names-csv``: 900,000 names, 2.1 ->
    0.24 s).  Any other name is searched with the pattern, whose case folding also matches
    letters such as the long s (U+017F)."""
    if not isinstance(name, str):
        return False
    if name.isascii():
        lowered = name.lower()
        return "nccl" in lowered or "rccl" in lowered or "msccl" in lowered
    return NAME_PATTERN.search(name) is not None


def communication_mask(launches: pd.DataFrame) -> np.ndarray:
    """Per row of a ``launches`` frame, whether it is a communication kernel (module
    docstring); names are looked at once per distinct name."""
    if launches.empty:
        return np.zeros(0, dtype=bool)
    names = launches["name"]
    if isinstance(names.dtype, pd.CategoricalDtype):  # the schema's: its codes, no object copy
        codes, uniques = names.cat.codes.to_numpy(), names.cat.categories
    else:
        codes, uniques = schema.factorize(names.astype("object"), use_na_sentinel=True)
    table = np.array([is_communication_name(u) for u in uniques] + [False], dtype=bool)
    mask = table[codes]  # code -1 (no name) reads the last slot
    if "collective" in launches.columns:
        mask = mask | launches["collective"].notna().to_numpy(dtype=bool)
    return np.asarray(mask, dtype=bool)


def communication_kernels(profile: Profile) -> frozenset[str]:
    """The names of the profile's communication kernels (launches and per-kernel summaries)."""
    launches = profile.launches
    names: set[str] = set()
    if len(launches):
        names = set(launches["name"][communication_mask(launches)].astype(str))
    names |= {n for n in _summary_names(profile) if is_communication_name(n)}
    return frozenset(names)


def _summary_names(profile: Profile) -> Iterable[str]:
    summary = profile.kernel_summary
    return summary["name"].dropna().astype(str).unique() if len(summary) else ()


@dataclass(frozen=True)
class DeviceCommunication:
    """Communication on one device (times in ns)."""

    device_id: int | None
    launches: int
    kernel_time_ns: float  # sum of the communication kernels' durations
    communication_ns: float  # union of their intervals
    overlapped_ns: float  # part of the union during which a computation kernel runs
    span_ns: float  # first GPU kernel start to last kernel end on the device

    @property
    def exposed_ns(self) -> float:
        return self.communication_ns - self.overlapped_ns

    @property
    def overlap_frac(self) -> float | None:
        return self.overlapped_ns / self.communication_ns if self.communication_ns > 0 else None


@dataclass(frozen=True)
class Communication:
    """The communication kernels of a profile with a timeline: per device and in total."""

    devices: tuple[DeviceCommunication, ...]
    kernels: tuple[str, ...]  # their names, sorted
    gpu_time_ns: float  # all kernels' durations (the share's denominator)

    @property
    def launches(self) -> int:
        return sum(d.launches for d in self.devices)

    @property
    def kernel_time_ns(self) -> float:
        return sum(d.kernel_time_ns for d in self.devices)

    @property
    def communication_ns(self) -> float:
        return sum(d.communication_ns for d in self.devices)

    @property
    def overlapped_ns(self) -> float:
        return sum(d.overlapped_ns for d in self.devices)

    @property
    def exposed_ns(self) -> float:
        return self.communication_ns - self.overlapped_ns

    @property
    def overlap_frac(self) -> float | None:
        total = self.communication_ns
        return self.overlapped_ns / total if total > 0 else None

    @property
    def share_of_gpu_time(self) -> float | None:
        return self.kernel_time_ns / self.gpu_time_ns if self.gpu_time_ns > 0 else None

    @property
    def span_ns(self) -> float:
        return sum(d.span_ns for d in self.devices)

    def to_json(self) -> dict[str, object]:
        """Plain JSON values (times in ns); ``communication_ns``, ``overlapped_ns`` and
        ``exposed_ns`` are unions over time, each at most the span."""
        return {
            "launches": self.launches,
            "kernels": list(self.kernels),
            "kernel_time_ns": self.kernel_time_ns,
            "share_of_gpu_time": self.share_of_gpu_time,
            "communication_ns": self.communication_ns,
            "overlapped_ns": self.overlapped_ns,
            "exposed_ns": self.exposed_ns,
            "overlap_frac": self.overlap_frac,
            "span_ns": self.span_ns,
            "devices": [
                {
                    "device_id": d.device_id,
                    "launches": d.launches,
                    "kernel_time_ns": d.kernel_time_ns,
                    "communication_ns": d.communication_ns,
                    "overlapped_ns": d.overlapped_ns,
                    "exposed_ns": d.exposed_ns,
                    "overlap_frac": d.overlap_frac,
                    "span_ns": d.span_ns,
                }
                for d in self.devices
            ],
        }


def intersection_ns(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """Length of the intersection of two unions of sorted disjoint blocks: each block of ``a``
    reads how much of ``b`` lies before its end minus how much lies before its start."""
    (a_s, a_e), (b_s, b_e) = a, b
    if not len(a_s) or not len(b_s):
        return 0.0
    before = np.concatenate([[0.0], np.cumsum(b_e - b_s)])  # b's length in blocks 0..i-1

    def covered(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(b_s, x, side="right") - 1  # the last b block starting at or before x
        j = np.maximum(i, 0)
        part = np.clip(np.minimum(x, b_e[j]) - b_s[j], 0.0, None)
        return np.where(i >= 0, before[j] + part, 0.0)

    return float((covered(a_e) - covered(a_s)).sum())


def communication(profile: Profile) -> Communication | None:
    """The communication figures of a profile whose launches have a timeline; None when it has
    no timed communication kernel (the report then says nothing about communication)."""
    launches = profile.launches
    if launches.empty:
        return None
    timed = launches["start_ns"].notna().to_numpy() & launches["duration_ns"].notna().to_numpy()
    comm = communication_mask(launches) & timed
    if not comm.any():
        return None
    start = launches["start_ns"].to_numpy(float)
    end = start + launches["duration_ns"].to_numpy(float)
    device = launches["device_id"].astype("Float64").fillna(-1).to_numpy(float)
    devices = []
    for dev in np.unique(device[timed]):
        on = timed & (device == dev)
        c, k = on & comm, on & ~comm
        if not c.any():
            continue
        comm_blocks = blocks(start[c], end[c])
        comp_blocks = blocks(start[k], end[k])
        union = float((comm_blocks[1] - comm_blocks[0]).sum())
        devices.append(
            DeviceCommunication(
                device_id=None if dev < 0 else int(dev),
                launches=int(c.sum()),
                kernel_time_ns=float((end[c] - start[c]).sum()),
                communication_ns=union,
                overlapped_ns=min(intersection_ns(comm_blocks, comp_blocks), union),
                span_ns=float(end[on].max() - start[on].min()),
            )
        )
    names = tuple(sorted(set(launches["name"][comm].astype(str))))
    gpu = float(launches["duration_ns"][timed].sum())
    return Communication(devices=tuple(devices), kernels=names, gpu_time_ns=gpu)
