"""One verdict model (advisor.report.build.Verdict), built once, rendered by the HTML and the
Markdown and written into ``report --json``: the figures of a page cannot disagree.

Each test names the fault it guards against; the real inputs are read in place from
``../shared/real_profiles`` (skipped with the reason when absent, required under CI=true)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from advisor.report import invariants
from advisor.report.missing import metric_tools, timeline_tools, what_to_collect
from tests.cli_helpers import run

CSV = Path("csv")
B200 = CSV / "roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64.ncu.csv"
MATRIXMUL = (
    CSV / "magus_nvprof/gtx1080ti/matrixMul_trace.csv",
    CSV / "magus_nvprof/gtx1080ti/matrixMul_metrics.csv",
)
T4_NCU_REP = Path("reports/cuda-mlp-inference/report.ncu-rep")
KINETO = Path("kineto/negative_queue_length_values_check/rank0.json.gz")


def _pair(samples: Path) -> tuple[Path, Path]:
    return samples / "synthetic_nvprof_gputrace.csv", samples / "synthetic_nvprof_metrics.csv"


def _report(tmp_path: Path, *paths: Path) -> tuple[dict, str, str]:
    """The JSON, Markdown and HTML of ``report PATHS``."""
    out = tmp_path / "r"
    code, _, err = run(
        "report",
        *map(str, paths),
        "-o",
        f"{out}.html",
        "--markdown",
        f"{out}.md",
        "--json",
        f"{out}.json",
        "-q",
    )
    assert code == 0, err
    data = json.loads(Path(f"{out}.json").read_text(encoding="utf-8"))
    md = Path(f"{out}.md").read_text(encoding="utf-8")
    html = Path(f"{out}.html").read_text(encoding="utf-8")
    return data, md, html


def test_sample_pair_ranks_severe_values_without_estimate_above_a_1x_hint(
    samples: Path, tmp_path: Path
) -> None:
    """L1_GRANULARITY 0.12 and SHMEM_EFFICIENCY 0.06 have no speedup estimate: they rank by their
    value, above DEVICESYNC's 1.00x (the engine's order put them last)."""
    data, md, _ = _report(
        tmp_path,
        samples / "synthetic_nvprof_gputrace.csv",
        samples / "synthetic_nvprof_metrics.csv",
    )
    order = [h["criterion"] for h in data["verdict"]["hints"]]
    assert order == ["HOSTSYNC", "L1_GRANULARITY", "SHMEM_EFFICIENCY", "DEVICESYNC"]
    hints = re.findall(r"^\d+\. \*\*(\w+)\*\*", md.split("#### Hints", 1)[1], flags=re.M)
    assert hints[:4] == order
    assert "n/a (ranked by value)" in md
    assert invariants.check(data, md) == []


def test_sample_pair_facts_line_says_what_each_number_is(samples: Path, tmp_path: Path) -> None:
    _, md, html = _report(
        tmp_path,
        samples / "synthetic_nvprof_gputrace.csv",
        samples / "synthetic_nvprof_metrics.csv",
    )
    facts = md.split("\n\n")[1]
    assert "memory-bound kernels: 50.3%" in facts and "of GPU time" in facts
    assert "bound: memory" not in md
    assert "this fix: up to **5.76x** on the whole GPU time" in md.splitlines()[0]
    assert "the whole application: up to 10.67x" in md.splitlines()[0]
    # HOSTSYNC is the application's: stated once, never bolded in the kernels' lines
    assert "**HOSTSYNC 0.17**" not in md and "HOSTSYNC 0.17 ·" not in md
    assert "This fix: up to <strong>5.76x</strong>" in html
    assert "The whole application: up to <strong" in html


def test_verdict_is_in_the_json_with_named_figures(samples: Path, tmp_path: Path) -> None:
    data, _, _ = _report(tmp_path, samples / "synthetic_nvprof_gputrace.csv")
    v = data["verdict"]
    assert v["kind"] == "fix"
    assert v["first_hint"]["criterion"] == "HOSTSYNC"
    assert v["the_whole_application"] == pytest.approx(data["application"]["potential_speedup"])
    assert {"this_fix_on_the_whole_gpu_time", "this_fix_on_its_kernels"} <= set(v["first_hint"])


@pytest.mark.real_profiles
def test_hint_never_above_the_application(real_profiles: Path, tmp_path: Path) -> None:
    """T4 matrix_addition2D: LOADBALANC_WARP estimated 1.26x while DRAM runs at 88 % of peak
    (roofline headroom 1.13x); the page read 'up to 1.26x ... (the whole application: up to
    1.13x)'.  The fix is capped at the headroom: an occupancy fix moves no fewer bytes."""
    data, md, html = _report(tmp_path, real_profiles / T4_NCU_REP)
    first = data["verdict"]["first_hint"]
    app = data["verdict"]["the_whole_application"]
    assert first["uncapped_on_the_whole_gpu_time"] == pytest.approx(1.26, abs=0.01)
    assert first["this_fix_on_the_whole_gpu_time"] <= app + 1e-9
    assert "1.26x capped at the roofline headroom" in md.splitlines()[0]
    assert "capped at the roofline headroom" in html
    assert invariants.hint_not_above_application(data) == []


