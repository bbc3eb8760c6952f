"""The canonical metric names the report reads, so readers can leave the others out.

``cuda-advisor report`` reads only a few dozen of the hundreds of metrics an Nsight Compute
``--page raw`` export holds; :func:`needed_metrics` is the set it asks :func:`parsers.read` for:
every name a criterion recipe needs or reads when present
(:class:`~advisor.criteria.engine.inputs.Recipe` ``needs``/``optional``, the speedup and bound
recipes of :mod:`advisor.criteria.engine.speedups`), the roofline's FLOP and DRAM counts
(:mod:`advisor.report.roofline`), the BSP counts of the predictions
(:mod:`advisor.models.bsp.profile`) and the launch and device facts the readers derive from
metrics.  The ncu stall families of DEVICESYNC are matched by pattern, so :func:`is_needed` also
keeps every name of :data:`advisor.criteria.devicesync.STALL_FAMILIES`.  ``inspect`` and the other
commands read everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from types import ModuleType

from advisor.criteria import (
    devicesync,
    divergence,
    granularity,
    hostsync,
    loadbalance,
    shmem,
    throughput,
)
from advisor.criteria.engine import speedups
from advisor.criteria.engine.inputs import Recipe
from advisor.models.bsp import profile as bsp_profile
from advisor.report import roofline

#: names read outside the recipes and the models: launch and device facts the readers build
#: from metrics (parsers.ncu.frames) and the timing model's rows (advisor.models.timing)
OTHER_NAMES: tuple[str, ...] = (
    "gpu_time_duration",
    "registers_per_thread",
    "static_shared_bytes_per_block",
    "dynamic_shared_bytes_per_block",
    "sm_count",
    "grid_size",
    "block_size",
    "input_row",
)


def _recipes_of(module: ModuleType) -> Iterable[Recipe]:
    """The recipes a module holds at its top level (alone or in tuples/lists)."""
    for value in vars(module).values():
        if isinstance(value, Recipe):
            yield value
        elif isinstance(value, tuple | list):
            yield from (r for r in value if isinstance(r, Recipe))


def all_recipes() -> list[Recipe]:
    """Every recipe of the criteria, the speedups and the bound."""
    modules = (devicesync, divergence, granularity, hostsync, loadbalance, shmem, throughput)
    found = [r for m in modules for r in _recipes_of(m)]
    found += speedups.dram_fraction_recipes()
    found += speedups.compute_fraction_recipes()
    found += speedups.memory_fraction_recipes()
    for level in speedups.LEVEL_TRANSACTIONS:
        found += speedups.level_recipes(level)
    return found


@cache
def needed_metrics() -> frozenset[str]:
    """The canonical metric names the report reads (see the module docstring)."""
    names: set[str] = set(OTHER_NAMES)
    for recipe in all_recipes():
        names.update(recipe.needs)
        names.update(recipe.optional)
    names.update(bsp_profile.METRICS)
    names.update(roofline.METRICS)
    return frozenset(names)


def is_needed(name: str) -> bool:
    """True for a canonical metric name the report reads (a set lookup or a stall pattern)."""
    if name in needed_metrics():
        return True
    return any(p.match(name) for p in devicesync.STALL_FAMILIES.values())
