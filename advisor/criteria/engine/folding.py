"""Bounding the analysis of a profile with very many distinct kernels.

A JIT-compiled or autotuned run can name tens of thousands of kernels, one or a few launches
each.  Scoring every one of them would make the analysis grow with the number of names (each
kernel's criteria, their evidence and collection commands: about 12 kB of JSON a kernel).
So the :data:`KERNELS_MAX` kernels with the most GPU time are scored one by one, and the others
are *folded*: counted, with their launches and GPU time, in the application's
``other_kernels`` entry, and named in a note.  They still count in the application's GPU time,
kernel and launch totals, and in its potential speedup as kernels without an estimate (1x).
HOSTSYNC and the timeline always see every launch.

:func:`fold` works on columns: one pass over the launches (by the names' categorical codes) and
one over the kernel summaries, whatever the number of names.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from advisor.profile import Profile

#: kernels scored one by one, the most GPU time first (the HTML lists 220, the Markdown fewer);
#: the JSON of 500 kernels is about 6 MB
KERNELS_MAX = 500


@dataclass(frozen=True)
class Folded:
    """The kernels left out of the per-kernel analysis."""

    kernels: int
    launches: int
    duration_ns: float  # their GPU time (0 when none of them has a time)


def fold(profile: Profile, limit: int = KERNELS_MAX) -> tuple[Profile, Folded | None]:
    """``profile`` restricted to its ``limit`` kernels with the most GPU time (ties by name),
    and what was left out; ``profile`` itself and None when it has no more kernels."""
    names = profile.kernel_names()
    if len(names) <= limit:
        return profile, None
    launches, time_ns = _per_name(profile, names)
    order = np.lexsort((np.arange(len(names)), -time_ns))  # names are sorted: ties by name
    kept_at = np.sort(order[:limit])
    kept = [names[i] for i in kept_at.tolist()]
    folded_at = order[limit:]
    folded = Folded(
        kernels=len(folded_at),
        launches=int(launches[folded_at].sum()),
        duration_ns=float(time_ns[folded_at].sum()),
    )
    return _restricted(profile, kept), folded


def _per_name(profile: Profile, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(launches, GPU time in ns) of each of ``names``: from the launches when the kernel has
    any, else from the kernel summaries; a missing time counts 0."""
    # a dict, not a pandas Index: get_indexer's hash tables took 290 MiB for 900,000 names;
    # made only when the texts are not ``names`` themselves, as the launches' categories are
    # when they alone name kernels (Profile.kernel_names): 0.78 -> 0.09 s for 900,000 names
    position: dict[Any, int] = {}

    def positions(texts: Collection[Any]) -> np.ndarray:
        if len(texts) == len(names) and list(texts) == names:
            return np.arange(len(names), dtype=np.int64)
        if not position:
            position.update((name, i) for i, name in enumerate(names))
        return np.fromiter((position.get(t, -1) for t in texts), dtype=np.int64)

    launches = np.zeros(len(names), dtype=np.int64)
    time_ns = np.zeros(len(names), dtype=np.float64)
    rows = profile.launches
    if len(rows):
        where = positions(rows["name"].cat.categories)
        codes = rows["name"].cat.codes.to_numpy().astype(np.int64)
        known = codes >= 0
        at = where[codes[known]]
        durations = rows["duration_ns"].to_numpy(dtype=np.float64, na_value=np.nan)[known]
        np.add.at(launches, at, 1)
        np.add.at(time_ns, at, np.nan_to_num(durations, nan=0.0))
    summary = profile.kernel_summary
    if len(summary):
        named = summary[summary["name"].notna()]
        at = positions(named["name"].astype(object))
        fresh = launches[at] == 0  # kernels with launch rows keep their launches' figures
        calls = named["calls"].to_numpy(dtype=np.float64, na_value=0.0)
        total = named["total_ns"].to_numpy(dtype=np.float64, na_value=0.0)
        np.add.at(launches, at[fresh], calls[fresh].astype(np.int64))
        np.add.at(time_ns, at[fresh], total[fresh])
    return launches, time_ns


def _restricted(profile: Profile, kept: list[str]) -> Profile:
    """The profile with the rows of the ``kept`` kernels only (transfers, API calls and devices
    as they are).

    A categorical name column is looked at per category, and keeps only the categories its
    rows still use: the profile's checks then see the ``kept`` names, not every name of the
    trace again (900,000 distinct names, benchmarks/bench_scale.py
    ``nsys-distinct-names-csv``: 0.73 -> 0.17 s; the same frames)."""
    wanted = set(kept)

    def rows(frame: pd.DataFrame, column: str) -> pd.DataFrame:
        names = frame[column]
        if not isinstance(names.dtype, pd.CategoricalDtype):
            mask = names.isin(wanted).to_numpy(dtype=bool) | names.isna().to_numpy()
            return frame[mask]
        hit = np.array([w in wanted for w in names.cat.categories] + [True], dtype=bool)
        kept_rows = frame[hit[names.cat.codes.to_numpy()]]  # code -1 (no name) reads True
        return kept_rows.assign(**{column: kept_rows[column].cat.remove_unused_categories()})

    return Profile(
        provenance=profile.provenance,
        launches=rows(profile.launches, "name"),
        kernel_summary=rows(profile.kernel_summary, "name"),
        transfers=profile.transfers,
        transfer_summary=profile.transfer_summary,
        api_calls=profile.api_calls,
        api_summary=profile.api_summary,
        metrics=rows(profile.metrics, "kernel"),
        rules=rows(profile.rules, "kernel"),
        devices=profile.devices,
    )
