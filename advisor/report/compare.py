"""Comparing tuning versions: the same application profiled after each change.

``cuda-advisor compare --version v1=FILES --version v2=FILES ...`` runs the criteria engine on
every version, matches kernels by name and reports, per kernel, the duration and the measured
speedup versus the first and the previous version, every criterion across versions (grouped bars,
the style of seed 002 Fig. 5-7), each version's predicted potential speedup, and a *prediction
ledger*: for every criterion that improved from one version to the next, the speedup the previous
version's analysis predicted for it beside the kernel speedup measured.

Measured speedup = previous duration / current duration (> 1: faster).  A kernel missing from a
version has no duration there (None), so no speedup either.

A version may also be a saved ``report --json`` analysis (:func:`read_analysis`, detected by
content): it is used as it is, with the criteria's potential speedups taken in the comparison's
speedup form (the JSON holds both forms), so profiles and saved analyses can be mixed.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor import jsonfile
from advisor.criteria import CRITERIA
from advisor.errors import MalformedInput, UsageError
from advisor.render.display import shorten

#: a criterion counts as improved when its value rises by at least this much (values in [0, 1])
IMPROVED_MIN_DELTA = 0.05
#: kernels shown in the comparison (largest duration in the first version that has them)
COMPARE_KERNELS = 30
#: the ``schema`` value of a ``report --json`` analysis (any layout version of it)
ANALYSIS_SCHEMA_PREFIX = "cuda-advisor/analysis@"
#: bytes read to decide whether a file is JSON (profiler outputs never start with ``{``)
_SNIFF_BYTES = 512


@dataclass(frozen=True)
class VersionSummary:
    name: str
    files: tuple[str, ...]
    gpu_time_ns: float | None
    potential_speedup: float | None
    kernels: int


@dataclass(frozen=True)
class KernelTrack:
    """One kernel across the versions (None where a version lacks it)."""

    name: str
    display_name: str
    durations_ns: tuple[float | None, ...]
    speedup_vs_first: tuple[float | None, ...]
    speedup_vs_previous: tuple[float | None, ...]
    criteria: tuple[tuple[str, tuple[float | None, ...]], ...]  # (criterion, value per version)


@dataclass(frozen=True)
class LedgerEntry:
    kernel: str
    display_name: str
    criterion: str
    from_version: str
    to_version: str
    value_before: float
    value_after: float
    predicted_speedup: float | None  # the previous version's potential speedup of the criterion
    measured_speedup: float | None  # the kernel's duration ratio between the two versions


@dataclass(frozen=True)
class Comparison:
    versions: tuple[VersionSummary, ...]
    kernels: tuple[KernelTrack, ...]
    kernels_not_shown: int
    ledger: tuple[LedgerEntry, ...]


def parse_version(text: str) -> tuple[str, list[str]]:
    """``NAME=PATH[,PATH...]``; a PATH that is a folder stands for the files in it."""
    name, sep, rest = text.partition("=")
    if not sep or not name.strip() or not rest.strip():
        raise UsageError(f"--version {text!r}: expected NAME=FILE[,FILE...] or NAME=FOLDER")
    files: list[str] = []
    for part in (p.strip() for p in rest.split(",")):
        path = Path(part)
        if path.is_dir():
            inside = sorted(str(f) for f in path.iterdir() if f.is_file() and f.name[:1] != ".")
            if not inside:
                raise UsageError(f"--version {text!r}: folder {part} holds no files")
            files += inside
        elif part:
            files.append(part)
    return name.strip(), files


def looks_like_json(path: str) -> bool:
    """True when the file's first non-blank character is ``{`` (no profiler output starts so)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False  # the profile reader reports unreadable files
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def read_analysis(path: str, speedup_form: str | None = None) -> dict[str, Any]:
    """A saved ``report --json`` analysis, checked for what :func:`compare` reads.

    With ``speedup_form``, every criterion's ``potential_speedup`` is re-picked from the saved
    ``potential_speedup_paper`` / ``potential_speedup_amdahl``.  A JSON file that is not an
    analysis, or one that lacks a key the comparison needs, is an input error naming the file.
    """
    data = jsonfile.load(path, "saved analysis")
    schema = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(schema, str) or not schema.startswith(ANALYSIS_SCHEMA_PREFIX):
        found = f"schema {schema!r}" if isinstance(schema, str) else "no cuda-advisor schema"
        raise MalformedInput(
            path,
            f"not a cuda-advisor analysis ({found}); give the output of "
            "'cuda-advisor report ... --json FILE' or profiler files",
        )
    _check_analysis(path, data)
    if speedup_form is not None:
        for kernel in data["kernels"]:
            for criterion in kernel["criteria"].values():
                key = f"potential_speedup_{speedup_form}"
                if isinstance(criterion, dict) and key in criterion:
                    criterion["potential_speedup"] = criterion[key]
    return dict(data)


def _check_analysis(path: str, data: dict[str, Any]) -> None:
    """Every key :func:`compare` reads is there with a usable type."""
    app = data.get("application")
    if not isinstance(app, dict) or not {"gpu_time_ns", "potential_speedup"} <= set(app):
        raise MalformedInput(path, "analysis lacks application.gpu_time_ns / potential_speedup")
    kernels = data.get("kernels")
    if not isinstance(kernels, list):
        raise MalformedInput(path, "analysis lacks its kernels list")
    for i, k in enumerate(kernels):
        ok = (
            isinstance(k, dict)
            and isinstance(k.get("name"), str)
            and isinstance(k.get("duration_ns"), (int, float, type(None)))
            and isinstance(k.get("criteria"), dict)
            and all(
                isinstance(c, dict) and "value" in c and "potential_speedup" in c
                for c in k["criteria"].values()
            )
        )
        if not ok:
            raise MalformedInput(
                path,
                f"kernels[{i}] lacks name, duration_ns or criteria (value, potential_speedup)",
            )


