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
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    """``sum(numbers)`` as Python adds floats: one after the other, starting from 0.  The
    cumulative sum starts from the first number instead, which gives the same partial sums
    except where every number so far is -0.0 (Python's are then 0.0): adding 0.0 to the last
    one makes that -0.0 a 0.0 and changes no other number."""
    if not len(numbers):
        return 0.0
    return float(np.cumsum(numbers)[-1]) + 0.0


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


class RowSource:
    """Where the values of many units lie as columns (the per-launch rows of a raw Nsight
    Compute page, :mod:`advisor.criteria.engine.gathering`): :meth:`column` gives a name's
    values over several units at once, :meth:`values` one unit's values as the dict the
    per-unit code reads."""

    def column(self, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(value, present) of ``name`` for the units ``rows``: every present value is a Python
        float of the unit's dict, bit for bit; NaN where absent."""
        raise NotImplementedError

    def values(self, row: int) -> dict[str, float]:
        """The values of unit ``row`` as a dict."""
        raise NotImplementedError


class RowValues(Mapping[str, float]):
    """A unit's values, row ``row`` of ``source``: the dict is built the first time the unit is
    read alone, so units read only as columns (:class:`Table`) never build one (a raw page's
    10,000 launches of about 45 values each: some 20 MiB of dicts)."""

    __slots__ = ("_dict", "row", "source")

    def __init__(self, source: RowSource, row: int) -> None:
        self.source, self.row = source, row
        self._dict: dict[str, float] | None = None

    def _values(self) -> dict[str, float]:
        if self._dict is None:
            self._dict = self.source.values(self.row)
        return self._dict

    def __getitem__(self, name: str) -> float:
        return self._values()[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._values().get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._values()

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())

    def keys(self) -> Any:
        return self._values().keys()

    def items(self) -> Any:
        return self._values().items()


def _source_rows(values: Sequence[Values]) -> tuple[RowSource, np.ndarray] | None:
    """The one source of every unit's values and their rows in it, when they are all
    :class:`RowValues` of one source."""
    if not values or type(values[0]) is not RowValues:
        return None
    source = values[0].source
    if not all(type(v) is RowValues and v.source is source for v in values):
        return None
    return source, np.array([v.row for v in values if isinstance(v, RowValues)], dtype=np.int64)


class Table:
    """The values of a kernel's units by name, as columns built once per name (the criteria of a
    kernel read the same few dozen names over the same units many times): per name, the value
    of every unit (NaN where the unit has none), where the unit has the name, and whether every
    value is a Python float (only then may :func:`on_columns` compute on the column)."""

    def __init__(self, values: Sequence[Values], units: Sequence[Any] = ()) -> None:
        self._values = values
        self._raw: dict[str, tuple[np.ndarray, np.ndarray, bool]] = {}
        self._source = _source_rows(values)
        self._units = units
        self._weights: np.ndarray | None = None
        self._single: bool | None = None

    @property
    def weights(self) -> np.ndarray:
        """Per unit its ``weight_ns`` (NaN where None), as the means weigh it; the table must
        have been built with its units (:func:`table_of`)."""
        if self._weights is None:
            if len(self._units) != len(self._values):
                raise ValueError("a table built without its units has no weights")
            self._weights = np.array([u.weight_ns for u in self._units], dtype=float)
        return self._weights

    @property
    def single(self) -> bool:
        """Is every unit one launch (no ``members``)?  (Only for a table built with its units.)"""
        if self._single is None:
            self._single = len(self._units) == len(self._values) and all(
                u.members is None for u in self._units
            )
        return self._single

    def __len__(self) -> int:
        return len(self._values)

    def raw(self, name: str) -> tuple[np.ndarray, np.ndarray, bool]:
        """(values, present, all floats) of ``name`` over the units."""
        hit = self._raw.get(name)
        if hit is None and self._source is not None:  # every value a float: RowSource.column
            column, present = self._source[0].column(name, self._source[1])
            hit = self._raw[name] = (column, present, True)
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
    table = Table([u.values for u in units], units)
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
    return Found.of(np.asarray(result))


class Found(list[Any]):
    """Per-unit results as a list (None where not finite) that also holds them as a float64
    array, NaN where None (:attr:`numbers`), so that the means over them
    (:func:`advisor.criteria.engine.common.score`) read the array instead of the list."""

    numbers: np.ndarray

    @classmethod
    def of(cls, numbers: np.ndarray) -> Found:
        """The list of ``numbers`` (Python floats, None where not finite); :attr:`numbers`
        holds ``numbers`` with NaN where the list has None."""
        finite = np.isfinite(numbers)
        found = cls(numbers.tolist())
        if not bool(finite.all()):
            for j in np.flatnonzero(~finite).tolist():
                found[j] = None
            numbers = np.where(finite, numbers, np.nan)
        found.numbers = numbers
        return found


def numbers_of(found: Sequence[Any]) -> np.ndarray | None:
    """Per-unit results as a float64 array with NaN for None, where every result is a Python
    float or None (only then is a mean over the array the mean over the floats, bit for bit:
    :func:`mean`); None otherwise (an int, a numpy scalar: the caller keeps the list)."""
    numbers = getattr(found, "numbers", None)
    if isinstance(numbers, np.ndarray):
        return numbers
    if not set(map(type, found)) <= {float, type(None)}:
        return None
    return np.array(found, dtype=float)  # None becomes NaN


class _Recorder(Mapping[str, Any]):
    """A unit's view that records the names a formula reads through it, in order; iterating
    over it or asking its length (reading every name at once) is refused."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        self._view = view
        self.reads: list[str] = []

    def _see(self, name: object) -> None:
        if not isinstance(name, str):
            raise _NotOnColumns
        self.reads.append(name)

    def __getitem__(self, name: str) -> Any:
        self._see(name)
        return self._view[name]

    def get(self, name: str, default: Any = None) -> Any:
        self._see(name)
        return self._view.get(name, default)

    def __contains__(self, name: object) -> bool:
        self._see(name)
        return name in self._view

    def __iter__(self) -> Iterator[str]:
        raise _NotOnColumns

    def __len__(self) -> int:
        raise _NotOnColumns


#: representatives that stood for themselves alone before the rest is computed unit by unit
_LONE_MAX = 8


def by_groups(
    formula: Any, table: Table, rows: np.ndarray, view_of: Callable[[int], Mapping[str, Any]]
) -> list[Any] | None:
    """``formula`` of each unit ``rows`` of ``table`` (``view_of(j)``: the view the formula
    reads for ``rows[j]``), computed once per group of units that agree on every value it
    reads; None when that cannot be done (the caller then computes unit by unit).

    Used where :func:`on_columns` refuses (a branch that units take differently, ``math``):
    the formula is run on one unit (the representative) through a view that records the names
    it reads; every unit that has, for each of those names, the same presence and the same
    float bit for bit reads the same values in the same order, so it takes the same branches
    and gets the same result (a formula is a pure function of what it reads).  The units that
    differ are grouped the same way around the next representative; after :data:`_LONE_MAX`
    representatives that stood for themselves alone, the rest is computed unit by unit.
    Refused (None): a name whose values are not all Python floats (:meth:`Table.raw`), a
    formula that iterates over the view, and any exception (computed unit by unit, it raises
    there as it would have)."""
    out: list[Any] = [None] * len(rows)
    remaining = np.arange(len(rows))
    lone = 0
    try:
        while len(remaining):
            if lone >= _LONE_MAX:
                for j in remaining.tolist():
                    out[j] = formula(view_of(j))
                break
            first = int(remaining[0])
            recorder = _Recorder(view_of(first))
            value = formula(recorder)
            at = rows[remaining]
            same = np.ones(len(remaining), dtype=bool)
            for name in dict.fromkeys(recorder.reads):
                values, present, floats = table.raw(name)
                if not floats:
                    return None
                bits = values.view(np.int64)
                here = int(rows[first])
                same &= (present[at] == present[here]) & (bits[at] == bits[here])
            for j in remaining[same].tolist():
                out[j] = value
            lone += int(same.sum()) == 1
            remaining = remaining[~same]
    except Exception:  # any refusal: the caller computes unit by unit
        return None
    return out
