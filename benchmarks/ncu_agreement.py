"""Do our criteria flag the bottlenecks Nsight Compute's own rules flag?

Run: ``python benchmarks/ncu_agreement.py [--source real|families|both] [--families] [--kernels]``
(needs ../shared/real_profiles and/or ../shared/tuning_families and, for ``.ncu-rep`` files, the
``ncu_report`` module).

Data (``--source``, default ``both``; ``--families`` is short for ``--source families``):

* ``real``: every real Nsight Compute report or details CSV under ../shared/real_profiles;
* ``families``: every Nsight Compute file listed in ../shared/tuning_families/MANIFEST.tsv (rows
  whose ``tool_version`` names ncu / Nsight Compute).  Files the advisor cannot read (the CLI's
  plain-text output) are listed on stderr as skipped; reports without rule results (the chart-only
  sections of F01) contribute no pair.

Each kernel that has rule results is scored by the criteria engine and compared with the rules
NVIDIA's guided analysis fired for it, criterion by criterion (:data:`PAIRINGS`).  "We flag" = the
criterion is computed and below its hint threshold (:data:`THRESHOLDS`, printed at the end); "ncu
flags" = one of the paired rules fired as an optimization (OPT) or warning (WRN) for that kernel.
A criterion that is not applicable (a kernel without shared accesses) flags nothing; kernels where
it is not computable are counted apart (``n/c``) and never compared.  Over the ``n`` compared
kernel-criterion pairs of a pairing (both flag / only we flag / only ncu flags / neither):

* agreement ``p_o = (both + neither) / n``;
* Cohen's κ of the two raters "we flag" and "ncu flags": with ``p_we = (both + only we) / n`` and
  ``p_ncu = (both + only ncu) / n`` the agreement expected by chance is
  ``p_e = p_we·p_ncu + (1 − p_we)(1 − p_ncu)`` and ``κ = (p_o − p_e) / (1 − p_e)``; κ is printed
  as ``-`` when ``p_e = 1`` (both raters gave one and the same answer to every pair, so chance
  explains all the agreement and κ is undefined).  κ = 1 is perfect agreement, 0 what two
  independent raters with the same flag rates would reach, < 0 worse than that.  It corrects the
  agreement of a criterion that rarely fires, which agrees "by default" on most pairs.  The
  overall κ pools the pairs of every pairing into one 2x2 table.

Each figure is printed twice: over all compared pairs, and ``kept`` = without the pairs where
neither side could meaningfully flag:

* *not applicable* pairs (``n.a.``): our criterion's status is ``not_applicable`` (the kernel does
  not do what the criterion measures: no shared-memory access, no recorded stall, ...);
* *trivial* pairs (``triv``): the kernel's mean launch is shorter than :data:`TRIVIAL_LAUNCH_NS`
  (5 µs) or the kernel takes less than :data:`TRIVIAL_SHARE` (1 %) of the report's GPU time (the sum
  of the durations of its profiled kernels); a kernel whose duration is unknown is kept.  Reason:
  a launch of a few µs is dominated by launch latency and ramp-up, which no access-pattern or
  occupancy change removes, and a kernel under 1 % of the GPU time cannot gain the application
  more than 1 % however much it is sped up (Amdahl), so neither tool's guidance is worth acting on.

A pair that is both not applicable and trivial counts as not applicable.

With ``--kernels`` it also lists each compared kernel's value, our potential speedup and NVIDIA's
estimated speedup side by side (``[n.a.]`` / ``[trivial]`` mark the pairs left out of ``kept``).
Systematic disagreements are explained in docs/criteria.md.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor import pipeline  # noqa: E402
from advisor.criteria.engine.analysis import NOT_APPLICABLE, NOT_COMPUTABLE  # noqa: E402
from advisor.criteria.engine.hints import THRESHOLDS  # noqa: E402
from advisor.errors import AdvisorError  # noqa: E402
from advisor.report import nvidia  # noqa: E402

REAL = REPO.parent / "shared" / "real_profiles"
FAMILIES = REPO.parent / "shared" / "tuning_families"
FLAGGING = ("OPT", "WRN")
#: a kernel whose mean launch is shorter than this (ns) is trivial
TRIVIAL_LAUNCH_NS = 5_000.0
#: a kernel under this fraction of its report's GPU time is trivial
TRIVIAL_SHARE = 0.01

Rule = Mapping[str, Any]


#: criterion -> (label of the paired NVIDIA rules, predicate over a rule result): the product's
#: own table (the report shows NVIDIA's estimate beside ours through it)
PAIRINGS = nvidia.PAIRINGS


@dataclass
class Counts:
    """A 2x2 table of two raters' yes/no answers: we flag / ncu flags."""

    both: int = 0
    only_we: int = 0
    only_ncu: int = 0
    neither: int = 0

    def add(self, ours: bool, theirs: bool) -> None:
        if ours and theirs:
            self.both += 1
        elif ours:
            self.only_we += 1
        elif theirs:
            self.only_ncu += 1
        else:
            self.neither += 1

    @property
    def compared(self) -> int:
        return self.both + self.only_we + self.only_ncu + self.neither

    @property
    def agreed(self) -> int:
        return self.both + self.neither


