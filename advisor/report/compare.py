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

The ledger is also scored as ``benchmarks/speedup_validation.py`` scores tuning steps, with the
same functions (:mod:`advisor.validation`): every pair of consecutive versions is a set of steps,
one per kernel found in both (:class:`PairCheck`).  For each such kernel the earlier version's
*overall* potential speedup and the potential speedup of the *addressed* criterion are set
against the measured speedup (error factor per kernel; n, median error factor, share within
+-25 %, sign agreement and Spearman's rho per pair; the bounds share, overall >= measured, for
the overall prediction).  The comparison does not know what was changed between two versions,
so the addressed criterion is inferred from the data: the criterion whose value rose most (by
at least :data:`IMPROVED_MIN_DELTA`; the first in paper order on a tie); a kernel with no such
rise has no addressed prediction.  Kernels found in only one version of a pair are listed as
unmatched.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor import jsonfile, validation
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
class KernelCheck:
    """One kernel found in both versions of a pair, scored as a benchmark step."""

    kernel: str
    display_name: str
    measured_speedup: float | None  # duration(earlier) / duration(later)
    overall_predicted: float | None  # the earlier version's overall potential speedup
    overall_error: float | None  # validation.error_factor(overall_predicted, measured)
    addressed: str | None  # the criterion whose value rose most (None: no criterion rose)
    addressed_rise: float | None  # its value in the later version minus the earlier one
    addressed_predicted: float | None  # the earlier version's potential speedup of it
    addressed_error: float | None  # validation.error_factor(addressed_predicted, measured)


@dataclass(frozen=True)
class PairCheck:
    """The ledger of two consecutive versions scored with :mod:`advisor.validation`."""

    from_version: str
    to_version: str
    kernels: tuple[KernelCheck, ...]  # the matched kernels, longest (first version) first
    overall: validation.Summary  # summarize((overall_predicted, measured) per kernel)
    addressed: validation.Summary  # the same over the kernels with an addressed criterion
    bounds_share: float | None  # validation.bounds_share over the scored overall pairs
    only_in_from: tuple[str, ...]  # unmatched kernels: in the earlier version only
    only_in_to: tuple[str, ...]  # ... in the later version only


@dataclass(frozen=True)
class Comparison:
    versions: tuple[VersionSummary, ...]
    kernels: tuple[KernelTrack, ...]  # every kernel; the HTML and Markdown show the first 30
    kernels_not_shown: int
    ledger: tuple[LedgerEntry, ...]
    checks: tuple[PairCheck, ...] = ()  # one per pair of consecutive versions


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
    tracks = tuple(_track(n, by_kernel) for n in ranked)
    ledger = tuple(e for n in ranked for e in _ledger(n, names, by_kernel))
    checks = tuple(_check_pair(i, ranked, names, by_kernel) for i in range(1, len(names)))
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
    return Comparison(summaries, tracks, max(0, len(ranked) - COMPARE_KERNELS), ledger, checks)


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
        "prediction_ledger_note": LEDGER_CHECK_NOTE,
        "prediction_ledger_pairs": [_check_json(p) for p in comparison.checks],
    }


#: what :class:`PairCheck` scores, for the JSON and the HTML/Markdown
LEDGER_CHECK_NOTE = (
    "Scored with advisor.validation, as benchmarks/speedup_validation.py scores tuning steps: "
    "one step per kernel found in both versions, measured speedup = earlier duration / later "
    "duration. 'overall' is the earlier version's overall potential speedup of the kernel; "
    "'addressed' is the potential speedup of the addressed criterion, which compare infers from "
    "the data (it does not know the change): the criterion whose value rose most, by at least "
    f"{IMPROVED_MIN_DELTA:g}. Error factor = exp(|ln(predicted / measured)|); bounds share = "
    "share of kernels with overall >= measured."
)


def _summary_json(s: validation.Summary) -> dict[str, Any]:
    return {
        "n": s.n,
        "median_error_factor": s.median_error_factor,
        "within_25": s.within_25,
        "sign_agree": s.sign_agree,
        "sign_counted": s.sign_counted,
        "sign_share": s.sign_share,
        "spearman": s.spearman,
        "dropped": s.dropped,
    }


def _check_json(p: PairCheck) -> dict[str, Any]:
    return {
        "from": p.from_version,
        "to": p.to_version,
        "overall": {**_summary_json(p.overall), "bounds_share": p.bounds_share},
        "addressed": _summary_json(p.addressed),
        "kernels": [
            {
                "kernel": k.kernel,
                "measured_speedup": k.measured_speedup,
                "overall_predicted": k.overall_predicted,
                "overall_error_factor": k.overall_error,
                "addressed_criterion": k.addressed,
                "addressed_rise": k.addressed_rise,
                "addressed_predicted": k.addressed_predicted,
                "addressed_error_factor": k.addressed_error,
            }
            for k in p.kernels
        ],
        "unmatched": {"only_in_from": list(p.only_in_from), "only_in_to": list(p.only_in_to)},
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


def _check_pair(
    i: int, ranked: list[str], names: list[str], by_kernel: list[dict[str, Mapping[str, Any]]]
) -> PairCheck:
    """Versions ``i - 1`` and ``i`` scored as benchmark steps, one per kernel in both."""
    before, after = by_kernel[i - 1], by_kernel[i]
    kernels = tuple(
        _check_kernel(n, before[n], after[n]) for n in ranked if n in before and n in after
    )
    # the overall pairs summarize keeps (both sides positive and finite) bound the bounds share
    bounded = [
        (k.overall_predicted, k.measured_speedup)
        for k in kernels
        if k.overall_error is not None
        and k.overall_predicted is not None
        and k.measured_speedup is not None
    ]
    return PairCheck(
        from_version=names[i - 1],
        to_version=names[i],
        kernels=kernels,
        overall=validation.summarize((k.overall_predicted, k.measured_speedup) for k in kernels),
        addressed=validation.summarize(
            (k.addressed_predicted, k.measured_speedup) for k in kernels if k.addressed is not None
        ),
        bounds_share=validation.bounds_share([p for p, _ in bounded], [m for _, m in bounded]),
        only_in_from=tuple(n for n in ranked if n in before and n not in after),
        only_in_to=tuple(n for n in ranked if n in after and n not in before),
    )


def _check_kernel(name: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> KernelCheck:
    measured = _ratio(before["duration_ns"], after["duration_ns"])
    overall = _speedup(before.get("potential_speedup"))
    addressed: str | None = None
    rise = 0.0
    for c in CRITERIA:
        v0, v1 = _value(before, c), _value(after, c)
        if v0 is not None and v1 is not None and v1 - v0 >= IMPROVED_MIN_DELTA and v1 - v0 > rise:
            addressed, rise = c, v1 - v0
    predicted = (
        None if addressed is None else _speedup(before["criteria"][addressed]["potential_speedup"])
    )
    return KernelCheck(
        kernel=name,
        display_name=shorten(name),
        measured_speedup=measured,
        overall_predicted=overall,
        overall_error=_error(overall, measured),
        addressed=addressed,
        addressed_rise=None if addressed is None else rise,
        addressed_predicted=predicted,
        addressed_error=_error(predicted, measured),
    )


def _speedup(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _error(predicted: float | None, measured: float | None) -> float | None:
    """:func:`advisor.validation.error_factor`, None where a side is missing or not positive
    and finite (the pairs :func:`advisor.validation.summarize` drops)."""
    if predicted is None or measured is None:
        return None
    try:
        return validation.error_factor(predicted, measured)
    except ValueError:
        return None


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
