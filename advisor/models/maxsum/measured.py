"""Measured times for the kernels of a MAX/SUM description, from a profile.

A described kernel's measured time per launch is the mean duration of the profile's launches
whose name contains the kernel's ``profile_name`` (any case), else the average of the kernel
summaries whose name contains it (``report --kernels``, ``maxsum --profile``).

The profile's launches are summed per distinct kernel name once; each distinct ``profile_name``
is then looked up among the distinct names only, so a description of K kernels against a
profile of L launches and D distinct kernel names costs O(L + K · D) rather than one scan of
every launch per described kernel (a 145,000-kernel description took minutes that way).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from advisor.profile import Profile


@dataclass(frozen=True)
class Measured:
    """The measured mean (ns) of the values matching one ``profile_name``."""

    mean_ns: float
    values: int  # launches (or summaries) averaged
    names: tuple[str, ...]  # the kernel names that matched, sorted


class _Totals:
    """Sum and count of one column's non-null values per distinct kernel name."""

    def __init__(self, frame: pd.DataFrame, column: str) -> None:
        named = frame[frame["name"].notna()]
        grouped = named.groupby(named["name"].astype(str), sort=True)[column]
        sums, counts = grouped.sum(min_count=1), grouped.count()
        self.rows = [
            (name.upper(), name, float(sums[name]) if counts[name] else 0.0, int(counts[name]))
            for name in sums.index
        ]

    def like(self, wanted: str) -> tuple[float, int, tuple[str, ...]]:
        needle = wanted.upper()
        hits = [(name, total, n) for upper, name, total, n in self.rows if needle in upper]
        return (
            sum(total for _, total, _ in hits),
            sum(n for _, _, n in hits),
            tuple(name for name, _, _ in hits),
        )


def measured_like(profile: Profile, wanted: Iterable[str]) -> dict[str, Measured | None]:
    """Each distinct name of ``wanted`` -> its :class:`Measured` time, None when nothing
    matches."""
    launches = _Totals(profile.launches, "duration_ns")
    summaries: _Totals | None = None
    out: dict[str, Measured | None] = {}
    for name in wanted:
        if name in out:
            continue
        total, values, names = launches.like(name)
        if not values:
            summaries = summaries or _Totals(profile.kernel_summary, "avg_ns")
            total, values, names = summaries.like(name)
        out[name] = Measured(total / values, values, names) if values else None
    return out
