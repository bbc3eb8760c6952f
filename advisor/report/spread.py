"""The spread of each kernel's launch times: mean, median, minimum, maximum and standard deviation
per launch, as the report's kernel table shows them.

A kernel summary (``Profile.kernel_summary``: nsys ``cuda_gpu_kern_sum`` and
``cuda_gpu_kern_gb_sum``, nvprof's summary) states them; several rows of one kernel (one per
device, per grid and block shape, or per merged file) are combined exactly: the calls and total
time add up, the minimum and maximum are the extremes, the standard deviation is pooled from each
row's mean and deviation, and the median, which rows cannot be combined into, is left out.  A
kernel without a summary row gets them from its launches in a trace (``Profile.launches``, sample
standard deviation).  A figure the input does not give stays ``None``: nvprof's summary has no
median or deviation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from advisor.profile import Profile


@dataclass(frozen=True)
class Spread:
    """A kernel's time per launch over its launches (``None``: the input does not say)."""

    launches: int
    avg_ns: float | None
    median_ns: float | None
    min_ns: float | None
    max_ns: float | None
    stddev_ns: float | None
    source: str  # "summary" | "trace"

    @property
    def widely_varying(self) -> bool:
        """The standard deviation exceeds the mean: a few launches take far longer than most."""
        return (
            self.stddev_ns is not None and self.avg_ns is not None and self.stddev_ns > self.avg_ns
        )


def spreads(profile: Profile) -> dict[str, Spread]:
    """Kernel name -> its spread, from the summary where it has the kernel, else the trace."""
    out = dict(_from_trace(profile.launches))
    out.update(_from_summary(profile.kernel_summary))
    return out


def _from_summary(summary: pd.DataFrame) -> dict[str, Spread]:
    if not len(summary):
        return {}
    out = {}
    for name, rows in summary.groupby("name", sort=False, observed=True):
        spread = _combined(rows)
        if spread is not None:
            out[str(name)] = spread
    return out


def _combined(rows: pd.DataFrame) -> Spread | None:
    """One spread from a kernel's summary rows; None when no row counts its calls."""
    rows = rows[rows["calls"].notna() & (rows["calls"] > 0)]
    if not len(rows):
        return None
    calls = [int(c) for c in rows["calls"]]
    n = sum(calls)
    avgs = [_avg(a, t, c) for a, t, c in zip(rows["avg_ns"], rows["total_ns"], calls, strict=True)]
    known = [(a, c) for a, c in zip(avgs, calls, strict=True) if a is not None]
    avg = sum(a * c for a, c in known) / n if len(known) == len(avgs) else None
    one = len(rows) == 1
    return Spread(
        launches=n,
        avg_ns=_finite(avg),
        median_ns=_finite(rows["median_ns"].iloc[0]) if one else None,
        min_ns=_finite(rows["min_ns"].min(skipna=False)),
        max_ns=_finite(rows["max_ns"].max(skipna=False)),
        stddev_ns=(
            _finite(rows["stddev_ns"].iloc[0])
            if one
            else _pooled(calls, avgs, list(rows["stddev_ns"]), avg)
        ),
        source="summary",
    )


def _avg(avg: object, total: object, calls: int) -> float | None:
    """A summary row's mean per launch: its ``avg_ns``, else total / calls."""
    mean = _finite(avg)
    if mean is None:
        whole = _finite(total)
        mean = whole / calls if whole is not None else None
    return mean


def _pooled(
    calls: list[int], avgs: list[float | None], stds: list[object], avg: float | None
) -> float | None:
    """The sample standard deviation of the union of groups, from each group's count, mean and
    sample deviation: (Σ (n_i − 1) s_i² + Σ n_i (m_i − m)²) / (N − 1)."""
    n = sum(calls)
    devs = [_finite(s) for s in stds]
    if avg is None or n < 2 or any(d is None for d in devs) or None in avgs:
        return None
    within = sum((c - 1) * d * d for c, d in zip(calls, devs, strict=True) if d is not None)
    between = sum(c * (a - avg) ** 2 for c, a in zip(calls, avgs, strict=True) if a is not None)
    return math.sqrt((within + between) / (n - 1))


def _from_trace(launches: pd.DataFrame) -> Mapping[str, Spread]:
    timed = launches.loc[launches["duration_ns"].notna(), ["name", "duration_ns"]]
    if not len(timed):
        return {}
    stats = timed.groupby("name", observed=True)["duration_ns"].agg(
        ["count", "mean", "median", "min", "max", "std"]
    )
    columns = [stats[c].to_numpy(dtype=float).tolist() for c in ("mean", "median", "min", "max")]
    counts, stds = stats["count"].to_numpy().tolist(), stats["std"].to_numpy(dtype=float).tolist()
    return {  # column by column: a trace can name a hundred thousand kernels
        str(name): Spread(
            launches=int(count),
            avg_ns=_finite(mean),
            median_ns=_finite(median),
            min_ns=_finite(low),
            max_ns=_finite(high),
            stddev_ns=_finite(std),
            source="trace",
        )
        for name, count, mean, median, low, high, std in zip(
            stats.index, counts, *columns, stds, strict=True
        )
    }


def _finite(value: object) -> float | None:
    if value is None or value is pd.NA:
        return None
    number = float(value)  # type: ignore[arg-type]
    return number if math.isfinite(number) else None


__all__ = ["Spread", "spreads"]