def pooled(tables: Iterable[Counts]) -> Counts:
    """The cell-by-cell sum of several 2x2 tables."""
    out = Counts()
    for t in tables:
        out.both += t.both
        out.only_we += t.only_we
        out.only_ncu += t.only_ncu
        out.neither += t.neither
    return out


def agreement(c: Counts) -> float | None:
    """Observed agreement p_o = (both + neither) / compared; None without a pair."""
    n = c.compared
    return c.agreed / n if n else None


def cohen_kappa(c: Counts) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e); None without a pair or when p_e = 1."""
    n = c.compared
    if not n:
        return None
    p_o = c.agreed / n
    p_we = (c.both + c.only_we) / n
    p_ncu = (c.both + c.only_ncu) / n
    p_e = p_we * p_ncu + (1 - p_we) * (1 - p_ncu)
    if p_e >= 1 - 1e-12:
        return None
    return (p_o - p_e) / (1 - p_e)


def is_trivial(duration_ns: float | None, launches: int, share: float | None) -> bool:
    """Mean launch under TRIVIAL_LAUNCH_NS or under TRIVIAL_SHARE of the GPU time (unknown: no)."""
    if share is not None and share < TRIVIAL_SHARE:
        return True
    return bool(
        duration_ns is not None and launches > 0 and duration_ns / launches < TRIVIAL_LAUNCH_NS
    )


Row = tuple[str, str, float | None, float | None, float | None, bool, bool, str]


@dataclass
class Tally:
    """One pairing's results: all compared pairs, the kept ones, and what was left out."""

    counts: Counts = field(default_factory=Counts)
    kept: Counts = field(default_factory=Counts)
    not_computable: int = 0
    not_applicable: int = 0  # compared, left out of ``kept``
    trivial: int = 0  # compared and applicable, left out of ``kept``
    rows: list[Row] = field(default_factory=list)

    def add(self, ours: bool, theirs: bool, excluded: str = "") -> None:
        """One compared pair; ``excluded`` = "n.a." / "trivial" keeps it out of ``kept``."""
        self.counts.add(ours, theirs)
        if excluded == "n.a.":
            self.not_applicable += 1
        elif excluded == "trivial":
            self.trivial += 1
        else:
            self.kept.add(ours, theirs)

    @property
    def compared(self) -> int:
        return self.counts.compared

    @property
    def agreement(self) -> float | None:
        return agreement(self.counts)


@dataclass
class Source:
    """One set of files and what came of it."""

    name: str
    root: Path
    files: list[Path]
    tallies: dict[str, Tally] = field(default_factory=lambda: {n: Tally() for n in PAIRINGS})
    read: int = 0  # files the advisor read
    with_rules: int = 0  # of which carry rule results
    kernels: int = 0  # kernels with rule results (compared)
    trivial_kernels: int = 0
    skipped: list[str] = field(default_factory=list)


def rule_files(root: Path = REAL) -> list[Path]:
    out = []
    for path in sorted(root.rglob("*")):
        if path.suffix in (".ncu-rep", ".nsight-cuprof-report") or (
            path.suffix == ".csv" and "ncu" in path.name and "details" in path.name
        ):
            out.append(path)
    return out


