"""The shared evaluation flow of a per-kernel criterion.

Contract: :func:`score` runs a criterion's recipes over a kernel's units (first recipe that the
data can feed wins, launches aggregated by duration) and returns a :class:`Scored` (the raw value
in [0, 1], the evidence, the recipe used), or ``None`` when no recipe fits; :func:`absent` and
:func:`not_applicable` build the two non-computed results.  Speedups are added by the criterion
module from the aggregated value (so a reader can recompute them from the report's numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from advisor.criteria.engine import collect
from advisor.criteria.engine import unit_columns as columns
from advisor.criteria.engine.analysis import NOT_APPLICABLE, NOT_COMPUTABLE, CriterionResult
from advisor.criteria.engine.inputs import (
    DeviceView,
    KernelData,
    Recipe,
    Values,
    apply,
    missing_inputs,
    tool_names,
)
from advisor.criteria.engine.means import evidence, evidence_on_columns, weighted_mean


@dataclass(frozen=True)
class Context:
    """What every criterion may read besides the kernel: the device and the report options."""

    device: DeviceView = field(default_factory=DeviceView)
    extra: Values = field(default_factory=dict)  # device.* values
    tools: tuple[str, ...] = ("ncu", "nvprof")  # whose metric names to suggest
    speedup_form: str = "amdahl"


@dataclass(frozen=True)
class Scored:
    raw: float  # duration-weighted mean over the units the recipe could read, clamped to [0, 1]
    recipe: Recipe
    inputs: dict[str, float]
    launches_used: int


def clamp01(x: float) -> float:
    """Clamp to [0, 1] (criteria are fractions; ratios of counters can overshoot slightly)."""
    return min(1.0, max(0.0, x))


def score(kernel: KernelData, recipes: Sequence[Recipe], ctx: Context) -> Scored | str | None:
    """Run ``recipes``; a :class:`Scored`, ``"n/a"`` when every fed unit is 0 / 0, or None."""
    outcome = apply(kernel.units, recipes, ctx.extra, kernel.names)
    if outcome.recipe is None:
        return None
    if outcome.numbers is not None and outcome.rows is not None:
        return _score_on_columns(kernel, outcome.recipe, outcome.numbers, outcome.rows, ctx)
    pairs = outcome.applicable
    if not pairs:
        return "n/a"
    raw = clamp01(weighted_mean(pairs))
    used = [u for u, _ in pairs]
    at = None
    if outcome.rows is not None:  # the columns apply read: the rows of the units used
        kept = np.array([v is not None for v in outcome.values], dtype=bool)
        at = (columns.table_of(kernel.units), outcome.rows[kept])
    return Scored(
        raw=raw,
        recipe=outcome.recipe,
        inputs=evidence(used, (*outcome.recipe.needs, *outcome.recipe.optional), ctx.extra, at),
        launches_used=sum(u.count for u in used),
    )


def _score_on_columns(
    kernel: KernelData, recipe: Recipe, numbers: np.ndarray, rows: np.ndarray, ctx: Context
) -> Scored | str:
    """:func:`score` where the recipe's units are one launch each and their values a float64
    array (NaN: not applicable): the same numbers, read on the arrays of the kernel's
    :class:`~advisor.criteria.engine.unit_columns.Table` (its weights, its columns) instead of
    unit by unit.  Bit-identical: :func:`weighted_mean` of such units is
    :func:`~advisor.criteria.engine.unit_columns.mean` of the same arrays (MODELS.md §1)."""
    kept = ~np.isnan(numbers)
    if not bool(kept.any()):
        return "n/a"
    table = columns.table_of(kernel.units)
    at = rows[kept]
    weights = table.weights[at]
    names = (*recipe.needs, *recipe.optional)
    return Scored(
        raw=clamp01(columns.mean(numbers[kept], weights)),
        recipe=recipe,
        inputs=evidence_on_columns(table, at, weights, names, ctx.extra),
        launches_used=len(at),
    )


def aux_mean(kernel: KernelData, recipes: Sequence[Recipe], ctx: Context) -> Scored | None:
    """Like :func:`score` for an auxiliary quantity (p, warp inactivity); None if absent."""
    result = score(kernel, recipes, ctx)
    return result if isinstance(result, Scored) else None


def absent(
    name: str,
    kernel: KernelData,
    recipes: Sequence[Recipe],
    ctx: Context,
    notes: tuple[str, ...] = (),
) -> CriterionResult:
    """The not-computable result: what is missing and the commands that would collect it."""
    missing = missing_inputs(kernel.units, recipes, ctx.extra, ctx.tools, kernel.names)
    device_missing = [m for m in missing if m.startswith("device.")]
    if device_missing:
        notes = (
            *notes,
            "device facts missing ("
            + ", ".join(device_missing)
            + "): the device was not identified; pass --device NAME or a characterization file",
        )
    return CriterionResult(
        name=name,
        status=NOT_COMPUTABLE,
        missing=missing,
        missing_tool_metrics={t: tool_names(missing, t) for t in ("ncu", "nvprof")},
        collect=collect.commands_for(name),
        notes=notes,
    )


def not_applicable(name: str, reason: str, scored_inputs: Values | None = None) -> CriterionResult:
    return CriterionResult(
        name=name,
        status=NOT_APPLICABLE,
        inputs=dict(scored_inputs or {}),
        notes=(reason,),
    )


def inverse(value: float | None) -> float | None:
    """1 / criterion (seed 002, section V); None (unbounded) for a criterion of 0."""
    if value is None or value <= 0:
        return None
    return 1.0 / value
