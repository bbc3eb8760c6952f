"""Gathering the values a criterion reads, per kernel and per launch, from a :class:`Profile`.

Contract: :func:`gather` groups a profile by kernel name and returns one :class:`KernelData` per
kernel.  Each kernel has *units*: one per launch when the profile has per-launch rows (the launch
configuration from ``launches`` plus that launch's ``metrics`` rows, over the kernel's per-kernel
summary values where both exist), else a single unit made of the per-kernel summary rows
(``metrics`` rows without a ``launch_id``, whose ``value`` is the average over invocations).
Values are keyed by the canonical metric name of ``advisor/data/metric_map.csv`` (an ncu or
nvprof name the map does not know keeps the tool's name), by ``launch.*`` for the launch
configuration and by ``device.*`` for device facts.  Missing values are simply absent (never 0).

A criterion is computed by the first :class:`Recipe` whose inputs a unit has; the kernel value is
the duration-weighted mean over the units that have them (MODELS.md §1: launches aggregate
weighted by duration; equal weights when no launch has a duration).
"""

from __future__ import annotations

import math
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from itertools import compress
from typing import Any

import numpy as np
import pandas as pd

from advisor import metric_map
from advisor.criteria.engine import unit_columns as columns
from advisor.profile import Profile

Values = Mapping[str, float]
#: a formula over a unit's values; ``None`` means "not applicable" (a 0 / 0, e.g. no accesses)
Formula = Callable[[Values], "float | None"]


