"""What the load-balance criteria share with each other and with THROUGHPUT/OCCUPANCY.

* :func:`calculated_theoretical_warps`: seed 002, section IV-D's denominator ``(BLOCKSIZE / 32) *
  #Blocks_per_SM`` from the launch configuration and the device's per-SM limits, the compute
  capability's where the device states none (:mod:`advisor.criteria.engine.occupancy`);
  LOADBALANC_WARP divides by it and THROUGHPUT/OCCUPANCY (section IV-H) turns it into the
  theoretical occupancy.
* :func:`evaluate_inverse`: the flow of LOADBALANC_WARP and LOADBALANC_SM (sections IV-D/E): the
  first recipe that fits gives the value as is, and the potential speedup is 1 / criterion in
  both forms (seed 002, section V).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import Context, Scored, absent, inverse, not_applicable, score
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.occupancy import (
    limits_for,
    theoretical_warps_per_sm,
    with_device_limits,
)


def calculated_theoretical_warps(v: Values) -> float | None:
    """(BLOCKSIZE / 32) * #Blocks_per_SM from the launch configuration and the per-SM limits:
    the device's own (``device.max_warps_per_sm``, ``device.max_threads_per_sm``,
    ``device.max_blocks_per_sm``, ``device.registers_per_sm``, ``device.shared_bytes_per_sm``)
    where known, else the compute capability's."""
    return _theoretical_warps(
        v.get("device.compute_capability"),
        v.get("device.max_warps_per_sm"),
        v.get("device.max_threads_per_sm"),
        v.get("device.max_blocks_per_sm"),
        v.get("device.registers_per_sm"),
        v.get("device.shared_bytes_per_sm"),
        v["launch.block_threads"],
        v.get("launch.registers_per_thread", 0.0),
        v.get("launch.shared_bytes_per_block", 0.0),
    )


@lru_cache(maxsize=4096, typed=True)
def _theoretical_warps(
    compute_capability: Any,
    max_warps: Any,
    max_threads: Any,
    max_blocks: Any,
    registers: Any,
    shared_bytes: Any,
    block_threads: Any,
    registers_per_thread: Any,
    shared_bytes_per_block: Any,
) -> float | None:
    """:func:`calculated_theoretical_warps` of these values, once per distinct launch
    configuration (the launches of a kernel mostly share one; ``typed``: 1 and 1.0 apart)."""
    limits = limits_for(compute_capability)
    if limits is None:
        return None
    limits = with_device_limits(
        limits,
        max_warps=max_warps,
        max_threads=max_threads,
        max_blocks=max_blocks,
        registers=registers,
        shared_bytes=shared_bytes,
    )
    return theoretical_warps_per_sm(
        limits, block_threads, registers_per_thread, shared_bytes_per_block
    )


def evaluate_inverse(
    name: str,
    recipes: tuple[Recipe, ...],
    kernel: KernelData,
    ctx: Context,
    why_na: str,
    absent_notes: tuple[str, ...] = (),
) -> CriterionResult:
    """The criterion from the first recipe that fits, with speedup 1 / criterion; ``why_na``
    explains a 0 / 0, ``absent_notes`` are added when no recipe fits."""
    scored = score(kernel, recipes, ctx)
    if scored is None:
        return absent(name, kernel, recipes, ctx, absent_notes)
    if not isinstance(scored, Scored):
        return not_applicable(name, why_na)
    value = scored.raw
    return CriterionResult(
        name=name,
        status=COMPUTED,
        value=value,
        raw_value=value,
        speedups=Speedups(paper=inverse(value), amdahl=inverse(value)),
        method=scored.recipe.label,
        inputs=scored.inputs,
        launches_used=scored.launches_used,
    )
