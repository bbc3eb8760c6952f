"""The normalised frames of an Nsight Compute report, built from plain records of its results.

:mod:`parsers.ncu.rep` copies each profile result (one kernel launch) out of NVIDIA's
``ncu_report`` module into a :class:`RawAction`; this module turns a list of them into the
``launches``, ``metrics``, ``rules`` and ``devices`` frames, without touching the module (so the
mapping is testable on hand-made records).

* ``metrics``: one row per metric that has a value (instanced metrics give their aggregate
  value; the per-instance values are not kept); numbers scaled to base units through
  :func:`parsers.ncu.values.canonical` exactly as for the CSV exports, strings as ``text``.
  The report stores base units (``ns``, ``byte``, ``hz``, ``%``); device attributes CUDA
  reports in kHz or bytes carry no unit and take the implied one
  (:data:`parsers.ncu.values.IMPLIED_UNITS`).  Reports of 2019.x store no units for most
  metrics: a metric without a unit takes the unit its canonical quantity has in the metric map
  (``gpu__time_duration`` -> ns, ``dram__read_bytes`` -> byte, a fraction -> ``%``), else a
  name ending in ``_pct`` is a percentage (noted in the provenance).  Metric-name drift between
  versions is handled by aliases in ``advisor/data/metric_map.csv``.  As in the CSV exports,
  two metrics of a launch can reach one canonical name (``inst_executed`` of the source counters
  and ``smsp__inst_executed.sum``); ``tool_metric`` tells them apart.
* ``launches``: the name (demangled), device, context and stream ids, grid and block from
  ``launch__grid_dim_*``/``launch__block_dim_*`` (left empty where only ``launch__grid_size``
  is stored), registers and static/dynamic shared memory per block, and the duration from the
  metric mapped to ``gpu_time_duration``.  Reports hold no launch timestamps.
* ``devices``: one row per device id from the ``device__attribute_*`` metrics of its first
  launch; ``clock_rate``/``memory_clock_rate`` are kHz; the memory bandwidth is
  2 x memory clock x bus width / 8 (double data rate, the CUDA ``deviceQuery`` convention); the
  per-SM limits from ``max_{warps,threads,blocks,registers,shared_memory}_per_multiprocessor``
  (:data:`parsers.ncu.frames.SM_LIMIT_ATTRIBUTES`; missing where the report lacks one).
* ``rules``: the stored rule results with NVIDIA's estimated speedup (a percentage -> fraction),
  kept as reference data; the message title prefixes the description; link markup
  (``@section:Id:text@``, ``@url:text:address@``) becomes plain text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pandas as pd

from advisor.metric_map import lookup
from advisor.ncu_read import RawAction as RawAction
from advisor.ncu_read import RawMetric as RawMetric
from advisor.ncu_read import RawRule as RawRule
from parsers.names import compute_capability
from parsers.ncu.frames import SM_LIMIT_ATTRIBUTES
from parsers.ncu.values import IMPLIED_UNITS, canonical
from parsers.units import fits_int

NAN = math.nan
_DISPLAY_NAME = "device__attribute_display_name"


@dataclass
class ReportFrames:
    launches: pd.DataFrame
    metrics: pd.DataFrame
    rules: pd.DataFrame
    devices: pd.DataFrame
    notes: list[str]


def build_frames(actions: Sequence[RawAction]) -> ReportFrames:
    """The frames of a report whose results, in report order, are ``actions``."""
    rows: list[tuple[Any, ...]] = []
    launches: list[dict[str, Any]] = []
    inferred: set[str] = set()
    per_launch: list[dict[str, tuple[float, str, str | None]]] = []
    for launch_id, action in enumerate(actions):
        values = _metric_rows(launch_id, action, rows, inferred)
        per_launch.append(values)
        launches.append(_launch(launch_id, action.name, values))
    launch_frame = pd.DataFrame(launches, columns=_LAUNCH_COLUMNS)
    rules = pd.DataFrame(_rule_rows(actions), columns=_RULE_COLUMNS)
    cells = zip(*rows, strict=True) if rows else ([] for _ in _METRIC_COLUMNS)
    columns = {name: list(column) for name, column in zip(_METRIC_COLUMNS, cells, strict=True)}
    return ReportFrames(
        launches=launch_frame,
        metrics=pd.DataFrame(columns),
        rules=rules,
        devices=_devices(launch_frame, per_launch),
        notes=_notes(launch_frame, inferred),
    )


_METRIC_COLUMNS = (
    "launch_id", "kernel", "device", "device_id", "metric", "tool_metric", "section", "unit",
    "value", "text",
)  # fmt: skip
_LAUNCH_COLUMNS = (
    "launch_id", "name", "device", "device_id", "context", "stream", "duration_ns",
    "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
    "registers_per_thread", "static_shared_bytes", "dynamic_shared_bytes",
)  # fmt: skip
_RULE_COLUMNS = (
    "launch_id", "kernel", "section", "rule", "rule_type", "description", "speedup_type",
    "estimated_speedup_frac",
)  # fmt: skip


def _metric_rows(
    launch_id: int,
    action: RawAction,
    rows: list[tuple[Any, ...]],
    inferred: set[str],
) -> dict[str, tuple[float, str, str | None]]:
    """Append the metrics rows of one launch (tuples in the order of :data:`_METRIC_COLUMNS`);
    return tool name and canonical name -> (value in base unit, unit, text) for the launch's
    own fields."""
    by_name = {m.name: m for m in action.metrics}
    display = by_name.get(_DISPLAY_NAME)
    device = display.text if display is not None else None
    device_id = _first_number(by_name, "launch__device_id", "device__attribute_device_index")
    values: dict[str, tuple[float, str, str | None]] = {}
    for m in sorted(action.metrics, key=lambda m: m.name):
        metric, factor, unit, guessed = resolve(m.name, m.unit)
        if guessed:
            inferred.add(m.name)
        value = m.value * factor if m.value is not None else NAN
        values[m.name] = (value, unit, m.text)
        values.setdefault(metric, (value, unit, m.text))
        rows.append((
            launch_id, action.name, device, device_id, metric, m.name,
            action.sections.get(m.name), unit, value, m.text,
        ))  # fmt: skip
    return values


@cache
def resolve(name: str, stored_unit: str) -> tuple[str, float, str, bool]:
    """(canonical name, factor from the stored value to the base unit, base unit, whether the
    unit was inferred) of one report metric."""
    unit = stored_unit.strip()
    guessed = False
    if not unit and name not in IMPLIED_UNITS:
        unit = _unit_from_name(name)
        guessed = bool(unit)
    metric, factor, base = canonical(name, unit)
    return metric, factor, base, guessed


def _unit_from_name(name: str) -> str:
    """The unit a 2019.x report leaves out: the metric map's for a known quantity (a fraction
    is stored as a percentage), else ``%`` for a ``_pct`` name, else none."""
    entry = lookup(name)
    if entry is not None and entry.unit and entry.ncu_scale == 1 and entry.unit != "level":
        return "%" if entry.unit == "frac" else entry.unit
    return "%" if name.endswith("_pct") else ""


def _first_number(by_name: Mapping[str, RawMetric], *names: str) -> int | None:
    for name in names:
        m = by_name.get(name)
        if m is not None and m.value is not None and fits_int(m.value):
            return int(m.value)
    return None


def _launch(
    launch_id: int, name: str, values: Mapping[str, tuple[float, str, str | None]]
) -> dict[str, Any]:
    def number(key: str, unit: str | None = None) -> float:
        value, got, _ = values.get(key, (NAN, "", None))
        return value if unit is None or got == unit else NAN

    device_id = number("launch__device_id")
    if math.isnan(device_id):
        device_id = number("device__attribute_device_index")
    row: dict[str, Any] = {
        "launch_id": launch_id,
        "name": name,
        "device": values.get(_DISPLAY_NAME, (NAN, "", None))[2],
        "device_id": device_id,
        "context": number("launch__context_id"),
        "stream": number("launch__stream_id"),
        "duration_ns": number("gpu_time_duration", "ns"),
        "registers_per_thread": number("registers_per_thread", ""),
        "static_shared_bytes": number("static_shared_bytes_per_block", "byte/block"),
        "dynamic_shared_bytes": number("dynamic_shared_bytes_per_block", "byte/block"),
    }
    for prefix in ("grid", "block"):
        for axis in "xyz":
            row[f"{prefix}_{axis}"] = number(f"launch__{prefix}_dim_{axis}")
    return {k: _whole(v) if k in _INTEGRAL else v for k, v in row.items()}


_INTEGRAL = frozenset(
    {"device_id", "context", "stream", "registers_per_thread"}
    | {f"{p}_{a}" for p in ("grid", "block") for a in "xyz"}
)


def _whole(value: Any) -> Any:
    """An integral float as int; NaN and fractions as missing."""
    if isinstance(value, float):
        return int(value) if fits_int(value) else pd.NA
    return value


def _devices(
    launches: pd.DataFrame, per_launch: Sequence[Mapping[str, tuple[float, str, str | None]]]
) -> pd.DataFrame:
    """One row per device id, from the device attributes of its first launch."""
    rows: dict[int, dict[str, Any]] = {}
    for launch_id, device_id in enumerate(launches["device_id"]):
        if not pd.isna(device_id) and int(device_id) not in rows:
            rows[int(device_id)] = _device_row(int(device_id), per_launch[launch_id])
    return pd.DataFrame([rows[k] for k in sorted(rows)])


def _device_row(
    device_id: int, values: Mapping[str, tuple[float, str, str | None]]
) -> dict[str, Any]:
    def number(key: str) -> float:
        return values.get(f"device__attribute_{key}", (NAN, "", None))[0]

    major, minor = number("compute_capability_major"), number("compute_capability_minor")
    memory_hz, bus_bits = number("memory_clock_rate"), number("global_memory_bus_width")
    return {
        "device_id": device_id,
        "name": values.get(_DISPLAY_NAME, (NAN, "", None))[2],
        "compute_capability": compute_capability(major, minor),
        "sm_count": _whole(number("multiprocessor_count")),
        "sm_clock_hz": number("clock_rate"),  # kHz in the report, hz after IMPLIED_UNITS
        "memory_clock_hz": memory_hz,
        "memory_bandwidth_bytes_per_s": 2 * memory_hz * bus_bits / 8,
        "l2_bytes": number("l2_cache_size"),
        **{
            column: _limit(column, values.get(attribute, (NAN, "", None))[0])
            for column, attribute in SM_LIMIT_ATTRIBUTES.items()
        },
    }


def _limit(column: str, value: float) -> Any:
    """A per-SM limit: bytes of shared memory as they are, counts as whole numbers."""
    return value if column == "shared_bytes_per_sm" else _whole(value)


def _rule_rows(actions: Sequence[RawAction]) -> list[dict[str, Any]]:
    rows = []
    for launch_id, action in enumerate(actions):
        for r in action.rules:
            text = plain_text(r.message)
            if not text and r.speedup_pct is None:
                continue  # an empty result (NONE type, no message): nothing to keep
            title = plain_text(r.title)
            rows.append(
                {
                    "launch_id": launch_id,
                    "kernel": action.name,
                    "section": r.section or None,
                    "rule": r.rule or None,
                    "rule_type": r.rule_type,
                    "description": f"{title}: {text}" if title else text,
                    "speedup_type": r.speedup_type,
                    "estimated_speedup_frac": (
                        r.speedup_pct / 100.0 if r.speedup_pct is not None else NAN
                    ),
                }
            )
    return rows


_LINK = re.compile(r"@(url|section|sass|source):([^@]*)@")


def plain_text(message: str) -> str:
    """A rule message with its link markup replaced by the link text (a URL in brackets)."""

    def replace(m: re.Match[str]) -> str:
        kind, body = m.group(1), m.group(2)
        if kind == "url":
            text, _, address = body.partition(":")
            return f"{text} ({address})" if address else text
        skip = 2 if kind == "source" else 1  # file:line:text, id:text, address:text
        parts = body.split(":")
        return ":".join(parts[skip:]) if len(parts) > skip else body

    return _LINK.sub(replace, message).strip()


def _notes(launches: pd.DataFrame, inferred: set[str]) -> list[str]:
    notes = []
    if inferred:
        notes.append(
            f"units inferred for {len(inferred)} metrics stored without one (as 2019.x reports "
            "store them): the metric map's unit for known quantities, '%' for '_pct' names"
        )
    no_dims = int(launches["grid_x"].isna().sum()) if len(launches) else 0
    if no_dims:
        notes.append(
            f"{no_dims} of {len(launches)} launches store no launch__grid_dim_*/"
            "launch__block_dim_*: their grid and block dimensions are left empty "
            "(grid_size/block_size are in the metrics)"
        )
    no_time = int(launches["duration_ns"].isna().sum()) if len(launches) else 0
    if no_time:
        notes.append(
            f"{no_time} of {len(launches)} launches have no duration metric "
            "(gpu__time_duration not collected for them)"
        )
    return notes
