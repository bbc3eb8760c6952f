"""What the level-form criteria share: L1_GRANULARITY, L2_GRANULARITY and SHMEM_EFFICIENCY.

Seed 002, section IV-F/G: each is an efficiency of one memory level (requested / transferred
bytes -- Decision 1 -- or ideal / actual shared transactions), and its potential speedup is the
level form (seed 002, section V; Decision 4, MODELS.md §1): 1 / ((1 - p) + p * criterion), p =
L1% / L2% / ShMem% of the warps' time (:func:`advisor.criteria.engine.speedups.level_share`); the
paper's form (1 / criterion) * p on request.  Zero-denominator policy: no traffic through the
level is n/a.

The two granularity criteria also share the requested-bytes counters and the ratio of
:func:`requested_over_transferred`.
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor.criteria.engine import collect
from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import Context, Scored, absent, not_applicable, score
from advisor.criteria.engine.inputs import Formula, KernelData, Recipe
from advisor.criteria.engine.speedups import level_share, level_speedup_amdahl, level_speedup_paper

#: bytes of an L1 (Volta and later) or L2 sector; the nvprof figures already use the right size
SECTOR_BYTES = 32

#: bytes the global load / store instructions asked for (ncu smsp__sass_data_bytes_mem_global_*)
REQUESTED_BYTES = ("global_load_requested_bytes", "global_store_requested_bytes")
#: Nsight Compute source counters: ideal and actual global sectors
IDEAL_SECTORS = (
    "memory_l2_theoretical_sectors_global_ideal",
    "memory_l2_theoretical_sectors_global",
)
#: nvprof requested global load / store throughput
REQUESTED_THROUGHPUT = ("gld_requested_throughput", "gst_requested_throughput")
#: global load / store requests (one per warp-level instruction)
GLOBAL_REQUESTS = ("global_load_requests", "global_store_requests")
#: sectors a request of 32 lanes x 4 B words needs (Decision G2)
WORD_SECTORS_PER_REQUEST = 4
#: the note every result of a Decision G2 recipe carries
WORD_ESTIMATE_NOTE = (
    "requested bytes estimated as 4 sectors per request (32 lanes x 4 B words): the report has "
    "no requested-byte or ideal-sector counters; 8 B or 16 B (float4) accesses read lower than "
    "they are, partial warps higher"
)


#: why both granularity criteria flag below 0.9 (their specs share the reason)
GRANULARITY_THRESHOLD_REASON = (
    "A tenth of the moved bytes unused already wastes bandwidth worth recovering: Nsight "
    "Compute's uncoalesced-access rules report kernels with 12-18 % excessive sectors.  The "
    "ranking by potential speedup keeps such hints low when the kernel spends little time at "
    "that level."
)

def _bytes_over_sectors(requested: Sequence[str], sectors: Sequence[str]) -> Formula:
    """Decision 1's formula on named inputs: the summed ``requested`` bytes over 32 B x the
    summed ``sectors`` (the same number of each: loads and stores, or loads alone)."""
    return lambda v: requested_over_transferred(
        sum(v[name] for name in requested), SECTOR_BYTES * sum(v[name] for name in sectors)
    )


def requested_bytes_recipe(label: str, sectors: tuple[str, str]) -> Recipe:
    """Decision 1 from Nsight Compute byte counters: the global requested bytes over 32 B x the
    two sector counters ``sectors`` (loads, stores) of one level."""
    return Recipe(
        label,
        (*REQUESTED_BYTES, *sectors),
        _bytes_over_sectors(REQUESTED_BYTES, sectors),
        tools=("ncu",),
    )


#: the bytes the global loads / stores asked for, summed over the instructions of the
#: per-instruction counters: predicated-on lanes x each instruction's access width
#: (:func:`parsers.ncu.source_counters.criterion_sums`, read only where needed,
#: :mod:`advisor.criteria.engine.instruction_sums`)
SOURCE_REQUESTED_BYTES = (
    "source.global_load_requested_bytes",
    "source.global_store_requested_bytes",
)
#: the note every result of a per-instruction requested-bytes recipe carries
SOURCE_BYTES_NOTE = (
    "requested bytes summed over the global load and store instructions of Nsight Compute's "
    "per-instruction counters (active lanes x each instruction's access width), read because "
    "the report has no kernel-level requested-byte or ideal-sector counter"
)


def source_bytes_recipes(level: str, sectors: tuple[str, str]) -> tuple[Recipe, ...]:
    """Decision 1 from the per-instruction counters, before the 4-sectors-per-request estimate
    (docs/criteria.md, "Per-instruction recipes"): the requested bytes of
    :data:`SOURCE_REQUESTED_BYTES` over 32 B x the level's sectors ``sectors`` (loads, stores);
    loads alone where only the load sectors are measured.  Unlike Decision G2 this counts
    partial warps and predicated-off lanes and 8 B / 16 B accesses as they ran.  Marked
    ``fallback``: the sums are never named as something to collect (the kernel-level counters
    are)."""
    label = (
        f"requested bytes from each instruction's access width / (32 B x {level.upper()} sectors)"
    )
    return (
        Recipe(
            label,
            (*SOURCE_REQUESTED_BYTES, *sectors),
            _bytes_over_sectors(SOURCE_REQUESTED_BYTES, sectors),
            tools=("ncu",),
            note=SOURCE_BYTES_NOTE,
            fallback=True,
        ),
        Recipe(
            f"{label}, loads only",
            (SOURCE_REQUESTED_BYTES[0], sectors[0]),
            _bytes_over_sectors(SOURCE_REQUESTED_BYTES[:1], sectors[:1]),
            tools=("ncu",),
            note=f"{SOURCE_BYTES_NOTE}; only global loads are measured",
            fallback=True,
        ),
    )


def word_estimate_recipes(level: str, sectors: tuple[str, str]) -> tuple[Recipe, ...]:
    """Decision G2: the requested bytes estimated from the request count when a report has no
    requested-byte or ideal-sector counter (Nsight Compute's memory-chart and command-line
    metric sets): every global request is one warp-level instruction of 32 lanes x 4 B words,
    i.e. :data:`WORD_SECTORS_PER_REQUEST` sectors, over the level's sectors ``sectors`` (loads,
    stores).  Loads and stores when both are measured, loads alone otherwise (said in a note).

    Measured (docs/criteria.md, Decision G2): against Nsight Compute's own ideal sector count on
    the 32 kernels of the real reports and families that hold both, median ratio 1.34 (it
    overstates the ideal for partial warps and 2 B words, understates it for ``float4``); it
    makes the coalescing steps of five more tuning steps scoreable."""
    both = (*GLOBAL_REQUESTS, *sectors)
    label = f"4 sectors per global request (4 B words) / {level.upper()} sectors"
    return (
        Recipe(
            label,
            both,
            lambda v: requested_over_transferred(
                WORD_SECTORS_PER_REQUEST * (v[GLOBAL_REQUESTS[0]] + v[GLOBAL_REQUESTS[1]]),
                v[sectors[0]] + v[sectors[1]],
            ),
            note=WORD_ESTIMATE_NOTE,
            fallback=True,
        ),
        Recipe(
            f"{label}, loads only",
            (GLOBAL_REQUESTS[0], sectors[0]),
            lambda v: requested_over_transferred(
                WORD_SECTORS_PER_REQUEST * v[GLOBAL_REQUESTS[0]], v[sectors[0]]
            ),
            note=f"{WORD_ESTIMATE_NOTE}; only global loads are measured",
            fallback=True,
        ),
    )


def requested_over_transferred(requested: float, transferred: float) -> float | None:
    """Decision 1: requested / transferred; None when nothing was transferred."""
    if not transferred > 0:
        return None
    return requested / transferred


def level_result(
    name: str,
    level: str,
    scored: Scored,
    value: float,
    kernel: KernelData,
    ctx: Context,
    inputs: dict[str, float],
) -> CriterionResult:
    """The result of a level-form criterion, with p and both speedup forms when p is known."""
    share = level_share(kernel, level, ctx)
    notes: tuple[str, ...] = (scored.recipe.note,) if scored.recipe.note else ()
    if share is None:
        speedups = Speedups()
        p = None
        notes = (
            *notes,
            f"potential speedup needs p = {level.upper()}% of the warps' time: the {level} "
            f"transactions, the warp-cycles (active_warps) and the device's {level} latency",
        )
    else:
        p, p_inputs = share
        inputs = {**inputs, **p_inputs}
        speedups = Speedups(
            paper=level_speedup_paper(value, p), amdahl=level_speedup_amdahl(value, p)
        )
    return CriterionResult(
        name=name,
        status=COMPUTED,
        value=value,
        raw_value=scored.raw,
        speedups=speedups,
        collect=collect.commands_for(name, with_speedup=True) if p is None else {},
        method=scored.recipe.label,
        inputs=inputs,
        launches_used=scored.launches_used,
        level_share_frac=p,
        notes=notes,
    )


def evaluate_granularity(
    name: str, level: str, recipes: tuple[Recipe, ...], kernel: KernelData, ctx: Context
) -> CriterionResult:
    """A granularity criterion: the first recipe that fits, its value as is, the level form."""
    scored = score(kernel, recipes, ctx)
    if scored is None:
        return absent(name, kernel, recipes, ctx)
    if not isinstance(scored, Scored):
        return not_applicable(name, "the kernel moved no global memory through this level")
    return level_result(name, level, scored, scored.raw, kernel, ctx, dict(scored.inputs))
