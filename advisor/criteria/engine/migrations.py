"""Unified-memory migrations during each kernel launch, from a trace's transfers (UM_MIGRATION).

A kernel that touches managed memory not resident on its GPU faults, and the driver migrates the
pages while the kernel waits: nsys and nvprof record each migration as a transfer of kind
``UM-HtoD`` (``UM-DtoD`` between GPUs).  The on-demand ones are those migrations to the GPU whose
``cause`` is not a prefetch (``cudaMemPrefetchAsync``) or an eviction; a trace without causes
(nsys CSV, nvprof) counts them all.  Per GPU they form *bursts*: migrations less than
:data:`BURST_GAP_NS` apart belong to one burst, the gaps being the time the driver takes to
service the next batch of faults, during which the faulting warps wait.  Per launch, as shares
of its duration (so that the engine's duration-weighted means over launches are the sums'
ratios, 1 - sum fault / sum duration, without reading each launch's duration again):

* ``launch.um_fault_share`` -- the time of the launch covered by bursts (each from its first
  migration's start to its last one's end, clipped to the launch) over its duration;
* ``launch.um_migrated_bytes_per_s`` -- the bytes of the on-demand migrations that start during
  it over its duration.

Both are NaN (unknown) for a launch without a start time or a duration >= 0, and 0 for a timed
launch during which nothing migrated (a launch of zero duration with migrations: unknown).
Kernels that run at the same time on one GPU (streams) each count the migrations during them:
which of them faulted is not in the trace.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: transfer kinds that bring pages to the GPU a kernel runs on
INBOUND = ("UM-HtoD", "UM-DtoD")
#: causes that are not a kernel's page fault (advisor.schema ``transfers.cause``)
NOT_ON_DEMAND = ("prefetch", "eviction")
#: migrations closer than this are one burst of fault service.  The driver services GPU faults in
#: batches; between two batches the faulting warps wait on the fault buffer's processing, a few
#: hundred microseconds (F07's managed-memory kernel: 64 bursts 0.25-0.29 ms apart, Decision U1)
BURST_GAP_NS = 500_000.0


FAULT_SHARE = "launch.um_fault_share"
MIGRATED_BYTES_PER_S = "launch.um_migrated_bytes_per_s"


def per_launch(launches: pd.DataFrame, transfers: pd.DataFrame) -> dict[str, np.ndarray]:
    """:data:`FAULT_SHARE` and :data:`MIGRATED_BYTES_PER_S` of every ``launches`` row."""
    starts = launches["start_ns"].to_numpy(dtype=float, na_value=np.nan)
    ends = starts + launches["duration_ns"].to_numpy(dtype=float, na_value=np.nan)
    timed = np.isfinite(starts) & np.isfinite(ends) & (ends >= starts)
    demand = _on_demand(transfers)
    if not demand.any() or not timed.any():
        # one value for every launch (a trace without migrations, or no trace): a read-only
        # view of one number where all launches agree, so a million launches cost no memory
        if timed.all() or not timed.any():
            same = np.broadcast_to(0.0 if timed.all() else np.nan, timed.shape)
            return {FAULT_SHARE: same, MIGRATED_BYTES_PER_S: same}
        blank = np.where(timed, 0.0, np.nan)
        return {FAULT_SHARE: blank, MIGRATED_BYTES_PER_S: blank.copy()}
    moved = np.where(timed, 0.0, np.nan)
    fault = np.where(timed, 0.0, np.nan)
    t = transfers[demand]
    t_start = t["start_ns"].to_numpy(dtype=float, na_value=np.nan)
    t_end = t_start + t["duration_ns"].to_numpy(dtype=float, na_value=np.nan)
    t_bytes = t["bytes"].to_numpy(dtype=float, na_value=0.0)
    ok = np.isfinite(t_start) & np.isfinite(t_end) & (t_end >= t_start)
    t_bytes = np.where(np.isfinite(t_bytes) & (t_bytes > 0), t_bytes, 0.0)
    t_dev = _device_codes(t["device_id"])[ok]
    t_start, t_end, t_bytes = t_start[ok], t_end[ok], t_bytes[ok]
    l_dev = _device_codes(launches["device_id"])
    for dev in np.unique(t_dev):
        mine = t_dev == dev
        order = np.argsort(t_start[mine], kind="stable")
        s, e, b = t_start[mine][order], t_end[mine][order], t_bytes[mine][order]
        rows = np.flatnonzero(timed & (l_dev == dev))
        a, z = starts[rows], ends[rows]
        cum = np.concatenate([[0.0], np.cumsum(b)])
        lo = np.searchsorted(s, a, side="left")
        hi = np.searchsorted(s, z, side="left")
        moved[rows] = cum[hi] - cum[lo]  # ends >= starts: hi >= lo
        burst_s, burst_e = bursts(s, e)
        fault[rows] = _covered(burst_s, burst_e, z) - _covered(burst_s, burst_e, a)
    duration = ends - starts
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(fault == 0, 0.0, fault / duration)
        rate = np.where(moved == 0, 0.0, moved / duration * 1e9)
    share = np.where(timed & np.isfinite(share), share, np.nan)
    rate = np.where(timed & np.isfinite(rate), rate, np.nan)
    return {FAULT_SHARE: share, MIGRATED_BYTES_PER_S: rate}


def bursts(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint, ordered (start, end) bursts of intervals sorted by start: a new burst begins
    where an interval starts more than :data:`BURST_GAP_NS` after every earlier one ended."""
    if not len(starts):
        return starts, ends
    reach = np.maximum.accumulate(ends)  # the latest end so far
    head = np.concatenate([[True], starts[1:] - reach[:-1] > BURST_GAP_NS])
    first = np.flatnonzero(head)
    last = np.concatenate([first[1:] - 1, [len(starts) - 1]])
    return starts[first], reach[last]


def _covered(burst_s: np.ndarray, burst_e: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The length of the bursts before time ``t`` (each ``t``): whole bursts that ended, plus
    the part of the one ``t`` falls in."""
    if not len(burst_s):
        return np.zeros(len(t))
    lengths = burst_e - burst_s
    before = np.concatenate([[0.0], np.cumsum(lengths)])
    k = np.searchsorted(burst_s, t, side="right")  # bursts starting at or before t
    inside = np.clip(t - burst_s[np.maximum(k - 1, 0)], 0.0, lengths[np.maximum(k - 1, 0)])
    return np.where(k > 0, before[np.maximum(k - 1, 0)] + inside, 0.0)


def _on_demand(transfers: pd.DataFrame) -> np.ndarray:
    """Rows of ``transfers`` that are on-demand migrations to a GPU."""
    if not len(transfers):
        return np.zeros(0, dtype=bool)
    inbound = transfers["kind"].isin(INBOUND).to_numpy(dtype=bool, na_value=False)
    if "cause" in transfers.columns and inbound.any():
        elsewhere = transfers["cause"].isin(NOT_ON_DEMAND).to_numpy(dtype=bool, na_value=False)
        inbound = inbound & ~elsewhere
    return inbound


def _device_codes(column: pd.Series) -> np.ndarray:
    """Device ids as integers, -1 for a missing one (a launch and a transfer both without an id
    are taken to be on the same GPU)."""
    return column.astype("Int64").to_numpy(dtype=np.int64, na_value=-1)
