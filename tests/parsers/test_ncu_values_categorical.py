"""Value cells as categoricals (parsers.ncu.values): the same results as for object columns.

The details page read by columns (parsers.ncu.csv.one_details_table) hands every column over as
a categorical; the helpers work once per category and must agree, cell for cell, with what they
give for the same texts in an object column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from parsers.ncu import values

NAMES = ["Duration", "DRAM Throughput", "Elapsed Cycles", " ", "", "Registers Per Thread"]
UNITS = ["us", "%", "cycle", "", "", "register/thread"]
CELLS = ["100.22", "86.18", "141,316", "", "n/a", "40"]


def _both(cells: list[str]) -> tuple[pd.Series, pd.Series]:
    """``cells`` as an object column and as a categorical one whose categories include a text
    no row uses (as a frame filtered after the read keeps them)."""
    as_objects = pd.Series(cells, dtype=object)
    categories = sorted({*cells, "1,5"})
    return as_objects, pd.Series(pd.Categorical(cells, categories=categories))


def _rows(k: int) -> tuple[list[str], list[str], list[str]]:
    """``k`` rows drawn from the lists above (seeded), so texts repeat in any order."""
    at = np.random.default_rng(7).integers(0, len(NAMES), k)
    return [NAMES[i] for i in at], [UNITS[i] for i in at], [CELLS[i] for i in at]


def test_blank_and_distinct_cells_agree() -> None:
    names, _, cells = _rows(200)
    for column in (names, cells):
        plain, categorical = _both(column)
        assert values.blank_cells(categorical).tolist() == values.blank_cells(plain).tolist()
        assert values.blank_cells(categorical).any() and not values.blank_cells(plain).all()
        assert sorted(values.distinct_cells(categorical)) == sorted(set(column))
        assert sorted(values.distinct_cells(plain)) == sorted(set(column))


def test_decimal_comma_style_looks_at_used_texts_only() -> None:
    plain, categorical = _both(["1,5", "2,25"])
    assert values.decimal_comma_style(categorical) == values.decimal_comma_style(plain)
    assert values.decimal_comma_style(categorical) == (True, False)
    # an ordinary number in a second column makes the page mixed; the unused category
    # "1,5" of an ordinary page changes nothing
    assert values.decimal_comma_style(categorical, pd.Series(["12.5"])) == (False, True)
    _, ordinary = _both(["12.5", "3"])
    assert values.decimal_comma_style(ordinary) == (False, False)


@pytest.mark.parametrize("decimal_comma", [False, True])
def test_parse_cells_agrees(decimal_comma: bool) -> None:
    _, _, cells = _rows(300)
    plain, categorical = _both(cells)
    expected = values.parse_cells(plain, decimal_comma)
    got = values.parse_cells(categorical, decimal_comma)
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got).any() and (got == 141316.0).any() == (not decimal_comma)


def test_metric_columns_agree() -> None:
    names, units, cells = _rows(500)
    plain = values.metric_columns(*(_both(c)[0] for c in (names, units, cells)))
    categorical = values.metric_columns(*(_both(c)[1] for c in (names, units, cells)))
    for column in ("metric", "tool_metric", "unit"):
        assert isinstance(categorical[column].dtype, pd.CategoricalDtype), column
    assert list(categorical.columns) == list(plain.columns)
    as_objects = categorical.astype(object).where(categorical.notna(), None)
    assert as_objects.to_dict("list") == plain.astype(object).where(plain.notna(), None).to_dict(
        "list"
    )
    # the duration in ns, the percentage as a fraction, "n/a" kept as text
    durations = categorical[categorical["tool_metric"] == "Duration"]
    assert set(durations["value"]) == {100220.0} and set(durations["unit"]) == {"ns"}
    assert set(categorical.loc[categorical["value"].isna(), "text"].dropna()) == {"n/a"}
