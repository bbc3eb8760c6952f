"""The columnar helpers of the criteria engine (advisor.criteria.engine.unit_columns).

They must give exactly the numbers of the per-unit code (MODELS.md §1: duration-weighted means),
so the report of a page of ten thousand launches stays byte-identical.
"""

from __future__ import annotations

import math

import numpy as np

from advisor.criteria.engine import unit_columns as columns
from advisor.criteria.engine.inputs import Recipe, Unit, _has, apply
from advisor.criteria.engine.means import evidence, weighted_mean


def _unit(lid: int, weight: float | None, **values: float) -> Unit:
    return Unit(lid, weight, values, position=lid)


def test_sequential_sum_adds_in_order_from_zero() -> None:
    # 1e16 + 1 rounds back to 1e16, so the order matters: ((1e16 + 1) - 1e16) + 1 = 1.0 as
    # Python adds; a pairwise sum would give (1e16 + 1) + (-1e16 + 1) = 0.0
    numbers = [1e16, 1.0, -1e16, 1.0]
    assert columns.sequential_sum(np.array(numbers)) == sum(numbers) == 1.0
    # Python's sum starts from 0, so a lone -0.0 sums to +0.0
    total = columns.sequential_sum(np.array([-0.0]))
    assert total == 0.0 and math.copysign(1.0, total) == 1.0 == math.copysign(1.0, sum([-0.0]))


def test_mean_weights_by_duration_or_equally() -> None:
    values = np.array([0.2, 0.6])
    # durations 100 and 300 ns: (100 * 0.2 + 300 * 0.6) / 400 = 200 / 400 = 0.5
    assert columns.mean(values, np.array([100.0, 300.0])) == 0.5
    # an unknown (NaN) or zero duration: equal weights, (0.2 + 0.6) / 2 = 0.4
    assert columns.mean(values, np.array([100.0, np.nan])) == (0.2 + 0.6) / 2
    assert columns.mean(values, np.array([0.0, 300.0])) == (0.2 + 0.6) / 2
    assert columns.mean(np.array([0.7]), np.array([np.nan])) == 0.7


def test_fed_reads_units_over_extra_like_has() -> None:
    extra = {"device.x": 2.0}
    units = [
        _unit(0, 1.0, a=1.0),
        _unit(1, 1.0, a=math.nan),
        _unit(2, 1.0, a=math.inf),
        _unit(3, 1.0),
        _unit(4, 1.0, a=3.0, **{"device.x": math.nan}),  # its own NaN hides the device value
    ]
    values = [u.values for u in units]
    for needs in (("a",), ("device.x",), ("a", "device.x")):
        mask = columns.fed(values, needs, extra).tolist()
        assert mask == [all(_has(u.values, extra, n) for n in needs) for u in units], needs
    assert columns.fed(values, ("a", "device.x"), extra).tolist() == [True] + [False] * 4


def test_apply_and_evidence_match_the_per_unit_means() -> None:
    extra = {"device.peak": 10.0}
    units = [_unit(0, 100.0, a=1.0), _unit(1, 300.0, a=5.0), _unit(2, 50.0)]
    recipe = Recipe("a / peak", ("a", "device.peak"), lambda v: v["a"] / v["device.peak"])
    outcome = apply(units, [recipe], extra)
    # unit 2 lacks "a": the recipe reads units 0 and 1, values 0.1 and 0.5
    assert [u.launch_id for u in outcome.units] == [0, 1] and outcome.values == (0.1, 0.5)
    # weighted by duration: (100 * 0.1 + 300 * 0.5) / 400 = 160 / 400 = 0.4
    assert weighted_mean(outcome.applicable) == 0.4
    # evidence over the units read: a = (100 * 1 + 300 * 5) / 400 = 4.0, the device value as is
    assert evidence(outcome.units, ("a", "device.peak"), extra) == {"a": 4.0, "device.peak": 10.0}


def test_weighted_mean_keeps_a_single_value_as_given() -> None:
    # one unit: its value itself (an int stays an int, as before the columnar path)
    assert weighted_mean([(_unit(0, 5.0), 1)]) == 1
    assert type(weighted_mean([(_unit(0, 5.0), 1)])) is int
