"""Where in the code, as the report shows it (docs/locations.md, "In the report"): each hint's
top location in the Markdown, the HTML and the verdict's JSON; each hot kernel's stall reasons
with their explanation and remedies; DIVERGENCE's branches told apart (thread index or data)
from the SASS, with the action that follows.

The classifier and the views are checked on hand-made SASS and JSON; the outputs on the real
reports under ../shared (CUDA_Learning/shared_report.ncu-rep: bank conflicts on
sharedMemory.cu:22; tyler/base_analysis_file.ncu-rep: a boundary test on threadIdx;
CudaCode/naive.ncu-rep: no line info; CudaProgramming/smemRect.ncu-rep: no per-instruction
data).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from advisor import ncu_read, pipeline
from advisor.render.markdown import markdown
from advisor.render.report import html as render_html
from advisor.report import invariants, locations
from advisor.report.branches import branch_kind
from advisor.report.build import MINOR_SHARE, Report, lead_with_limit, verdict_json
from advisor.report.where import (
    STALL_REASONS,
    branch_actions,
    stall_words,
    stalls_of,
    where_of,
)
from tests.cli_helpers import run

# -- DIVERGENCE: thread index or data (advisor/report/branches.py) --


def _code(*sass: str, divergent: dict[int, float] | None = None) -> tuple[pd.DataFrame, Any]:
    """Instruction rows of one function in PC order, and a ``sass_of`` for their PCs."""
    divergent = divergent or {}
    rows = pd.DataFrame(
        {
            "function": ["k"] * len(sass),
            "pc": [0x1000 + 16 * i for i in range(len(sass))],
            "pc_offset": [16 * i for i in range(len(sass))],
            "branch_targets_threads_divergent": [divergent.get(i, 0.0) for i in range(len(sass))],
        }
    )
    text = {0x1000 + 16 * i: s for i, s in enumerate(sass)}
    return rows, text.__getitem__


def test_a_branch_on_the_thread_index_is_told_from_the_sass() -> None:
    rows, sass_of = _code(
        "S2R R0, SR_TID.X",
        "S2R R3, SR_CTAID.X",
        "IMAD R2, R3, c[0x0][0x0], R0",
        "ISETP.GE.AND P0, PT, R2, c[0x0][0x168], PT",
        "@P0 BRA 0x7f0000001100",
        "LDG.E R4, [R6.64]",
        "EXIT",
        divergent={4: 10.0},
    )
    kind = branch_kind(rows, np.zeros(len(rows)), sass_of)
    assert kind is not None
    assert kind["kind"] == "thread_index" and kind["branches"] == 1
    assert "SR_TID.X" in kind["evidence"] and "ISETP.GE.AND" in kind["evidence"]
    assert "0x7f0000001100" not in kind["evidence"]  # the branch target differs run to run


def test_a_branch_on_loaded_data_is_told_from_the_sass() -> None:
    rows, sass_of = _code(
        "S2R R0, SR_TID.X",
        "IMAD.WIDE R2, R0, 0x4, R4",
        "LDG.E R5, [R2.64]",
        "FSETP.GT.AND P1, PT, R5, RZ, PT",
        "@!P1 BRA 0x7f0000001200",
        "FADD R5, R5, R5",
        divergent={4: 3.0},
    )
    kind = branch_kind(rows, np.zeros(len(rows)), sass_of)
    assert kind is not None and kind["kind"] == "data"
    assert "LDG.E" in kind["evidence"]


def test_the_heavier_kind_of_branch_leads_and_both_are_counted() -> None:
    rows, sass_of = _code(
        "S2R R0, SR_TID.X",
        "ISETP.GE.AND P0, PT, R0, 0x10, PT",
        "@P0 BRA 0x7f0000001100",
        "LDS R5, [R1]",
        "ISETP.NE.AND P1, PT, R5, RZ, PT",
        "@P1 BRA 0x7f0000001200",
        divergent={2: 1.0, 5: 9.0},
    )
    kind = branch_kind(rows, np.zeros(len(rows)), sass_of)
    assert kind is not None
    assert kind["kind"] == "data" and kind["branches"] == 2
    assert kind["weights"] == {"data": 9.0, "thread_index": 1.0}


def test_without_divergent_targets_the_guarded_instructions_with_idle_lanes_count() -> None:
    rows, sass_of = _code(
        "S2R R0, SR_LANEID",
        "ISETP.GT.AND P2, PT, R0, 0x3, PT",
        "@P2 FADD R1, R1, R1",
        "NOP",
    )
    kind = branch_kind(rows, np.array([0.0, 0.0, 28.0, 0.0]), sass_of)
    assert kind is not None and kind["kind"] == "thread_index"
    assert kind["by"] == "inactive lanes"
    assert branch_kind(rows, np.zeros(4), sass_of) is None  # no idle lanes: no candidate


def test_a_predicate_of_uniform_values_only_is_unknown() -> None:
    rows, sass_of = _code(
        "S2R R3, SR_CTAID.X",
        "ISETP.GE.AND P0, PT, R3, c[0x0][0x168], PT",
        "@P0 BRA 0x7f0000001100",
        divergent={2: 1.0},
    )
    kind = branch_kind(rows, np.zeros(3), sass_of)
    assert kind is not None and kind["kind"] == "unknown"  # block index, constants: uniform
    assert kind["evidence"] == "@P0 BRA <- ISETP.GE.AND P0, PT, R3, c[0x0][0x168], PT"


# -- the views (advisor/report/where.py) --


def _located(**criteria: Any) -> dict[str, Any]:
    return {
        "available": ["instructions", "line_info", "stall_samples"],
        "missing": {"source_text": locations.HOW["source_text"]},
        "criteria": criteria,
        "stalls": [
            {"reason": "long_scoreboard", "samples": 6.0, "share": 0.6,
             "top": [{"location": "/src/conv.cu:54", "file": "/src/conv.cu", "line": 54,
                      "function": "k", "opcodes": "LDG.E", "samples": 6.0, "share": 1.0}]},
            {"reason": "some_new_reason", "samples": 4.0, "share": 0.4, "top": []},
        ],
    }  # fmt: skip


_L2 = {
    "measure": "excessive global sectors",
    "total": 100.0,
    "top": [
        {"location": "/src/conv.cu:54", "file": "/src/conv.cu", "line": 54, "function": "k",
         "opcodes": "LDG.E", "waste": 72.0, "share": 0.72},
        {"location": "k+0x00a0", "file": None, "line": None, "function": "k", "pc_offset": 160,
         "sass": "@P0 LDG.E R2, [R4.64]", "opcodes": "LDG.E", "waste": 28.0, "share": 0.28},
    ],
}  # fmt: skip


def test_a_hint_says_where_its_waste_is() -> None:
    w = where_of(_located(L2_GRANULARITY=_L2), "k", "L2_GRANULARITY")
    assert w is not None
    assert w.text == "72% of the excessive global sectors: conv.cu:54 (LDG.E)"
    assert [t.short for t in w.top] == ["conv.cu:54", "+0x00a0"]
    assert w.top[1].sass == "@P0 LDG.E R2, [R4.64]"
    assert w.cannot == ""  # only the source text is missing: the lines can be shown


def test_missing_data_is_named_with_the_way_to_get_it() -> None:
    none = where_of(locations.absent(), "k", "SHMEM_EFFICIENCY")
    assert none is not None and none.top == ()
    assert none.text.startswith("no per-instruction data") and "--set full" in none.text
    lineless = {
        **_located(L2_GRANULARITY=_L2),
        "missing": {"line_info": locations.HOW["line_info"]},
    }
    w = where_of(lineless, "k", "L2_GRANULARITY")
    assert w is not None and "-lineinfo" in w.cannot and w.cannot.startswith("function and SASS")
    # criteria without a per-instruction measure, kernels not read, inputs without the data
    assert where_of(_located(), "k", "LOADBALANC_SM") is None
    assert (
        where_of({"available": ["instructions"], "not_read": "not shown"}, "k", "DIVERGENCE")
        is None
    )
    assert where_of(None, "k", "DIVERGENCE") is None


def test_every_stall_reason_of_pc_sampling_is_explained_with_remedies() -> None:
    reasons = ("long_scoreboard", "short_scoreboard", "barrier", "membar", "mio_throttle",
               "lg_throttle", "tex_throttle", "math_pipe_throttle", "wait", "not_selected",
               "branch_resolving", "drain", "dispatch_stall", "no_instructions", "imc_miss",
               "sleeping", "misc")  # fmt: skip
    for reason in reasons:
        explanation, remedies = STALL_REASONS[reason]
        assert explanation and remedies, reason
    stalls = stalls_of(_located())
    assert [s.reason for s in stalls] == ["long_scoreboard", "some_new_reason"]
    assert stalls[0].explanation.startswith("waiting for data from L1TEX")
    assert stalls[0].text.startswith("long_scoreboard 60% of the stall samples (at conv.cu:54)")
    assert stall_words("some_new_reason")[0] == "stalled on some new reason"
    assert stalls_of(None) == () and stalls_of(locations.absent()) == ()


def test_divergence_actions_follow_from_what_the_branch_tests() -> None:
    actions = ("the criterion's own action",)
    for kind, words in (("thread_index", "threadIdx.x / 32"), ("data", "sort or bin")):
        branch = {"kind": kind, "branches": 1, "evidence": "S2R R0, SR_TID.X"}
        found = {"measure": "m", "total": 1.0, "top": [], "branch": branch}
        w = where_of(_located(DIVERGENCE=found), "k", "DIVERGENCE")
        assert w is not None and w.branch is not None and w.branch.kind == kind
        led = branch_actions(w, actions)
        assert words in led[0] and led[1:] == actions
    unknown = {"measure": "m", "total": 1.0, "top": [],
               "branch": {"kind": "unknown", "branches": 1, "evidence": ""}}  # fmt: skip
    w = where_of(_located(DIVERGENCE=unknown), "k", "DIVERGENCE")
    assert w is not None and branch_actions(w, actions) == actions


def test_the_source_line_text_comes_from_the_embedded_files() -> None:
    class Action:
        def source_files(self) -> dict[str, str]:
            return {"/src/conv.cu": "int a;\n  out[i] = in[i * 33];  \n"}

    class Read:  # a launch's instructions keep the texts the module returned
        source_texts = ncu_read._embedded(Action())

    texts = locations._source_texts([Read()])
    entry: dict[str, Any] = {"file": "/src/conv.cu", "line": 2}
    locations._add_source(entry, texts)
    assert entry["source"] == "out[i] = in[i * 33];"
    outside: dict[str, Any] = {"file": "/src/conv.cu", "line": 9}
    locations._add_source(outside, texts)
    assert "source" not in outside


# -- the outputs on real reports --


def _outputs(path: Path, tmp_path: Path) -> tuple[dict[str, Any], str, str, Report]:
    run = pipeline.analyse([str(path)])
    report = pipeline.build(run)
    data = {**run.data, "verdict": verdict_json(report)}
    html = render_html(report)
    return json.loads(json.dumps(data)), markdown(report), html, report


@pytest.fixture(scope="module")
def shared_outputs(real_profiles: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("ncu_report")
    path = real_profiles / "reports" / "CUDA_Learning" / "shared_report.ncu-rep"
    return _outputs(path, tmp_path_factory.mktemp("where"))


@pytest.mark.real_profiles
def test_shared_report_hints_say_where_in_every_output(shared_outputs: Any) -> None:
    data, md, html, _ = shared_outputs
    assert (
        "   - where in `setColReadCol(int *)`: 50% of the excessive shared wavefronts: "
        "`sharedMemory.cu:22` (ST.E)" in md
    )
    hints = {h["criterion"]: h for h in data["verdict"]["hints"]}
    where = hints["SHMEM_EFFICIENCY"]["where"]
    assert where["location"].endswith("sharedMemory.cu:22") and where["share"] == 0.5
    assert hints["LOADBALANC_SM"]["where"] is None  # no per-instruction measure
    assert '<table class="locations" data-criterion="SHMEM_EFFICIENCY">' in html
    assert '>sharedMemory.cu:22</td><td class="mono">ST.E</td>' in html
    assert "import-source yes" in html  # the source text is not embedded: how to embed it
    assert invariants.check(data, md) == []


@pytest.mark.real_profiles
def test_shared_report_limiters_give_stall_reasons_with_lines(shared_outputs: Any) -> None:
    data, md, html, _ = shared_outputs
    limits = {u["kernel"].split("(")[0]: u for u in data["verdict"]["limits"]}
    stalls = limits["setColReadCol"]["stalls"]
    assert [s["reason"] for s in stalls] == ["long_scoreboard", "short_scoreboard", "wait"]
    assert stalls[0]["top"][0].endswith("sharedMemory.cu:22")
    assert stalls[0]["explanation"] == STALL_REASONS["long_scoreboard"][0]
    assert "#### What limits the top kernels" in md
    assert "stalls: long_scoreboard 50% at `sharedMemory.cu:22` (MOV)" in md
    assert "- **long_scoreboard**: waiting for data from L1TEX" in md
    assert '<table class="stalls">' in html and "usual remedies" in html


@pytest.mark.real_profiles
def test_a_kernel_without_line_info_shows_offsets_and_says_how_to_get_lines(
    real_profiles: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ncu_report")
    data, md, _, _ = _outputs(real_profiles / "reports" / "CudaCode" / "naive.ncu-rep", tmp_path)
    assert "lg_throttle 72% at `+0x0260` (LDG.E.SYS)" in md
    assert "nvcc -lineinfo" in md
    assert invariants.check(data, md) == []


@pytest.mark.real_profiles
def test_a_report_without_per_instruction_data_says_how_to_collect_it(
    real_profiles: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ncu_report")
    path = real_profiles / "reports" / "CudaProgramming" / "smemRect.ncu-rep"
    data, md, _, _ = _outputs(path, tmp_path)
    located = [h["where"] for h in data["verdict"]["hints"] if h["where"] is not None]
    assert located, "smemRect has SHMEM_EFFICIENCY hints"
    for where in located:
        assert where["location"] is None and where["text"].startswith("no per-instruction data")
    assert (
        "   - where: no per-instruction data, so no location: profile with `ncu --set full`" in md
    )


@pytest.mark.real_profiles
def test_divergence_on_a_boundary_test_is_a_thread_index_branch(
    tuning_families: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ncu_report")
    path = tuning_families / "tyler" / "Project" / "base_analysis_file.ncu-rep"
    data, md, _, _ = _outputs(path, tmp_path)
    conv = next(k for k in data["kernels"] if k["name"].startswith("conv_forward_kernel"))
    branch = conv["locations"]["criteria"]["DIVERGENCE"]["branch"]
    assert branch["kind"] == "thread_index" and "SR_TID" in branch["evidence"]
    hint = next(
        h for h in data["verdict"]["hints"]
        if h["criterion"] == "DIVERGENCE" and conv["name"] in h["kernels"]
    )  # fmt: skip
    assert hint["where"]["branch"] == "thread_index"
    assert hint["actions"][0].startswith("the divergent branch tests the thread's index")
    assert invariants.check(data, md) == []


@pytest.mark.real_profiles
def test_a_hot_kernels_limiter_leads_over_a_hint_on_a_minor_kernel(shared_outputs: Any) -> None:
    """The verdict never leads with a kernel under 1 % of the GPU time while a hotter kernel
    has a limiter: the first hint made minor, the hottest kernel's limiter leads."""
    _, _, _, report = shared_outputs
    v = report.verdict
    assert v is not None and v.kind == "fix" and v.hint is not None
    assert lead_with_limit(v) == v  # its first hint concerns 100 % of the GPU time
    minor = replace(v, hint=replace(v.hint, share_of_gpu_time=MINOR_SHARE / 2))
    led = lead_with_limit(minor)
    assert led.kind == "limit" and led.limit is not None
    assert led.limit.kernel.startswith("setColReadCol")  # the hottest kernel with a limiter
    assert lead_with_limit(replace(minor, limits=())) == replace(minor, limits=())
    shown = replace(report, verdict=led)
    md = markdown(shown)
    assert md.startswith(
        "**cuda-advisor: `setColReadCol(int *)` (18.3% of GPU time): no unit near its peak"
    )
    assert "its warps wait most on long_scoreboard (50% of the stall samples at " in md
    assert "The first hint, LOADBALANC_SM in 7 kernels" in md
    page = render_html(shown)
    assert 'data-kind="limit"' in page and "its warps wait most on long_scoreboard" in page
    assert verdict_json(shown)["limit_kernel"] == led.limit.kernel


@pytest.mark.real_profiles
def test_an_instruction_without_a_line_is_not_read_as_a_report_without_lines(
    real_profiles: Path, tmp_path: Path
) -> None:
    """seq_align's hints sit on `nw1.cu` lines, but one stall's top instruction has no line (a
    compiler-made branch): the note says so of that instruction, not that the report has none."""
    md = tmp_path / "r.md"
    code, _, stderr = run(
        "report", str(real_profiles / "reports/seq_align/profile.ncu-rep"), "--markdown", str(md)
    )
    assert code == 0, stderr
    text = md.read_text(encoding="utf-8")
    assert "`nw1.cu:" in text and "+0x" in text
    assert "the report has no source lines" not in text
    assert "the compiler gave that instruction no source line" in text
