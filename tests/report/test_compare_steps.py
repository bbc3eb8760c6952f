"""``cuda-advisor compare`` on a one-kernel tuning step: a kernel renamed and launched with
another grid is still paired (the ``last left`` stage), the roofline headroom is checked as a
bound (never given an error factor), and a step that got faster while no criterion rose says
what did change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from advisor.cli import main
from advisor.render import compare as render_compare
from advisor.report import compare
from advisor.report.matching import LAST_LEFT, KernelLaunch, match_kernels

BEFORE = "reduce_interleaved(float*, float*, unsigned int)"
AFTER = "reduce_sequential(float*, float*, unsigned int)"


def _kernel(
    name: str, duration: float, grid: int, inst: float, divergence: float
) -> dict[str, Any]:
    """A saved analysis's kernel: the roofline headroom 1.25x, DIVERGENCE with the counters it
    read, and the launch configuration LOADBALANC_SM read."""
    criteria: dict[str, Any] = {
        c: {"value": None, "potential_speedup": None, "inputs": {}}
        for c in compare.CRITERIA
        if c != "HOSTSYNC"
    }
    criteria["DIVERGENCE"] = {
        "value": divergence,
        "potential_speedup": 1 / divergence,
        "inputs": {"inst_executed": inst, "thread_inst_executed": 0.7 * 32 * inst},
    }
    criteria["LOADBALANC_SM"] = {
        "value": 1.0,
        "potential_speedup": 1.0,
        "inputs": {"launch.grid_blocks": float(grid), "launch.block_threads": 256.0},
    }
    return {
        "name": name,
        "duration_ns": duration,
        "launches": 1,
        "potential_speedup": 1.25,
        "throughputs": {"dram_frac": 0.8, "compute_frac": 0.4},
        "criteria": criteria,
    }


def _analysis(kernel: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": "cuda-advisor/analysis@1",
        "application": {"gpu_time_ns": kernel["duration_ns"], "potential_speedup": 1.25},
        "kernels": [kernel],
    }


#: an interleaved-addressing reduction, then the sequential-addressing one at half the grid:
#: 1.44x faster, DIVERGENCE down from 0.75 to 0.67 (no criterion rose)
V1 = _analysis(_kernel(BEFORE, 1.44e6, 1024, 4.0e6, 0.75))
V2 = _analysis(_kernel(AFTER, 1.00e6, 512, 1.5e6, 0.67))


def test_one_kernel_each_renamed_with_another_grid_is_paired_last() -> None:
    launches = (
        {BEFORE: KernelLaunch(order=0, grid_blocks=1024, block_threads=256)},
        {AFTER: KernelLaunch(order=0, grid_blocks=512, block_threads=256)},
    )
    (pair,) = match_kernels([BEFORE], [AFTER], *launches)
    assert (pair.before, pair.after, pair.method) == (BEFORE, AFTER, LAST_LEFT)
    # saved analyses (no launches) too
    (plain,) = match_kernels([BEFORE], [AFTER])
    assert plain.method == LAST_LEFT
    # two kernels left on one side: nothing is guessed
    assert match_kernels([BEFORE], [AFTER, "other(int)"]) == []
    result = compare.compare([("v1", ["a"], V1), ("v2", ["b"], V2)], list(launches))
    (track,) = result.kernels
    assert track.names == (BEFORE, AFTER) and track.matched_by == (None, LAST_LEFT)
    assert track.speedup_vs_previous[1] == 1.44e6 / 1.00e6
    assert compare.unmatched_warnings(result) == []


def test_roofline_headroom_is_a_bound_and_the_step_says_what_changed(tmp_path: Path) -> None:
    args = ["compare"]
    for name, data in (("v1", V1), ("v2", V2)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        args += ["--version", f"{name}={path}"]
    js, out, md = tmp_path / "c.json", tmp_path / "c.html", tmp_path / "c.md"
    result = CliRunner().invoke(
        main, [*args, "--json", str(js), "-o", str(out), "--markdown", str(md)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(js.read_text(encoding="utf-8"))
    (pair,) = data["prediction_ledger_pairs"]
    (k,) = pair["kernels"]
    assert k["matched_by"] == "last left" and k["to_kernel"] == AFTER
    # 1.44x measured beyond a 1.25x headroom: outside the bound, and no error factor for it
    assert k["roofline_bound"] == 1.25 and k["measured_within_bound"] is False
    assert not any("error" in key and "addressed" not in key for key in k)
    assert pair["roofline_bound"] == {"n": 1, "within_bound": 0, "within_share": 0.0, "dropped": 0}
    # no criterion rose: what changed instead
    assert k["addressed_criterion"] is None
    assert k["changes"] == [
        "duration 1.44 ms → 1.00 ms",
        "launch configuration 1,024 blocks × 256 threads → 512 blocks × 256 threads",
        "warp instructions 4M → 1.5M (0.38×)",
        "thread instructions 89.6M → 33.6M (0.38×)",
        "DIVERGENCE 0.75 → 0.67",
    ]
    text, page = md.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    wrong_factor = f"{1.44 / 1.25:.2f}×"  # what scoring the bound as a prediction gave
    assert "| 1.44× | 1.25× | no | none rose (see what changed) |" in text
    assert wrong_factor not in text and wrong_factor not in page
    assert "| v1 → v2 | roofline headroom (upper bound) | 1 | — | — | — | 0/1 (0 %) |" in text
    assert "No criterion's value rose by 0.05 or more between versions; the kernels" in text
    assert "### What changed where no criterion rose" in text
    assert "launch configuration 1,024 blocks × 256 threads → 512 blocks" in text
    assert "No criterion improved" not in text and "No criterion improved" not in page
    assert 'class="what-changed"' in page and "warp instructions 4M → 1.5M" in page


def test_a_step_without_any_moving_figure_says_so() -> None:
    same = _analysis(_kernel(BEFORE, 1.0e6, 1024, 4.0e6, 0.75))
    faster = _analysis(_kernel(BEFORE, 0.5e6, 1024, 4.0e6, 0.75))
    result = compare.compare([("a", ["x"], same), ("b", ["y"], faster)])
    (k,) = result.checks[0].kernels
    assert k.changes[0] == "duration 1.00 ms → 500 µs"
    assert k.changes[1].startswith("no launch configuration, count, throughput or criterion")
    # an unchanged time explains nothing
    steady = compare.compare([("a", ["x"], same), ("b", ["y"], same)])
    assert steady.checks[0].kernels[0].changes == ()
    assert "What changed" not in render_compare.markdown(steady)
    assert "no matched kernel's time changed by 10 % or more" in render_compare.markdown(steady)


def _step(criteria: dict[str, tuple[float, float, float]], method: str) -> dict[str, Any]:
    """The ledger of one step whose criteria rise ``name: (before, after, estimate)``, the
    earlier kernel's headroom 3x by ``method``."""
    versions: list[tuple[str, list[str], dict[str, Any]]] = []
    for side, duration in ((0, 3.0e6), (1, 1.0e6)):
        kernel = _kernel(BEFORE, duration, 1024, 4.0e6, 0.9)
        kernel["potential_speedup"] = 3.0
        kernel["throughputs"]["bound_method"] = method
        for name, (v0, v1, estimate) in criteria.items():
            kernel["criteria"][name] = {
                "value": (v0, v1)[side],
                "potential_speedup": estimate if side == 0 else 1.0,
                "inputs": {},
            }
        versions.append((f"v{side}", [f"v{side}.json"], _analysis(kernel)))
    result = compare.compare(versions)
    (pair,) = compare.to_json(result)["prediction_ledger_pairs"]
    (k,) = pair["kernels"]
    ledger = {e["criterion"]: e for e in compare.to_json(result)["prediction_ledger"]}
    return {"kernel": k, "ledger": ledger}


