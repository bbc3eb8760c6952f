"""Device characterization (MODELS.md section 2 and Decision 5; seed 002 section III).

A :class:`Characterization` is what the criteria and the time models know about the device a
profile ran on: its :class:`~advisor.devices.database.DeviceSpec`, the load latency of each memory
level in SM cycles, and the characterization functions F_Divergence, F_DRAMThr, F_ARITHThr and
F_SHMEM as sample points interpolated monotonically.  Without a measured file the advisor uses F =
1 and the architecture's default latencies (:func:`default_characterization`), and says so.

A characterization file is versioned JSON (see docs/devices.md)::

    {"schema": "cuda-advisor/device-characterization", "version": 1,
     "device": {...DeviceSpec fields...}, "latencies_cycles": {"shared": 19, ...},
     "functions": {"F_Divergence": {"x": [...], "y": [...]}, ...},
     "measured": true, "notes": [...]}

The board facts come from :mod:`advisor.devices.database`, which imports nothing from here.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from advisor import jsonfile, sideinputs
from advisor.devices.database import (
    LATENCY_LEVELS,
    SM_LIMIT_FIELDS,
    DeviceSpec,
    architecture_latencies,
    compute_capability_facts,
    find_device,
)
from advisor.errors import MalformedInput, UsageError

SCHEMA = "cuda-advisor/device-characterization"
VERSION = 1
#: the characterization functions of seed 002 section III
FUNCTION_NAMES = ("F_Divergence", "F_DRAMThr", "F_ARITHThr", "F_SHMEM")
_TOP_KEYS = {"schema", "version", "device", "latencies_cycles", "functions", "measured", "notes"}


class MonotoneFunction:
    """Monotone piecewise-cubic Hermite interpolation (PCHIP) through sample points.

    Slopes follow Fritsch & Carlson (SIAM J. Numer. Anal. 17, 1980) in the weighted
    harmonic-mean form of Fritsch & Butland (1984), as in SciPy's ``PchipInterpolator``: a slope
    is 0 where the data turns, so the curve never overshoots the samples and is monotone wherever
    the samples are.  Outside ``[x0, xn]`` the value is clamped to the end samples.  One sample
    gives a constant, two give a straight line.
    """

    def __init__(self, x: Sequence[float], y: Sequence[float]) -> None:
        xs = tuple(float(v) for v in x)
        ys = tuple(float(v) for v in y)
        if not xs or len(xs) != len(ys):
            raise ValueError(
                f"need as many x as y samples, at least one (got {len(xs)}, {len(ys)})"
            )
        if not all(math.isfinite(v) for v in xs + ys):
            raise ValueError("samples must be finite numbers")
        if any(b <= a for a, b in itertools.pairwise(xs)):
            raise ValueError("x must be strictly increasing")
        self.x = xs
        self.y = ys
        self._slopes = _pchip_slopes(xs, ys)

    def __call__(self, x: float) -> float:
        xs, ys, d = self.x, self.y, self._slopes
        if math.isnan(x):
            return math.nan
        if x <= xs[0]:
            return ys[0]
        if x >= xs[-1]:
            return ys[-1]
        k = _interval(xs, x)
        h = xs[k + 1] - xs[k]
        t = (x - xs[k]) / h
        h00 = (1 + 2 * t) * (1 - t) ** 2
        h10 = t * (1 - t) ** 2
        h01 = t * t * (3 - 2 * t)
        h11 = t * t * (t - 1)
        return h00 * ys[k] + h10 * h * d[k] + h01 * ys[k + 1] + h11 * h * d[k + 1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MonotoneFunction) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self) -> int:
        return hash((self.x, self.y))

    def __repr__(self) -> str:
        return f"MonotoneFunction(x={list(self.x)}, y={list(self.y)})"


def _interval(xs: tuple[float, ...], x: float) -> int:
    lo, hi = 0, len(xs) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if xs[mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


def _pchip_slopes(xs: tuple[float, ...], ys: tuple[float, ...]) -> tuple[float, ...]:
    n = len(xs)
    if n == 1:
        return (0.0,)
    h = [b - a for a, b in itertools.pairwise(xs)]
    delta = [(ys[k + 1] - ys[k]) / h[k] for k in range(n - 1)]
    if n == 2:
        return (delta[0], delta[0])
    d = [0.0] * n
    for k in range(1, n - 1):
        if delta[k - 1] * delta[k] > 0:  # same sign: weighted harmonic mean, else a flat slope
            w1 = 2 * h[k] + h[k - 1]
            w2 = h[k] + 2 * h[k - 1]
            d[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k])
    d[0] = _end_slope(h[0], h[1], delta[0], delta[1])
    d[-1] = _end_slope(h[-1], h[-2], delta[-1], delta[-2])
    return tuple(d)


def _end_slope(h0: float, h1: float, d0: float, d1: float) -> float:
    """Shape-preserving three-point end slope (Fritsch-Butland / SciPy ``PchipInterpolator``)."""
    slope = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)
    if math.copysign(1, slope) != math.copysign(1, d0) or d0 == 0:
        return 0.0
    if math.copysign(1, d0) != math.copysign(1, d1) and abs(slope) > abs(3 * d0):
        return 3 * d0
    return slope


@dataclass(frozen=True)
class Characterization:
    """What the models know about one device: spec, latencies, characterization functions."""

    device: DeviceSpec
    latencies_cycles: Mapping[str, float]  # "shared", "l1", "l2", "dram": load latency, SM cycles
    functions: Mapping[str, MonotoneFunction]  # keys among FUNCTION_NAMES
    measured: bool  # False for defaults
    source: str  # "defaults for <architecture>" or the JSON file path
    notes: tuple[str, ...] = field(default=())

    def F(self, name: str, x: float) -> float:
        """Characterization function ``name`` at intensity ``x``; 1.0 when not measured."""
        if name not in FUNCTION_NAMES:
            raise ValueError(f"unknown characterization function {name!r}; use {FUNCTION_NAMES}")
        function = self.functions.get(name)
        return 1.0 if function is None else function(x)

    @property
    def peak_dram_bytes_per_s(self) -> float:
        return self.device.memory_bandwidth_bytes_per_s

    @property
    def peak_fp32_flops(self) -> float:
        return self.device.peak_fp32_flops


def default_characterization(spec: DeviceSpec) -> Characterization:
    """F = 1 and the default latencies of the device's architecture (Decision 5)."""

    entries = architecture_latencies(spec.architecture)
    latencies = {level: float(entries[level]["value"]) for level in LATENCY_LEVELS}
    notes = [
        "no measured characterization: F_Divergence = F_DRAMThr = F_ARITHThr = F_SHMEM = 1",
        *(
            f"{level} latency {latencies[level]:g} cycles: {entries[level]['source']}"
            for level in LATENCY_LEVELS
        ),
    ]
    return Characterization(
        device=spec,
        latencies_cycles=latencies,
        functions={},
        measured=False,
        source=f"defaults for {spec.architecture}",
        notes=tuple(notes),
    )