def family_files(manifest: Path) -> list[Path]:
    """The Nsight Compute files of a tuning-families MANIFEST.tsv, in order, each once."""
    out: list[Path] = []
    with manifest.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            tool = row["tool_version"].lower()
            if not (tool.startswith("ncu") or "nsight compute" in tool):
                continue
            path = manifest.parent / row["local_path"]
            if path not in out:
                out.append(path)
    return out


def compare(source: Source) -> None:
    """Fill the source's tallies from every one of its files."""
    for path in source.files:
        label = f"{path.relative_to(source.root)}"
        try:
            run = pipeline.analyse([str(path)])
        except AdvisorError as exc:
            source.skipped.append(f"{label}: {str(exc).replace(f'{path}: ', '')}")
            continue
        source.read += 1
        if run.profile.rules.empty:
            continue
        source.with_rules += 1
        for kernel in run.analysis.kernels:
            if not kernel.ncu_rules:
                continue
            source.kernels += 1
            trivial = is_trivial(kernel.duration_ns, kernel.launches, kernel.share_of_gpu_time)
            source.trivial_kernels += trivial
            for name, (_, predicate) in PAIRINGS.items():
                tally = source.tallies[name]
                result = next(c for c in kernel.criteria if c.name == name)
                fired = [r for r in kernel.ncu_rules if r["rule_type"] in FLAGGING and predicate(r)]
                if result.status == NOT_COMPUTABLE:
                    tally.not_computable += 1
                    continue
                # not applicable (e.g. no shared access at all): we see no such bottleneck
                ours = result.value is not None and result.value < THRESHOLDS[name]
                theirs = bool(fired)
                excluded = (
                    "n.a." if result.status == NOT_APPLICABLE else "trivial" if trivial else ""
                )
                tally.add(ours, theirs, excluded)
                estimates = [r["estimated_speedup_frac"] for r in fired]
                known = [e for e in estimates if e is not None]
                tally.rows.append(
                    (
                        label,
                        kernel.name,
                        result.value,
                        result.speedups.amdahl,
                        max(known) if known else None,
                        ours,
                        theirs,
                        excluded,
                    )
                )


def _shown(path: Path) -> str:
    """A path as seen from the repository root (../shared/...)."""
    return os.path.relpath(path, REPO)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _summary(c: Counts) -> str:
    pct = "-" if agreement(c) is None else f"{100 * (agreement(c) or 0.0):.1f}%"
    return f"{c.agreed}/{c.compared} = {pct}, Cohen's κ = {_fmt(cohen_kappa(c), '.2f')}"


def print_source(source: Source, kernels: bool) -> None:
    print(f"== {source.name}: {_shown(source.root)} ==")
    header = (
        f"{'criterion':<21} {'NVIDIA rules':<45} {'both':>4} {'we':>4} {'ncu':>4} "
        f"{'none':>4} {'n/c':>4} {'agree':>6} {'κ':>5} | {'n.a.':>4} {'triv':>4} "
        f"{'kept':>4} {'agree':>6} {'κ':>5}"
    )
    print(header)
    print("-" * len(header))
    for name, (label, _) in PAIRINGS.items():
        t = source.tallies[name]
        c, k = t.counts, t.kept
        print(
            f"{name:<21} {label[:45]:<45} {c.both:>4} {c.only_we:>4} {c.only_ncu:>4} "
            f"{c.neither:>4} {t.not_computable:>4} {_pct(agreement(c)):>6} "
            f"{_fmt(cohen_kappa(c), '.2f'):>5} | {t.not_applicable:>4} {t.trivial:>4} "
            f"{k.compared:>4} {_pct(agreement(k)):>6} {_fmt(cohen_kappa(k), '.2f'):>5}"
        )
    allc = pooled(t.counts for t in source.tallies.values())
    kept = pooled(t.kept for t in source.tallies.values())
    overall = 100 * (agreement(allc) or 0.0)
    print(f"\noverall agreement: {allc.agreed}/{allc.compared} kernel-criterion pairs", end="")
    print(f" = {overall:.1f}%")
    print(f"overall Cohen's κ: {_fmt(cohen_kappa(allc), '.2f')}")
    print(f"without n.a. and trivial pairs: {_summary(kept)}")
    print(
        "(we = only we flag, ncu = only Nsight Compute flags, n/c = criterion not computable, "
        "n.a. = not applicable, triv = trivial kernel, kept = pairs left without n.a. and triv)"
    )
    if kernels:
        print("\nper kernel: value, our potential speedup (Amdahl), NVIDIA's estimated speedup")
        for name in PAIRINGS:
            for path, kernel, value, ours_sp, ncu_est, ours, theirs, excl in source.tallies[
                name
            ].rows:
                flag = {(True, True): "both", (True, False): "we", (False, True): "ncu"}.get(
                    (ours, theirs), "-"
                )
                mark = f" [{excl}]" if excl else ""
                print(
                    f"  {name:<21} {flag:<4} {_fmt(value)} sp={_fmt(ours_sp, '.2f')}x "
                    f"ncu={_fmt(None if ncu_est is None else 100 * ncu_est, '.1f')}% "
                    f"{kernel[:50]}  [{path}]{mark}"
                )
    print()