def test_criteria_that_rose_alike_are_scored_by_the_one_the_report_ranks_first() -> None:
    """A coalescing change lifts L1 and L2 granularity alike (0.22 -> 1.00 both): the addressed
    one is the larger estimate, the hint the report put first, not the first in paper order."""
    step = _step(
        {"L1_GRANULARITY": (0.22, 1.0, 2.0), "L2_GRANULARITY": (0.2222, 1.0, 2.58)},
        "roofline: max(DRAM, FLOP) fraction of peak",
    )
    k = step["kernel"]
    assert (k["addressed_criterion"], k["addressed_predicted"]) == ("L2_GRANULARITY", 2.58)
    # a rise clearly larger still wins, whatever its estimate
    step = _step(
        {"L1_GRANULARITY": (0.10, 1.0, 2.0), "L2_GRANULARITY": (0.30, 1.0, 2.58)},
        "roofline: max(DRAM, FLOP) fraction of peak",
    )
    assert step["kernel"]["addressed_criterion"] == "L1_GRANULARITY"


def test_the_scored_estimate_is_the_one_the_report_states_capped_at_the_headroom() -> None:
    """SHMEM_EFFICIENCY 4.74x on a kernel with a 3x roofline headroom: the report says 3x, so
    compare scores 3x; granularity fixes move fewer DRAM bytes and stay uncapped; a headroom
    that is only the busiest unit caps nothing."""
    roof = "roofline: max(DRAM, FLOP) fraction of peak"
    step = _step({"SHMEM_EFFICIENCY": (0.06, 1.0, 4.74), "L2_GRANULARITY": (0.5, 0.6, 4.0)}, roof)
    assert step["kernel"]["addressed_criterion"] == "SHMEM_EFFICIENCY"
    assert step["kernel"]["addressed_predicted"] == 3.0
    assert step["ledger"]["SHMEM_EFFICIENCY"]["predicted_speedup"] == 3.0
    assert step["ledger"]["L2_GRANULARITY"]["predicted_speedup"] == 4.0
    busiest = "busiest unit (Speed Of Light): no DRAM or FLOP figures"
    step = _step({"SHMEM_EFFICIENCY": (0.06, 1.0, 4.74)}, busiest)
    assert step["kernel"]["addressed_predicted"] == 4.74