def dump_characterization(ch: Characterization) -> str:
    """The characterization as versioned JSON (sorted keys, 2-space indent, trailing newline)."""
    payload = {
        "schema": SCHEMA,
        "version": VERSION,
        "device": device_to_dict(ch.device),
        "latencies_cycles": {k: float(v) for k, v in ch.latencies_cycles.items()},
        "functions": {k: {"x": list(f.x), "y": list(f.y)} for k, f in ch.functions.items()},
        "measured": bool(ch.measured),
        "notes": list(ch.notes),
    }
    return json.dumps(payload, indent=2, sort_keys=True, allow_nan=False) + "\n"


def device_to_dict(spec: DeviceSpec) -> dict[str, Any]:
    """Every DeviceSpec field, tuples as lists (JSON-ready); a per-SM limit only when known."""
    out: dict[str, Any] = {}
    for f in fields(spec):
        value = getattr(spec, f.name)
        if value is None and f.name in SM_LIMIT_FIELDS:
            continue
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def load_characterization(path: str) -> Characterization:
    """Read and validate a characterization file; a bad file raises a one-line InputError."""
    return parse_characterization(jsonfile.load(path, "characterization file"), path)


def parse_characterization(data: Any, path: str) -> Characterization:
    """Validate decoded JSON against the version-1 schema (docs/devices.md)."""
    if not isinstance(data, dict):
        raise MalformedInput(path, "a characterization file holds one JSON object")
    if data.get("schema") != SCHEMA:
        raise MalformedInput(path, f'not a device characterization ("schema" must be "{SCHEMA}")')
    version = data.get("version")
    if version != VERSION:
        raise MalformedInput(
            path,
            f"characterization version {version!r} is not supported"
            f" (this cuda-advisor reads version {VERSION})",
        )
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise MalformedInput(
            path, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_TOP_KEYS))}"
        )
    jsonfile.validate(data, sideinputs.DEVICE, path)
    spec = _parse_device(data.get("device"), path)
    notes = list(_string_list(data.get("notes", []), "notes", path))
    latencies = _parse_latencies(data.get("latencies_cycles", {}), spec, path, notes)
    functions = _parse_functions(data.get("functions", {}), path)
    measured = data.get("measured")
    if not isinstance(measured, bool):
        raise MalformedInput(path, '"measured" must be true or false')
    return Characterization(spec, latencies, functions, measured, str(path), tuple(notes))


