"""Duration-weighted means over the units of a kernel (MODELS.md §1), for the criteria and the
evidence the report shows.

A collapsed :class:`~advisor.criteria.engine.inputs.Unit` counts as its launches and the sums run in
launch order, so every mean is the same number as over one unit per launch; units that are one
launch each are averaged on columns (:mod:`advisor.criteria.engine.unit_columns`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from advisor.criteria.engine import unit_columns as columns
from advisor.criteria.engine.inputs import DURATION, Unit, Values, _has, _split


def weighted_mean(pairs: Sequence[tuple[Unit, float]]) -> float:
    """Duration-weighted mean of per-unit values (equal weights if any duration is unknown).

    A collapsed unit counts as its launches, and the sums run in launch order, so the result is
    the same number as over one unit per launch."""
    if any(u.members is not None for u, _ in pairs):
        return _launch_mean(pairs)
    if len(pairs) == 1:
        return pairs[0][1]
    if all(type(v) is float for _, v in pairs):  # on arrays, the same sums in the same order
        durations = np.array([u.weight_ns for u, _ in pairs], dtype=float)
        return columns.mean(np.array([v for _, v in pairs]), durations)
    weights = [u.weight_ns for u, _ in pairs]
    if any(w is None or not w > 0 for w in weights):
        return sum(v for _, v in pairs) / len(pairs)
    total = sum(w for w in weights if w is not None)
    return sum((w or 0.0) * v for w, (_, v) in zip(weights, pairs, strict=True)) / total


def _launch_mean(pairs: Sequence[tuple[Unit, float]]) -> float:
    """:func:`weighted_mean` over the launches of (collapsed) units, on arrays: a cumulative sum
    adds in the order Python's ``sum`` does, so the result is bit-identical."""
    units = tuple(u for u, _ in pairs)
    values = tuple(value for _, value in pairs)
    key = (tuple(map(id, units)), values)
    hit = _MEANS.get(key)
    if hit is not None:  # the same input over the same units (several criteria read it)
        return hit[1]
    unit_of, w, total = _launch_order(units)
    v = np.array(values, dtype=float)[unit_of]
    if len(v) == 1:
        mean = float(v[0])
    elif total is None:  # a weight unknown (NaN) or not > 0: equal weights
        mean = float(np.cumsum(v)[-1] / len(v))
    else:
        mean = float(np.cumsum(w * v)[-1] / total)
    if len(_MEANS) >= _MEANS_KEPT:
        del _MEANS[next(iter(_MEANS))]  # the oldest
    _MEANS[key] = (units, mean)
    return mean


#: the means :func:`_launch_mean` computed last: (the units' ids, the values) -> (the units,
#: kept so that their ids stay theirs while the entry lives; the mean)
_MEANS: dict[tuple[tuple[int, ...], tuple[float, ...]], tuple[tuple[Unit, ...], float]] = {}
_MEANS_KEPT = 64


#: the launch order of the unit tuples :func:`_launch_mean` saw last (a kernel's criteria average
#: several inputs over the same units): key -> (the units themselves, kept so that their ids stay
#: theirs while the entry lives; each launch's unit in launch order; the weights in that order;
#: their sum)
_ORDERS: dict[tuple[int, ...], tuple[tuple[Unit, ...], np.ndarray, np.ndarray, float | None]] = {}
_ORDERS_KEPT = 16


def _launch_order(units: tuple[Unit, ...]) -> tuple[np.ndarray, np.ndarray, float | None]:
    """For the launches of ``units`` in launch order: the index of each one's unit in
    ``units``, their durations (the weights), and the weights' sum added in that order (the
    cumulative sum's last value, as :func:`_launch_mean` divides by), or None when a weight is
    unknown or not positive.  Computed once per tuple of units: a kernel's criteria average
    several inputs over the same units."""
    key = tuple(map(id, units))
    hit = _ORDERS.get(key)
    if hit is not None:
        return hit[1], hit[2], hit[3]
    positions, weights = [], []
    for unit in units:
        if unit.members is not None:
            positions.append(unit.members.positions)
            weights.append(unit.members.durations)
        else:
            positions.append(np.array([unit.position], dtype=np.int64))
            weight = unit.weight_ns if unit.weight_ns is not None else math.nan
            weights.append(np.array([weight], dtype=float))
    order = np.argsort(np.concatenate(positions), kind="stable")
    w = np.concatenate(weights)[order]
    unit_of = np.repeat(np.arange(len(units)), [u.count for u in units])[order]
    total = float(np.cumsum(w)[-1]) if len(w) and bool((w > 0).all()) else None
    if len(_ORDERS) >= _ORDERS_KEPT:
        del _ORDERS[next(iter(_ORDERS))]  # the oldest
    _ORDERS[key] = (units, unit_of, w, total)
    return unit_of, w, total


def evidence(
    units: Sequence[Unit],
    names: Iterable[str],
    extra: Values,
    at: tuple[columns.Table, np.ndarray] | None = None,
) -> dict[str, float]:
    """The (duration-weighted mean) value of each input over ``units``, for the report; ``at``:
    a table of the kernel's units and the rows of ``units`` in it (units of one launch each),
    whose columns are then read instead of the units' values."""
    out: dict[str, float] = {}
    names = tuple(names)
    if any(u.members is not None for u in units) and DURATION in names:
        units = [one for u in units for one in (_split(u) if u.members is not None else (u,))]
    if all(u.members is None for u in units):  # one launch per unit: on columns
        weights = np.array([u.weight_ns for u in units], dtype=float)
        if at is not None:
            return evidence_on_columns(at[0], at[1], weights, names, extra)
        values = [u.values for u in units]
        for name in names:
            column = columns.column(values, name, extra)
            finite = np.isfinite(column)
            if finite.any():
                out[name] = columns.mean(column[finite], weights[finite])
        return out
    for name in names:
        pairs = [
            (u, float(u.values.get(name, extra.get(name))))  # type: ignore[arg-type]
            for u in units
            if _has(u.values, extra, name)
        ]
        if pairs:
            out[name] = weighted_mean(pairs)
    return out


def evidence_on_columns(
    table: columns.Table,
    rows: np.ndarray,
    weights: np.ndarray,
    names: Iterable[str],
    extra: Values,
) -> dict[str, float]:
    """:func:`evidence` of the units ``rows`` of ``table`` (units of one launch each, whose
    durations are ``weights``), read on the table's columns: per name, the mean of the finite
    values (:func:`~advisor.criteria.engine.unit_columns.mean`)."""
    out: dict[str, float] = {}
    for name in names:
        column = table.column(name, extra)[rows]
        finite = np.isfinite(column)
        if bool(finite.all()):
            out[name] = columns.mean(column, weights)
        elif finite.any():
            out[name] = columns.mean(column[finite], weights[finite])
    return out
