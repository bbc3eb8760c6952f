"""L1_GRANULARITY: bytes the global memory instructions asked for over the bytes the L1
transactions moved.

Seed 002, section IV-F prints ``|L1_transactions| * 128 / sum_T |Mem_instr_T| * size_T``, i.e.
transferred / requested, which is >= 1 for wasteful access and contradicts the [0, 1], 1-best
convention of the same section.  **Decision 1**: use requested / transferred (nvprof's
``gld_efficiency``-style ratio), clamped to [0, 1].  Transaction sizes: 128 B L1 lines on
Fermi/Kepler, 32 B sectors on Volta and later -- the nvprof efficiencies and throughputs already
use the right size, and the Nsight Compute recipes count 32 B sectors.

Recipes, first that fits: requested bytes (``smsp__sass_data_bytes_mem_global_op_ld/st.sum``)
/ (32 * L1 global sectors); Nsight Compute's source-counter ideal / actual global sectors
(``memory_l2_theoretical_sectors_global_ideal`` / ``memory_l2_theoretical_sectors_global``, the
numbers behind its "uncoalesced global access" rule); the used bytes per sector
(``smsp__sass_average_data_bytes_per_sector_mem_global_op_ld/st.ratio``) / 32 weighted by sectors,
the numbers behind its "access pattern" rule; nvprof requested / transferred throughputs
``(gld_requested_throughput + gst_requested_throughput) / (gld_throughput + gst_throughput)``;
``gld_efficiency`` and ``gst_efficiency`` weighted by their transactions; ``gld_efficiency``
alone (loads only, said in a note); last, 4 sectors per global request (32 lanes x 4 B
words) over the level's sectors (Decision G2, docs/criteria.md, with a note on every result).

Zero-denominator policy: no global memory transaction is n/a.  Potential speedup (Decision 4):
1 / ((1 - p) + p * criterion), p = L1%; the paper's form (1 / criterion) * p on request
(:mod:`advisor.criteria.engine.levels`, shared with L2_GRANULARITY and SHMEM_EFFICIENCY).
"""

from __future__ import annotations

from advisor.criteria.engine.analysis import CriterionResult
from advisor.criteria.engine.common import Context
from advisor.criteria.engine.inputs import KernelData, Recipe
from advisor.criteria.engine.levels import (
    GRANULARITY_THRESHOLD_REASON,
    IDEAL_SECTORS,
    REQUESTED_BYTES,
    REQUESTED_THROUGHPUT,
    SECTOR_BYTES,
    evaluate_granularity,
    requested_bytes_recipe,
    requested_over_transferred,
    source_bytes_recipes,
    word_estimate_recipes,
)
from advisor.criteria.engine.spec import CriterionSpec, Needs
from advisor.criteria.engine.speedups import level_recipes

NAME = "L1_GRANULARITY"


def weighted_efficiency(
    load_eff: float, load_tx: float, store_eff: float, store_tx: float
) -> float | None:
    """(gld_eff * gld_tx + gst_eff * gst_tx) / (gld_tx + gst_tx): transactions are proportional
    to the bytes moved, and efficiency * bytes moved = bytes requested."""
    total = load_tx + store_tx
    if not total > 0:
        return None
    return (load_eff * load_tx + store_eff * store_tx) / total


def bytes_per_sector_efficiency(
    load_bytes_per_sector: float,
    load_sectors: float,
    store_bytes_per_sector: float,
    store_sectors: float,
) -> float | None:
    """Used bytes per 32 B sector, loads and stores weighted by their sectors, over 32.

    Each per-sector figure is capped at 32 B (Nsight Compute prints more than 32 for stores that
    several requests merge into one sector)."""
    total = load_sectors + store_sectors
    if not total > 0:
        return None
    used = min(load_bytes_per_sector, SECTOR_BYTES) * load_sectors
    used += min(store_bytes_per_sector, SECTOR_BYTES) * store_sectors
    return used / (SECTOR_BYTES * total)


_REQ = REQUESTED_BYTES
_L1_SECTORS = ("gld_transactions", "gst_transactions")
_IDEAL = IDEAL_SECTORS
_REQ_THR = REQUESTED_THROUGHPUT
_PER_SECTOR = (
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
)

RECIPES: tuple[Recipe, ...] = (
    requested_bytes_recipe("requested bytes / (32 B x L1 global sectors)", _L1_SECTORS),
    Recipe(
        "ideal / actual global sectors (Nsight Compute source counters)",
        _IDEAL,
        lambda v: requested_over_transferred(v[_IDEAL[0]], v[_IDEAL[1]]),
        tools=("ncu",),
    ),
    Recipe(
        "used bytes per sector / 32, weighted by sectors (Nsight Compute)",
        (*_PER_SECTOR, *_L1_SECTORS),
        lambda v: bytes_per_sector_efficiency(
            v[_PER_SECTOR[0]], v[_L1_SECTORS[0]], v[_PER_SECTOR[1]], v[_L1_SECTORS[1]]
        ),
        tools=("ncu",),
    ),
    Recipe(
        "requested / transferred global throughput (nvprof)",
        (*_REQ_THR, "gld_throughput", "gst_throughput"),
        lambda v: requested_over_transferred(
            v[_REQ_THR[0]] + v[_REQ_THR[1]], v["gld_throughput"] + v["gst_throughput"]
        ),
        tools=("nvprof",),
    ),
    Recipe(
        "gld/gst efficiency weighted by transactions",
        ("gld_efficiency", "gld_transactions", "gst_efficiency", "gst_transactions"),
        lambda v: weighted_efficiency(
            v["gld_efficiency"], v["gld_transactions"], v["gst_efficiency"], v["gst_transactions"]
        ),
        tools=("nvprof",),
    ),
    Recipe(
        "global load efficiency (loads only)",
        ("gld_efficiency",),
        lambda v: v["gld_efficiency"] if v["gld_efficiency"] > 0 else None,
        tools=("nvprof",),
        note="only global loads are measured (gld_efficiency); stores are not included",
    ),
    *source_bytes_recipes("l1", _L1_SECTORS),
    *word_estimate_recipes("l1", _L1_SECTORS),
)


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    return evaluate_granularity(NAME, "l1", RECIPES, kernel, ctx)


SPEC = CriterionSpec(
    name=NAME,
    order=6,
    threshold=0.9,
    threshold_reason=GRANULARITY_THRESHOLD_REASON,
    title="uncoalesced global access: L1 moves bytes nobody asked for",
    actions=(
        "make consecutive threads access consecutive addresses (coalesced access)",
        "use a structure-of-arrays layout instead of an array of structures",
        "reorganize the thread blocks and resize the memory tiles to the 32 B sector / 128 B line",
        "load through shared memory and transpose there; use vectorized loads (float4) when "
        "each thread reads contiguous data",
    ),
    short_label="L1 gran.",
    recipes=(*RECIPES, *level_recipes("l1")),  # the criterion's and p = L1%'s
    needs=Needs(
        ncu_metrics=(
            "smsp__sass_data_bytes_mem_global_op_ld.sum",
            "smsp__sass_data_bytes_mem_global_op_st.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        ),
        nvprof_metrics=(
            "gld_requested_throughput",
            "gst_requested_throughput",
            "gld_throughput",
            "gst_throughput",
            "gld_transactions",
            "gst_transactions",
        ),
    ),
    evaluate=evaluate,
)