def compare(versions: Sequence[tuple[str, Sequence[str], Mapping[str, Any]]]) -> Comparison:
    """The comparison of analyses (``to_json`` dicts) given as (name, files, data) in order."""
    names = [v[0] for v in versions]
    if len(set(names)) != len(names):
        raise UsageError(f"compare: version names must differ, got {', '.join(names)}")
    by_kernel = [{k["name"]: k for k in data["kernels"]} for _, _, data in versions]
    order: dict[str, float] = {}
    for kernels in by_kernel:
        for name, k in kernels.items():
            order.setdefault(name, -(k["duration_ns"] or 0.0))
    ranked = sorted(order, key=lambda n: (order[n], n))
    tracks = tuple(_track(n, by_kernel) for n in ranked[:COMPARE_KERNELS])
    ledger = tuple(e for n in ranked for e in _ledger(n, names, by_kernel))
    summaries = tuple(
        VersionSummary(
            name=name,
            files=tuple(files),
            gpu_time_ns=data["application"]["gpu_time_ns"],
            potential_speedup=data["application"]["potential_speedup"],
            kernels=len(data["kernels"]),
        )
        for name, files, data in versions
    )
    return Comparison(summaries, tracks, max(0, len(ranked) - COMPARE_KERNELS), ledger)


def regressions(comparison: Comparison, max_regression_pct: float) -> list[str]:
    """One line per kernel slower than the previous version by more than the percentage."""
    lines = []
    names = [v.name for v in comparison.versions]
    for track in comparison.kernels:
        for i in range(1, len(names)):
            s = track.speedup_vs_previous[i]
            if s is not None and s > 0 and (1 / s - 1) * 100 > max_regression_pct:
                lines.append(
                    f"regression: {track.display_name} is {(1 / s - 1) * 100:.1f}% slower in "
                    f"{names[i]} than in {names[i - 1]} (limit {max_regression_pct:g}%)"
                )
    return lines


def to_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "schema": "cuda-advisor/comparison@1",
        "versions": [
            {
                "name": v.name,
                "files": list(v.files),
                "gpu_time_ns": v.gpu_time_ns,
                "potential_speedup": v.potential_speedup,
                "kernels": v.kernels,
            }
            for v in comparison.versions
        ],
        "kernels": [
            {
                "name": t.name,
                "durations_ns": list(t.durations_ns),
                "speedup_vs_first": list(t.speedup_vs_first),
                "speedup_vs_previous": list(t.speedup_vs_previous),
                "criteria": {c: list(v) for c, v in t.criteria},
            }
            for t in comparison.kernels
        ],
        "kernels_not_shown": comparison.kernels_not_shown,
        "prediction_ledger": [
            {
                "kernel": e.kernel,
                "criterion": e.criterion,
                "from": e.from_version,
                "to": e.to_version,
                "value_before": e.value_before,
                "value_after": e.value_after,
                "predicted_speedup": e.predicted_speedup,
                "measured_speedup": e.measured_speedup,
            }
            for e in comparison.ledger
        ],
    }


def _track(name: str, by_kernel: list[dict[str, Mapping[str, Any]]]) -> KernelTrack:
    durations = tuple(
        (k.get(name) or {}).get("duration_ns") if name in k else None for k in by_kernel
    )
    first = durations[0]
    return KernelTrack(
        name=name,
        display_name=shorten(name),
        durations_ns=durations,
        speedup_vs_first=tuple(_ratio(first, d) for d in durations),
        speedup_vs_previous=(None, *(_ratio(a, b) for a, b in itertools.pairwise(durations))),
        criteria=tuple((c, tuple(_value(k.get(name), c) for k in by_kernel)) for c in CRITERIA),
    )


def _ledger(
    name: str, names: list[str], by_kernel: list[dict[str, Mapping[str, Any]]]
) -> list[LedgerEntry]:
    out = []
    for i in range(1, len(names)):
        before, after = by_kernel[i - 1].get(name), by_kernel[i].get(name)
        if before is None or after is None:
            continue
        measured = _ratio(before["duration_ns"], after["duration_ns"])
        for c in CRITERIA:
            v0, v1 = _value(before, c), _value(after, c)
            if v0 is not None and v1 is not None and v1 - v0 >= IMPROVED_MIN_DELTA:
                out.append(
                    LedgerEntry(
                        kernel=name,
                        display_name=shorten(name),
                        criterion=c,
                        from_version=names[i - 1],
                        to_version=names[i],
                        value_before=v0,
                        value_after=v1,
                        predicted_speedup=before["criteria"][c]["potential_speedup"],
                        measured_speedup=measured,
                    )
                )
    return out


def _value(kernel: Mapping[str, Any] | None, criterion: str) -> float | None:
    if kernel is None or criterion not in kernel["criteria"]:
        return None
    value = kernel["criteria"][criterion]["value"]
    return None if value is None else float(value)


def _ratio(before: float | None, after: float | None) -> float | None:
    """before / after: the speedup from ``before`` to ``after`` (None when either is missing)."""
    if before is None or after is None or after <= 0:
        return None
    return before / after
