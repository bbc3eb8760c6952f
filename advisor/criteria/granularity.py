"""L1_GRANULARITY and L2_GRANULARITY: bytes the global memory instructions asked for over the
bytes the L1 (L2) transactions moved.

Seed 002, section IV-F prints ``|L1_transactions| * 128 / sum_T |Mem_instr_T| * size_T`` (and the
same with 32 B L2 transactions), i.e. transferred / requested, which is >= 1 for wasteful access
and contradicts the [0, 1], 1-best convention of the same section.  **Decision 1**: use requested
/ transferred (nvprof's ``gld_efficiency``-style ratio), clamped to [0, 1].  Transaction sizes:
128 B L1 lines on Fermi/Kepler, 32 B sectors on Volta and later, 32 B L2 sectors everywhere -- the
nvprof efficiencies and throughputs already use the right size, and the Nsight Compute recipes
count 32 B sectors.

L1 recipes, first that fits: requested bytes (``smsp__sass_data_bytes_mem_global_op_ld/st.sum``)
/ (32 * L1 global sectors); Nsight Compute's source-counter ideal / actual global sectors
(``memory_l2_theoretical_sectors_global_ideal`` / ``memory_l2_theoretical_sectors_global``, the
numbers behind its "uncoalesced global access" rule); the used bytes per sector
(``smsp__sass_average_data_bytes_per_sector_mem_global_op_ld/st.ratio``) / 32 weighted by sectors,
the numbers behind its "access pattern" rule; nvprof requested / transferred throughputs
``(gld_requested_throughput + gst_requested_throughput) / (gld_throughput + gst_throughput)``;
``gld_efficiency`` and ``gst_efficiency`` weighted by their transactions; ``gld_efficiency``
alone (loads only, said in a note).

L2 recipes: requested bytes / (32 * L2 sectors from L1: ``lts__t_sectors_srcunit_tex_op_read`` +
``_write``); ideal global sectors / those L2 sectors; nvprof requested throughput / L2 throughput
from L1 (``l2_tex_*_throughput``, Kepler ``l2_l1_*_throughput``).  L1 hits make the L2 traffic
smaller than the request, so values above 1 are clamped.

Zero-denominator policy: no global memory transaction is n/a.  Potential speedup (Decision 4):
1 / ((1 - p) + p * criterion), p = L1% or L2%; the paper's form (1 / criterion) * p on request.
"""

from __future__ import annotations

from advisor.criteria.engine import collect
from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import Context, Scored, absent, not_applicable, score
from advisor.criteria.engine.inputs import KernelData, Recipe
from advisor.criteria.engine.speedups import level_share, level_speedup_amdahl, level_speedup_paper

L1 = "L1_GRANULARITY"
L2 = "L2_GRANULARITY"
SECTOR_BYTES = 32


def requested_over_transferred(requested: float, transferred: float) -> float | None:
    """Decision 1: requested / transferred; None when nothing was transferred."""
    if not transferred > 0:
        return None
    return requested / transferred


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


_REQ = ("global_load_requested_bytes", "global_store_requested_bytes")
_L1_SECTORS = ("gld_transactions", "gst_transactions")
_L2_SECTORS = ("l2_tex_read_transactions", "l2_tex_write_transactions")
_IDEAL = ("memory_l2_theoretical_sectors_global_ideal", "memory_l2_theoretical_sectors_global")
_REQ_THR = ("gld_requested_throughput", "gst_requested_throughput")
_PER_SECTOR = (
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
)

L1_RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "requested bytes / (32 B x L1 global sectors)",
        (*_REQ, *_L1_SECTORS),
        lambda v: requested_over_transferred(
            v[_REQ[0]] + v[_REQ[1]], SECTOR_BYTES * (v[_L1_SECTORS[0]] + v[_L1_SECTORS[1]])
        ),
        tools=("ncu",),
    ),
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
)

L2_RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "requested bytes / (32 B x L2 sectors from L1)",
        (*_REQ, *_L2_SECTORS),
        lambda v: requested_over_transferred(
            v[_REQ[0]] + v[_REQ[1]], SECTOR_BYTES * (v[_L2_SECTORS[0]] + v[_L2_SECTORS[1]])
        ),
        tools=("ncu",),
    ),
    Recipe(
        "ideal global sectors / L2 sectors from L1",
        (_IDEAL[0], *_L2_SECTORS),
        lambda v: requested_over_transferred(v[_IDEAL[0]], v[_L2_SECTORS[0]] + v[_L2_SECTORS[1]]),
        tools=("ncu",),
    ),
    Recipe(
        "requested global throughput / L2 throughput from L1 (nvprof)",
        (*_REQ_THR, "l2_tex_read_throughput", "l2_tex_write_throughput"),
        lambda v: requested_over_transferred(
            v[_REQ_THR[0]] + v[_REQ_THR[1]],
            v["l2_tex_read_throughput"] + v["l2_tex_write_throughput"],
        ),
        tools=("nvprof",),
    ),
    Recipe(
        "requested global throughput / L2 throughput of L1 requests (nvprof, Kepler)",
        (*_REQ_THR, "l2_l1_read_throughput", "l2_l1_write_throughput"),
        lambda v: requested_over_transferred(
            v[_REQ_THR[0]] + v[_REQ_THR[1]],
            v["l2_l1_read_throughput"] + v["l2_l1_write_throughput"],
        ),
        tools=("nvprof",),
    ),
)


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


def _evaluate(
    name: str, level: str, recipes: tuple[Recipe, ...], kernel: KernelData, ctx: Context
) -> CriterionResult:
    scored = score(kernel, recipes, ctx)
    if scored is None:
        return absent(name, kernel, recipes, ctx)
    if not isinstance(scored, Scored):
        return not_applicable(name, "the kernel moved no global memory through this level")
    return level_result(name, level, scored, scored.raw, kernel, ctx, dict(scored.inputs))


def evaluate_l1(kernel: KernelData, ctx: Context) -> CriterionResult:
    return _evaluate(L1, "l1", L1_RECIPES, kernel, ctx)


def evaluate_l2(kernel: KernelData, ctx: Context) -> CriterionResult:
    return _evaluate(L2, "l2", L2_RECIPES, kernel, ctx)
