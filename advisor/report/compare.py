"""Comparing tuning versions: the same application profiled after each change.

``cuda-advisor compare A.ncu-rep B.ncu-rep ...`` (or ``--version v1=FILES --version v2=FILES``)
runs the criteria engine on every version, matches the kernels of each pair of consecutive
versions (:func:`match_kernels`) and reports, per kernel, the duration and the measured speedup
versus the first version (the baseline) and the previous one, the total GPU-time speedup of each
version (sum of kernel durations), every criterion across versions (grouped bars, the style of
seed 002 Fig. 5-7), each version's predicted potential speedup, and a *prediction ledger*: for
every criterion that improved from one version to the next, the speedup the previous version's
analysis predicted for it beside the kernel speedup measured.

Kernels are matched pair by pair, in six stages, each among the kernels the earlier stages left
unmatched: ``forced`` (``--match OLD=NEW``), ``exact`` (the same name), ``base name`` (the same
name without return type, template arguments and parameter list, after demangling an Itanium
``_Z`` name: ``sgemm_naive(int, ...)`` and ``void sgemm_naive<32>(...)``), ``operator`` (PyTorch
profiler traces: the only kernel left in each version that the same PyTorch operators launched,
say the GEMM of ``aten::linear`` after cuBLAS chose another tile shape), and ``order+config``
(launch order and configuration: the two versions' remaining kernels in the order of their first
launch, aligned where the grid size in blocks and the block size in threads of their first
launches agree; a block reshaped from 32x32 to 1024x1 still matches), which needs the
profiles' launches (:func:`launch_facts`): a saved analysis has none; then ``last left``: where
each version has exactly one kernel left unmatched (one kernel in all, renamed and launched with
another grid, say), those two are paired.  A kernel of a pair that no
stage matched is listed as unmatched (and the command warns about it).  The kernels of one
version matched to the next form a *track* across the versions; a kernel missing from a version
has no duration there (None), so no speedup either, and rejoins its track by exact name.

Versions whose analyses carry the ``host`` block of a PyTorch profiler trace are also compared
per operator (:mod:`advisor.report.compare_operators`): the GPU time of each operator's kernels
in every version, matched by operator name.

Measured speedup = previous duration / current duration (> 1: faster).

A version may also be a saved ``report --json`` analysis (:func:`read_analysis`, detected by
content): it is checked against :data:`advisor.sideinputs.ANALYSIS` (types and the report's
ranges: criteria in [0, 1], times >= 0, speedups >= 0 or >= 1) and then used as it is, with the
criteria's potential speedups taken in the comparison's speedup form (the JSON holds both
forms), so profiles and saved analyses can be mixed.

The ledger is also scored as ``benchmarks/speedup_validation.py`` scores tuning steps, with the
same functions (:mod:`advisor.validation`): every pair of consecutive versions is a set of steps,
one per matched kernel (:class:`PairCheck`).  For each such kernel the potential speedup of the
*addressed* criterion, a prediction, is set against the measured speedup (error factor per
kernel; n, median error factor, share within +-25 %, sign agreement and Spearman's rho per
pair).  The earlier version's *overall* potential speedup of the kernel is its roofline
headroom (1 / its DRAM or FLOP throughput fraction of peak): an upper bound, not a prediction,
so it is only checked as a bound (:func:`advisor.validation.within_bound`: is the measured
speedup within it, yes or no) and never given an error factor.  The comparison does not know
what was changed between two versions, so the addressed criterion is inferred from the data:
the criterion whose value rose most (by at least :data:`IMPROVED_MIN_DELTA`; among criteria
whose rises are within :data:`RISE_TIE` of the largest, the one with the largest estimate,
then the first in paper order; a criterion that no longer applies
in the later version counts as 1 there); its estimate is the one the report states, capped at
the kernel's roofline headroom (:func:`advisor.report.headroom.fix_within_headroom`); a
kernel with no such rise has no addressed prediction, and where its time changed the comparison
lists what the data shows did change instead (:func:`what_changed`: duration, launch
configuration, instruction and memory counts, throughputs, criteria that moved).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor import jsonfile, sideinputs, validation
from advisor.criteria import CRITERIA
from advisor.errors import MalformedInput, UsageError
from advisor.render import display
from advisor.render.display import shorten
from advisor.report import compare_operators
from advisor.report.headroom import fix_within_headroom
from advisor.report.matching import BASE_NAME as BASE_NAME
from advisor.report.matching import EXACT as EXACT
from advisor.report.matching import FORCED as FORCED
from advisor.report.matching import LAST_LEFT as LAST_LEFT
from advisor.report.matching import MATCH_METHODS as MATCH_METHODS
from advisor.report.matching import OPERATOR as OPERATOR
from advisor.report.matching import ORDER_CONFIG as ORDER_CONFIG
from advisor.report.matching import KernelLaunch as KernelLaunch
from advisor.report.matching import MatchedPair as MatchedPair
from advisor.report.matching import base_name as base_name
from advisor.report.matching import demangle as demangle
from advisor.report.matching import distinct
from advisor.report.matching import launch_facts as launch_facts
from advisor.report.matching import match_kernels as match_kernels
from advisor.report.matching import parse_match as parse_match
from advisor.report.matching import resolve_forced as resolve_forced

#: a criterion counts as improved when its value rises by at least this much (values in [0, 1])
IMPROVED_MIN_DELTA = 0.05
#: criteria whose rises differ by less than this rose alike: the addressed one among them is the
#: one with the largest estimate
RISE_TIE = 0.01
#: kernels shown in the comparison (largest duration in the first version that has them)
COMPARE_KERNELS = 30
#: the ``schema`` value of a ``report --json`` analysis (any layout version of it)
ANALYSIS_SCHEMA_PREFIX = "cuda-advisor/analysis@"
#: bytes read to decide whether a file is JSON (profiler outputs never start with ``{``)
_SNIFF_BYTES = 512
#: the ``schema`` value of the comparison's JSON
COMPARISON_SCHEMA = "cuda-advisor/comparison@3"


@dataclass(frozen=True)
class VersionSummary:
    name: str
    files: tuple[str, ...]
    gpu_time_ns: float | None  # the sum of the version's kernel durations
    potential_speedup: float | None
    kernels: int
    #: total GPU-time speedups: earlier gpu_time_ns / this one (None for the first version)
    speedup_vs_previous: float | None = None
    speedup_vs_first: float | None = None


@dataclass(frozen=True)
class PairMatch:
    """How the kernels of two consecutive versions were paired."""

    from_version: str
    to_version: str
    pairs: tuple[MatchedPair, ...]  # in the order of the kernel tracks
    only_in_from: tuple[str, ...]  # unmatched kernels: in the earlier version only
    only_in_to: tuple[str, ...]  # ... in the later version only

    def count(self, method: str) -> int:
        return sum(1 for p in self.pairs if p.method == method)


@dataclass(frozen=True)
class KernelTrack:
    """One kernel across the versions (None where a version lacks it): the kernels of
    consecutive versions that :func:`match_kernels` paired, under their name in each version."""

    name: str  # its name in the first version that has it
    display_name: str  # the names it takes across the versions, shortened, joined by " → "
    durations_ns: tuple[float | None, ...]
    speedup_vs_first: tuple[float | None, ...]  # None in the first version: the baseline
    speedup_vs_previous: tuple[float | None, ...]
    criteria: tuple[tuple[str, tuple[float | None, ...]], ...]  # (criterion, value per version)
    names: tuple[str | None, ...] = ()  # its name in each version
    #: how version i's kernel was paired with version i - 1's (None: first, absent or rejoined)
    matched_by: tuple[str | None, ...] = ()

    @property
    def title(self) -> str:
        """Its full names across the versions, joined by " → "."""
        return " → ".join(distinct(self.names)) or self.name


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
    to_kernel: str = ""  # its name in the later version
    matched_by: str = EXACT


@dataclass(frozen=True)
class KernelCheck:
    """One kernel found in both versions of a pair, scored as a benchmark step."""

    kernel: str
    display_name: str
    measured_speedup: float | None  # duration(earlier) / duration(later)
    #: the earlier version's overall potential speedup: roofline headroom, an upper bound
    overall_bound: float | None
    within_bound: bool | None  # validation.within_bound(overall_bound, measured)
    addressed: str | None  # the criterion whose value rose most (None: no criterion rose)
    addressed_rise: float | None  # its value in the later version minus the earlier one
    addressed_predicted: float | None  # the earlier version's potential speedup of it
    addressed_error: float | None  # validation.error_factor(addressed_predicted, measured)
    to_kernel: str = ""  # its name in the later version
    matched_by: str = EXACT
    #: what changed between the two versions (:func:`what_changed`); filled where no criterion
    #: rose although the kernel's time changed
    changes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PairCheck:
    """The ledger of two consecutive versions scored with :mod:`advisor.validation`."""

    from_version: str
    to_version: str
    kernels: tuple[KernelCheck, ...]  # the matched kernels, longest (first version) first
    overall: validation.BoundSummary  # summarize_bounds((overall_bound, measured) per kernel)
    addressed: validation.Summary  # summarize((addressed_predicted, measured)) where addressed
    only_in_from: tuple[str, ...]  # unmatched kernels: in the earlier version only
    only_in_to: tuple[str, ...]  # ... in the later version only


@dataclass(frozen=True)
class Comparison:
    versions: tuple[VersionSummary, ...]
    kernels: tuple[KernelTrack, ...]  # every kernel; the HTML and Markdown show the first 30
    kernels_not_shown: int
    ledger: tuple[LedgerEntry, ...]
    checks: tuple[PairCheck, ...] = ()  # one per pair of consecutive versions
    matches: tuple[PairMatch, ...] = ()  # one per pair of consecutive versions
    #: PyTorch operators across the versions (every version a profiler trace; else empty)
    operators: tuple[compare_operators.OperatorTrack, ...] = ()
    #: per matched kernel pair with per-instruction data: what changed per source line
    #: (:mod:`advisor.report.compare_locations`); empty where no profile holds such data
    locations: tuple[Any, ...] = ()

    @property
    def baseline(self) -> str:
        """The first version's name: every "vs first" speedup is against it."""
        return self.versions[0].name if self.versions else ""


