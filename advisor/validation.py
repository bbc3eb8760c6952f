"""How close predicted speedups come to measured ones: the summary statistics of a validation.

A *pair* is ``(predicted, measured)``: the speedup an analysis of the *before* profile predicted
for a tuning step, and the speedup the step achieved, ``duration(before) / duration(after)``
(so 2.0 = twice as fast, 0.5 = twice as slow).  Both must be positive and finite; pairs that are
not are dropped by :func:`summarize` (and counted in :attr:`Summary.dropped`).

This module is pure (standard library and numpy only, no other ``advisor`` import) so that the
``compare`` command and ``benchmarks/speedup_validation.py`` compute the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "GAIN_THRESHOLD",
    "WITHIN",
    "BoundSummary",
    "Summary",
    "bounds_share",
    "error_factor",
    "rank_average",
    "sign_agreement",
    "spearman",
    "summarize",
    "summarize_bounds",
    "within_bound",
]

#: a predicted or measured speedup above this is a "gain" for :func:`sign_agreement`
GAIN_THRESHOLD = 1.10
#: the tolerance of :attr:`Summary.within_25`: ``|pred / measured - 1| <= WITHIN``
WITHIN = 0.25


def _valid(x: float | None) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def speedup(before: float | None, after: float | None) -> float | None:
    """before / after: the measured speedup from a duration ``before`` to ``after`` (None when
    either is missing or ``after`` is not positive)."""
    if before is None or after is None or after <= 0:
        return None
    return before / after


def error_factor(pred: float, measured: float) -> float:
    """``exp(|ln(pred / measured)|)``: by how many times the prediction is off, either way.

    1.0 is exact; 2.0 means twice or half the measured speedup.  Both arguments must be
    positive and finite (``ValueError`` otherwise).
    """
    if not (_valid(pred) and _valid(measured)):
        raise ValueError(f"speedups must be positive and finite, not {pred!r}, {measured!r}")
    return math.exp(abs(math.log(pred / measured)))


def rank_average(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n of ``values`` in ascending order; tied values share the mean of their ranks
    (``[10, 20, 20, 30]`` -> ``[1, 2.5, 2.5, 4]``)."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x), dtype=float)
    ranks[order] = np.arange(1, len(x) + 1, dtype=float)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.zeros(len(counts), dtype=float)
    np.add.at(sums, inverse, ranks)
    averaged: np.ndarray = (sums / counts)[inverse]
    return averaged


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation: the Pearson correlation of the average ranks
    (:func:`rank_average`) of ``xs`` and ``ys``.

    ``None`` with fewer than two pairs or when either side is constant (no ranking to compare).
    """
    if len(xs) != len(ys):
        raise ValueError("xs and ys must have the same length")
    if len(xs) < 2:
        return None
    rx, ry = rank_average(xs), rank_average(ys)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float(np.sum(dx * dx)) * float(np.sum(dy * dy)))
    if denom == 0:
        return None
    return float(np.sum(dx * dy)) / denom


def sign_agreement(
    pairs: Iterable[tuple[float, float]], gain_threshold: float = GAIN_THRESHOLD
) -> tuple[int, int]:
    """``(agreeing, counted)`` over the pairs whose measured speedup is a clear gain or a loss.

    * a step that gained (``measured >= gain_threshold``, 1.10 = at least 10 % faster) agrees
      when a gain was predicted (``pred > gain_threshold``);
    * a step that lost (``measured < 1``) agrees when no gain was predicted
      (``pred <= gain_threshold``);
    * steps in between (``1 <= measured < gain_threshold``: no clear gain, no loss) are not
      counted.
    """
    agree = counted = 0
    for pred, measured in pairs:
        if measured >= gain_threshold:
            counted += 1
            agree += pred > gain_threshold
        elif measured < 1.0:
            counted += 1
            agree += pred <= gain_threshold
    return agree, counted


def bounds_share(overall: Sequence[float], measured: Sequence[float]) -> float | None:
    """Share of steps where the overall potential speedup is an upper bound of the gain:
    ``overall[i] >= measured[i]``.  ``None`` for no steps."""
    if len(overall) != len(measured):
        raise ValueError("overall and measured must have the same length")
    if not overall:
        return None
    return sum(o >= m for o, m in zip(overall, measured, strict=True)) / len(overall)


def within_bound(bound: float | None, measured: float | None) -> bool | None:
    """Whether a measured speedup stays within an upper bound (``measured <= bound``), such as
    a kernel's roofline headroom (1 / its throughput fraction of peak).

    A bound is not a prediction: a step may use any part of the headroom, so the only check is
    whether the measured gain stayed inside it; no error factor is computed.  ``None`` when a
    side is missing, not positive or not finite."""
    if bound is None or measured is None or not (_valid(bound) and _valid(measured)):
        return None
    return measured <= bound


@dataclass(frozen=True)
class BoundSummary:
    """Upper bounds set against measured speedups over ``n`` steps (:func:`within_bound`):
    ``within`` of them stayed inside their bound; ``dropped`` pairs had a side missing, not
    positive or not finite."""

    n: int
    within: int
    dropped: int = 0

    @property
    def share(self) -> float | None:
        """within / n; None with no step."""
        return self.within / self.n if self.n else None


def summarize_bounds(pairs: Iterable[tuple[float | None, float | None]]) -> BoundSummary:
    """The :class:`BoundSummary` of ``(bound, measured)`` pairs."""
    checked = [within_bound(b, m) for b, m in pairs]
    kept = [c for c in checked if c is not None]
    return BoundSummary(n=len(kept), within=sum(kept), dropped=len(checked) - len(kept))


@dataclass(frozen=True)
class Summary:
    """Agreement of predicted with measured speedups over ``n`` steps.

    * ``median_error_factor``: ``exp(median |ln(pred / measured)|)`` (1.0 = exact);
    * ``within_25``: share of steps with ``|pred / measured - 1| <= 0.25``;
    * ``sign_agree`` / ``sign_counted``: :func:`sign_agreement` (steps that neither gained
      10 % nor lost are not counted);
    * ``spearman``: Spearman's rho of predicted against measured (average ranks for ties);
    * ``dropped``: pairs left out because a side was missing, not positive or not finite.

    Every figure is ``None`` when there is no step to compute it on.
    """

    n: int
    median_error_factor: float | None
    within_25: float | None
    sign_agree: int
    sign_counted: int
    spearman: float | None
    dropped: int = 0

    @property
    def sign_share(self) -> float | None:
        return self.sign_agree / self.sign_counted if self.sign_counted else None


def summarize(
    pairs: Iterable[tuple[float | None, float | None]],
    gain_threshold: float = GAIN_THRESHOLD,
) -> Summary:
    """The :class:`Summary` of ``(predicted, measured)`` pairs (invalid pairs dropped)."""
    kept: list[tuple[float, float]] = []
    dropped = 0
    for pred, measured in pairs:
        if pred is not None and measured is not None and _valid(pred) and _valid(measured):
            kept.append((pred, measured))
        else:
            dropped += 1
    if not kept:
        return Summary(0, None, None, 0, 0, None, dropped)
    logs = [abs(math.log(p / m)) for p, m in kept]
    within = sum(abs(p / m - 1.0) <= WITHIN for p, m in kept) / len(kept)
    agree, counted = sign_agreement(kept, gain_threshold)
    rho = spearman([p for p, _ in kept], [m for _, m in kept])
    return Summary(
        n=len(kept),
        median_error_factor=math.exp(float(np.median(logs))),
        within_25=within,
        sign_agree=agree,
        sign_counted=counted,
        spearman=rho,
        dropped=dropped,
    )
