"""PyTorch operators across tuning versions: the GPU time of the kernels each operator launched.

A PyTorch profiler trace names the operator that launched every kernel (``launches.operator``);
its analysis carries them in the ``host`` block (``host.operators``: launches, distinct kernels
and GPU time per operator, :mod:`advisor.report.operators`).  When every version of a comparison
has that block, the operators are matched by name across the versions, so a change that moved
time from one operator to another (fusion, a different attention kernel) shows where: one track
per operator with its GPU time in each version (None where a version has no kernel of it) and the
measured speedups versus the first and the previous version (:func:`advisor.validation.speedup`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor import validation


@dataclass(frozen=True)
class OperatorTrack:
    """One PyTorch operator across the versions."""

    operator: str
    gpu_time_ns: tuple[float | None, ...]  # its kernels' GPU time per version
    launches: tuple[int | None, ...]  # its kernel launches per version
    speedup_vs_first: tuple[float | None, ...]  # None in the first version: the baseline
    speedup_vs_previous: tuple[float | None, ...]


def operator_tracks(hosts: Sequence[Mapping[str, Any] | None]) -> tuple[OperatorTrack, ...]:
    """The operators of every version's ``host`` block matched by name, ordered by GPU time in
    the first version that has them (largest first; then by that version, then by name).  Empty
    unless there are two versions or more and each has a host block."""
    if len(hosts) < 2 or any(h is None for h in hosts):
        return ()
    per_version: list[dict[str, Mapping[str, Any]]] = [
        {str(o["operator"]): o for o in (h or {}).get("operators", [])} for h in hosts
    ]
    first_seen: dict[str, tuple[int, float]] = {}
    for i, groups in enumerate(per_version):
        for name, group in groups.items():
            first_seen.setdefault(name, (i, float(group["gpu_time_ns"])))
    order = sorted(first_seen, key=lambda n: (first_seen[n][0], -first_seen[n][1], n))
    tracks = []
    for name in order:
        times = tuple(float(v[name]["gpu_time_ns"]) if name in v else None for v in per_version)
        tracks.append(
            OperatorTrack(
                operator=name,
                gpu_time_ns=times,
                launches=tuple(
                    int(v[name]["launches"]) if name in v else None for v in per_version
                ),
                speedup_vs_first=(None, *(validation.speedup(times[0], t) for t in times[1:])),
                speedup_vs_previous=(
                    None,
                    *(validation.speedup(a, b) for a, b in itertools.pairwise(times)),
                ),
            )
        )
    return tuple(tracks)


def to_json(tracks: Sequence[OperatorTrack]) -> list[dict[str, Any]]:
    return [
        {
            "operator": t.operator,
            "gpu_time_ns": list(t.gpu_time_ns),
            "launches": list(t.launches),
            "speedup_vs_first": list(t.speedup_vs_first),
            "speedup_vs_previous": list(t.speedup_vs_previous),
        }
        for t in tracks
    ]
