"""The canonical metric names the report reads, so readers can leave the others out.

``cuda-advisor report`` reads only a few dozen of the hundreds of metrics an Nsight Compute
``--page raw`` export holds; :func:`needed_metrics` is the set it asks :func:`parsers.read` for:
every name a criterion recipe needs or reads when present (the ``recipes`` of every criterion's
spec: :class:`~advisor.criteria.engine.inputs.Recipe` ``needs``/``optional``, the speedup and
bound recipes of :mod:`advisor.criteria.engine.speedups`) and the launch and device facts the
readers derive from metrics.  What the report reads beyond the criteria (the roofline's FLOP and
DRAM counts, the BSP counts of the predictions) is added by :func:`advisor.pipeline.is_needed`
through :func:`selection`, so this module never imports the report layer.  Names no recipe can list
are matched by the specs' ``metric_patterns`` (the ncu stall families of DEVICESYNC,
:data:`advisor.criteria.devicesync.STALL_FAMILIES`), so
:func:`is_needed` keeps those too.  ``inspect`` and the other commands read everything.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from advisor.criteria.engine import speedups
from advisor.criteria.engine.inputs import Recipe
from advisor.criteria.engine.spec import CriterionSpec, from_specs, registered

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


def all_recipes(specs: tuple[CriterionSpec, ...] | None = None) -> list[Recipe]:
    """Every recipe of the criteria (each spec's ``recipes``), the speedups and the bound."""
    found = [r for spec in (registered() if specs is None else specs) for r in spec.recipes]
    found += speedups.dram_fraction_recipes()
    found += speedups.compute_fraction_recipes()
    found += speedups.memory_fraction_recipes()
    found += speedups.arithmetic_fraction_recipes()
    for level in speedups.LEVEL_TRANSACTIONS:
        found += speedups.level_recipes(level)
    return found


def _needed(specs: tuple[CriterionSpec, ...]) -> frozenset[str]:
    names: set[str] = set(OTHER_NAMES)
    for recipe in all_recipes(specs):
        names.update(recipe.needs)
        names.update(recipe.optional)
    return frozenset(names)


def _patterns(specs: tuple[CriterionSpec, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(p for spec in specs for p in spec.metric_patterns)


_NEEDED = from_specs(_needed)  # computed once per registered set of criteria
_PATTERNS = from_specs(_patterns)


def needed_metrics() -> frozenset[str]:
    """The canonical metric names the report reads (see the module docstring)."""
    return _NEEDED()


def is_needed(name: str) -> bool:
    """True for a canonical metric name the report reads (a set lookup or a spec's pattern)."""
    if name in _NEEDED():
        return True
    return any(p.match(name) for p in _PATTERNS())


def selection(extra: tuple[str, ...]) -> Callable[[str], bool]:
    """:func:`is_needed` widened by the names ``extra`` (what other readers of the profile use)."""
    names = frozenset(extra)

    def keep(name: str) -> bool:
        return name in names or is_needed(name)

    return keep