@dataclass(frozen=True)
class DeviceView:
    """The device facts the criteria use, as plain numbers (built from a device characterization).

    ``F`` is the characterization function lookup ``F(name, x) -> float`` of Decision 5 (1.0 when
    the function was not measured); ``latencies_cycles`` holds "shared", "l1", "l2", "dram".
    """

    name: str | None = None
    compute_capability: str | None = None
    sm_count: float | None = None
    max_warps_per_sm: float | None = None
    # per-SM limits the device states (None: the compute capability's, occupancy.limits_for)
    max_threads_per_sm: float | None = None
    max_blocks_per_sm: float | None = None
    registers_per_sm: float | None = None
    shared_bytes_per_sm: float | None = None
    boost_clock_hz: float | None = None
    peak_dram_bytes_per_s: float | None = None
    peak_fp32_flops: float | None = None
    peak_fp64_flops: float | None = None
    latencies_cycles: Mapping[str, float] = field(default_factory=dict)
    measured: bool = False
    source: str = ""
    f_lookup: Callable[[str, float], float] | None = None
    notes: tuple[str, ...] = ()

    def F(self, name: str, x: float) -> float:
        """The characterization function ``name`` at ``x`` (1.0 without a measured function)."""
        if self.f_lookup is None or not math.isfinite(x):
            return 1.0
        value = float(self.f_lookup(name, x))
        return value if math.isfinite(value) and value > 0 else 1.0

    def values(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for key in (
            "sm_count",
            "max_warps_per_sm",
            "max_threads_per_sm",
            "max_blocks_per_sm",
            "registers_per_sm",
            "shared_bytes_per_sm",
            "boost_clock_hz",
            "peak_dram_bytes_per_s",
            "peak_fp32_flops",
            "peak_fp64_flops",
        ):
            number = _number(getattr(self, key))
            if number is not None and number > 0:
                out[f"device.{key}"] = number
        cc = _number(self.compute_capability)
        if cc is not None:
            out["device.compute_capability"] = cc
        for level, cycles in self.latencies_cycles.items():
            number = _number(cycles)
            if number is not None and number > 0:
                out[f"device.latency_{level}_cycles"] = number
        return out


def device_view(characterization: Any) -> DeviceView:
    """A :class:`DeviceView` from a ``advisor.devices.database.Characterization`` (duck-typed)."""
    spec = getattr(characterization, "device", None)

    def attr(obj: Any, name: str) -> Any:
        return getattr(obj, name, None) if obj is not None else None

    return DeviceView(
        name=attr(spec, "name"),
        compute_capability=_cc_text(attr(spec, "compute_capability")),
        sm_count=_number(attr(spec, "sm_count")),
        max_warps_per_sm=_number(attr(spec, "max_warps_per_sm")),
        max_threads_per_sm=_number(attr(spec, "max_threads_per_sm")),
        max_blocks_per_sm=_number(attr(spec, "max_blocks_per_sm")),
        registers_per_sm=_number(attr(spec, "registers_per_sm")),
        shared_bytes_per_sm=_number(attr(spec, "shared_bytes_per_sm")),
        boost_clock_hz=_number(attr(spec, "boost_clock_hz")),
        peak_dram_bytes_per_s=_number(getattr(characterization, "peak_dram_bytes_per_s", None))
        or _number(attr(spec, "memory_bandwidth_bytes_per_s")),
        peak_fp32_flops=_number(getattr(characterization, "peak_fp32_flops", None))
        or _number(attr(spec, "peak_fp32_flops")),
        peak_fp64_flops=_number(attr(spec, "peak_fp64_flops")),
        latencies_cycles=dict(getattr(characterization, "latencies_cycles", {}) or {}),
        measured=bool(getattr(characterization, "measured", False)),
        source=str(getattr(characterization, "source", "") or ""),
        f_lookup=getattr(characterization, "F", None),
        notes=tuple(str(n) for n in getattr(characterization, "notes", ()) or ()),
    )


@dataclass(frozen=True)
class Members:
    """The launches a collapsed :class:`Unit` stands for, in launch order: their places in the
    kernel's launch order, ids and durations (NaN when unknown)."""

    positions: np.ndarray
    launch_ids: np.ndarray
    durations: np.ndarray


@dataclass(frozen=True)
class Unit:
    """One launch (or the per-kernel summary) with every value a criterion may read.

    Launches of one kernel with identical inputs (the same launch configuration, no metric row of
    their own) are one unit of ``count`` launches whose ``members`` keep each launch's place and
    duration, so that means over units equal the means over the launches
    (:func:`advisor.criteria.engine.means.weighted_mean`).
    Its ``values`` hold the first launch's ``launch.duration_ns``; a recipe that reads it sees
    the launches one by one (:func:`apply`).
    """

    launch_id: int | None
    weight_ns: float | None  # the launch's duration (summed over ``members``); None when unknown
    values: Values
    count: int = 1  # launches this unit stands for
    position: int = 0  # place of its (first) launch in the kernel's launch order
    members: Members | None = None  # set when ``count`` > 1


@dataclass(frozen=True)
class KernelData:
    name: str
    units: tuple[Unit, ...]
    launches: int
    duration_ns: float | None
    per_launch_metrics: bool  # at least one metric row is per launch
    known: frozenset[str] | None = None  # :attr:`names` when the caller computed it

    @cached_property
    def names(self) -> frozenset[str]:
        """Names with a finite value in at least one unit."""
        if self.known is not None:
            return self.known
        return frozenset(_known_names(self.units, {}))


@dataclass(frozen=True)
class Recipe:
    """One way of computing a criterion: the values it needs and the formula over them."""

    label: str
    needs: tuple[str, ...]
    formula: Formula
    tools: tuple[str, ...] = ("ncu", "nvprof")  # whose names ``needs`` are (for "missing")
    note: str = ""
    optional: tuple[str, ...] = ()  # read when present (shown as evidence), never required
    #: an estimate used when nothing better was measured: never named as what to collect
    fallback: bool = False


@dataclass(frozen=True)
class Outcome:
    """What :func:`apply` found: per-unit values of the first recipe that fits, or nothing."""

    recipe: Recipe | None
    units: tuple[Unit, ...] = ()  # the units the recipe could read
    values: tuple[float | None, ...] = ()  # per unit; None = not applicable (0 / 0)
    #: where ``units`` are one launch each: their places among the units :func:`apply` was given
    rows: np.ndarray | None = None
    #: with ``rows``, where every value is a Python float or None: ``values`` as a float64
    #: array, NaN for None (:func:`~advisor.criteria.engine.unit_columns.numbers_of`)
    numbers: np.ndarray | None = None

    @property
    def applicable(self) -> list[tuple[Unit, float]]:
        return [(u, v) for u, v in zip(self.units, self.values, strict=True) if v is not None]


def apply(
    units: Sequence[Unit],
    recipes: Sequence[Recipe],
    extra: Values,
    unit_names: frozenset[str] | None = None,
) -> Outcome:
    """Evaluate the first recipe that at least one unit can feed (``extra``: device values;
    ``unit_names``: the units' names when already known, see :attr:`KernelData.names`)."""
    known = _known_names((), extra) | (
        unit_names if unit_names is not None else _known_names(units, {})
    )
    table = columns.table_of(units)
    for recipe in recipes:
        if not known.issuperset(recipe.needs):
            continue
        mask = table.fed(recipe.needs, extra)
        fed = list(compress(units, mask.tolist()))
        if fed and (table.single or all(u.members is None for u in fed)):  # one launch each
            rows = np.flatnonzero(mask)
            found = columns.on_columns(recipe.formula, table, rows, extra)
            if found is None:  # per unit, once per group of units that read alike
                formula = recipe.formula
                grouped = columns.by_groups(formula, table, rows, partial(_fed_view, fed, extra))
                found = (
                    [_clip_none(x) for x in grouped]
                    if grouped is not None
                    else [_clip_none(formula(_view(u.values, extra))) for u in fed]
                )
            return Outcome(recipe, tuple(fed), tuple(found), rows, columns.numbers_of(found))
        if fed:
            out_units: list[Unit] = []
            results: list[float | None] = []
            for unit in fed:
                _run(recipe, unit, extra, out_units, results)
            return Outcome(recipe, tuple(out_units), tuple(results))
    return Outcome(None)


def _fed_view(units: Sequence[Unit], extra: Values, j: int) -> Values:
    """The view a formula reads for ``units[j]`` (:func:`apply`)."""
    return _view(units[j].values, extra)


def _run(
    recipe: Recipe, unit: Unit, extra: Values, units: list[Unit], results: list[float | None]
) -> None:
    """Append ``unit`` and the recipe's value on it; a collapsed unit whose launches differ in
    what the recipe reads (their durations) is appended launch by launch."""
    view = _view(unit.values, extra)  # reads like {**extra, **unit.values} without copying
    if unit.members is None:
        units.append(unit)
        results.append(_clip_none(recipe.formula(view)))
        return
    reads = _Reads(view)
    value = _clip_none(recipe.formula(reads))
    if DURATION not in reads.seen and DURATION not in (*recipe.needs, *recipe.optional):
        units.append(unit)
        results.append(value)
        return
    for one in _split(unit):
        units.append(one)
        results.append(_clip_none(recipe.formula(_view(one.values, extra))))


#: the one launch.* value that differs between the launches of a collapsed unit
DURATION = "launch.duration_ns"


class _Reads(Mapping[str, float]):
    """A read-only view that records the names read through it."""

    def __init__(self, values: Values) -> None:
        self._values = values
        self.seen: set[str] = set()

    def __getitem__(self, name: str) -> float:
        self.seen.add(name)
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, name: object) -> bool:
        return name in self._values


