"""Scoring units of one launch each on arrays (advisor.criteria.engine.common.score).

Where a recipe's units are one launch each and its values all floats (or not applicable),
:func:`score` takes the duration-weighted mean, the evidence and the launch count from the
arrays of the kernel's table instead of walking the units; every number must be the one the
per-unit code gives, bit for bit (MODELS.md §1).  Checked on hand-made units (weights unknown,
values not applicable, a single unit), then criterion by criterion on a generated raw page, the
sample and the real raw pages (read in place).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from advisor import pipeline
from advisor.criteria import SPECS
from advisor.criteria.engine import common
from advisor.criteria.engine import unit_columns as columns
from advisor.criteria.engine.common import Context, Scored, score
from advisor.criteria.engine.folding import fold
from advisor.criteria.engine.gathering import gather
from advisor.criteria.engine.inputs import KernelData, Members, Recipe, Unit, apply, device_view
from tests.criteria.test_formulas_on_columns import REAL_RAW_PAGES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu


def _kernel(units: tuple[Unit, ...]) -> KernelData:
    return KernelData("k", units, len(units), None, True)


def _per_unit(monkeypatch: pytest.MonkeyPatch, call: Any, *args: Any) -> Any:
    """``call(*args)`` with the array path turned off (every outcome without numbers)."""
    with monkeypatch.context() as patch:
        patch.setattr(columns, "numbers_of", lambda found: None)
        return call(*args)


def _same(got: Any, expected: Any) -> None:
    if not isinstance(expected, Scored):
        assert got == expected
        return
    assert isinstance(got, Scored)
    assert math.copysign(1.0, got.raw) == math.copysign(1.0, expected.raw)
    assert got.raw == expected.raw and type(got.raw) is type(expected.raw)
    assert got.recipe is expected.recipe
    assert list(got.inputs.items()) == list(expected.inputs.items())
    assert [type(v) for v in got.inputs.values()] == [type(v) for v in expected.inputs.values()]
    assert got.launches_used == expected.launches_used


def _left_fold(numbers: list[float]) -> float:
    """Floats added one after the other from 0, as ``sum`` adds them (Python <= 3.11)."""
    total: float = 0
    for x in numbers:
        total += x
    return float(total)


@pytest.mark.parametrize(
    "numbers",
    [
        [],
        [-0.0],
        [-0.0, -0.0, 2.5],
        [-0.0, 0.0],
        [1e16, 1.0, -1e16, 1.0],
        [math.inf, 1.0],
        [math.inf, -math.inf],
        [1.0, math.nan],
        [1e308, 1e308, -1e308],
    ],
)
def test_the_sequential_sum_is_the_left_fold_from_zero(numbers: list[float]) -> None:
    with np.errstate(over="ignore", invalid="ignore"):  # inf - inf, 1e308 + 1e308: as Python
        got = columns.sequential_sum(np.array(numbers, dtype=float))
    expected = _left_fold(numbers)
    assert type(got) is float
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)


def test_the_sequential_sum_of_random_numbers() -> None:
    rng = np.random.default_rng(12)
    for n in (1, 2, 3, 17, 300):
        numbers = rng.normal(0.0, 1.0, n) * 10.0 ** rng.integers(-12, 12, n)
        got = columns.sequential_sum(numbers)
        assert got == _left_fold(numbers.tolist())


def test_found_keeps_the_list_and_the_array() -> None:
    found = columns.Found.of(np.array([1.5, np.inf, np.nan, -0.0]))
    assert list(found) == [1.5, None, None, -0.0]
    assert [type(x) for x in found] == [float, type(None), type(None), float]
    assert np.array_equal(found.numbers, [1.5, np.nan, np.nan, -0.0], equal_nan=True)
    assert columns.numbers_of(found) is found.numbers
    plain = columns.numbers_of([0.25, None, 2.0])
    assert plain is not None and np.array_equal(plain, [0.25, np.nan, 2.0], equal_nan=True)
    assert columns.numbers_of([0.25, 1]) is None  # an int: the per-unit code averages it
    assert columns.numbers_of([np.float64(0.5)]) is None


def test_a_table_knows_its_units_weights_and_whether_each_is_one_launch() -> None:
    units = (Unit(0, 10.0, {"a": 1.0}), Unit(1, None, {"a": 2.0}, position=1))
    table = columns.table_of(units)
    assert np.array_equal(table.weights, [10.0, np.nan], equal_nan=True)
    assert table.single
    collapsed = Members(np.array([2, 3]), np.array([2, 3]), np.array([1.0, 2.0]))
    mixed = (*units, Unit(2, 3.0, {"a": 3.0}, count=2, position=2, members=collapsed))
    assert not columns.table_of(mixed).single
    with pytest.raises(ValueError):
        _ = columns.Table([{"a": 1.0}]).weights


@pytest.mark.parametrize(
    "weights",
    [(10.0, 30.0, 20.0, 5.0), (10.0, None, 20.0, 5.0), (10.0, 0.0, 20.0, 5.0)],
    ids=["durations", "one unknown", "one zero"],
)
def test_the_mean_evidence_and_count_are_the_per_unit_ones(
    weights: tuple[float | None, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        {"a": 0.1, "b": 0.7, "c": 3.0},
        {"a": 0.2, "b": 0.0, "c": 1.0},  # 0 / 0: not applicable
        {"a": 0.3, "b": 0.3},  # no c (optional)
        {"a": 0.7, "b": 0.9, "c": 1.0 / 3.0},
    ]
    units = tuple(
        Unit(k, w, row, position=k) for k, (w, row) in enumerate(zip(weights, rows, strict=True))
    )
    recipe = Recipe("a / b", ("a", "b"), lambda v: v["a"] / v["b"] if v["b"] else None)
    recipe = Recipe(recipe.label, recipe.needs, recipe.formula, optional=("c",))
    kernel, ctx = _kernel(units), Context()
    outcome = apply(units, [recipe], {})
    assert outcome.numbers is not None and outcome.rows is not None
    got = score(kernel, [recipe], ctx)
    expected = _per_unit(monkeypatch, score, kernel, [recipe], ctx)
    _same(got, expected)
    assert isinstance(got, Scored) and got.launches_used == 3 and set(got.inputs) == {"a", "b", "c"}


def test_every_value_not_applicable_and_a_single_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    units = tuple(Unit(k, 1.0 + k, {"a": 0.0}, position=k) for k in range(3))
    recipe = Recipe("1 / a", ("a",), lambda v: 1.0 / v["a"] if v["a"] else None)
    assert score(_kernel(units), [recipe], Context()) == "n/a"
    one = (Unit(0, 4.0, {"a": 0.5}),)
    got = score(_kernel(one), [Recipe("a", ("a",), lambda v: v["a"])], Context())
    assert isinstance(got, Scored) and got.raw == 0.5 and got.launches_used == 1


def _check_page(path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Every criterion's recipes on every kernel of ``path``, on arrays and unit by unit: the
    same results; returns how many scores took the array path."""
    profile = pipeline.read([str(path)])
    device = pipeline.device_for(profile, None)[0]
    ctx = Context(extra=device_view(device).values() if device is not None else {})
    fast = 0
    spied: list[bool] = []
    real = common._score_on_columns

    def spy(*args: Any) -> Any:
        spied.append(True)
        return real(*args)

    monkeypatch.setattr(common, "_score_on_columns", spy)
    for kernel in gather(fold(profile)[0]):
        for spec in SPECS:
            recipes = getattr(spec, "recipes", ()) or ()
            if not recipes:
                continue
            spied.clear()
            got = score(kernel, recipes, ctx)
            fast += len(spied)
            _same(got, _per_unit(monkeypatch, score, kernel, recipes, ctx))
    return fast


def test_every_criterion_scores_alike_on_a_generated_page_and_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, samples: Path
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 300, seed=5)
    assert _check_page(page, monkeypatch) > 50  # most scores took the array path
    _check_page(samples / "synthetic_ncu_raw.csv", monkeypatch)


@pytest.mark.parametrize("page", REAL_RAW_PAGES)
def test_every_criterion_scores_alike_on_the_real_raw_pages(
    page: str, real_profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check_page(real_profiles / page, monkeypatch)
