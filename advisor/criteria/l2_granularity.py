"""L2_GRANULARITY: bytes the global memory instructions asked for over the bytes the L2
transactions moved.

Seed 002, section IV-F prints ``|L1_transactions| * 128 / sum_T |Mem_instr_T| * size_T`` and the
same with 32 B L2 transactions, i.e. transferred / requested; **Decision 1** (as for
L1_GRANULARITY): use requested / transferred, clamped to [0, 1].  L2 transactions are 32 B
sectors everywhere.

Recipes, first that fits: requested bytes / (32 * L2 sectors from L1:
``lts__t_sectors_srcunit_tex_op_read`` + ``_write``); ideal global sectors / those L2 sectors;
nvprof requested throughput / L2 throughput from L1 (``l2_tex_*_throughput``, Kepler
``l2_l1_*_throughput``); last, 4 sectors per global request (32 lanes x 4 B words) over
those L2 sectors (Decision G2, docs/criteria.md, with a note on every result).  L1 hits make the
L2 traffic smaller than the request, so values above 1 are clamped.

Zero-denominator policy: no global memory transaction is n/a.  Potential speedup (Decision 4):
1 / ((1 - p) + p * criterion), p = L2%; the paper's form (1 / criterion) * p on request
(:mod:`advisor.criteria.engine.levels`).
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
    evaluate_granularity,
    requested_bytes_recipe,
    requested_over_transferred,
    source_bytes_recipes,
    word_estimate_recipes,
)
from advisor.criteria.engine.spec import CriterionSpec, Needs
from advisor.criteria.engine.speedups import level_recipes

NAME = "L2_GRANULARITY"

_REQ = REQUESTED_BYTES
_L2_SECTORS = ("l2_tex_read_transactions", "l2_tex_write_transactions")
_IDEAL = IDEAL_SECTORS
_REQ_THR = REQUESTED_THROUGHPUT

RECIPES: tuple[Recipe, ...] = (
    requested_bytes_recipe("requested bytes / (32 B x L2 sectors from L1)", _L2_SECTORS),
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
    *source_bytes_recipes("l2", _L2_SECTORS),
    *word_estimate_recipes("l2", _L2_SECTORS),
)


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    return evaluate_granularity(NAME, "l2", RECIPES, kernel, ctx)


SPEC = CriterionSpec(
    name=NAME,
    order=7,
    threshold=0.9,
    threshold_reason=GRANULARITY_THRESHOLD_REASON,
    title="uncoalesced global access: L2 transactions carry unused bytes",
    actions=(
        "align the data structures to 32 B sectors and access them contiguously",
        "use a structure-of-arrays layout instead of an array of structures",
        "reorganize the thread blocks and resize the memory tiles",
    ),
    short_label="L2 gran.",
    recipes=(*RECIPES, *level_recipes("l2")),  # the criterion's and p = L2%'s
    needs=Needs(
        ncu_metrics=(
            "smsp__sass_data_bytes_mem_global_op_ld.sum",
            "smsp__sass_data_bytes_mem_global_op_st.sum",
            "lts__t_sectors_srcunit_tex_op_read.sum",
            "lts__t_sectors_srcunit_tex_op_write.sum",
        ),
        nvprof_metrics=(
            "gld_requested_throughput",
            "gst_requested_throughput",
            "l2_tex_read_throughput",
            "l2_tex_write_throughput",
            "l2_read_transactions",
            "l2_write_transactions",
        ),
    ),
    evaluate=evaluate,
)
