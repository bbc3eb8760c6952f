"""The values of many units as columns, for :mod:`advisor.criteria.engine.inputs`.

A raw Nsight Compute page gives each launch metric rows of its own, so a kernel of ten thousand
launches has ten thousand units; checking which units feed a recipe and averaging the evidence
over them reads one name across every unit.  These helpers do that on numpy arrays and return
exactly the numbers of the per-unit code: a unit's value is ``values.get(name, extra.get(name))``
(absent: NaN), and sums run in order from 0 (:func:`sequential_sum`), as Python's ``sum`` of
floats does, so every mean is bit-identical (MODELS.md §1: duration-weighted means).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

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


#: a name no unit has (``dict.get``'s default that no value can be)
_ABSENT: Any = object()


class Table:
    """The values of a kernel's units by name, as columns built once per name (the criteria of a
    kernel read the same few dozen names over the same units many times): per name, the value
    of every unit (NaN where the unit has none), where the unit has the name, and whether every
    value is a Python float (only then may :func:`on_columns` compute on the column)."""

    def __init__(self, values: Sequence[Values]) -> None:
        self._values = values
        self._raw: dict[str, tuple[np.ndarray, np.ndarray, bool]] = {}

    def __len__(self) -> int:
        return len(self._values)

    def raw(self, name: str) -> tuple[np.ndarray, np.ndarray, bool]:
        """(values, present, all floats) of ``name`` over the units."""
        hit = self._raw.get(name)
        if hit is None:
            got = [v.get(name, _ABSENT) for v in self._values]
            kinds = set(map(type, got))
            if kinds == {float}:  # every unit has it, as a float (the usual case)
                present = np.ones(len(got), dtype=bool)
                hit = (np.array(got, dtype=float), present, True)
            else:
                present = np.array([x is not _ABSENT for x in got], dtype=bool)
                column = np.array([None if x is _ABSENT else x for x in got], dtype=float)
                hit = (column, present, kinds <= {float, type(_ABSENT)})
            self._raw[name] = hit
        return hit

    def column(self, name: str, extra: Values) -> np.ndarray:
        """:func:`column` of every unit, from the cached values."""
        values, present, _ = self.raw(name)
        default = extra.get(name)
        if default is None or bool(present.all()):
            return values
        return np.where(present, values, np.array([default], dtype=float))

    def fed(self, needs: Sequence[str], extra: Values) -> np.ndarray:
        """:func:`fed` of every unit, from the cached values."""
        mask = np.ones(len(self._values), dtype=bool)
        for name in needs:
            mask &= np.isfinite(self.column(name, extra))
        return mask


#: the tables of the unit tuples seen last: id -> (the units, kept so the id stays theirs; table)
_TABLES: dict[int, tuple[Sequence[Any], Table]] = {}
_TABLES_KEPT = 2


def table_of(units: Sequence[Any]) -> Table:
    """The :class:`Table` of ``units`` (units with ``values``), kept for the last few tuples."""
    hit = _TABLES.get(id(units))
    if hit is not None and hit[0] is units:
        return hit[1]
    table = Table([u.values for u in units])
    if isinstance(units, tuple):  # a list may change: not kept
        if len(_TABLES) >= _TABLES_KEPT:
            del _TABLES[next(iter(_TABLES))]  # the oldest
        _TABLES[id(units)] = (units, table)
    return table


class _NotOnColumns(Exception):
    """The formula reads the units in a way a column cannot stand for."""


class _Column(np.ndarray):
    """A column of unit values handed to a formula: arithmetic as on floats, element by element.
    Its truth (``if``, ``not``, ``and``, ``min``) is that of every element when they all agree,
    so every unit takes the same branch, as it would alone; when they differ the formula cannot
    run on columns.  ``round`` (an int per float, a float per array element) is refused."""

    def __bool__(self) -> bool:
        truth = np.asarray(self).astype(bool)  # as bool(float): non-zero, NaN included
        if bool(truth.all()):
            return True
        if not bool(truth.any()):
            return False
        raise _NotOnColumns

    def __round__(self, ndigits: Any = None) -> Any:
        raise _NotOnColumns

    def __iter__(self) -> Iterator[Any]:  # a float is not iterable: no sum over the units
        raise _NotOnColumns

    def __len__(self) -> int:
        raise _NotOnColumns


class _ColumnView(Mapping[str, Any]):
    """The units ``rows`` of a table as one mapping, read like ``{**extra, **values}`` of each:
    a name every unit has gives its column, a name none has ``extra``'s value; a name some units
    have and others not cannot be read on columns."""

    def __init__(self, table: Table, rows: np.ndarray, extra: Values) -> None:
        self._table, self._rows, self._extra = table, rows, extra

    def _read(self, name: str) -> Any:
        values, present, floats = self._table.raw(name)
        here = present[self._rows]
        if bool(here.all()):
            if not floats:
                raise _NotOnColumns
            return values[self._rows].view(_Column)
        if bool(here.any()):
            raise _NotOnColumns
        return self._extra.get(name, _ABSENT)

    def __getitem__(self, name: str) -> Any:
        value = self._read(name)
        if value is _ABSENT:
            raise KeyError(name)
        return value

    def get(self, name: str, default: Any = None) -> Any:
        value = self._read(name)
        return default if value is _ABSENT else value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._read(name) is not _ABSENT

    def __iter__(self) -> Iterator[str]:
        raise _NotOnColumns

    def __len__(self) -> int:
        raise _NotOnColumns


def on_columns(formula: Any, table: Table, rows: np.ndarray, extra: Values) -> list[Any] | None:
    """``formula`` of each unit ``rows`` of ``table`` (None where not finite), computed once on
    columns; None when that cannot give exactly the per-unit results, which the caller then
    computes unit by unit.

    Exact because every value read is a Python float (:meth:`Table.raw`) and the four
    operations, ``//`` and ``%`` of float64 arrays round as those of Python floats do; anything
    else a formula may do on a column is refused and falls back: a branch that units would take
    differently (:class:`_Column`), ``math`` functions and ``float()`` (an array of several
    elements is not a number), ``round``, a name some units lack, a result that is not one
    float per unit, and any floating-point exception (a division by zero, an overflow, an
    invalid operation), where Python would raise or numpy warn."""
    if len(rows) < 2:
        return None
    try:
        with np.errstate(divide="raise", over="raise", invalid="raise", under="ignore"):
            result = formula(_ColumnView(table, rows, extra))
    except Exception:  # any refusal: the caller computes unit by unit
        return None
    if type(result) in (float, int):  # a branch every unit takes ends in this number
        return [result if math.isfinite(result) else None] * len(rows)
    if not isinstance(result, np.ndarray) or result.dtype != np.float64:
        return None
    if result.shape != (len(rows),):
        return None
    numbers = np.asarray(result)
    finite = np.isfinite(numbers).tolist()
    return [x if f else None for x, f in zip(numbers.tolist(), finite, strict=True)]
