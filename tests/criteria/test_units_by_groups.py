"""A recipe's formula run once per group of units that read alike
(advisor.criteria.engine.unit_columns.by_groups), and a raw page's launch values kept as columns
until a unit is read alone (unit_columns.RowValues, gathering._KernelRows).

Both must give exactly what the per-unit code gives: the same floats, None alike, the same
units' values as dicts; and anything they cannot stand for must be refused so the per-unit path
computes it.  Checked on hand-made units whose launches take different branches, and on a
generated page, the sample and the real raw pages (read in place) against the analysis computed
unit by unit, every value a dict.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from advisor import pipeline
from advisor.criteria.engine import gathering
from advisor.criteria.engine import unit_columns as columns
from advisor.criteria.engine.analysis import to_json
from advisor.criteria.engine.inputs import Unit, _view

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu

from tests.criteria.test_formulas_on_columns import REAL_RAW_PAGES


def _units(*rows: dict[str, Any]) -> tuple[Unit, ...]:
    return tuple(Unit(k, 10.0 * (k + 1), row, position=k) for k, row in enumerate(rows))


class _Counted:
    """A formula that counts its calls."""

    def __init__(self, formula: Any) -> None:
        self.formula, self.calls = formula, 0

    def __call__(self, v: Any) -> Any:
        self.calls += 1
        return self.formula(v)


def _grouped(formula: Any, units: tuple[Unit, ...], extra: dict[str, float]) -> Any:
    table = columns.Table([u.values for u in units])
    return columns.by_groups(
        formula, table, np.arange(len(units)), lambda j: _view(units[j].values, extra)
    )


def _per_unit(formula: Any, units: tuple[Unit, ...], extra: dict[str, float]) -> list[Any]:
    return [formula(_view(u.values, extra)) for u in units]


def _launch_balance(v: Any) -> float | None:
    """Branches per launch, ``math``, a device value and an optional launch value."""
    if v["launch.grid_blocks"] < v["device.sm_count"]:
        return v["launch.grid_blocks"] / v["device.sm_count"]
    waves = math.ceil(v["launch.grid_blocks"] / v["device.sm_count"])
    return waves * v.get("launch.shared", 1.0) / (waves + 1)


def test_launches_that_branch_differently_get_the_per_unit_values_once_per_group() -> None:
    extra = {"device.sm_count": 132.0}
    small, big = {"launch.grid_blocks": 66.0}, {"launch.grid_blocks": 1000.0}
    shared = {"launch.grid_blocks": 1000.0, "launch.shared": 3.0}
    units = _units(small, big, small, shared, big, small, shared, {"launch.grid_blocks": -0.0})
    formula = _Counted(_launch_balance)
    got = _grouped(formula, units, extra)
    assert got == _per_unit(_launch_balance, units, extra)
    assert [type(x) for x in got] == [type(x) for x in _per_unit(_launch_balance, units, extra)]
    assert formula.calls == 4  # one per distinct launch: small, big, shared, -0.0


def test_zero_and_minus_zero_are_not_one_group() -> None:
    units = _units({"x": 0.0}, {"x": -0.0}, {"x": 0.0})
    got = _grouped(lambda v: math.copysign(1.0, v["x"]), units, {})
    assert got == [1.0, -1.0, 1.0]


def test_a_name_some_units_lack_splits_the_groups() -> None:
    extra = {"b": 5.0}
    units = _units({"a": 1.0}, {"a": 1.0, "b": 5.0}, {"a": 1.0}, {"a": 1.0, "b": 2.0})

    def formula(v: Any) -> float:
        return v["a"] + (10.0 if "b" in v else 0.0) + v.get("b", 0.5)

    assert _grouped(formula, units, extra) == _per_unit(formula, units, extra)


def test_values_that_all_differ_are_computed_unit_by_unit_after_a_few_groups() -> None:
    units = _units(*({"a": 0.1 * k} for k in range(50)))
    formula = _Counted(lambda v: math.sqrt(v["a"]) if v["a"] > 1.0 else -v["a"])
    got = _grouped(formula, units, {})
    assert got == _per_unit(formula.formula, units, {})
    assert formula.calls == 50  # _LONE_MAX representatives, then the rest one by one


def test_what_groups_cannot_stand_for_is_refused() -> None:
    units = _units({"a": 1.0}, {"a": 1.0})
    assert _grouped(lambda v: float(len(v)), units, {}) is None  # the whole view read
    assert _grouped(lambda v: sum(1.0 for _ in v), units, {}) is None
    assert _grouped(lambda v: v["missing"], units, {}) is None  # raises: per unit raises too
    ints = _units({"a": 1}, {"a": 1})  # not Python floats: 1 and 1.0 may differ
    assert _grouped(lambda v: v["a"] / 2, ints, {}) is None


def _rows_source(page: Path) -> list[tuple[Any, ...]]:
    """Per kernel of ``page``, its units' values as dicts and every name's column."""
    profile = pipeline.read([str(page)])
    out = []
    for kernel in gathering.gather(profile):
        values = [u.values for u in kernel.units]
        table = columns.Table(values)
        plain = columns.Table([dict(v) for v in values])
        names = sorted({n for v in values for n in v if isinstance(n, str)} | {"absent"})
        for name in names:
            (a, pa, fa), (b, pb, fb) = table.raw(name), plain.raw(name)
            assert (a.view(np.int64) == b.view(np.int64)).all() and (pa == pb).all(), name
            assert fa == fb
        out.append(
            (kernel.name, [(u.launch_id, u.weight_ns, dict(u.values)) for u in kernel.units])
        )
    return out


def test_the_launch_values_as_columns_equal_their_dicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 200, seed=5)
    lazy = _rows_source(page)
    monkeypatch.setattr(gathering._KernelRows, "of", classmethod(lambda *args: None))
    assert lazy == _rows_source(page)  # the per-launch dicts of the per-unit code


def _analysis(page: Path) -> str:
    profile = pipeline.read([str(page)])
    return json.dumps(to_json(pipeline.analyse_profile(profile).analysis), sort_keys=True)


def _unit_by_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns, "on_columns", lambda *args: None)
    monkeypatch.setattr(columns, "by_groups", lambda *args: None)
    monkeypatch.setattr(gathering._KernelRows, "of", classmethod(lambda *args: None))


def test_the_analysis_is_the_same_as_unit_by_unit_and_reads_few_units_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, samples: Path
) -> None:
    page = tmp_path / "raw.csv"
    gen_ncu.write_ncu_raw(page, 400, seed=8)
    built: list[int] = []
    real = gathering._KernelRows.values

    def values(self: gathering._KernelRows, row: int) -> dict[str, float]:
        built.append(row)
        return real(self, row)

    monkeypatch.setattr(gathering._KernelRows, "values", values)
    fast = _analysis(page)
    assert 0 < len(built) < 400 // 4  # most launches are only read as columns
    sample = _analysis(samples / "synthetic_ncu_raw.csv")
    _unit_by_unit(monkeypatch)
    assert fast == _analysis(page)
    assert sample == _analysis(samples / "synthetic_ncu_raw.csv")


@pytest.mark.parametrize("page", REAL_RAW_PAGES)
def test_the_analysis_of_the_real_raw_pages_is_the_same_as_unit_by_unit(
    page: str, real_profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _analysis(real_profiles / page)
    _unit_by_unit(monkeypatch)
    assert fast == _analysis(real_profiles / page)
