"""``cuda-advisor report`` / ``metrics`` and the collect command lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parsers
from advisor.criteria.engine import collect
from advisor.errors import AdvisorError
from tests.cli_helpers import one_line_error, run


def test_report_without_output_asks_for_one(samples: Path) -> None:
    code, _, err = run("report", str(samples / "synthetic_nvprof_gputrace.csv"))
    assert code == 2
    assert "give at least one output" in one_line_error(err)


def test_report_writes_json_for_merged_nvprof_inputs(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "analysis.json"
    code, stdout, _ = run(
        "report",
        str(samples / "synthetic_nvprof_gputrace.csv"),
        str(samples / "synthetic_nvprof_metrics.csv"),
        "--json",
        str(out),
    )
    assert code == 0, stdout
    assert stdout.startswith(f"wrote {out}: 3 kernels")
    data = json.loads(out.read_text())
    assert data["schema"].startswith("cuda-advisor/analysis")
    assert data["speedup_form"] == "amdahl"
    assert [i["profiler"] for i in data["inputs"]] == ["nvprof", "nvprof"]
    assert data["device"]["name"] == "Tesla V100-SXM2-16GB"
    assert data["application"]["HOSTSYNC"]["computable"] is True
    names = [k["name"] for k in data["kernels"]]
    assert names[0].startswith("transposeNaive")  # the longest kernel first
    naive = data["kernels"][0]["criteria"]
    # the synthetic metrics say: global load efficiency 12.5 %
    assert naive["L1_GRANULARITY"]["value"] == pytest.approx(0.125)
    # no per-SM cycles in nvprof: the launch configuration gives LOADBALANC_SM (Decision G1)
    assert naive["LOADBALANC_SM"]["computable"] is True
    assert naive["LOADBALANC_SM"]["method"].startswith("launch configuration")
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    # deterministic: the same inputs give the same bytes
    again = tmp_path / "again.json"
    run("report", str(samples / "synthetic_nvprof_gputrace.csv"),
        str(samples / "synthetic_nvprof_metrics.csv"), "--json", str(again))  # fmt: skip
    assert again.read_text() == text


def test_report_paper_form_and_device_option(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    code, _, _ = run(
        "report",
        str(samples / "synthetic_ncu_raw.csv"),
        "--json",
        str(out),
        "--device",
        "NVIDIA A100-SXM4-40GB",
        "--speedup-form",
        "paper",
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert data["speedup_form"] == "paper"
    assert data["device"]["identified"] is True
    for kernel in data["kernels"]:
        for c in kernel["criteria"].values():
            assert c["potential_speedup"] == c["potential_speedup_paper"]


def test_report_unknown_device_is_usage_error(samples: Path, tmp_path: Path) -> None:
    code, _, err = run(
        "report", str(samples / "synthetic_ncu_raw.csv"), "--json", str(tmp_path / "a.json"),
        "--device", "Imaginary GPU 9000",
    )  # fmt: skip
    assert code == 2
    assert "Imaginary GPU 9000" in one_line_error(err)
    assert not (tmp_path / "a.json").exists()


def test_report_profile_without_device_name_still_reports(samples: Path, tmp_path: Path) -> None:
    # nsys kernel summaries name no GPU: the analysis goes on and says why facts are missing
    out = tmp_path / "a.json"
    code, _, err = run(
        "report", str(samples / "synthetic_nsys_cuda_gpu_kern_sum.csv"), "--json", str(out)
    )
    assert code == 0
    assert "device not identified" in err
    data = json.loads(out.read_text())
    assert data["device"]["identified"] is False
    assert "does not name its GPU" in data["device"]["note"]
    assert len(data["kernels"]) == 3
    assert "summaries" in data["application"]["HOSTSYNC"]["notes"][0]


def test_report_refuses_to_overwrite_an_input(samples: Path, tmp_path: Path) -> None:
    src = tmp_path / "trace.csv"
    src.write_bytes((samples / "synthetic_nvprof_gputrace.csv").read_bytes())
    code, _, err = run("report", str(src), "--json", str(src))
    assert code == 2
    assert "refusing to overwrite" in one_line_error(err)


def test_report_bad_input_exits_3(tmp_path: Path) -> None:
    code, _, err = run("report", str(tmp_path / "nope.csv"), "--json", str(tmp_path / "a.json"))
    assert code == 3
    assert "nope.csv" in one_line_error(err)


def test_report_escapes_nothing_but_keeps_kernel_names_verbatim(tmp_path: Path) -> None:
    # JSON carries kernel names as data; json.dumps escapes what JSON needs
    trace = tmp_path / "t.csv"
    trace.write_text(
        '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
        '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","Device",'
        '"Context","Stream","Name"\n'
        "us,us,,,,,,,,B,B,B,GB/s,,,,\n"
        '1.0,2.0,1,1,1,32,1,1,8,0,0,,,"Tesla K40c (0)","1","7","<script>alert(1)</script> [5]"\n'
    )
    out = tmp_path / "a.json"
    code, _, _ = run("report", str(trace), "--json", str(out))
    assert code == 0
    data = json.loads(out.read_text())
    assert data["kernels"][0]["name"] == "<script>alert(1)</script>"


def test_metrics_prints_the_everything_commands() -> None:
    code, out, _ = run("metrics", "--tool", "ncu")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("ncu --section SpeedOfLight")
    assert "sm__cycles_active.max" in lines[1] and lines[1].endswith("-o advisor_ncu ./APP")
    assert lines[3].startswith("nsys profile --trace=cuda")
    code, out, _ = run("metrics", "--tool", "nvprof")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("nvprof --metrics stall_sync,")
    assert "--events active_warps," in lines[1]
    assert lines[3].startswith("nvprof --print-gpu-trace --csv")
    code, _, _ = run("metrics", "--tool", "nsys")
    assert code == 2


def test_ncu_metrics_asked_for_are_real_names(real_profiles: Path) -> None:
    # Every Nsight Compute metric the advisor asks for appears in at least one real report or
    # CSV of ../shared/real_profiles (as the tool printed it), except the requested-bytes
    # counters of the granularity criteria, which no report here collected (their names are
    # those of NVIDIA's nvprof transition table: smsp__sass_data_bytes_mem_global_op_ld/st).
    seen: set[str] = set()
    for path in sorted(real_profiles.rglob("*")):
        if path.suffix not in (".ncu-rep", ".csv", ".nsight-cuprof-report"):
            continue
        try:
            profile = parsers.read(str(path))
        except AdvisorError:  # negative test files; ncu_report missing
            continue
        if any(p.profiler == "ncu" for p in profile.provenance):
            seen.update(profile.metrics["tool_metric"].dropna())
    if not seen:
        pytest.skip("no Nsight Compute data readable here (ncu_report missing)")
    asked = {m for needs in collect.NEEDS.values() for m in needs.ncu_metrics}
    not_in_data = {
        "smsp__sass_data_bytes_mem_global_op_ld.sum",
        "smsp__sass_data_bytes_mem_global_op_st.sum",
    }
    assert sorted(asked - seen - not_in_data) == []
    assert not_in_data.isdisjoint(seen)


def test_nvprof_names_asked_for_appear_in_real_nvprof_files(real_profiles: Path) -> None:
    seen: set[str] = set()
    for path in sorted((real_profiles / "csv").rglob("*")):
        try:
            profile = parsers.read(str(path))
        except AdvisorError:  # negative test files
            continue
        if any(p.profiler == "nvprof" for p in profile.provenance):
            seen.update(profile.metrics["tool_metric"].dropna())
    asked = {
        m for needs in collect.NEEDS.values() for m in (*needs.nvprof_metrics, *needs.nvprof_events)
    }
    assert sorted(asked - seen) == []
