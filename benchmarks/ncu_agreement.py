"""Do our criteria flag the bottlenecks Nsight Compute's own rules flag?

Run: ``python benchmarks/ncu_agreement.py [--kernels]`` (needs ../shared/real_profiles and, for
``.ncu-rep`` files, the ``ncu_report`` module).

Over every real Nsight Compute report or details CSV that carries rule results, each kernel is
scored by the criteria engine and compared with the rules NVIDIA's guided analysis fired for it,
criterion by criterion (:data:`PAIRINGS`).  "We flag" = the criterion is computed and below its
hint threshold; "ncu flags" = one of the paired rules fired as an optimization (OPT) or warning
(WRN) for that kernel.  A criterion that is not applicable (a kernel without shared accesses)
flags nothing; kernels where it is not computable are counted apart.  It
prints, per pairing, the agreement table (both flag / only we flag / only ncu flags / neither)
and the agreement % = (both + neither) / compared, then the overall agreement, and with
``--kernels`` each kernel's value, our potential speedup and NVIDIA's estimated speedup side by
side.  Systematic disagreements are explained in docs/criteria.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor import pipeline  # noqa: E402
from advisor.criteria.engine.analysis import NOT_COMPUTABLE  # noqa: E402
from advisor.criteria.engine.hints import THRESHOLDS  # noqa: E402
from advisor.errors import AdvisorError  # noqa: E402

REAL = REPO.parent / "shared" / "real_profiles"
FLAGGING = ("OPT", "WRN")

Rule = Mapping[str, Any]


def _rule(*names: str) -> Callable[[Rule], bool]:
    return lambda r: r["rule"] in names


def _described(rule_names: tuple[str, ...], *heads: str) -> Callable[[Rule], bool]:
    return lambda r: (
        r["rule"] in rule_names and any(str(r["description"]).startswith(h) for h in heads)
    )


def _any(*tests: Callable[[Rule], bool]) -> Callable[[Rule], bool]:
    return lambda r: any(t(r) for t in tests)


#: criterion -> (label of the paired NVIDIA rules, predicate over a rule result)
PAIRINGS: dict[str, tuple[str, Callable[[Rule], bool]]] = {
    "SHMEM_EFFICIENCY": (
        "SharedMemoryConflicts, UncoalescedSharedAccess",
        _rule("SharedMemoryConflicts", "UncoalescedSharedAccess"),
    ),
    "L1_GRANULARITY": (
        "UncoalescedGlobalAccess, L1TEX global access pattern",
        _any(
            _rule("UncoalescedGlobalAccess"),
            _described(("MemoryCacheAccessPattern",), "L1TEX Global"),
        ),
    ),
    "L2_GRANULARITY": (
        "UncoalescedGlobalAccess, L2 access pattern",
        _any(
            _rule("UncoalescedGlobalAccess"),
            _described(("MemoryCacheAccessPattern",), "L2 "),
        ),
    ),
    "DIVERGENCE": (
        "ThreadDivergence / divergent branches",
        lambda r: "Diverg" in r["rule"] or "divergen" in str(r["description"]).lower()[:80],
    ),
    "LOADBALANC_SM": (
        "workload imbalance, small grid",
        _any(
            lambda r: "Imbalance" in r["rule"] or "imbalance" in str(r["description"])[:80],
            _described(("SOLBottleneck", "LaunchConfiguration"), "Small Grid", "This kernel grid"),
        ),
    ),
    "LOADBALANC_WARP": (
        "AchievedOccupancy (Occupancy before 2022)",
        _any(
            _rule("AchievedOccupancy"),
            lambda r: (
                r["rule"] == "Occupancy" and "measured achieved occupancy" in str(r["description"])
            ),
        ),
    ),
    "THROUGHPUT_OCCUPANCY": (
        "TheoreticalOccupancy, Occupancy limiters",
        _any(
            _rule("TheoreticalOccupancy"),
            lambda r: (
                r["rule"] == "Occupancy"
                and "theoretical occupancy" in str(r["description"])
                and "not impacted" not in str(r["description"])
            ),
        ),
    ),
    "DEVICESYNC": (
        "barrier stalls (CPIStallBarrier, CPIStall 'Barrier Stalls')",
        _any(_rule("CPIStallBarrier"), _described(("CPIStall",), "Barrier Stalls")),
    ),
}


@dataclass
class Tally:
    both: int = 0
    only_we: int = 0
    only_ncu: int = 0
    neither: int = 0
    not_computable: int = 0
    rows: list[tuple[str, str, float | None, float | None, float | None, bool, bool]] = field(
        default_factory=list
    )

    @property
    def compared(self) -> int:
        return self.both + self.only_we + self.only_ncu + self.neither

    @property
    def agreement(self) -> float | None:
        return (self.both + self.neither) / self.compared if self.compared else None


def rule_files() -> list[Path]:
    out = []
    for path in sorted(REAL.rglob("*")):
        if path.suffix in (".ncu-rep", ".nsight-cuprof-report") or (
            path.suffix == ".csv" and "ncu" in path.name and "details" in path.name
        ):
            out.append(path)
    return out


def compare(tallies: dict[str, Tally]) -> list[str]:
    """Fill the tallies from every file; return the files skipped, with the reason."""
    skipped = []
    for path in rule_files():
        try:
            run = pipeline.analyse([str(path)])
        except AdvisorError as exc:
            skipped.append(f"{path.relative_to(REAL)}: {exc}")
            continue
        if run.profile.rules.empty:
            continue
        analysis = run.analysis
        for kernel in analysis.kernels:
            if not kernel.ncu_rules:
                continue
            for name, (_, predicate) in PAIRINGS.items():
                tally = tallies[name]
                result = next(c for c in kernel.criteria if c.name == name)
                fired = [r for r in kernel.ncu_rules if r["rule_type"] in FLAGGING and predicate(r)]
                if result.status == NOT_COMPUTABLE:
                    tally.not_computable += 1
                    continue
                # not applicable (e.g. no shared access at all): we see no such bottleneck
                ours = result.value is not None and result.value < THRESHOLDS[name]
                theirs = bool(fired)
                if ours and theirs:
                    tally.both += 1
                elif ours:
                    tally.only_we += 1
                elif theirs:
                    tally.only_ncu += 1
                else:
                    tally.neither += 1
                estimates = [r["estimated_speedup_frac"] for r in fired]
                known = [e for e in estimates if e is not None]
                tally.rows.append(
                    (
                        f"{path.relative_to(REAL)}",
                        kernel.name,
                        result.value,
                        result.speedups.amdahl,
                        max(known) if known else None,
                        ours,
                        theirs,
                    )
                )
    return skipped


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", action="store_true", help="print every kernel's estimates")
    args = ap.parse_args()
    if not REAL.is_dir():
        print(f"real profiles not found at {REAL}", file=sys.stderr)
        return 2
    tallies = {name: Tally() for name in PAIRINGS}
    skipped = compare(tallies)
    header = (
        f"{'criterion':<21} {'NVIDIA rules':<45} {'both':>4} {'we':>4} {'ncu':>4} "
        f"{'none':>4} {'n/c':>4} {'agree':>6}"
    )
    print(header)
    print("-" * len(header))
    total = agree = 0
    for name, (label, _) in PAIRINGS.items():
        t = tallies[name]
        total += t.compared
        agree += t.both + t.neither
        pct = "-" if t.agreement is None else f"{100 * t.agreement:.0f}%"
        print(
            f"{name:<21} {label[:45]:<45} {t.both:>4} {t.only_we:>4} {t.only_ncu:>4} "
            f"{t.neither:>4} {t.not_computable:>4} {pct:>6}"
        )
    overall = 100 * agree / total if total else 0.0
    print(f"\noverall agreement: {agree}/{total} kernel-criterion pairs = {overall:.1f}%")
    print("(we = only we flag, ncu = only Nsight Compute flags, n/c = criterion not computable)")
    if args.kernels:
        print("\nper kernel: value, our potential speedup (Amdahl), NVIDIA's estimated speedup")
        for name in PAIRINGS:
            for path, kernel, value, ours_sp, ncu_est, ours, theirs in tallies[name].rows:
                flag = {(True, True): "both", (True, False): "we", (False, True): "ncu"}.get(
                    (ours, theirs), "-"
                )
                print(
                    f"  {name:<21} {flag:<4} {_fmt(value)} sp={_fmt(ours_sp, '.2f')}x "
                    f"ncu={_fmt(None if ncu_est is None else 100 * ncu_est, '.1f')}% "
                    f"{kernel[:50]}  [{path}]"
                )
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
