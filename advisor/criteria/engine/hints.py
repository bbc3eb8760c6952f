"""Hints: every criterion below its threshold, with the evidence, the gain and what to do.

Thresholds, titles and actions are fields of each criterion's spec (``SPEC`` in its module of
:mod:`advisor.criteria`, with the reason for the threshold's value); :data:`THRESHOLDS`,
:data:`TITLES` and :data:`ACTIONS` are read-only views over the specs.  Actions are those the papers
name (seed 002, sections IV-VI; MODELS.md "Hints") plus the modern equivalents users expect
(CUDA graphs, cooperative-groups grid sync, vectorized loads, swizzling).  Hints are ranked by
potential speedup (largest first; hints without an estimate last, then in criterion order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from advisor.criteria.engine.analysis import CriterionResult, Hint
from advisor.criteria.engine.spec import BY_NAME, SpecView
from advisor.criteria.engine.speedups import application_gain

#: criterion -> threshold below which it becomes a hint (each spec's ``threshold``; the reason
#: for each value is the spec's ``threshold_reason``)
THRESHOLDS: Mapping[str, float] = SpecView(lambda spec: spec.threshold)
#: criterion -> the hint's title
TITLES: Mapping[str, str] = SpecView(lambda spec: spec.title)
#: criterion -> what to do
ACTIONS: Mapping[str, tuple[str, ...]] = SpecView(lambda spec: spec.actions)


def hint_for(
    result: CriterionResult,
    kernel: str | None,
    form: str,
    share_of_gpu_time: float | None,
) -> Hint | None:
    """The hint of one criterion result, or None when it is fine (or not computed)."""
    spec = BY_NAME[result.name]
    threshold = spec.threshold
    if result.value is None or result.value >= threshold:
        return None
    speedup = result.speedups.pick(form)
    gain = speedup if kernel is None else application_gain(share_of_gpu_time, speedup)
    evidence = {"value": result.value, **dict(result.inputs)}
    if result.level_share_frac is not None:
        evidence["level_share_frac"] = result.level_share_frac
    return Hint(
        criterion=result.name,
        kernel=kernel,
        value=result.value,
        threshold=threshold,
        potential_speedup=speedup,
        application_speedup=gain,
        title=spec.title,
        evidence=evidence,
        actions=spec.actions,
    )


def rank(hints: Sequence[Hint], by_application: bool = False) -> tuple[Hint, ...]:
    """Largest potential speedup first; hints without an estimate last, in criterion order."""
    order = {name: i for i, name in enumerate(BY_NAME)}

    def key(h: Hint) -> tuple[int, float, int, str]:
        gain = h.application_speedup if by_application else h.potential_speedup
        return (
            0 if gain is not None else 1,
            -(gain or 0.0),
            order[h.criterion],
            h.kernel or "",
        )

    return tuple(sorted(hints, key=key))