def parse_version(text: str) -> tuple[str, list[str]]:
    """``NAME=PATH[,PATH...]``; a PATH that is a folder stands for the files in it."""
    name, sep, rest = text.partition("=")
    if not sep or not name.strip() or not rest.strip():
        raise UsageError(f"--version {text!r}: expected NAME=FILE[,FILE...] or NAME=FOLDER")
    return name.strip(), _files(rest, f"--version {text!r}")


def parse_paths(text: str) -> list[str]:
    """A positional version: ``PATH[,PATH...]``, a PATH that is a folder standing for its files."""
    if not text.strip(",").strip():
        raise UsageError(f"compare {text!r}: expected FILE[,FILE...] or FOLDER")
    name, sep, rest = text.partition("=")
    first = rest.split(",")[0].strip()
    if sep and not Path(text.split(",")[0].strip()).exists() and first and Path(first).exists():
        raise UsageError(
            f"compare {text!r}: a positional version is FILE[,FILE...] or FOLDER; name it with "
            f"--label {name.strip()} (or give every version as --version NAME=FILES)"
        )
    return _files(text, f"compare {text!r}")


def _files(text: str, what: str) -> list[str]:
    files: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        path = Path(part)
        if part and path.is_dir():
            inside = sorted(str(f) for f in path.iterdir() if f.is_file() and f.name[:1] != ".")
            if not inside:
                raise UsageError(f"{what}: folder {part} holds no files")
            files += inside
        elif part:
            files.append(part)
    if not files:  # "a=,", "a=,,,", " , ": separators only
        raise UsageError(f"{what}: no file given; expected FILE[,FILE...] or FOLDER")
    return files


