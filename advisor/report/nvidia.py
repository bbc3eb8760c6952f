"""NVIDIA Nsight Compute's own estimate beside the advisor's, matched to the criterion.

Nsight Compute's guided analysis ("rules") gives, for some findings, an estimated speedup as a
fraction of the kernel's time that fixing it would save (``estimated_speedup_frac`` of each
entry of a kernel's ``ncu_rules``).  The report shows it in the advisor's unit, a multiplier:
a saving of a fraction ``f`` of the time is a speedup of ``1 / (1 - f)`` (0.489 -> 1.96x).

:data:`PAIRINGS` says which rules speak of the same bottleneck as each criterion (the pairing of
``benchmarks/ncu_agreement.py``, which measures how often the two agree).  HOSTSYNC has none:
Nsight Compute profiles kernels one at a time and never sees the idle time between them.

Which estimate (:func:`estimate`): among the criterion's paired rules that carry one, the largest;
an estimate whose speedup type is ``global`` (or unstated) is preferred to a ``local`` one.
NVIDIA's *global* estimates are relative to the kernel's whole duration, *local* ones to the part
of it the rule addresses (a pipeline, a stall reason), so a local one is not a speedup of the
kernel; it is shown only when no global one exists, marked ``local``.  A fraction outside
[0, 1) gives no finite multiplier and is ignored.

A paired rule that fired (a warning or an optimisation hint, :data:`FIRED_TYPES`) without an
estimate still says that Nsight Compute saw the bottleneck: Nsight Compute before 2023 gives no
estimated speedups at all.  :func:`estimate` then returns an estimate without a speedup
(``speedup`` None) whose label reads ``fired, no estimate (RULE)``, so the NVIDIA column never
shows "—" for a rule that fired.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.render.display import speedup_text

Rule = Mapping[str, Any]

#: NVIDIA's speedup type whose estimate is a fraction of a part of the kernel, not of its time
LOCAL = "local"
#: rule result types that mean the rule fired (warning, optimisation, error); INF and OK do not
FIRED_TYPES = frozenset(("WRN", "OPT", "ERR", "WARNING", "OPTIMIZATION", "ERROR"))
#: the label of a paired rule that fired without an estimated speedup
FIRED_NO_ESTIMATE = "fired, no estimate"


def _rule(*names: str) -> Callable[[Rule], bool]:
    return lambda r: r.get("rule") in names


def _described(rule_names: tuple[str, ...], *heads: str) -> Callable[[Rule], bool]:
    return lambda r: (
        r.get("rule") in rule_names and any(str(r.get("description")).startswith(h) for h in heads)
    )


def _any(*tests: Callable[[Rule], bool]) -> Callable[[Rule], bool]:
    return lambda r: any(t(r) for t in tests)


#: criterion -> (label of the paired NVIDIA rules, predicate over one ``ncu_rules`` entry);
#: the pairing of benchmarks/ncu_agreement.py, whose agreement figures are in docs/criteria.md
PAIRINGS: dict[str, tuple[str, Callable[[Rule], bool]]] = {
    "DEVICESYNC": (
        "barrier stalls (CPIStallBarrier, CPIStall 'Barrier Stalls')",
        _any(_rule("CPIStallBarrier"), _described(("CPIStall",), "Barrier Stalls")),
    ),
    "DIVERGENCE": (
        "ThreadDivergence / divergent branches",
        lambda r: (
            "Diverg" in str(r.get("rule")) or "divergen" in str(r.get("description")).lower()[:80]
        ),
    ),
    "LOADBALANC_WARP": (
        "AchievedOccupancy (Occupancy before 2022)",
        _any(
            _rule("AchievedOccupancy"),
            lambda r: (
                r.get("rule") == "Occupancy"
                and "measured achieved occupancy" in str(r.get("description"))
            ),
        ),
    ),
    "LOADBALANC_SM": (
        "workload imbalance, small grid",
        _any(
            lambda r: (
                "Imbalance" in str(r.get("rule")) or "imbalance" in str(r.get("description"))[:80]
            ),
            _described(("SOLBottleneck", "LaunchConfiguration"), "Small Grid", "This kernel grid"),
        ),
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
    "SHMEM_EFFICIENCY": (
        "SharedMemoryConflicts, UncoalescedSharedAccess",
        _rule("SharedMemoryConflicts", "UncoalescedSharedAccess"),
    ),
    "THROUGHPUT_OCCUPANCY": (
        "TheoreticalOccupancy, Occupancy limiters",
        _any(
            _rule("TheoreticalOccupancy"),
            lambda r: (
                r.get("rule") == "Occupancy"
                and "theoretical occupancy" in str(r.get("description"))
                and "not impacted" not in str(r.get("description"))
            ),
        ),
    ),
}


@dataclass(frozen=True)
class NvidiaEstimate:
    """NVIDIA's estimated speedup for one criterion (of one kernel, or of several together)."""

    #: the multiplier, 1 / (1 - fraction) for one kernel; None: a paired rule fired without one
    speedup: float | None
    fraction: float | None  # NVIDIA's fraction of the time saved (None: several kernels combined)
    rules: tuple[str, ...]  # the rules it comes from, e.g. ("SharedMemoryConflicts",)
    local: bool = False  # NVIDIA calls it local: relative to a part of the kernel, not its time
    kernels: int = 1  # the kernels that had an estimate (for a combined one)
    of_kernels: int = 1  # the kernels combined

    @property
    def label(self) -> str:
        """``1.96x (SharedMemoryConflicts)``; ``local`` and ``2 of 3 kernels`` (a combined estimate
        that some kernels lack) when so; ``fired, no estimate (ThreadDivergence)`` for a rule that
        fired without an estimate."""
        rules = ", ".join(self.rules)
        if self.speedup is None:
            return f"{FIRED_NO_ESTIMATE} ({rules})"
        extra = ["local"] if self.local else []
        if self.kernels < self.of_kernels:
            extra.append(f"{self.kernels} of {self.of_kernels} kernels")
        tail = f"; {', '.join(extra)}" if extra else ""
        return f"{speedup_text(self.speedup)} ({rules}{tail})"

    @property
    def cell(self) -> str:
        """A table cell: ``1.96x``, ``(1.96x)`` for a local estimate, ``fired, no estimate``."""
        if self.speedup is None:
            return FIRED_NO_ESTIMATE
        return f"({speedup_text(self.speedup)})" if self.local else speedup_text(self.speedup)