@pytest.mark.real_profiles
def test_b200_application_is_na_not_1x(real_profiles: Path, tmp_path: Path) -> None:
    """Only LOADBALANC_SM computed, no headroom, no timeline: the application is n/a."""
    data, md, html = _report(tmp_path, real_profiles / B200)
    assert data["application"]["potential_speedup"] == pytest.approx(1.0)  # the engine's fallback
    assert data["verdict"]["the_whole_application"] is None
    assert "1.00x" not in md.split("\n\n")[0]
    assert 'id="app-speedup">n/a<' in html
    # a ncu input on a B200: no nvprof command (nvprof profiles nothing from compute 8.0 on)
    assert "nvprof" not in md.split("Collect the missing metrics", 1)[1].split("</details>")[0]
    assert "device: NVIDIA B200 ·" in md  # said once, not "(the profile names NVIDIA B200)"
    assert "the profile names" not in html
    assert invariants.check(data, md) == []


@pytest.mark.real_profiles
def test_headroom_is_never_nothing_to_fix(real_profiles: Path, tmp_path: Path) -> None:
    """nvprof matrixMul on a GTX 1080 Ti: no criterion below its threshold but 8.42x of roofline
    headroom; the verdict read 'Nothing to fix first'."""
    data, md, html = _report(tmp_path, *(real_profiles / p for p in MATRIXMUL))
    assert data["verdict"]["kind"] == "headroom"
    assert "nothing to fix" not in md.lower() and "Nothing to fix" not in html
    assert "roofline headroom of 8.42x" in md.splitlines()[0]
    assert "latency-bound" in md.splitlines()[0]
    assert "roofline of 1 kernel\n" in md  # singular
    assert invariants.check(data, md) == []


@pytest.mark.real_profiles
def test_kineto_comment_is_capped_and_states_hostsync_once(
    real_profiles: Path, tmp_path: Path
) -> None:
    """An A100 Kineto trace of 85 kernels: the comment was 60,680 characters with HOSTSYNC 0.32
    bolded in every kernel's line; the latency notes (Turing values) one per level."""
    data, md, _ = _report(tmp_path, real_profiles / KINETO)
    assert len(md) <= 40_000
    assert md.count("HOSTSYNC (kernel time / timeline span) 0.32") == 1
    assert "**HOSTSYNC" not in md.split("Criteria of every kernel", 1)[-1]
    assert len(re.findall(r"latency \d+ cycles:", md)) == 0
    assert invariants.check(data, md) == []


def test_nvprof_never_suggested_where_it_cannot_profile() -> None:
    assert metric_tools(("nvprof",), 6.1) == ("nvprof",)
    assert metric_tools(("nvprof",), 7.5) == ("ncu",)  # no metrics on Turing
    assert timeline_tools(("nvprof",), 7.5) == ("nvprof",)  # traces still
    assert timeline_tools(("nvprof",), 8.0) == ("nsys",)  # nothing at all from Ampere on
    hostsync = {"status": "not_computable", "missing": ["launch start_ns"], "collect": {}}
    col = what_to_collect([], hostsync, ("ncu",), 9.0)
    assert col.other_tool is None  # no "On a GPU before Volta, nvprof ..." on a B200
    assert all("nvprof" not in what for what, _ in col.commands)
    assert what_to_collect([], hostsync, ("ncu",), None).other_tool is None  # no metric items


# --- the invariants themselves fail on the faults they name ----------------------------------


def _hint(criterion: str, fix: float | None, share: float | None = 0.5) -> dict:
    return {
        "criterion": criterion,
        "this_fix_on_the_whole_gpu_time": fix,
        "share_of_gpu_time": share,
    }


