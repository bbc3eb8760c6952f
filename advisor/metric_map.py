"""The metric map: canonical metric names <-> nvprof names <-> Nsight Compute names and labels.

Kept as data in ``advisor/data/metric_map.csv`` (one row per canonical quantity): ``canonical``,
its base ``unit``, the ``nvprof`` metric/event name, the ``ncu`` metric name, ``ncu_scale``
(multiplier turning the ncu value into the canonical unit, e.g. 1/32 for threads-per-warp ->
efficiency), ``aliases`` (``|``-separated: ncu display labels, older ncu spellings, nvprof metric
descriptions used as headers in per-launch traces) and a description.

Only one-to-one equivalences are mapped; quantities NVIDIA defines as a formula over several ncu
metrics keep their tool names and are combined where they are used.  A name not in the map keeps
the tool's own name as its canonical name.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_DATA = Path(__file__).resolve().parent / "data" / "metric_map.csv"


@dataclass(frozen=True)
class MetricEntry:
    canonical: str
    unit: str
    nvprof: str
    ncu: str
    ncu_scale: float
    aliases: tuple[str, ...]
    description: str


@cache
def entries() -> tuple[MetricEntry, ...]:
    with _DATA.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return tuple(
        MetricEntry(
            canonical=r["canonical"],
            unit=r["unit"],
            nvprof=r["nvprof"],
            ncu=r["ncu"],
            ncu_scale=float(r["ncu_scale"] or 1),
            aliases=tuple(a for a in r["aliases"].split("|") if a),
            description=r["description"],
        )
        for r in rows
    )


@cache
def _index() -> dict[str, MetricEntry]:
    index: dict[str, MetricEntry] = {}
    for entry in entries():
        for key in (entry.canonical, entry.nvprof, entry.ncu, *entry.aliases):
            if key and key not in index:
                index[key] = entry
    return index


@cache
def _tool_index(tool: str) -> dict[str, MetricEntry]:
    index: dict[str, MetricEntry] = {}
    for entry in entries():
        own = entry.ncu if tool == "ncu" else entry.nvprof
        for key in (own, *entry.aliases):
            if key and key not in index:
                index[key] = entry
    return index


def lookup(name: str, tool: str | None = None) -> MetricEntry | None:
    """The entry for ``name``.

    Without ``tool``: whose canonical name, nvprof name, ncu name or alias is ``name``.  With
    ``tool`` ("nvprof" or "ncu"): whose name *in that tool* or alias is ``name`` -- an ncu metric
    that happens to share an nvprof name (ncu's source-level ``inst_executed``) is not the nvprof
    quantity.
    """
    if tool in ("nvprof", "ncu"):
        return _tool_index(tool).get(name.strip())
    return _index().get(name.strip())


def canonicalize(name: str, value: float, unit: str, tool: str) -> tuple[str, float, str]:
    """Map a tool's (name, value in base unit, base unit) to (canonical, value, unit).

    ``tool`` is ``"nvprof"`` or ``"ncu"``.  The mapping applies only when the units agree (after
    ``ncu_scale`` for ncu values), so a label printed in two meanings ("Memory Throughput" as a
    percentage in one section and as bytes/s in another) maps only where it means the canonical
    quantity.  nvprof prints some fractions bare (``achieved_occupancy`` 0.75): a bare number
    for a ``frac`` quantity is taken as already a fraction.
    """
    entry = lookup(name, tool)
    if entry is None:
        return name, value, unit
    if tool == "ncu" and entry.ncu_scale != 1 and unit == "":
        return entry.canonical, value * entry.ncu_scale, entry.unit
    if unit == entry.unit:
        return entry.canonical, value, unit
    if unit == "" and entry.unit == "frac" and tool == "nvprof":
        return entry.canonical, value, "frac"
    return name, value, unit