def speedup_of(fraction: float | None) -> float | None:
    """NVIDIA's fraction of the time saved as a multiplier, 1 / (1 - f); None outside [0, 1)."""
    if fraction is None or not 0.0 <= fraction < 1.0:
        return None
    return 1.0 / (1.0 - fraction)


def matching_rules(rules: Iterable[Rule], criterion: str) -> list[Rule]:
    """The kernel's rule results paired with ``criterion`` (none for an unpaired criterion)."""
    pairing = PAIRINGS.get(criterion)
    if pairing is None:
        return []
    return [r for r in rules if pairing[1](r)]


def fired(rule: Rule) -> bool:
    """Whether a rule result is a finding (:data:`FIRED_TYPES`), not information."""
    return str(rule.get("rule_type") or "").upper() in FIRED_TYPES


def estimate(rules: Iterable[Rule], criterion: str) -> NvidiaEstimate | None:
    """NVIDIA's estimate for ``criterion`` from one kernel's ``ncu_rules``: the largest of the
    paired rules' estimates, global ones before local ones; where no paired rule has one but
    one fired, an estimate without a speedup naming the rules that fired; None when no paired
    rule fired."""
    best: tuple[bool, float, str] | None = None
    paired = matching_rules(rules, criterion)
    for r in paired:
        fraction = r.get("estimated_speedup_frac")
        if fraction is None or speedup_of(float(fraction)) is None:
            continue
        local = str(r.get("speedup_type") or "").lower() == LOCAL
        candidate = (not local, float(fraction), str(r.get("rule") or ""))
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    if best is None:
        names = sorted({str(r.get("rule") or "") for r in paired if fired(r)} - {""})
        return NvidiaEstimate(None, None, tuple(names)) if names else None
    speedup = speedup_of(best[1])
    assert speedup is not None
    return NvidiaEstimate(speedup=speedup, fraction=best[1], rules=(best[2],), local=not best[0])


def combined(parts: Sequence[tuple[float | None, NvidiaEstimate | None]]) -> NvidiaEstimate | None:
    """NVIDIA's estimates of several kernels (each with its share of GPU time) as one speedup of
    their time together, ``Σ share / Σ (share / SP)``, the way the advisor combines its own;
    a kernel without an estimate counts as 1x.  None when no kernel with a known share has
    one."""
    known = [(s, e) for s, e in parts if s is not None]
    with_estimate = [e for _, e in known if e is not None and e.speedup is not None]
    if not with_estimate:
        fired_rules = sorted({r for _, e in known if e is not None for r in e.rules})
        return NvidiaEstimate(None, None, tuple(fired_rules)) if fired_rules else None
    if len(parts) == 1:
        return with_estimate[0]
    total = sum(s for s, _ in known)
    after = sum(s / e.speedup if e is not None and e.speedup is not None else s for s, e in known)
    if not (total > 0 and after > 0):
        return None
    rules = tuple(sorted({r for e in with_estimate for r in e.rules}))
    return NvidiaEstimate(
        speedup=total / after,
        fraction=None,
        rules=rules,
        local=any(e.local for e in with_estimate),
        kernels=len(with_estimate),
        of_kernels=len(parts),
    )