def test_invariant_hint_above_application_is_caught() -> None:
    data = {"verdict": {"the_whole_application": 1.08, "hints": [_hint("LOADBALANC_SM", 1.37)]}}
    assert invariants.hint_not_above_application(data)
    data["verdict"]["the_whole_application"] = 1.37
    assert invariants.hint_not_above_application(data) == []


def test_invariant_one_x_from_nothing_is_caught() -> None:
    data = {
        "kernels": [{"potential_speedup": None}],
        "application": {"HOSTSYNC": {"value": None}},
        "verdict": {"the_whole_application": 1.0, "hints": []},
    }
    assert invariants.no_figure_from_nothing(data)
    data["verdict"]["the_whole_application"] = None
    assert invariants.no_figure_from_nothing(data) == []


def test_invariant_lead_on_a_minor_kernel_needs_a_reason() -> None:
    data = {"verdict": {"first_hint": _hint("DIVERGENCE", 1.001, share=0.004), "lead_reason": ""}}
    assert invariants.lead_hint_on_hot_kernel(data)
    data["verdict"]["lead_reason"] = "every hint concerns kernels under 1% of the GPU time"
    assert invariants.lead_hint_on_hot_kernel(data) == []


def test_invariant_markdown_numbers_come_from_the_json() -> None:
    data = {"application": {"potential_speedup": 10.674, "share": 0.4965}}
    assert invariants.markdown_numbers_in_json(data, "up to 10.67x on 49.7% of GPU time") == []
    assert invariants.markdown_numbers_in_json(data, "up to 10.68x") != []
    assert invariants.markdown_numbers_in_json(data, "49.5% of GPU time") != []
    # kernel names and commands are not figures
    assert invariants.markdown_numbers_in_json(data, "`k<2.5x>` and\n```sh\nrun 3.3x\n```") == []


SOL_METRICS = {
    "DRAM": "dram_throughput_pct_of_peak",
    "L2": "l2_throughput_pct_of_peak",
    "L1/TEX": "l1tex_throughput_pct_of_peak",
    "SM": "compute_throughput_pct_of_peak",
}


@pytest.mark.parametrize(
    "rep", [Path("reports/CUDA_Learning/shared_report.ncu-rep"), T4_NCU_REP], ids=["smem", "t4"]
)
def test_limiting_unit_of_the_top_kernels_from_speed_of_light(
    real_profiles: Path, tmp_path: Path, rep: Path
) -> None:
    """Fault: the facts line gave shares of GPU time but not which unit limits the top kernels.
    The unit named is the largest Speed Of Light figure the profile holds for the kernel
    (computed here from the profile's own metric rows), for the top kernel and every kernel
    over 10 % of the GPU time, in the JSON, the Markdown and the HTML."""
    from advisor import pipeline

    data, md, html = _report(tmp_path, real_profiles / rep)
    limits = data["verdict"]["limits"]
    kernels = sorted(data["kernels"], key=lambda k: -(k["share_of_gpu_time"] or 0.0))
    expected = [k["name"] for i, k in enumerate(kernels) if i == 0 or k["share_of_gpu_time"] > 0.1]
    assert [u["kernel"] for u in limits] == expected
    metrics = pipeline.read([str(real_profiles / rep)]).metrics
    # the facts line names the three hottest kernels' units (LIMITS_SHOWN); the JSON holds all
    shown = {u["kernel"] for u in sorted(limits, key=lambda u: -u["share_of_gpu_time"])[:3]}
    for u in limits:
        rows = metrics[metrics["kernel"] == u["kernel"]]
        sol = {
            unit: float(rows.loc[rows["metric"] == m, "value"].astype(float).mean())
            for unit, m in SOL_METRICS.items()
            if (rows["metric"] == m).any()
        }
        assert u["speed_of_light"] == pytest.approx(sol)
        assert u["unit"] == max(sol, key=lambda k: sol[k])
        assert u["fraction_of_peak"] == pytest.approx(max(sol.values()))
        pct = f"{u['unit']} at {u['fraction_of_peak'] * 100:.0f}% of peak"
        assert pct in u["text"]
        assert (u["text"] in md and u["text"] in html) or u["kernel"] not in shown
        assert ("limited by" in u["text"]) == (u["fraction_of_peak"] >= 0.6)
    facts = md.split("\n\n")[1]  # the facts line after the verdict
    assert limits[0]["text"] in facts


