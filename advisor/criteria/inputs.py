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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from advisor import metric_map
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
    """A :class:`DeviceView` from a ``advisor.devices.Characterization`` (duck-typed)."""
    spec = getattr(characterization, "device", None)

    def attr(obj: Any, name: str) -> Any:
        return getattr(obj, name, None) if obj is not None else None

    return DeviceView(
        name=attr(spec, "name"),
        compute_capability=_cc_text(attr(spec, "compute_capability")),
        sm_count=_number(attr(spec, "sm_count")),
        max_warps_per_sm=_number(attr(spec, "max_warps_per_sm")),
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
class Unit:
    """One launch (or the per-kernel summary) with every value a criterion may read."""

    launch_id: int | None
    weight_ns: float | None  # the launch's duration; None when unknown
    values: Values


@dataclass(frozen=True)
class KernelData:
    name: str
    units: tuple[Unit, ...]
    launches: int
    duration_ns: float | None
    per_launch_metrics: bool  # at least one metric row is per launch

    @cached_property
    def names(self) -> frozenset[str]:
        """Names with a finite value in at least one unit."""
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


@dataclass(frozen=True)
class Outcome:
    """What :func:`apply` found: per-unit values of the first recipe that fits, or nothing."""

    recipe: Recipe | None
    units: tuple[Unit, ...] = ()  # the units the recipe could read
    values: tuple[float | None, ...] = ()  # per unit; None = not applicable (0 / 0)

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
    for recipe in recipes:
        if not known.issuperset(recipe.needs):
            continue
        fed = [u for u in units if all(_has(u.values, extra, n) for n in recipe.needs)]
        if fed:
            results = tuple(_clip_none(recipe.formula({**extra, **u.values})) for u in fed)
            return Outcome(recipe, tuple(fed), results)
    return Outcome(None)


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
            if tool not in recipe.tools:
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


def weighted_mean(pairs: Sequence[tuple[Unit, float]]) -> float:
    """Duration-weighted mean of per-unit values (equal weights if any duration is unknown)."""
    if len(pairs) == 1:
        return pairs[0][1]
    weights = [u.weight_ns for u, _ in pairs]
    if any(w is None or not w > 0 for w in weights):
        return sum(v for _, v in pairs) / len(pairs)
    total = sum(w for w in weights if w is not None)
    return sum((w or 0.0) * v for w, (_, v) in zip(weights, pairs, strict=True)) / total


def evidence(units: Sequence[Unit], names: Iterable[str], extra: Values) -> dict[str, float]:
    """The (duration-weighted mean) value of each input over ``units``, for the report."""
    out: dict[str, float] = {}
    for name in names:
        pairs = [
            (u, float({**extra, **u.values}[name])) for u in units if _has(u.values, extra, name)
        ]
        if pairs:
            out[name] = weighted_mean(pairs)
    return out


def profilers(profile: Profile) -> tuple[str, ...]:
    """The tools whose metric names to suggest: the profile's own, else both."""
    own = [p.profiler for p in profile.provenance if p.profiler in ("ncu", "nvprof")]
    return tuple(dict.fromkeys(own)) or ("ncu", "nvprof")


# --------------------------------------------------------------------------- gathering


def gather(profile: Profile) -> list[KernelData]:
    """One :class:`KernelData` per kernel name found in the profile (sorted by name)."""
    metrics = profile.metrics
    per_launch = metrics[metrics["launch_id"].notna()]
    summary = metrics[metrics["launch_id"].isna()]
    launch_values = _per_launch_values(per_launch)
    summary_values = _summary_values(summary)
    launches = profile.launches
    kernels: list[KernelData] = []
    for name in profile.kernel_names():
        rows = launches[launches["name"] == name]
        base = summary_values.get(name, {})
        units: list[Unit] = []
        for row in rows.itertuples(index=False):
            lid = int(row.launch_id)
            values = {**base, **_launch_config(row), **launch_values.get(lid, {})}
            units.append(Unit(lid, _number(row.duration_ns), values))
        metric_ids = sorted(
            int(i) for i in per_launch.loc[per_launch["kernel"] == name, "launch_id"].unique()
        )
        known = {u.launch_id for u in units}
        for lid in metric_ids:  # metric rows whose launch is not in ``launches``
            if lid not in known:
                values = {**base, **launch_values.get(lid, {})}
                units.append(Unit(lid, values.get("gpu_time_duration"), values))
        if not units and base:
            units.append(Unit(None, base.get("gpu_time_duration"), dict(base)))
        count, duration = _count_and_duration(profile, name, units, summary)
        kernels.append(
            KernelData(
                name=name,
                units=tuple(units),
                launches=count,
                duration_ns=duration,
                per_launch_metrics=bool(metric_ids),
            )
        )
    return kernels


def _per_launch_values(frame: pd.DataFrame) -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {}
    numeric = frame[frame["value"].notna()]
    for lid, metric, value in zip(
        numeric["launch_id"], numeric["metric"], numeric["value"], strict=True
    ):
        out.setdefault(int(lid), {}).setdefault(str(metric), float(value))
    return out


def _summary_values(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    numeric = frame[frame["value"].notna() & frame["kernel"].notna()]
    for kernel, metric, value in zip(
        numeric["kernel"], numeric["metric"], numeric["value"], strict=True
    ):
        out.setdefault(str(kernel), {}).setdefault(str(metric), float(value))
    return out


def _launch_config(row: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    block = _product(row.block_x, row.block_y, row.block_z)
    grid = _product(row.grid_x, row.grid_y, row.grid_z)
    if block is not None:
        out["launch.block_threads"] = block
    if grid is not None:
        out["launch.grid_blocks"] = grid
    regs = _number(row.registers_per_thread)
    if regs is not None:
        out["launch.registers_per_thread"] = regs
    static, dynamic = _number(row.static_shared_bytes), _number(row.dynamic_shared_bytes)
    if static is not None or dynamic is not None:
        out["launch.shared_bytes_per_block"] = (static or 0.0) + (dynamic or 0.0)
    duration = _number(row.duration_ns)
    if duration is not None:
        out["launch.duration_ns"] = duration
    return out


def _count_and_duration(
    profile: Profile, name: str, units: Sequence[Unit], summary: pd.DataFrame
) -> tuple[int, float | None]:
    rows = profile.launches[profile.launches["name"] == name]
    timed = rows[rows["start_ns"].notna()]
    if 0 < len(timed) < len(rows):  # a timeline merged with replayed (ncu) launches: trust it
        rows = timed
    if len(rows):
        durations = rows["duration_ns"].dropna()
        return len(rows), float(durations.sum()) if len(durations) else None
    ks = profile.kernel_summary[profile.kernel_summary["name"] == name]
    if len(ks):
        calls = int(ks["calls"].fillna(0).sum())
        total = ks["total_ns"].dropna()
        return calls, float(total.sum()) if len(total) else None
    if units and units[0].launch_id is not None:
        weights = [u.weight_ns for u in units if u.weight_ns is not None]
        return len(units), float(sum(weights)) if weights else None
    rows_k = summary[summary["kernel"] == name]
    calls = int(rows_k["invocations"].dropna().max()) if rows_k["invocations"].notna().any() else 0
    avg = units[0].values.get("gpu_time_duration") if units else None
    return calls, (avg * calls if avg is not None and calls else None)


def _has(values: Values, extra: Values, name: str) -> bool:
    value = values.get(name, extra.get(name))
    return value is not None and math.isfinite(value)


def _clip_none(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return value


def _product(*parts: Any) -> float | None:
    numbers = [_number(p) for p in parts]
    if numbers[0] is None:
        return None
    out = 1.0
    for n in numbers:
        out *= n if n is not None else 1.0
    return out


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
