"""Unified-memory migrations during each kernel launch, from a trace's transfers (UM_MIGRATION).

A kernel that touches managed memory not resident on its GPU faults, and the driver migrates the
pages while the kernel waits: nsys and nvprof record each migration as a transfer of kind
``UM-HtoD`` (``UM-DtoD`` between GPUs).  A migration that *starts while a launch runs on the same
GPU* is counted as that launch's on-demand migration: a prefetch (``cudaMemPrefetchAsync``)
issued in the launch's stream runs before it, so what arrives during the kernel is what the
kernel asked for.  Per launch:

* ``launch.um_migrated_bytes`` -- the bytes of those migrations;
* ``launch.um_fault_ns`` -- from the first one's start to the last one's end (clipped to the
  launch's end): the time the kernel spent with page faults outstanding.

Both are NaN (unknown) for a launch without a start time or duration, and 0 for a timed launch
during which nothing migrated.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: transfer kinds that bring pages to the GPU a kernel runs on
INBOUND = ("UM-HtoD", "UM-DtoD")


def per_launch(launches: pd.DataFrame, transfers: pd.DataFrame) -> dict[str, np.ndarray]:
    """``launch.um_migrated_bytes`` and ``launch.um_fault_ns`` of every ``launches`` row."""
    starts = launches["start_ns"].to_numpy(dtype=float, na_value=np.nan)
    ends = starts + launches["duration_ns"].to_numpy(dtype=float, na_value=np.nan)
    timed = np.isfinite(starts) & np.isfinite(ends)
    kinds = transfers["kind"]
    inbound = kinds.isin(INBOUND).to_numpy(dtype=bool, na_value=False) if len(kinds) else None
    if inbound is None or not inbound.any() or not timed.any():
        # one value for every launch (a trace without migrations, or no trace): a read-only
        # view of one number where all launches agree, so a million launches cost no memory
        if timed.all() or not timed.any():
            same = np.broadcast_to(0.0 if timed.all() else np.nan, timed.shape)
            return {"launch.um_migrated_bytes": same, "launch.um_fault_ns": same}
        blank = np.where(timed, 0.0, np.nan)
        return {"launch.um_migrated_bytes": blank, "launch.um_fault_ns": blank}
    moved = np.where(timed, 0.0, np.nan)
    fault = np.where(timed, 0.0, np.nan)
    out = {"launch.um_migrated_bytes": moved, "launch.um_fault_ns": fault}
    t = transfers[inbound]
    t_start = t["start_ns"].to_numpy(dtype=float, na_value=np.nan)
    t_end = t_start + t["duration_ns"].to_numpy(dtype=float, na_value=np.nan)
    t_bytes = t["bytes"].to_numpy(dtype=float, na_value=0.0)
    ok = np.isfinite(t_start) & np.isfinite(t_end)
    t_dev = _device_codes(t["device_id"])[ok]
    t_bytes = np.where(np.isfinite(t_bytes), t_bytes, 0.0)
    t_start, t_end, t_bytes = t_start[ok], t_end[ok], t_bytes[ok]
    l_dev = _device_codes(launches["device_id"])
    for dev in np.unique(t_dev):
        mine = t_dev == dev
        order = np.argsort(t_start[mine], kind="stable")
        s, e, b = t_start[mine][order], t_end[mine][order], t_bytes[mine][order]
        cum = np.concatenate([[0.0], np.cumsum(b)])
        # the latest end among migrations started so far: for a launch, that of its own ones
        # (an earlier migration still running at its last one's end is counted too, clipped)
        reach = np.maximum.accumulate(e)
        rows = np.flatnonzero(timed & (l_dev == dev))
        lo = np.searchsorted(s, starts[rows], side="left")
        hi = np.searchsorted(s, ends[rows], side="left")
        has = hi > lo
        moved[rows] = cum[hi] - cum[lo]
        if has.any():
            r, a, z = rows[has], lo[has], hi[has]
            fault[r] = np.minimum(reach[z - 1], ends[r]) - s[a]
    return out


def _device_codes(column: pd.Series) -> np.ndarray:
    """Device ids as integers, -1 for a missing one (a launch and a transfer without an id
    belong to the same, only, GPU)."""
    return column.astype("Int64").to_numpy(dtype=np.int64, na_value=-1)
