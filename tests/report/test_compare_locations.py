"""``compare`` per source line (advisor/report/compare_locations.py, docs/locations.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import parsers
from advisor import pipeline
from advisor.report import compare, compare_locations, locations
from advisor.report.compare_locations import BY_LINE, BY_OPCODES, Rows
from tests.cli_helpers import run
from tests.report.instruction_rows import instruction_rows


def _rows(*specs: dict[str, Any]) -> pd.DataFrame:
    """Instruction rows of one kernel ``k``: every counter 0 unless given."""
    return instruction_rows(*specs)


def test_lines_match_by_file_name_and_line_across_folders() -> None:
    before = _rows(
        {
            "file": "/v1/conv.cu",
            "line": 54,
            "opcode": "LDG.E",
            "l2_sectors_global_excessive": 4.6e6,
        },
        {"file": "/v1/conv.cu", "line": 54, "opcode": "FFMA", "inst_executed": 10.0},
        {"file": "/v1/conv.cu", "line": 60, "opcode": "STG.E", "inst_executed": 10.0},
    )
    after = _rows(
        {"file": "/v2/conv.cu", "line": 54, "opcode": "LDG.E.128", "inst_executed": 5.0},
        {"file": "/v2/conv.cu", "line": 60, "opcode": "STG.E", "inst_executed": 10.0},
    )
    how, groups = compare_locations.match_rows(before, after)
    assert how == BY_LINE
    assert groups == [([0, 1], [0]), ([2], [1])]
    _, found = compare_locations.compare_rows(before, after)
    top = found[0]
    assert (top.before, top.after) == ("/v1/conv.cu:54", "/v2/conv.cu:54")
    sectors = next(c for c in top.changes if c.measure == "excess sectors")
    assert (sectors.before, sectors.after, sectors.change) == (4.6e6, 0.0, 1.0)
    assert compare_locations.describe(top).startswith(
        "/v1/conv.cu:54 → /v2/conv.cu:54 (LDG.E FFMA LDG.E.128): excess sectors 4.6 M → 0"
    )
    # line 60 did not move at all: it is compared but never listed
    assert found[-1].change == 0.0


def test_without_line_info_opcode_sequences_are_aligned() -> None:
    before = _rows({"opcode": "S2R"}, {"opcode": "LDG.E", "inst_executed": 8.0},
                   {"opcode": "STG.E"}, {"opcode": "EXIT"})  # fmt: skip
    after = _rows({"opcode": "S2R"}, {"opcode": "IMAD"},
                  {"opcode": "LDG.E.128", "inst_executed": 2.0},
                  {"opcode": "STG.E"}, {"opcode": "EXIT"})  # fmt: skip
    how, groups = compare_locations.match_rows(before, after)
    assert how == BY_OPCODES
    assert ([0], [0]) in groups and ([2], [3]) in groups and ([3], [4]) in groups
    # the replaced block pairs in order: LDG.E with the inserted IMAD's neighbour, the rest alone
    assert ([1], [2]) in groups and ([], [1]) in groups and len(groups) == 5
    _, found = compare_locations.compare_rows(before, after)
    assert found[0].change == pytest.approx(6.0 / 8.0)


def test_one_side_only_and_shares_of_samples() -> None:
    before = _rows({"file": "a.cu", "line": 3, "samples": 70.0, "stall_long_scoreboard": 70.0},
                   {"file": "a.cu", "line": 4, "samples": 30.0})  # fmt: skip
    after = _rows({"file": "a.cu", "line": 4, "samples": 12.0, "stall_long_scoreboard": 12.0},
                  {"file": "a.cu", "line": 9, "samples": 88.0})  # fmt: skip
    _, found = compare_locations.compare_rows(before, after)
    by_label = {loc.label: loc for loc in found}
    assert by_label["a.cu:3"].only_in == " (only in the earlier version)"
    assert by_label["a.cu:9"].only_in == " (only in the later version)"
    text = compare_locations.describe(by_label["a.cu:3"])
    assert "samples 70 % → 0 %" in text and "long-scoreboard samples 70 % → 0 %" in text
    assert "long-scoreboard samples 0 % → 12 %" in compare_locations.describe(by_label["a.cu:4"])


def test_a_pair_without_data_on_one_side_says_so() -> None:
    rows = Rows(_rows({"inst_executed": 1.0}))
    found = compare_locations.kernel_pair(rows, None, ("k", "k", "k", "v1", "v2"))
    assert found.not_read == "no per-instruction data in v2" and not found.locations
    assert compare_locations.to_json([found])[0]["not_read"] == found.not_read


def test_launches_sum_per_pc() -> None:
    rows = pd.concat([_rows({"inst_executed": 1.0}, {"inst_executed": 2.0})] * 3)
    summed = compare_locations.summed_by_pc(rows)
    assert summed["pc"].tolist() == [0, 16] and summed["inst_executed"].tolist() == [3.0, 6.0]


# -- real tuning steps --

TYLER = "tyler/Project"
RELU = "cranberryyan/Elementwise/build/app"


def _pair(root: Path, a: str, b: str) -> tuple[compare.Comparison, list[Any], list[Any]]:
    runs = [pipeline.analyse([str(root / p)]) for p in (a, b)]
    versions = [("before", [a], runs[0].data), ("after", [b], runs[1].data)]
    facts = [compare.launch_facts(r.profile.launches) for r in runs]
    result = compare.compare(versions, facts)
    profiles = [r.profile for r in runs]
    return result, profiles, [r.data for r in runs]


@pytest.mark.real_profiles
def test_tiling_removes_the_excess_sectors_at_the_line_the_report_pointed_to(
    tuning_families: Path,
) -> None:
    pytest.importorskip("ncu_report")
    result, profiles, _ = _pair(
        tuning_families,
        f"{TYLER}/base_analysis_file.ncu-rep",
        f"{TYLER}/op_1_analysis_file.ncu-rep",
    )
    found = compare_locations.for_profiles(result, profiles)
    conv = next(p for p in found if p.kernel.startswith("conv_forward_kernel"))
    assert conv.matched_by == BY_LINE and conv.locations
    # the earlier version's top location of the excess sectors, as the report ranks it ...
    rows = compare_locations.profile_rows(profiles[0], conv.kernel)
    assert rows is not None
    pointed = locations.top_locations(rows.frame, "L2_GRANULARITY")["top"][0]["location"]
    # ... is the location that moved most, its excess sectors gone in the tiled version
    top = conv.locations[0]
    assert top.before == pointed
    sectors = next(c for c in top.changes if c.measure == "excess sectors")
    assert sectors.before > 0 and sectors.after == 0


@pytest.mark.real_profiles
def test_float4_loads_pair_with_the_scalar_loads_by_opcode(tuning_families: Path) -> None:
    pytest.importorskip("ncu_report")
    before = parsers.read(tuning_families / RELU / "elementwise_relu_baseline.ncu-rep")
    after = parsers.read(tuning_families / RELU / "elementwise_relu_v1.ncu-rep")
    name = "relu(float *, float *)"
    rb, ra = (
        compare_locations.profile_rows(before, name),
        compare_locations.profile_rows(after, name),
    )
    assert rb is not None and ra is not None
    how, found = compare_locations.compare_rows(rb.frame, ra.frame, (rb.code, ra.code))
    assert how == BY_OPCODES
    loads = [loc for loc in found if loc.opcodes.startswith("LDG")]
    assert len(loads) == 1 and loads[0].opcodes == "LDG.E LDG.E.128"
    executed = next(c for c in loads[0].changes if c.measure == "instructions executed")
    assert executed.after * 4 == executed.before  # four floats per load


@pytest.mark.real_profiles
def test_compare_command_writes_the_locations(tuning_families: Path, tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    files = [str(tuning_families / TYLER / f) for f in ("base_analysis_file.ncu-rep",
                                                         "op_1_analysis_file.ncu-rep")]  # fmt: skip
    out = {k: tmp_path / f"c.{k}" for k in ("json", "md", "html")}
    code, _, err = run("compare", *files, "--json", str(out["json"]), "--markdown",
                       str(out["md"]), "-o", str(out["html"]), "-q")  # fmt: skip
    assert code == 0, err
    data = json.loads(out["json"].read_text())
    conv = next(p for p in data["locations"] if p["kernel"].startswith("conv_forward"))
    assert conv["matched_by"] == BY_LINE and conv["locations"][0]["text"].startswith(
        conv["locations"][0]["before"]
    )
    markdown = out["md"].read_text()
    assert "### Where the code changed" in markdown
    assert "new-forward.cu:53: excess sectors" in markdown
    assert 'id="locations-table"' in out["html"].read_text()
