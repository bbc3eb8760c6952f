"""SHMEM_EFFICIENCY: ideal over actual shared-memory transactions (bank conflicts cost replays).

Seed 002, section IV-G relates shared transactions and shared accesses "which include the
re-executed memory instructions due to bank conflicts", weighted by F_SHMEM; as a [0, 1], 1-best
value that is ideal / actual transactions (MODELS.md §1):

* Nsight Compute source counters: ``memory_l1_wavefronts_shared_ideal /
  memory_l1_wavefronts_shared`` (ideal wavefronts account for the access width);
* shared instructions / shared transactions (wavefronts):
  ``(inst_executed_shared_loads + inst_executed_shared_stores) /
  (shared_load_transactions + shared_store_transactions)`` -- nvprof events ``shared_load``,
  ``shared_store`` and metrics ``shared_*_transactions``; ncu
  ``smsp__inst_executed_op_shared_ld/st.sum`` and
  ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum``.  One transaction per instruction
  is ideal for accesses of up to 4 bytes per thread; wider accesses need 2 or 4, so this recipe
  understates their efficiency;
* nvprof transactions with transactions-per-request:
  ``(tx_ld / tpr_ld + tx_st / tpr_st) / (tx_ld + tx_st)`` (requests = transactions / per request);
* nvprof ``shared_efficiency`` (clamped: it exceeds 100 % with broadcasts and 8-byte banks; the
  profilers print 0 for a kernel without shared accesses, read as n/a).

F_SHMEM (Decision 5) is evaluated at the measured ratio (1 without a characterization).
Zero-denominator policy: a kernel without shared-memory accesses is n/a.  Potential speedup
(Decision 4): 1 / ((1 - p) + p * criterion) with p = ShMem%
(:mod:`advisor.criteria.engine.levels`).
"""

from __future__ import annotations

from advisor.criteria.engine.analysis import CriterionResult
from advisor.criteria.engine.common import Context, Scored, absent, clamp01, not_applicable, score
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.levels import level_result
from advisor.criteria.engine.spec import CriterionSpec, Needs
from advisor.criteria.engine.speedups import level_recipes

NAME = "SHMEM_EFFICIENCY"
#: per-instruction sums (parsers.ncu.source_counters.criterion_sums): ideal and actual
#: shared wavefronts
SOURCE_WAVEFRONTS = (
    "source.memory_l1_wavefronts_shared_ideal",
    "source.memory_l1_wavefronts_shared",
)


def ideal_over_actual(ideal: float, actual: float) -> float | None:
    """ideal / actual transactions; None without shared accesses."""
    if not actual > 0:
        return None
    return ideal / actual


def requests_over_transactions(
    load_tx: float, load_per_request: float, store_tx: float, store_per_request: float
) -> float | None:
    """(ld requests + st requests) / (ld tx + st tx), requests = tx / (tx per request)."""
    requests = 0.0
    for tx, per in ((load_tx, load_per_request), (store_tx, store_per_request)):
        if tx > 0:
            if not per > 0:
                return None
            requests += tx / per
    return ideal_over_actual(requests, load_tx + store_tx)


def _instructions(v: Values) -> float | None:
    return ideal_over_actual(
        v["inst_executed_shared_loads"] + v["inst_executed_shared_stores"],
        v["shared_load_transactions"] + v["shared_store_transactions"],
    )


RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "ideal / actual shared wavefronts (Nsight Compute source counters)",
        ("memory_l1_wavefronts_shared_ideal", "memory_l1_wavefronts_shared"),
        lambda v: ideal_over_actual(
            v["memory_l1_wavefronts_shared_ideal"], v["memory_l1_wavefronts_shared"]
        ),
        tools=("ncu",),
    ),
    Recipe(
        "shared instructions / shared transactions (wavefronts)",
        (
            "inst_executed_shared_loads",
            "inst_executed_shared_stores",
            "shared_load_transactions",
            "shared_store_transactions",
        ),
        _instructions,
    ),
    Recipe(
        "shared requests / transactions from transactions per request (nvprof)",
        (
            "shared_load_transactions",
            "shared_load_transactions_per_request",
            "shared_store_transactions",
            "shared_store_transactions_per_request",
        ),
        lambda v: requests_over_transactions(
            v["shared_load_transactions"],
            v["shared_load_transactions_per_request"],
            v["shared_store_transactions"],
            v["shared_store_transactions_per_request"],
        ),
        tools=("nvprof",),
    ),
    Recipe(
        "shared_efficiency (nvprof), clamped to 1",
        ("shared_efficiency",),
        lambda v: v["shared_efficiency"] if v["shared_efficiency"] > 0 else None,
        tools=("nvprof",),
    ),
    # after every kernel-level recipe: the wavefronts summed over the instructions of the
    # per-instruction counters, read only when none of the above fits
    # (advisor.criteria.engine.instruction_sums; docs/criteria.md, "Per-instruction recipes")
    Recipe(
        "ideal / actual shared wavefronts summed over the instructions (Nsight Compute source "
        "counters)",
        SOURCE_WAVEFRONTS,
        lambda v: ideal_over_actual(v[SOURCE_WAVEFRONTS[0]], v[SOURCE_WAVEFRONTS[1]]),
        tools=("ncu",),
        fallback=True,
    ),
)


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    scored = score(kernel, RECIPES, ctx)
    if scored is None:
        return absent(NAME, kernel, RECIPES, ctx)
    if not isinstance(scored, Scored):
        return not_applicable(NAME, "the kernel makes no shared-memory access")
    factor = ctx.device.F("F_SHMEM", scored.raw)
    value = clamp01(scored.raw * factor)
    inputs = {**scored.inputs, "F_SHMEM": factor}
    return level_result(NAME, "shared", scored, value, kernel, ctx, inputs)


SPEC = CriterionSpec(
    name=NAME,
    order=8,
    threshold=0.8,
    threshold_reason="More than a fifth of the shared transactions are bank-conflict replays.",
    title="shared-memory bank conflicts replay shared accesses",
    actions=(
        "pad shared arrays (e.g. [32][33]) so a column access hits 32 different banks",
        "swizzle the shared-memory index (XOR the column with the row) to spread the banks",
        "read shared memory row-wise and let each thread access consecutive 4-byte words",
    ),
    short_label="shmem eff.",
    recipes=(*RECIPES, *level_recipes("shared")),  # the criterion's and p = ShMem%'s
    needs=Needs(
        ncu_metrics=(
            "smsp__inst_executed_op_shared_ld.sum",
            "smsp__inst_executed_op_shared_st.sum",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        ),
        nvprof_metrics=("shared_load_transactions", "shared_store_transactions"),
        nvprof_events=("shared_load", "shared_store"),
    ),
    evaluate=evaluate,
)