def version_labels(paths: Sequence[str], labels: Sequence[str] = ()) -> list[str]:
    """Labels of positional versions: ``labels`` in order, the others from the first file's name
    without its suffix (``naive.ncu-rep`` -> ``naive``; a folder: its name).  Equal labels are
    told apart by their parent folders (``run1/naive``, ``run2/naive``), then by ``-2``, ``-3``."""
    if len(labels) > len(paths):
        raise UsageError(f"compare: {len(labels)} --label values for {len(paths)} versions")
    parts = [Path(text.split(",")[0].strip() or ".") for text in paths]
    stems = [_stem(path) for path in parts]
    names = [*labels, *stems[len(labels) :]]
    files = [path.resolve() for path in parts]
    auto = range(len(labels), len(names))
    for depth in range(1, 4):  # up to three parent folders added to the labels still equal
        dup = {n for n in names if names.count(n) > 1}
        for i in auto:
            if names[i] in dup and files.count(files[i]) == 1:  # the same file: numbered below
                parents = [x for x in files[i].parent.parts if x != files[i].anchor]
                names[i] = "/".join((*parents[-depth:], stems[i]))
    for i in auto:
        n, k = names[i], 2
        while names[i] in names[:i]:
            names[i], k = f"{n}-{k}", k + 1
    return names


#: compression suffixes dropped before the file's own suffix
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst")


def _stem(path: Path) -> str:
    """``naive.ncu-rep`` -> ``naive``, ``trace.csv.gz`` -> ``trace``; a folder: its name."""
    if path.is_dir():
        return path.resolve().name or str(path)
    if path.suffix.lower() in _COMPRESSED:
        path = path.with_suffix("")
    return path.stem or path.name


def looks_like_json(path: str) -> bool:
    """True when the file's first non-blank character is ``{`` and it is no PyTorch profiler
    (Kineto) trace, the one profiler output that is a JSON object."""
    from parsers.kineto.stream import sniff_kineto

    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False  # the profile reader reports unreadable files
    is_object = head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
    return is_object and not sniff_kineto(head)


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
    jsonfile.validate(data, sideinputs.ANALYSIS, path)
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