def _split(unit: Unit) -> list[Unit]:
    """A collapsed unit as one unit per launch (each with its own duration)."""
    assert unit.members is not None
    m = unit.members
    out = []
    for pos, lid, dur in zip(
        m.positions.tolist(), m.launch_ids.tolist(), m.durations.tolist(), strict=True
    ):
        weight = dur if math.isfinite(dur) else None
        values = _view({DURATION: dur}, unit.values) if weight is not None else unit.values
        out.append(Unit(lid, weight, values, position=pos))
    return out


def missing_inputs(
    units: Sequence[Unit],
    recipes: Sequence[Recipe],
    extra: Values,
    tools: Iterable[str],
    unit_names: frozenset[str] | None = None,
) -> tuple[str, ...]:
    """Names absent for the closest recipe of each tool (fewest absent inputs, earliest first)."""
    out: list[str] = []
    known = _known_names((), extra) | (
        unit_names if unit_names is not None else _known_names(units, {})
    )
    for tool in tools:
        best: list[str] | None = None
        for recipe in recipes:
            if tool not in recipe.tools or recipe.fallback:
                continue
            absent = [n for n in recipe.needs if n not in known]
            if best is None or len(absent) < len(best):
                best = absent
        for name in best or []:
            if name not in out:
                out.append(name)
    if not out and recipes:  # no recipe for the profile's own tool: name the first one's inputs
        out = [n for n in recipes[0].needs if n not in known]
    return tuple(out)


