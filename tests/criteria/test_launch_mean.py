"""Means over collapsed units (advisor/criteria/engine/means.py): each launch counted once, the
sums added in launch order, so the result is the number Python's own sums over the launches give
(MODELS.md §1, the duration-weighted mean), also when several inputs share one tuple of units and
the launch order and weight sum computed for the first are used again."""

from __future__ import annotations

import numpy as np

from advisor.criteria.engine.inputs import Members, Unit
from advisor.criteria.engine.means import weighted_mean


def _collapsed(positions: list[int], durations: list[float]) -> Unit:
    weight = float(np.nansum(durations)) if not any(np.isnan(durations)) else None
    return Unit(
        launch_id=positions[0],
        weight_ns=weight,
        values={},
        count=len(positions),
        position=positions[0],
        members=Members(
            positions=np.array(positions, dtype=np.int64),
            launch_ids=np.array(positions, dtype=np.int64),
            durations=np.array(durations, dtype=float),
        ),
    )


def _reference(launches: list[tuple[int, float, float]]) -> float:
    """The mean over the launches (position, duration, value) in launch order, in plain Python."""
    ordered = sorted(launches)
    if any(not d > 0 for _, d, _ in ordered):
        total = 0.0
        for _, _, v in ordered:
            total += v
        return total / len(ordered)
    num = den = 0.0
    for _, d, v in ordered:
        num += d * v
        den += d
    return num / den


def test_collapsed_means_equal_the_sums_over_the_launches_in_launch_order() -> None:
    rng = np.random.default_rng(7)
    spots = rng.permutation(40).tolist()
    durations = rng.lognormal(3.0, 1.5, 40).tolist()
    a = _collapsed(sorted(spots[:15]), [durations[p] for p in sorted(spots[:15])])
    b = _collapsed(sorted(spots[15:]), [durations[p] for p in sorted(spots[15:])])
    for values in ((0.1, 0.7), (1e-9, 3.3e7), (0.3, 0.3)):  # one tuple of units, several inputs
        launches = [(p, durations[p], values[0]) for p in a.members.positions.tolist()]  # type: ignore[union-attr]
        launches += [(p, durations[p], values[1]) for p in b.members.positions.tolist()]  # type: ignore[union-attr]
        assert weighted_mean([(a, values[0]), (b, values[1])]) == _reference(launches)
        assert weighted_mean([(b, values[1]), (a, values[0])]) == _reference(launches)


def test_an_unknown_duration_makes_the_weights_equal() -> None:
    a = _collapsed([0, 2], [5.0, float("nan")])
    b = _collapsed([1, 3], [7.0, 9.0])
    launches = [(0, float("nan"), 0.25), (2, float("nan"), 0.25), (1, 7.0, 0.5), (3, 9.0, 0.5)]
    assert weighted_mean([(a, 0.25), (b, 0.5)]) == _reference(launches)
    c = _collapsed([4, 5], [1.0, 2.0])
    d = _collapsed([6, 7], [0.0, 2.0])  # a zero duration too: equal weights
    assert weighted_mean([(c, 1.0), (d, 4.0)]) == (1.0 + 1.0 + 4.0 + 4.0) / 4
