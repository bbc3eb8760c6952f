"""Per-instruction data filling criteria whose kernel-level counters are missing.

An Nsight Compute report profiled with the SourceCounters section keeps, per launch, counters
per SASS instruction (:mod:`parsers.ncu.source_counters`, docs/locations.md), noted in
:attr:`advisor.profile.Profile.instruction_sources` and read only on demand.  Some criteria have
recipes over sums of those counters (names starting with
:data:`parsers.ncu.source_counters.SUM_PREFIX`, docs/criteria.md "Per-instruction recipes"):
each instruction's own access width instead of the 4-sectors-per-request estimate of
L1/L2_GRANULARITY (Decision G2), the predicated-on lanes of DIVERGENCE, the shared wavefronts of
SHMEM_EFFICIENCY.

Lazy: :func:`needs_sums` tells, from a kernel's results, whether one of those criteria was not
computable or fell back on an estimate (a recipe marked ``fallback``); only then
:func:`with_sums` reads the sums of the kernel's launches (at most :data:`LAUNCHES_MAX`, in
launch order) and the kernel is scored again, so a recipe over the sums takes its place in the
criterion's order of preference.  A kernel whose criteria all have kernel-level counters reads
nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from advisor.criteria.engine.analysis import NOT_COMPUTABLE, CriterionResult
from advisor.criteria.engine.inputs import KernelData, Unit
from advisor.criteria.engine.spec import CriterionSpec

#: the prefix of the per-instruction sums (as :data:`parsers.ncu.source_counters.SUM_PREFIX`)
PREFIX = "source."
#: launches of one kernel whose per-instruction counters are read (as the location layer)
LAUNCHES_MAX = 10

#: (ref, the sums wanted) -> the sums the report has
Reader = Callable[[Any, frozenset[str]], Mapping[str, float]]


def uses_sums(spec: CriterionSpec) -> bool:
    """Whether one of the criterion's recipes reads per-instruction sums."""
    return any(n.startswith(PREFIX) for r in spec.recipes for n in r.needs)


def needs_sums(
    specs: Iterable[CriterionSpec], results: Iterable[CriterionResult]
) -> frozenset[str]:
    """The per-instruction sums the recipes of the criteria read that were not computable or
    used a fallback estimate in ``results`` (the kernel's results, in the order of ``specs``);
    empty when none was."""
    wanted: set[str] = set()
    for spec, result in zip(specs, results, strict=True):
        if not uses_sums(spec):
            continue
        fallback = any(r.fallback and r.label == result.method for r in spec.recipes)
        if result.status == NOT_COMPUTABLE or fallback:
            wanted.update(n for r in spec.recipes for n in r.needs if n.startswith(PREFIX))
    return frozenset(wanted)


def with_sums(
    kernel: KernelData,
    sources: Mapping[int, Any],
    wanted: frozenset[str],
    reader: Reader | None = None,
) -> KernelData | None:
    """``kernel`` with the per-instruction sums ``wanted`` of its first :data:`LAUNCHES_MAX`
    launches that have per-instruction data added to their units' values; None when none has
    any (nothing is read then).  ``reader``: (ref, wanted) -> sums (default
    :func:`parsers.ncu.source_counters.criterion_sums`, imported only when called)."""
    if reader is None:
        from parsers.ncu.source_counters import criterion_sums

        reader = criterion_sums
    units: list[Unit] = []
    names = set(kernel.names)
    read = 0
    for unit in kernel.units:
        ref = sources.get(unit.launch_id) if unit.launch_id is not None else None
        if ref is None or unit.members is not None or read >= LAUNCHES_MAX:
            units.append(unit)
            continue
        read += 1
        sums = {k: v for k, v in reader(ref, wanted).items() if math.isfinite(v)}
        names.update(sums)
        units.append(replace(unit, values={**unit.values, **sums}) if sums else unit)
    if not read:
        return None
    return replace(kernel, units=tuple(units), known=frozenset(names))
