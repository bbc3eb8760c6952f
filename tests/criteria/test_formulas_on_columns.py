"""Recipe formulas computed once on columns (advisor.criteria.engine.unit_columns.on_columns).

A kernel of a raw Nsight Compute page has one unit per launch; :func:`apply` runs each recipe's
formula once over the columns of its units instead of once per unit.  That must give exactly
the per-unit numbers (the same floats, None where the unit's value is not applicable), and
anything a column cannot stand for must be refused so the per-unit path computes it.  Checked
on hand-made units and, recipe by recipe, on a generated page, the sample and the real raw
pages (read in place).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import parsers
from advisor import pipeline
from advisor.criteria import SPECS
from advisor.criteria.engine import unit_columns as columns
from advisor.criteria.engine.analysis import to_json
from advisor.criteria.engine.folding import fold
from advisor.criteria.engine.gathering import gather
from advisor.criteria.engine.inputs import Recipe, Unit, apply, device_view

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu

REAL_RAW_PAGES = (
    "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64.ncu.csv",
    "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64.ncu.csv",
    "csv/roofline_analysis_ncu_b200/torch_sdpa_auto__mqa_bf16_b128_ctx4k_p64.ncu.csv",
    "csv/roofline_analysis_ncu_b200/torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64.ncu.csv",
)


def _units(*rows: dict[str, Any]) -> tuple[Unit, ...]:
    return tuple(Unit(k, 10.0 * (k + 1), row, position=k) for k, row in enumerate(rows))


def _on_columns(formula: Any, units: tuple[Unit, ...], extra: dict[str, float]) -> Any:
    table = columns.Table([u.values for u in units])
    return columns.on_columns(formula, table, np.arange(len(units)), extra)


def _per_unit(formula: Any, units: tuple[Unit, ...], extra: dict[str, float]) -> list[Any]:
    out = []
    for u in units:
        value = formula({**extra, **u.values})
        out.append(value if value is None or math.isfinite(value) else None)
    return out


def test_arithmetic_and_a_branch_every_unit_takes_give_the_per_unit_floats() -> None:
    units = _units({"a": 0.1, "b": 3.0}, {"a": 0.7, "b": 9.0}, {"a": 1e-300, "b": 7.0})
    extra = {"device.peak": 3.0}

    def formula(v: Any) -> Any:
        if not v["b"] > 0:  # every unit passes: one branch for all
            return None
        return min(1.0, max(0.0, v["a"] * v["device.peak"] / v["b"] + (v["b"] // 2) % 3))

    # ... except min, whose units do not agree (1.0 for some, the sum for others): refused
    assert _on_columns(formula, units, extra) is None

    def share(v: Any) -> Any:
        return v["a"] * v["device.peak"] / v["b"] - (v["b"] // 2) % 3 if v["b"] > 0 else None

    got = _on_columns(share, units, extra)
    assert got == _per_unit(share, units, extra)
    assert all(type(x) is float for x in got)
    # a branch every unit takes that ends in a constant: that constant for each unit
    assert _on_columns(lambda v: 1.0 if v["b"] > 1 else v["a"], units, extra) == [1.0] * 3
    assert _on_columns(lambda v: None if v["b"] > 1 else v["a"], units, extra) is None


@pytest.mark.parametrize(
    ("rows", "formula", "why"),
    [
        ([{"a": 1.0}, {"a": -1.0}], lambda v: v["a"] if v["a"] > 0 else None, "branches differ"),
        ([{"a": 1.0}, {"a": 0.0}], lambda v: 1.0 / v["a"], "division by zero"),
        ([{"a": 0.0}, {"a": 0.0}], lambda v: v["a"] / v["a"], "0 / 0"),
        ([{"a": 1e300}, {"a": 1.0}], lambda v: v["a"] * 1e300, "overflow"),
        ([{"a": 1.5}, {"a": 2.5}], lambda v: round(v["a"]), "round gives ints"),
        ([{"a": 1.5}, {"a": 2.5}], lambda v: float(math.ceil(v["a"])), "math on a column"),
        ([{"a": 1.5}, {"b": 2.5}], lambda v: v.get("a", 0.0), "a name some units lack"),
        ([{"a": 1}, {"a": 2}], lambda v: v["a"] / 2, "an int, not a float"),
        ([{"a": 1.0}, {"a": 2.0}], lambda v: sum(v["a"]), "a sum over the units"),
        ([{"a": 1.0}, {"a": 2.0}], lambda v: len(dict(v)), "the mapping as a whole"),
        ([{"a": 1.0}, {"a": 2.0}], lambda v: v["a"] > 1.0, "not a float"),
        ([{"a": 1.0}], lambda v: v["a"] * 2.0, "a single unit"),
    ],
)
def test_what_a_column_cannot_stand_for_is_left_to_the_units(
    rows: list[dict[str, Any]], formula: Any, why: str
) -> None:
    assert _on_columns(formula, _units(*rows), {}) is None, why


def test_absent_names_read_the_device_values_and_get_its_default() -> None:
    units = _units({"a": 2.0}, {"a": 4.0})
    extra = {"device.n": 8.0}
    formula = lambda v: v["a"] / v["device.n"] + v.get("missing", 1.0)  # noqa: E731
    assert _on_columns(formula, units, extra) == [1.25, 1.5] == _per_unit(formula, units, extra)
    assert _on_columns(lambda v: v["a"] if "missing" not in v else None, units, extra) == [
        2.0,
        4.0,
    ]
    # a unit's own value hides the device's, as {**extra, **values} reads
    mixed = _units({"a": 2.0, "device.n": 1.0}, {"a": 4.0, "device.n": 2.0})
    assert _on_columns(formula, mixed, extra) == [3.0, 3.0] == _per_unit(formula, mixed, extra)


def test_apply_keeps_the_per_unit_path_for_what_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    units = _units({"a": 1.0}, {"a": -2.0}, {"a": 3.0})
    recipe = Recipe("positive a", ("a",), lambda v: v["a"] if v["a"] > 0 else None)
    outcome = apply(units, [recipe], {})
    assert outcome.values == (1.0, None, 3.0)
    assert outcome.rows is not None and outcome.rows.tolist() == [0, 1, 2]


def _every_recipe() -> list[Recipe]:
    out: dict[int, Recipe] = {}
    for spec in SPECS:
        for recipe in getattr(spec, "recipes", ()) or ():
            out.setdefault(id(recipe), recipe)
    from advisor.criteria.engine import speedups

    for recipes in (
        speedups.dram_fraction_recipes(),
        speedups.memory_fraction_recipes(),
        speedups.compute_fraction_recipes(),
        speedups.arithmetic_fraction_recipes(),
        *(speedups.level_recipes(level) for level in ("l1", "l2", "shared")),
    ):
        for recipe in recipes:
            out.setdefault(id(recipe), recipe)
    return list(out.values())


def _check_recipes(path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Every recipe on every kernel of ``path``, on columns and unit by unit: the same values
    (the same floats, None alike); returns how many recipes ran on columns."""
    profile = pipeline.read([str(path)])
    device = pipeline.device_for(profile, None)[0]
    extra = device_view(device).values() if device is not None else {}
    on = 0
    calls: list[Any] = []
    real = columns.on_columns

    def spy(*args: Any) -> Any:
        got = real(*args)
        calls.append(got)
        return got

    for kernel in gather(fold(profile)[0]):
        for recipe in _every_recipe():
            calls.clear()
            with monkeypatch.context() as patch:
                patch.setattr(columns, "on_columns", spy)
                got = apply(kernel.units, [recipe], extra)
            on += sum(c is not None for c in calls)
            with monkeypatch.context() as patch:
                patch.setattr(columns, "on_columns", lambda *args: None)
                patch.setattr(columns, "by_groups", lambda *args: None)
                expected = apply(kernel.units, [recipe], extra)
            assert got.values == expected.values, (path.name, kernel.name, recipe.label)
            assert [type(x) for x in got.values] == [type(x) for x in expected.values]
            assert got.units == expected.units
    return on


