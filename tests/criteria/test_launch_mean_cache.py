"""The mean over the launches of collapsed units (advisor.criteria.engine.means._launch_mean)
is computed once per (units, values): several criteria average the same input over the same
units; a cached mean is the one computed afresh, and other values are not taken for it."""

from __future__ import annotations

import numpy as np

from advisor.criteria.engine import means
from advisor.criteria.engine.inputs import Members, Unit


def _unit(first: int, count: int, step: int) -> Unit:
    positions = np.arange(first, first + count * step, step, dtype=np.int64)
    durations = np.linspace(1.0, 3.0, count) * (first + 1)
    return Unit(
        launch_id=first,
        weight_ns=float(durations.sum()),
        values={},
        count=count,
        position=first,
        members=Members(positions=positions, launch_ids=positions, durations=durations),
    )


def test_a_cached_mean_is_the_fresh_one_and_other_values_are_not_taken_for_it() -> None:
    units = (_unit(0, 500, 2), _unit(1, 499, 2))
    pairs = [(units[0], 0.1), (units[1], 0.7)]
    means._MEANS.clear()
    first = means._launch_mean(pairs)
    assert len(means._MEANS) == 1
    again = means._launch_mean(list(pairs))
    means._MEANS.clear()
    assert again == first == means._launch_mean(pairs)
    other = means._launch_mean([(units[0], 0.1), (units[1], 0.9)])
    assert other != first and len(means._MEANS) == 2
    w = np.concatenate([u.members.durations for u in units if u.members is not None])
    order = np.argsort(np.concatenate([u.members.positions for u in units if u.members]))
    v = np.repeat([0.1, 0.7], [500, 499])
    assert first == float(np.cumsum((w * v)[order])[-1] / np.cumsum(w[order])[-1])