def thresholds_paragraph(sources: Sequence[Source]) -> str:
    """Which threshold each criterion uses, and the data the agreement was measured on."""
    paired = ", ".join(f"{name} < {THRESHOLDS[name]:g}" for name in PAIRINGS)
    others = [n for n in THRESHOLDS if n not in PAIRINGS]
    text = (
        f"Thresholds: we flag a criterion when its value (1 = best) is below its hint threshold "
        f"(advisor.criteria.engine.hints.THRESHOLDS): {paired}"
    )
    if others:
        text += "; " + ", ".join(f"{n} < {THRESHOLDS[n]:g}" for n in others)
        text += " (application-level or unpaired, not compared)"
    text += (
        ". Nsight Compute flags = a paired rule fired as OPT or WRN (its own thresholds). "
        f"Trivial kernel = mean launch < {TRIVIAL_LAUNCH_NS / 1000:g} µs or "
        f"< {100 * TRIVIAL_SHARE:g} % of the report's GPU time. Measured on: "
    )
    parts = []
    for s in sources:
        parts.append(
            f"{s.name} ({_shown(s.root)}): {len(s.files)} files, {s.read} read by the advisor, "
            f"{s.with_rules} with rule results, {s.kernels} kernels with rule results "
            f"({s.trivial_kernels} trivial), "
            f"{sum(t.compared for t in s.tallies.values())} kernel-criterion pairs compared"
        )
    return textwrap.fill(text + "; ".join(parts) + ".", width=100, break_on_hyphens=False)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--kernels", action="store_true", help="print every kernel's estimates")
    ap.add_argument(
        "--source",
        choices=("real", "families", "both"),
        default="both",
        help="real profiles, the tuning families' Nsight Compute files, or both (default)",
    )
    ap.add_argument("--families", action="store_true", help="short for --source families")
    args = ap.parse_args(argv)
    wanted = "families" if args.families else args.source
    sources = []
    if wanted in ("real", "both"):
        if not REAL.is_dir():
            print(f"real profiles not found at {REAL}", file=sys.stderr)
            return 2
        sources.append(Source("real", REAL, rule_files(REAL)))
    if wanted in ("families", "both"):
        manifest = FAMILIES / "MANIFEST.tsv"
        if not manifest.is_file():
            print(f"tuning families not found at {manifest}", file=sys.stderr)
            return 2
        sources.append(Source("families", FAMILIES, family_files(manifest)))
    for source in sources:
        compare(source)
        print_source(source, args.kernels)
    if len(sources) > 1:
        allc = pooled(t.counts for s in sources for t in s.tallies.values())
        kept = pooled(t.kept for s in sources for t in s.tallies.values())
        print(f"all sources: agreement {_summary(allc)}")
        print(f"all sources without n.a. and trivial pairs: {_summary(kept)}")
        print()
    print(thresholds_paragraph(sources))
    for source in sources:
        for line in source.skipped:
            print(f"skipped {source.name}/{line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
