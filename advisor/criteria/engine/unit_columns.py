"""The values of many units as columns, for :mod:`advisor.criteria.engine.inputs`.

A raw Nsight Compute page gives each launch metric rows of its own, so a kernel of ten thousand
launches has ten thousand units; checking which units feed a recipe and averaging the evidence
over them reads one name across every unit.  These helpers do that on numpy arrays and return
exactly the numbers of the per-unit code: a unit's value is ``values.get(name, extra.get(name))``
(absent: NaN), and sums run in order from 0 (:func:`sequential_sum`), as Python's ``sum`` of
floats does, so every mean is bit-identical (MODELS.md §1: duration-weighted means).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

Values = Mapping[str, float]


def column(values: Sequence[Values], name: str, extra: Values) -> np.ndarray:
    """Per unit, its value of ``name`` (else ``extra``'s) as a float; NaN where there is none."""
    default = extra.get(name)
    return np.array([v.get(name, default) for v in values], dtype=float)


def fed(values: Sequence[Values], needs: Sequence[str], extra: Values) -> np.ndarray:
    """Per unit: does it have a finite value of every name in ``needs``?"""
    mask = np.ones(len(values), dtype=bool)
    for name in needs:
        mask &= np.isfinite(column(values, name, extra))
    return mask


def sequential_sum(numbers: np.ndarray) -> float:
    """``sum(numbers)`` as Python adds floats: one after the other, starting from 0."""
    return float(np.cumsum(np.concatenate(([0.0], numbers)))[-1])


def mean(numbers: np.ndarray, weights: np.ndarray) -> float:
    """The duration-weighted mean of :func:`advisor.criteria.engine.means.weighted_mean` for units
    that are one launch each: equal weights when a weight is unknown (NaN) or not > 0."""
    if len(numbers) == 1:
        return float(numbers[0])
    if not bool((weights > 0).all()):  # NaN is not > 0
        return sequential_sum(numbers) / len(numbers)
    return sequential_sum(weights * numbers) / sequential_sum(weights)
