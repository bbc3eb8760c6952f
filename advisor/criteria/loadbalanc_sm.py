"""LOADBALANC_SM: how evenly the work fills the SMs.

Seed 002, section IV-E::

    LOADBALANC_SM = 1 - (max_SM ActiveCycles - AvgCycles) / max_SM ActiveCycles  (= avg / max)

from ncu ``sm__cycles_active.max`` and ``.avg``.  nvprof has per-SM active cycles only with
``--aggregate-mode off``, which this advisor does not read; without them the value comes from the
launch configuration (Decision G1, :func:`launch_balance`): a grid of fewer blocks than SMs, or a
short last wave, leaves SMs idle in the same proportion.  Zero-denominator policy: no active SM
cycle is n/a.
Potential speedup: 1 / criterion (seed 002, section V).
"""

from __future__ import annotations

from dataclasses import replace

from advisor.criteria.engine.analysis import CriterionResult
from advisor.criteria.engine.balance import calculated_theoretical_warps, evaluate_inverse
from advisor.criteria.engine.common import Context, aux_mean
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.spec import CriterionSpec, Needs

NAME = "LOADBALANC_SM"


def sm_balance(max_active_cycles: float, avg_active_cycles: float) -> float | None:
    """1 - (max - avg) / max; None when no SM was active."""
    if not max_active_cycles > 0:
        return None
    return 1.0 - (max_active_cycles - avg_active_cycles) / max_active_cycles


def launch_balance(blocks: float, sms: float, blocks_per_sm: float) -> float | None:
    """Decision G1: avg / max SM busy time the launch configuration allows, blocks of equal
    length dealt round robin: ``blocks mod SMs`` SMs get one block more, and an SM holding n
    blocks is busy ``ceil(n / blocks_per_sm)`` rounds.  A grid of fewer blocks than SMs gives
    blocks / SMs (the share of SMs with work); a short last wave gives its fill."""
    if not (blocks >= 1 and sms >= 1 and blocks_per_sm >= 1):
        return None
    b, m, per = int(blocks), int(sms), int(blocks_per_sm)
    k, r = divmod(b, m)

    def rounds(n: int) -> int:
        return -(-n // per)

    longest = rounds(k + 1) if r else rounds(k)
    mean = (r * rounds(k + 1) + (m - r) * rounds(k)) / m
    return mean / longest if longest > 0 else None


def _blocks_per_sm(v: Values) -> float | None:
    warps = calculated_theoretical_warps(v)
    per_block = -(-v["launch.block_threads"] // 32)
    return warps / per_block if warps and per_block > 0 else None


def _from_launch(v: Values) -> float | None:
    per = _blocks_per_sm(v)
    if per is None:
        return None
    return launch_balance(v["launch.grid_blocks"], v["device.sm_count"], per)


RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "1 - (max - avg) / max of sm__cycles_active",
        ("sm_cycles_active_max", "sm_cycles_active_avg"),
        lambda v: sm_balance(v["sm_cycles_active_max"], v["sm_cycles_active_avg"]),
        tools=("ncu",),
    ),
    Recipe(
        "launch configuration: blocks dealt over the SMs (grid size, resident blocks per SM)",
        ("launch.grid_blocks", "launch.block_threads", "device.sm_count"),
        _from_launch,
        note="from the launch configuration, blocks taken as equally long (Decision G1)",
    ),
)


#: grid blocks over the device's SMs (below 1: some SMs get no block at all)
BLOCKS_PER_SM = (
    Recipe(
        "grid blocks / SMs",
        ("launch.grid_blocks", "device.sm_count"),
        lambda v: v["launch.grid_blocks"] / v["device.sm_count"] if v["device.sm_count"] else None,
    ),
)
#: the variant of a grid with fewer blocks than SMs (Decision G1)
GRID_TOO_SMALL = "grid_too_small"


def evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    notes: tuple[str, ...] = ()
    if "nvprof" in ctx.tools:
        notes = (
            "nvprof gives per-SM active cycles only with --aggregate-mode off, "
            "which this advisor does not read; use Nsight Compute",
        )
    result = evaluate_inverse(NAME, RECIPES, kernel, ctx, "no SM was active", notes)
    ratio = aux_mean(kernel, BLOCKS_PER_SM, ctx)
    if result.computable and ratio is not None and ratio.raw < 1.0:
        blocks = ratio.inputs.get("launch.grid_blocks")
        sms = ratio.inputs.get("device.sm_count")
        word = "block" if blocks == 1 else "blocks"
        why = f"grid too small: {blocks:g} {word} for {sms:g} SMs" if blocks and sms else ""
        return replace(result, variant=GRID_TOO_SMALL, notes=(*result.notes, why))
    return result


SPEC = CriterionSpec(
    name=NAME,
    order=5,
    threshold=0.8,
    threshold_reason=(
        "The average SM busy less than 80 % of the busiest one's time: a fifth of the GPU idles."
    ),
    title="SMs are unevenly loaded (workload imbalance across SMs)",
    actions=(
        "launch enough blocks to fill every SM (at least a few waves of blocks)",
        "split uneven work items so no single block runs much longer than the others",
        "use a persistent-threads / work-queue scheme for irregular work",
    ),
    variants={
        GRID_TOO_SMALL: (
            "grid too small: fewer blocks than SMs, the other SMs idle",
            (
                "launch at least as many blocks as the GPU has SMs, better a few waves of them "
                "(split the work finer: more, smaller blocks, or a grid-stride loop over a grid "
                "sized from the SM count)",
                "if the problem is small, run independent kernels concurrently in streams or "
                "batch several problems into one launch",
            ),
        ),
    },
    short_label="LB SM",
    recipes=RECIPES,
    needs=Needs(
        ncu_metrics=("sm__cycles_active.max", "sm__cycles_active.avg"),
        nvprof_note=(
            "nvprof reports per-SM active cycles only with --aggregate-mode off, a layout this "
            "advisor does not read; use Nsight Compute on Volta and later"
        ),
    ),
    evaluate=evaluate,
)