def test_no_limiting_unit_is_claimed_without_speed_of_light(samples: Path, tmp_path: Path) -> None:
    """An nvprof pair has no Speed Of Light figures: nothing is claimed."""
    data, md, html = _report(tmp_path, *_pair(samples))
    assert data["verdict"]["limits"] == [] and data["verdict"]["limits_text"] == ""
    verdict = html.split('<section id="verdict"')[1].split("</section>")[0]
    for text in ("\n\n".join(md.split("\n\n")[:2]), verdict):  # verdict and facts line
        assert "of peak" not in text and "limited by" not in text
    assert 'class="limits"' not in html


def test_json_alone_builds_no_page_only_part_and_writes_the_same_verdict(
    tmp_path: Path, samples: Path
) -> None:
    """``report --json`` without a page builds no timeline, streams advice, roofline chart,
    launch-time spreads nor predictions (on a million-launch trace the timeline's arrays set the
    run's peak memory), and the JSON is byte for byte the one written beside the pages."""
    from advisor import pipeline
    from advisor.report.build import verdict_json

    trace = samples / "synthetic_nvprof_gputrace.csv"
    run_ = pipeline.analyse([str(trace)])
    lean, full = pipeline.build(run_, pages=False), pipeline.build(run_)
    assert (lean.timeline, lean.streams, lean.roofline) == (None, (), None)
    assert full.timeline is not None and full.streams  # the check can fail: a trace has both
    assert all(r.spread is None for r in lean.table)
    assert lean.predictions is None and full.predictions is not None  # BSP: pages only
    assert any(r.spread is not None for r in full.table)  # a trace times its launches
    assert verdict_json(lean) == verdict_json(full)
    alone, beside = tmp_path / "alone.json", tmp_path / "beside.json"
    assert run("report", str(trace), "--json", str(alone), "-q")[0] == 0
    code = run("report", str(trace), "--json", str(beside), "-o", str(tmp_path / "r.html"), "-q")[0]
    assert code == 0
    assert alone.read_bytes() == beside.read_bytes()


@pytest.mark.real_profiles
def test_nothing_to_fix_says_how_few_criteria_were_computed(
    real_profiles: Path, tmp_path: Path
) -> None:
    """An nsys export of four kernels: only LOADBALANC_SM (from the launch configuration) of
    their eight criteria each is computed, and HOSTSYNC is above its threshold. 'Nothing to fix
    first' would claim a clean bill of health that 28 criteria without metrics cannot give."""
    path = real_profiles / "reports/CudaProgramming/streamSimple.sqlite"
    data, md, html = _report(tmp_path, path)
    v = data["verdict"]
    assert v["kind"] == "nothing"
    assert (v["criteria_computed"], v["criteria_possible"]) == (4, 32)
    first = md.split("\n\n")[0]
    assert first.startswith("**cuda-advisor: nothing to fix among the criteria computed**")
    assert "none of the 4 computed (of 32 that apply to the kernels" in first
    assert "Nothing to fix among the criteria computed:" in html
    assert "Nothing to fix first" not in html and "nothing to fix first" not in md
    assert invariants.check(data, md) == []


@pytest.mark.real_profiles
def test_a_hint_just_below_its_threshold_does_not_read_as_the_threshold(
    real_profiles: Path, tmp_path: Path
) -> None:
    """An nsys export (RTX 3090): LOADBALANC_SM 0.7967 leads, below 0.80; printed with two
    decimals it read 'LOADBALANC_SM = 0.80 ... below 0.80'."""
    data, md, html = _report(tmp_path, real_profiles / "reports/memfusion_artifact/report1.sqlite")
    assert data["verdict"]["first_hint"]["criterion"] == "LOADBALANC_SM"
    assert "**LOADBALANC_SM** = 0.797 in" in md and "LOADBALANC_SM 0.797 |" in md
    assert "LOADBALANC_SM = 0.80" not in md and "LOADBALANC_SM 0.80 |" not in md
    assert "(LOADBALANC_SM = 0.797, below 0.80)" in html


@pytest.mark.real_profiles
def test_one_kernel_without_criteria_is_spoken_of_as_one(
    real_profiles: Path, tmp_path: Path
) -> None:
    """An ncu section export of one kernel with no criterion computable read 'no criterion
    computable for any of the 1 kernel; collect their metrics'."""
    folder = (
        real_profiles / "csv/llmperfopt_rtx5090/ncu/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
    )
    _, md, _ = _report(tmp_path, folder / "ncu.section_MemoryWorkloadAnalysis.csv")
    first = md.split("\n\n")[0]
    assert "no criterion computable for the kernel; collect its metrics" in first
    assert "any of the 1 kernel" not in md