def _parse_device(block: Any, path: str) -> DeviceSpec:
    """A full DeviceSpec block, or a partial one completed from the database entry of its name."""

    if not isinstance(block, dict) or not isinstance(block.get("name"), str):
        raise MalformedInput(path, '"device" must be an object with at least a "name"')
    known = {f.name: f for f in fields(DeviceSpec)}
    unknown = sorted(set(block) - set(known))
    if unknown:
        raise MalformedInput(path, f"unknown device field(s) {', '.join(unknown)}")
    values: dict[str, Any] = {}
    missing = [n for n in known if n not in block and n not in _DEVICE_OPTIONAL]
    if missing:
        try:
            values = device_to_dict(find_device(block["name"]))
        except UsageError:
            raise MalformedInput(
                path,
                f"device {block['name']!r} is not in the database,"
                f" so the file must give {', '.join(missing)}",
            ) from None
    values.update(block)
    try:
        for name in ("aliases", "sources", "notes"):
            values[name] = tuple(_string_list(values.get(name, []), f"device.{name}", path))
        for name in ("sm_count", "fp32_cores_per_sm", "max_warps_per_sm", "shared_banks"):
            values[name] = _number(values[name], f"device.{name}", path, integer=True)
        for name in ("boost_clock_hz", "memory_bandwidth_bytes_per_s"):
            values[name] = _number(values[name], f"device.{name}", path)
        for name in ("base_clock_hz", "l2_bytes", "fp64_flops_per_clock_per_sm"):
            value = values.get(name)
            values[name] = None if value is None else _number(value, f"device.{name}", path)
        for name in SM_LIMIT_FIELDS:
            value = values.get(name)
            values[name] = (
                None if value is None else _number(value, f"device.{name}", path, integer=True)
            )
        for name in ("name", "chip", "architecture", "compute_capability"):
            if not isinstance(values[name], str) or not values[name]:
                raise MalformedInput(path, f"device.{name} must be a non-empty string")
    except KeyError as exc:
        raise MalformedInput(path, f"device.{exc.args[0]} is missing") from None
    try:
        compute_capability_facts(values["compute_capability"])
    except KeyError:
        raise MalformedInput(
            path, f"unknown compute capability {values['compute_capability']!r}"
        ) from None
    return DeviceSpec(**values)


_DEVICE_OPTIONAL = {
    "aliases",
    "sources",
    "notes",
    "base_clock_hz",
    "l2_bytes",
    "fp64_flops_per_clock_per_sm",
    *SM_LIMIT_FIELDS,
}


def _parse_latencies(block: Any, spec: DeviceSpec, path: str, notes: list[str]) -> dict[str, float]:
    if not isinstance(block, dict):
        raise MalformedInput(path, '"latencies_cycles" must be an object')
    unknown = sorted(set(block) - set(LATENCY_LEVELS))
    if unknown:
        raise MalformedInput(
            path, f"unknown latency level(s) {', '.join(unknown)}; use {', '.join(LATENCY_LEVELS)}"
        )
    latencies = {k: _number(v, f"latencies_cycles.{k}", path) for k, v in block.items()}
    defaults = default_characterization(spec).latencies_cycles
    for level in LATENCY_LEVELS:
        if level not in latencies:
            latencies[level] = defaults[level]
            notes.append(
                f"{level} latency not in the file:"
                f" default {defaults[level]:g} cycles for {spec.architecture}"
            )
    return {level: latencies[level] for level in LATENCY_LEVELS}


def _parse_functions(block: Any, path: str) -> dict[str, MonotoneFunction]:
    if not isinstance(block, dict):
        raise MalformedInput(path, '"functions" must be an object')
    out: dict[str, MonotoneFunction] = {}
    for name in sorted(block):
        if name not in FUNCTION_NAMES:
            raise MalformedInput(
                path, f"unknown function {name!r}; use {', '.join(FUNCTION_NAMES)}"
            )
        samples = block[name]
        if not isinstance(samples, dict) or set(samples) != {"x", "y"}:
            raise MalformedInput(path, f'functions.{name} must be {{"x": [...], "y": [...]}}')
        xs = [
            _number(v, f"functions.{name}.x", path, positive=False)
            for v in _list(samples["x"], name, path)
        ]
        ys = [_number(v, f"functions.{name}.y", path) for v in _list(samples["y"], name, path)]
        try:
            out[name] = MonotoneFunction(xs, ys)
        except ValueError as exc:
            raise MalformedInput(path, f"functions.{name}: {exc}") from None
    return out


def _list(value: Any, name: str, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise MalformedInput(path, f"functions.{name}.x and .y must be lists of numbers")
    return value


def _string_list(value: Any, name: str, path: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MalformedInput(path, f'"{name}" must be a list of strings')
    return list(value)


def _number(value: Any, name: str, path: str, integer: bool = False, positive: bool = True) -> Any:
    """A finite JSON number (> 0 unless ``positive`` is False); booleans are not numbers."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and integer:
        ok = float(value).is_integer()
    if ok and positive:
        ok = value > 0
    if not ok:
        kind = (
            "a positive integer" if integer else ("a positive number" if positive else "a number")
        )
        raise MalformedInput(path, f"{name} must be {kind}, not {value!r}")
    return int(value) if integer else float(value)


__all__ = [
    "FUNCTION_NAMES",
    "LATENCY_LEVELS",
    "SCHEMA",
    "VERSION",
    "Characterization",
    "MonotoneFunction",
    "default_characterization",
    "device_to_dict",
    "dump_characterization",
    "load_characterization",
    "parse_characterization",
]