def compare(
    versions: Sequence[tuple[str, Sequence[str], Mapping[str, Any]]],
    launches: Sequence[Mapping[str, KernelLaunch] | None] | None = None,
    forced: Sequence[tuple[str, str]] = (),
) -> Comparison:
    """The comparison of analyses (``to_json`` dicts) given as (name, files, data) in order.

    ``launches``: per version, :func:`launch_facts` of its profile (None for a saved analysis),
    for the order+config stage of :func:`match_kernels`; ``forced``: the ``--match OLD=NEW``
    pairs, each of which must apply to at least one pair of consecutive versions.
    """
    names = [v[0] for v in versions]
    if len(set(names)) != len(names):
        raise UsageError(f"compare: version names must differ, got {', '.join(names)}")
    facts = list(launches) if launches is not None else [None] * len(versions)
    if len(facts) != len(versions):
        raise ValueError("compare: one launches mapping (or None) per version")
    by_kernel = [{k["name"]: k for k in data["kernels"]} for _, _, data in versions]
    raw: list[list[MatchedPair]] = []
    applied: set[int] = set()
    for i in range(1, len(versions)):
        before, after = list(by_kernel[i - 1]), list(by_kernel[i])
        resolved = resolve_forced(forced, before, after, names[i - 1], names[i])
        applied |= {j for j, _, _ in resolved}
        pairs = [(b, a) for _, b, a in resolved]
        raw.append(match_kernels(before, after, facts[i - 1], facts[i], pairs))
    for j, (old, new) in enumerate(forced):
        if j not in applied:
            raise UsageError(
                f"--match {old}={new}: no two consecutive versions have {old} in the earlier "
                f"and {new} in the later"
            )
    chains = _chains(by_kernel, raw)
    ranked = sorted(chains, key=lambda c: _rank_key(c[0], by_kernel))
    # distinct display names across the tracks (template instances that shorten alike keep
    # the arguments they differ in), largest first
    shown = display.distinct_names(n for kernels, _ in ranked for n in distinct(kernels))
    tracks = tuple(_track(kernels, methods, by_kernel, shown) for kernels, methods in ranked)
    ledger = tuple(e for t in tracks for e in _ledger(t, names, by_kernel, shown))
    matches = tuple(_pair_match(i, tracks, names, raw[i - 1]) for i in range(1, len(names)))
    checks = tuple(
        _check_pair(i, tracks, m, by_kernel, shown, facts) for i, m in enumerate(matches, start=1)
    )
    times = [data["application"]["gpu_time_ns"] for _, _, data in versions]
    summaries = tuple(
        VersionSummary(
            name=name,
            files=tuple(files),
            gpu_time_ns=times[i],
            potential_speedup=data["application"]["potential_speedup"],
            kernels=len(data["kernels"]),
            speedup_vs_previous=validation.speedup(times[i - 1], times[i]) if i else None,
            speedup_vs_first=validation.speedup(times[0], times[i]) if i else None,
        )
        for i, (name, files, data) in enumerate(versions)
    )
    return Comparison(
        summaries,
        tracks,
        max(0, len(tracks) - COMPARE_KERNELS),
        ledger,
        checks,
        matches,
        compare_operators.operator_tracks([data.get("host") for _, _, data in versions]),
    )


def _chains(
    by_kernel: list[dict[str, Mapping[str, Any]]], raw: list[list[MatchedPair]]
) -> list[tuple[list[str | None], list[str | None]]]:
    """(kernel name per version, match method per version) of every track: the kernels paired
    from version to version; a kernel paired with none of the previous version's rejoins a
    track that missed that version and last had its exact name, or starts a new one."""
    n = len(by_kernel)
    kernels: list[list[str | None]] = [[k, *([None] * (n - 1))] for k in by_kernel[0]] if n else []
    methods: list[list[str | None]] = [[None] * n for _ in kernels]
    for i in range(1, n):
        where = {t[i - 1]: j for j, t in enumerate(kernels) if t[i - 1] is not None}
        gapped: dict[str, int] = {}
        for j, t in enumerate(kernels):
            if t[i - 1] is None:
                last = next((x for x in reversed(t[: i - 1]) if x is not None), None)
                if last is not None:
                    gapped.setdefault(last, j)
        placed: set[str] = set()
        for pair in raw[i - 1]:
            j = where[pair.before]
            kernels[j][i], methods[j][i] = pair.after, pair.method
            placed.add(pair.after)
        for name in by_kernel[i]:
            if name in placed:
                continue
            j = gapped.pop(name, -1)
            if j < 0:
                kernels.append([None] * n)
                methods.append([None] * n)
            kernels[j][i] = name
    return list(zip(kernels, methods, strict=True))


