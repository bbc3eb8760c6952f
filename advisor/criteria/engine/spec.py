"""The declarative description of one criterion, and the views generated from all of them.

Every criterion of seed 002 (section IV; MODELS.md §1) is one module of :mod:`advisor.criteria`
exposing ``SPEC``, a :class:`CriterionSpec`: its name and paper order, the threshold below which
it becomes a hint (with the reason for the value), the hint's title and actions (MODELS.md
"Hints"), the short column label of the reports, the recipes it reads, the profiler inputs that
collect them (:class:`Needs`) and its evaluator.  :mod:`advisor.criteria` gathers the specs into
``SPECS`` (paper order); everything else -- ``CRITERIA``, the evaluator map, the hint tables of
:mod:`~advisor.criteria.engine.hints`, the collection commands of
:mod:`~advisor.criteria.engine.collect`, the needed-metrics set of
:mod:`~advisor.criteria.engine.needed` and the report's column labels -- is derived from them.

Engine modules are imported while :mod:`advisor.criteria` is still importing its criterion
modules, so they never read ``SPECS`` at import time: :func:`registered` looks it up when called,
and :class:`SpecView` / :func:`from_specs` rebuild their tables whenever the registered tuple
changes (a test may register a fake criterion by replacing ``advisor.criteria.SPECS``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from advisor.criteria.engine.analysis import CriterionResult
from advisor.criteria.engine.inputs import Recipe

#: the two scopes: one value per application (evaluated on the profile) or per kernel
APPLICATION = "application"
KERNEL = "kernel"
SCOPES = (APPLICATION, KERNEL)

T = TypeVar("T")


@dataclass(frozen=True)
class Needs:
    """What to collect for one criterion (:mod:`advisor.criteria.engine.collect`)."""

    ncu_metrics: tuple[str, ...] = ()
    ncu_sections: tuple[str, ...] = ()
    nvprof_metrics: tuple[str, ...] = ()
    nvprof_events: tuple[str, ...] = ()
    timeline: bool = False
    nvprof_note: str = ""  # why nvprof cannot give it, when it cannot


@dataclass(frozen=True)
class CriterionSpec:
    """Everything the advisor knows about one criterion, in one place.

    ``evaluate`` is ``(KernelData, Context) -> CriterionResult`` for scope ``"kernel"`` and
    ``(Profile) -> CriterionResult`` for scope ``"application"``.  ``recipes`` are every recipe
    the evaluator reads (its own and auxiliary ones such as the warp activity), so the metrics a
    report needs are derived from them; ``metric_patterns`` match needed names that no recipe
    can list (DEVICESYNC's stall families).
    """

    name: str
    order: int  # position in the paper (seed 002, section IV); reports follow it
    threshold: float  # below it the criterion becomes a hint
    threshold_reason: str  # why the threshold has that value
    title: str  # the hint's title
    actions: tuple[str, ...]  # what to do (the papers' advice and modern equivalents)
    short_label: str  # the kernels table's column header (at most 10 characters)
    recipes: tuple[Recipe, ...]
    needs: Needs  # the profiler inputs that collect the recipes' values
    evaluate: Callable[..., CriterionResult]
    scope: str = KERNEL
    metric_patterns: tuple[re.Pattern[str], ...] = ()
    #: other diagnoses of the same value: variant -> (title, actions), picked by the result
    variants: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"{self.name}: scope must be one of {SCOPES}, not {self.scope!r}")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"{self.name}: threshold must be in (0, 1], not {self.threshold}")
        if not self.actions or not self.title or not self.threshold_reason:
            raise ValueError(f"{self.name}: a spec needs a title, actions and a threshold reason")


def registered() -> tuple[CriterionSpec, ...]:
    """``advisor.criteria.SPECS``, read at call time (never at import time: see above)."""
    from advisor import criteria

    return criteria.SPECS


class _Memo(Generic[T]):
    """``build(registered())``, rebuilt only when the registered tuple is another object."""

    def __init__(self, build: Callable[[tuple[CriterionSpec, ...]], T]) -> None:
        self._build = build
        self._memo: tuple[tuple[CriterionSpec, ...], T] | None = None

    def __call__(self) -> T:
        specs = registered()
        memo = self._memo
        if memo is None or memo[0] is not specs:
            memo = self._memo = (specs, self._build(specs))
        return memo[1]


def from_specs(build: Callable[[tuple[CriterionSpec, ...]], T]) -> Callable[[], T]:
    """A function returning ``build(SPECS)``, computed once per registered tuple."""
    return _Memo(build)


class SpecView(Mapping[str, T]):
    """A read-only ``name -> pick(spec)`` mapping over the registered specs, in paper order,
    followed by ``extra`` entries (e.g. the speedup inputs of ``collect.NEEDS``)."""

    def __init__(
        self, pick: Callable[[CriterionSpec], T], extra: Mapping[str, T] | None = None
    ) -> None:
        tail = dict(extra or {})
        self._table = from_specs(lambda specs: {**{s.name: pick(s) for s in specs}, **tail})

    def __getitem__(self, name: str) -> T:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"SpecView({self._table()!r})"


#: name -> spec of every registered criterion
BY_NAME: Mapping[str, CriterionSpec] = SpecView(lambda s: s)