def test_every_recipe_gives_the_per_unit_values_on_a_generated_page_and_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, samples: Path
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 300, seed=11)
    assert _check_recipes(page, monkeypatch) > 50  # the columns did most recipes' work
    _check_recipes(samples / "synthetic_ncu_raw.csv", monkeypatch)


@pytest.mark.parametrize("page", REAL_RAW_PAGES)
def test_every_recipe_gives_the_per_unit_values_on_the_real_raw_pages(
    page: str, real_profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check_recipes(real_profiles / page, monkeypatch)


def test_the_analysis_is_the_same_on_columns_and_unit_by_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 300, seed=3)
    profile = parsers.read(page, metrics=pipeline.is_needed)
    fast = json.dumps(to_json(pipeline.analyse_profile(profile).analysis), sort_keys=True)
    monkeypatch.setattr(columns, "on_columns", lambda *args: None)
    monkeypatch.setattr(columns, "by_groups", lambda *args: None)
    slow = json.dumps(to_json(pipeline.analyse_profile(profile).analysis), sort_keys=True)
    assert fast == slow


def test_the_per_unit_view_reads_as_a_chain_map() -> None:
    from collections import ChainMap

    from advisor.criteria.engine.inputs import _view

    values = {"a": 1.0, "shared": 2.0, "none": None}
    extra = {"shared": 9.0, "device.x": 3.0}
    view, chain = _view(values, extra), ChainMap(values, extra)
    for name in ("a", "shared", "none", "device.x", "missing"):
        assert (name in view) == (name in chain)
        assert view.get(name) == chain.get(name) and view.get(name, 7.0) == chain.get(name, 7.0)
        if name in chain:
            assert view[name] == chain[name]
        else:
            with pytest.raises(KeyError):
                view[name]
    assert list(view) == list(chain) and len(view) == len(chain) == 4