def _known_names(units: Sequence[Unit], extra: Values) -> set[str]:
    """Names with a finite value in at least one unit (or in ``extra``)."""
    known = {k for k, v in extra.items() if v is not None and math.isfinite(v)}
    for unit in units:
        known.update(k for k, v in unit.values.items() if v is not None and math.isfinite(v))
    return known


def tool_names(names: Iterable[str], tool: str) -> tuple[str, ...]:
    """The ``tool`` ("ncu" / "nvprof") spelling of canonical names, where the map has one."""
    out: list[str] = []
    for name in names:
        if name.startswith(("launch.", "device.")):
            continue
        entry = metric_map.lookup(name)
        spelled = (entry.ncu if tool == "ncu" else entry.nvprof) if entry else name
        if spelled and spelled not in out and _belongs(spelled, tool):
            out.append(spelled)
    return tuple(out)


def _belongs(name: str, tool: str) -> bool:
    ncu_like = "__" in name
    return ncu_like if tool == "ncu" else not ncu_like


def profilers(profile: Profile) -> tuple[str, ...]:
    """The tools whose metric names to suggest: the profile's own, else both."""
    own = [p.profiler for p in profile.provenance if p.profiler in ("ncu", "nvprof")]
    return tuple(dict.fromkeys(own)) or ("ncu", "nvprof")


def _view(values: Values, extra: Values) -> Values:
    """``values`` over ``extra`` (as ``{**extra, **values}`` reads) without copying either."""
    return _Over(values, extra)


#: a name neither mapping has (``get``'s default that no value can be)
_NONE: Any = object()


class _Over(Mapping[str, float]):
    """``values`` over ``extra``: :class:`collections.ChainMap` of the two, with ``get`` and
    ``in`` asking each mapping once (a formula reads a few names of every unit)."""

    __slots__ = ("_extra", "_values")

    def __init__(self, values: Values, extra: Values) -> None:
        self._values, self._extra = values, extra

    def __getitem__(self, name: str) -> float:
        value = self._values.get(name, _NONE)
        return self._extra[name] if value is _NONE else value

    def get(self, name: str, default: Any = None) -> Any:
        value = self._values.get(name, _NONE)
        return self._extra.get(name, default) if value is _NONE else value

    def __contains__(self, name: object) -> bool:
        return name in self._values or name in self._extra

    def __iter__(self) -> Iterator[str]:
        return iter(ChainMap(self._values, self._extra))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(ChainMap(self._values, self._extra))  # type: ignore[arg-type]


def _has(values: Values, extra: Values, name: str) -> bool:
    value = values.get(name, extra.get(name))
    return value is not None and math.isfinite(value)


def _clip_none(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return value


def _number(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _cc_text(value: Any) -> str | None:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return f"{int(value[0])}.{int(value[1])}"
    text = str(value).strip()
    return text or None