def _rank_key(
    kernels: list[str | None], by_kernel: list[dict[str, Mapping[str, Any]]]
) -> tuple[float, str]:
    """Longest first: the duration in the first version that has the kernel, then its name."""
    i, name = next((i, n) for i, n in enumerate(kernels) if n is not None)
    return (-(by_kernel[i][name]["duration_ns"] or 0.0), name)


def _pair_match(
    i: int, tracks: tuple[KernelTrack, ...], names: list[str], raw: list[MatchedPair]
) -> PairMatch:
    """Versions ``i - 1`` and ``i``'s pairs and unmatched kernels, in the order of the tracks."""
    by_before = {p.before: p for p in raw}
    pairs, only_from, only_to = [], [], []
    for t in tracks:
        b, a = t.names[i - 1], t.names[i]
        if b is not None and a is not None:
            pairs.append(by_before[b])
        elif b is not None:
            only_from.append(b)
        elif a is not None:
            only_to.append(a)
    return PairMatch(names[i - 1], names[i], tuple(pairs), tuple(only_from), tuple(only_to))


def regressions(comparison: Comparison, max_regression_pct: float) -> list[str]:
    """One line per kernel slower than the previous version by more than the percentage."""
    lines = []
    names = [v.name for v in comparison.versions]
    for track in comparison.kernels:
        for i in range(1, len(names)):
            s = track.speedup_vs_previous[i]
            if s is not None and s > 0 and (1 / s - 1) * 100 > max_regression_pct:
                kernel = pair_display(track.names[i - 1], track.names[i], short=False)
                lines.append(
                    f"regression: {kernel} is {(1 / s - 1) * 100:.1f}% slower in "
                    f"{names[i]} than in {names[i - 1]} (limit {max_regression_pct:g}%)"
                )
    return lines


def unmatched_warnings(comparison: Comparison) -> list[str]:
    """One line per kernel of a version pair that no stage of :func:`match_kernels` paired."""
    lines = []
    for m in comparison.matches:
        for kernel, version, other in (
            *((k, m.from_version, m.to_version) for k in m.only_in_from),
            *((k, m.to_version, m.from_version) for k in m.only_in_to),
        ):
            lines.append(
                f"{m.from_version} → {m.to_version}: kernel {shorten(kernel)} of {version} "
                f"matches no kernel of {other} (pair it with --match OLD=NEW)"
            )
    return lines


def pair_display(
    before: str | None,
    after: str | None,
    short: bool = True,
    shown: Mapping[str, str] | None = None,
) -> str:
    """A kernel of a version pair: its name, or ``before → after`` where the names differ;
    ``short``: each name shortened, as ``shown`` maps it where given (the comparison's distinct
    display names)."""
    names = distinct([before, after])
    if not short:
        return " → ".join(names)
    return " → ".join(shown[n] if shown and n in shown else shorten(n) for n in names)


def to_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "schema": COMPARISON_SCHEMA,
        "baseline": comparison.baseline,
        "versions": [
            {
                "name": v.name,
                "files": list(v.files),
                "gpu_time_ns": v.gpu_time_ns,
                "speedup_vs_previous": v.speedup_vs_previous,
                "speedup_vs_first": v.speedup_vs_first,
                "potential_speedup": v.potential_speedup,
                "kernels": v.kernels,
            }
            for v in comparison.versions
        ],
        "kernels": [
            {
                "name": t.name,
                "names": list(t.names),
                "matched_by": list(t.matched_by),
                "durations_ns": list(t.durations_ns),
                "speedup_vs_first": list(t.speedup_vs_first),
                "speedup_vs_previous": list(t.speedup_vs_previous),
                "criteria": {c: list(v) for c, v in t.criteria},
            }
            for t in comparison.kernels
        ],
        "kernels_not_shown": comparison.kernels_not_shown,
        **(
            {"operators": compare_operators.to_json(comparison.operators)}
            if comparison.operators
            else {}
        ),
        "matching": [
            {
                "from": m.from_version,
                "to": m.to_version,
                "counts": {method: m.count(method) for method in MATCH_METHODS},
                "pairs": [
                    {
                        "from_kernel": p.before,
                        "to_kernel": p.after,
                        "matched_by": p.method,
                        **(
                            {"grid_blocks": p.config[0], "block_threads": p.config[1]}
                            if p.config is not None
                            else {}
                        ),
                    }
                    for p in m.pairs
                ],
                "unmatched": {
                    "only_in_from": list(m.only_in_from),
                    "only_in_to": list(m.only_in_to),
                },
            }
            for m in comparison.matches
        ],
        "prediction_ledger": [
            {
                "kernel": e.kernel,
                "to_kernel": e.to_kernel,
                "matched_by": e.matched_by,
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
        **(_locations_json(comparison) if comparison.locations else {}),
    }


def _locations_json(comparison: Comparison) -> dict[str, Any]:
    from advisor.report import compare_locations

    return {"locations": compare_locations.to_json(comparison.locations)}


#: what :class:`PairCheck` scores, for the JSON and the HTML/Markdown
LEDGER_CHECK_NOTE = (
    "Scored with advisor.validation, as benchmarks/speedup_validation.py scores tuning steps: "
    "one step per kernel matched between the versions, measured speedup = earlier duration / "
    "later duration. 'addressed' is the potential speedup of the addressed criterion, which "
    "compare infers from the data (it does not know the change): the criterion whose value rose "
    f"most, by at least {IMPROVED_MIN_DELTA:g}; error factor = exp(|ln(predicted / measured)|). "
    "The roofline headroom (the earlier version's overall potential speedup of the kernel, "
    "1 / its throughput fraction of peak) is an upper bound, not a prediction: it is checked only "
    "for whether the measured speedup stayed within it (yes/no), never given an error factor."
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
        "roofline_bound": {
            "n": p.overall.n,
            "within_bound": p.overall.within,
            "within_share": p.overall.share,
            "dropped": p.overall.dropped,
        },
        "addressed": _summary_json(p.addressed),
        "kernels": [
            {
                "kernel": k.kernel,
                "to_kernel": k.to_kernel,
                "matched_by": k.matched_by,
                "measured_speedup": k.measured_speedup,
                "roofline_bound": k.overall_bound,
                "measured_within_bound": k.within_bound,
                "addressed_criterion": k.addressed,
                "addressed_rise": k.addressed_rise,
                "addressed_predicted": k.addressed_predicted,
                "addressed_error_factor": k.addressed_error,
                "changes": list(k.changes),
            }
            for k in p.kernels
        ],
        "unmatched": {"only_in_from": list(p.only_in_from), "only_in_to": list(p.only_in_to)},
    }


def _track(
    kernels: list[str | None],
    methods: list[str | None],
    by_kernel: list[dict[str, Mapping[str, Any]]],
    shown: Mapping[str, str],
) -> KernelTrack:
    """One kernel's track; ``shown``: the display name of every kernel name."""
    found = [by_kernel[i][n] if n is not None else None for i, n in enumerate(kernels)]
    durations = tuple(k["duration_ns"] if k is not None else None for k in found)
    first = durations[0]
    return KernelTrack(
        name=next(n for n in kernels if n is not None),
        display_name=" → ".join(shown[n] for n in distinct(kernels)),
        durations_ns=durations,
        speedup_vs_first=(None, *(validation.speedup(first, d) for d in durations[1:])),
        speedup_vs_previous=(
            None,
            *(validation.speedup(a, b) for a, b in itertools.pairwise(durations)),
        ),
        criteria=tuple((c, tuple(_value(k, c) for k in found)) for c in CRITERIA),
        names=tuple(kernels),
        matched_by=tuple(methods),
    )


def _ledger(
    track: KernelTrack,
    names: list[str],
    by_kernel: list[dict[str, Mapping[str, Any]]],
    shown: Mapping[str, str],
) -> list[LedgerEntry]:
    out = []
    for i in range(1, len(names)):
        b, a = track.names[i - 1], track.names[i]
        if b is None or a is None:
            continue
        before, after = by_kernel[i - 1][b], by_kernel[i][a]
        measured = validation.speedup(before["duration_ns"], after["duration_ns"])
        for c, v0, v1, estimate in _rises(before, after):
            out.append(
                LedgerEntry(
                    kernel=b,
                    display_name=pair_display(b, a, shown=shown),
                    criterion=c,
                    from_version=names[i - 1],
                    to_version=names[i],
                    value_before=v0,
                    value_after=v1,
                    predicted_speedup=estimate,
                    measured_speedup=measured,
                    to_kernel=a,
                    matched_by=track.matched_by[i] or EXACT,
                )
            )
    return out


def _rises(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[tuple[str, float, float, float | None]]:
    """(criterion, value before, value after, its estimate as the report states it) of each
    criterion of a kernel that rose by at least :data:`IMPROVED_MIN_DELTA`, in paper order."""
    out = []
    for c in CRITERIA:
        v0, v1 = _value(before, c), _value(after, c, gone_is_best=True)
        if v0 is not None and v1 is not None and v1 - v0 >= IMPROVED_MIN_DELTA:
            estimate = _speedup(before["criteria"][c]["potential_speedup"])
            out.append((c, v0, v1, fix_within_headroom(c, estimate, before)))
    return out


def _check_pair(
    i: int,
    tracks: tuple[KernelTrack, ...],
    match: PairMatch,
    by_kernel: list[dict[str, Mapping[str, Any]]],
    shown: Mapping[str, str],
    launches: Sequence[Mapping[str, KernelLaunch] | None] | None = None,
) -> PairCheck:
    """Versions ``i - 1`` and ``i`` scored as benchmark steps, one per matched kernel."""
    before_facts = launches[i - 1] if launches is not None else None
    after_facts = launches[i] if launches is not None else None
    kernels = tuple(
        _check_kernel(
            b,
            a,
            by_kernel[i - 1][b],
            by_kernel[i][a],
            t.matched_by[i] or EXACT,
            shown,
            (
                before_facts.get(b) if before_facts is not None else None,
                after_facts.get(a) if after_facts is not None else None,
            ),
        )
        for t in tracks
        if (b := t.names[i - 1]) is not None and (a := t.names[i]) is not None
    )
    return PairCheck(
        from_version=match.from_version,
        to_version=match.to_version,
        kernels=kernels,
        overall=validation.summarize_bounds((k.overall_bound, k.measured_speedup) for k in kernels),
        addressed=validation.summarize(
            (k.addressed_predicted, k.measured_speedup) for k in kernels if k.addressed is not None
        ),
        only_in_from=match.only_in_from,
        only_in_to=match.only_in_to,
    )


def _check_kernel(
    name: str,
    to_name: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    method: str,
    shown: Mapping[str, str],
    launches: tuple[KernelLaunch | None, KernelLaunch | None] = (None, None),
) -> KernelCheck:
    measured = validation.speedup(before["duration_ns"], after["duration_ns"])
    overall = _speedup(before.get("potential_speedup"))
    rises = [(c, v1 - v0, estimate) for c, v0, v1, estimate in _rises(before, after)]
    addressed: str | None = None
    rise, predicted = 0.0, None
    if rises:
        most = max(r for _, r, _ in rises)
        # criteria that rose alike (L1 and L2 granularity after one coalescing change): the
        # largest estimate (a criterion without one last), then the first in paper order (max
        # keeps the first of equal keys)
        tied = [x for x in rises if x[1] >= most - RISE_TIE]
        addressed, rise, predicted = max(
            tied, key=lambda x: (x[2] is not None, x[2] if x[2] is not None else 0.0)
        )
    return KernelCheck(
        kernel=name,
        display_name=pair_display(name, to_name, shown=shown),
        measured_speedup=measured,
        overall_bound=overall,
        within_bound=validation.within_bound(overall, measured),
        addressed=addressed,
        addressed_rise=None if addressed is None else rise,
        addressed_predicted=predicted,
        addressed_error=_error(predicted, measured),
        to_kernel=to_name,
        matched_by=method,
        changes=(
            what_changed(before, after, *launches)
            if addressed is None and _time_changed(measured)
            else ()
        ),
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


def _value(
    kernel: Mapping[str, Any] | None, criterion: str, gone_is_best: bool = False
) -> float | None:
    """The criterion's value; with ``gone_is_best``, 1 where it no longer applies (a later
    version without the unified-memory migrations or shared accesses the earlier one scored:
    the problem is gone, the best value)."""
    if kernel is None or criterion not in kernel["criteria"]:
        return None
    result = kernel["criteria"][criterion]
    if gone_is_best and result.get("status") == "not_applicable":
        return 1.0
    value = result["value"]
    return None if value is None else float(value)


#: counts a kernel's criteria may carry as inputs, compared by :func:`what_changed`
#: (input key -> what it counts)
CHANGE_COUNTS: tuple[tuple[str, str], ...] = (
    ("inst_executed", "warp instructions"),
    ("thread_inst_executed", "thread instructions"),
    ("not_predicated_off_thread_inst_executed", "predicated-on thread instructions"),
    ("idle_lane_slots", "idle lane slots"),  # DIVERGENCE: lane slots issued without work
    ("memory_l2_theoretical_sectors_global", "L2 sectors of global accesses"),
    ("l2_tex_read_transactions", "L2 read sectors"),
    ("l2_tex_write_transactions", "L2 write sectors"),
    ("dram_read_bytes", "DRAM bytes read"),
    ("dram_write_bytes", "DRAM bytes written"),
    ("dram_bytes", "DRAM bytes"),
    ("shared_load_transactions", "shared-memory load wavefronts"),
    ("shared_store_transactions", "shared-memory store wavefronts"),
    ("elapsed_cycles", "elapsed cycles"),
)
#: a count differing by less than this share is unchanged (run-to-run noise)
CHANGE_MIN_SHARE = 0.02
#: a throughput fraction of peak or a criterion value moving less than this is unchanged
CHANGE_MIN_DELTA = 0.01
#: throughput fractions of a kernel's ``throughputs`` block (key -> what it measures)
CHANGE_THROUGHPUTS = (("dram_frac", "DRAM throughput"), ("compute_frac", "SM throughput"))


def _time_changed(measured: float | None) -> bool:
    """A measured speedup that is a clear gain or loss (:data:`validation.GAIN_THRESHOLD`)."""
    if measured is None or not measured > 0:
        return False
    gain = validation.GAIN_THRESHOLD
    return measured >= gain or measured <= 1.0 / gain


def what_changed(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    before_launch: KernelLaunch | None = None,
    after_launch: KernelLaunch | None = None,
) -> tuple[str, ...]:
    """What the data shows changed between two versions of a kernel (analysis JSON kernels,
    with the profiles' first launches where known), for a step whose time changed although no
    criterion rose by :data:`IMPROVED_MIN_DELTA`: its duration; its launch configuration and
    launch count; the counts of :data:`CHANGE_COUNTS` its criteria carry as inputs; its DRAM
    and SM throughput (fractions of peak); every criterion whose value moved (fell, or rose
    less than the threshold).  The last line says when none of those moved."""
    out = [
        f"duration {display.duration(before.get('duration_ns'))} → "
        f"{display.duration(after.get('duration_ns'))}"
    ]
    old, new = _launch_config(before, before_launch), _launch_config(after, after_launch)
    if old is not None and new is not None and old != new:
        out.append(
            f"launch configuration {old[0]:,} blocks × {old[1]:,} threads → "
            f"{new[0]:,} blocks × {new[1]:,} threads"
        )
    launches = [_speedup(k.get("launches")) for k in (before, after)]
    if launches[0] is not None and launches[1] is not None and launches[0] != launches[1]:
        out.append(f"launches {launches[0]:,.0f} → {launches[1]:,.0f}")
    counts = (_inputs(before), _inputs(after))
    for key, label in CHANGE_COUNTS:
        a, b = counts[0].get(key), counts[1].get(key)
        if a is not None and b is not None and a > 0 and abs(b / a - 1.0) >= CHANGE_MIN_SHARE:
            out.append(f"{label} {_count(a)} → {_count(b)} ({b / a:.2f}×)")
    for key, label in CHANGE_THROUGHPUTS:
        a, b = (_speedup((k.get("throughputs") or {}).get(key)) for k in (before, after))
        if a is not None and b is not None and abs(b - a) >= CHANGE_MIN_DELTA:
            out.append(f"{label} {100 * a:.0f} % → {100 * b:.0f} % of peak")
    for c in CRITERIA:
        a, b = _value(before, c), _value(after, c)
        if a is not None and b is not None and abs(b - a) >= CHANGE_MIN_DELTA:
            out.append(f"{c} {a:.2f} → {b:.2f}")
    if len(out) == 1:
        out.append(
            "no launch configuration, count, throughput or criterion in the analyses moved; "
            "profile both versions with the same full metric set (ncu --set full) to see why"
        )
    return tuple(out)


def _launch_config(kernel: Mapping[str, Any], fact: KernelLaunch | None) -> tuple[int, int] | None:
    """(grid blocks, block threads): the profile's first launch, else the launch inputs a
    criterion read (saved analyses keep those)."""
    if fact is not None and fact.config is not None:
        return fact.config
    inputs = _inputs(kernel)
    grid, block = inputs.get("launch.grid_blocks"), inputs.get("launch.block_threads")
    return (int(grid), int(block)) if grid is not None and block is not None else None


def _inputs(kernel: Mapping[str, Any]) -> dict[str, float]:
    """Every numeric input of the kernel's criteria (the first criterion's in paper order where
    two read the same key)."""
    out: dict[str, float] = {}
    criteria = kernel.get("criteria") or {}
    for c in (*CRITERIA, *sorted(set(criteria) - set(CRITERIA))):
        result = criteria.get(c)
        inputs = result.get("inputs") if isinstance(result, Mapping) else None
        for key, value in (inputs or {}).items():
            number = _speedup(value)
            if number is not None and key not in out:
                out[key] = number
    return out


def _count(value: float) -> str:
    """A count: ``12,345`` below a million, ``3.07M`` / ``1.2G`` above."""
    for scale, unit in ((1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:,.0f}"
