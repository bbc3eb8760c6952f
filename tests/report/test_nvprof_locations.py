"""Where in the code for nvprof databases: the source-level tables
(``nvprof --source-level-analysis``, :mod:`parsers.sqlite.nvprof_source`) give the same
``locations`` as an Nsight Compute report, and the report shows each hot kernel's stall
reasons from them; a database without them says how to record them (docs/locations.md).

Real inputs: ``reports/compression/analysis.nvprof`` (source-level tables with lines and PC
samples) and ``reports/GPU_ML/timeline.nvvp`` (a timeline without them)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from advisor.report.locations import HOW_NVPROF
from parsers.sqlite import nvprof_source
from tests.cli_helpers import run


def _report(path: Path, tmp_path: Path) -> tuple[dict, str]:
    out, md = tmp_path / "a.json", tmp_path / "a.md"
    code, _, stderr = run("report", str(path), "--json", str(out), "--markdown", str(md), "--quiet")
    assert code == 0, stderr
    return json.loads(out.read_text(encoding="utf-8")), md.read_text(encoding="utf-8")


@pytest.mark.real_profiles
def test_source_level_tables_give_each_hot_kernel_its_stalls(
    real_profiles: Path, tmp_path: Path
) -> None:
    db = real_profiles / "reports/compression/analysis.nvprof"
    data, md = _report(db, tmp_path)
    kernel = max(data["kernels"], key=lambda k: k["share_of_gpu_time"])
    locs = kernel["locations"]
    assert set(locs["available"]) >= {"instructions", "line_info", "stall_samples"}
    assert locs["conservation_exact"] is None  # nvprof stores no kernel totals to check against
    # the top stall reason and its share, recomputed from the database's own rows
    rows = next(iter(nvprof_source.read(db).values()))
    stalls = {c[len("stall_") :]: float(rows[c].sum()) for c in rows if c.startswith("stall_")}
    # shares of every PC sample (a sample of an issuing warp, ``selected``, included)
    reason = max(stalls, key=lambda r: stalls[r])
    top = locs["stalls"][0]
    assert top["reason"] == reason
    assert top["share"] == pytest.approx(stalls[reason] / sum(stalls.values()))
    line = rows.loc[rows[f"stall_{reason}"].idxmax(), "line"]
    per_line = rows.groupby(["file", "line"])[f"stall_{reason}"].sum()
    best = per_line.idxmax()
    assert (top["top"][0]["file"], top["top"][0]["line"]) == best
    assert np.isfinite(line)
    # the Markdown lists it under the hot kernels' limits, with the line and what it means
    section = md.split("#### What limits the top kernels", 1)[1]
    name = Path(best[0]).name
    assert f"{reason} {round(100 * top['share'])}% at `{name}:{best[1]}`" in section
    assert f"**{reason}**: " in section and "stalled on" not in section


@pytest.mark.real_profiles
def test_a_database_without_source_level_tables_says_how_to_record_them(
    real_profiles: Path, tmp_path: Path
) -> None:
    data, _ = _report(real_profiles / "reports/GPU_ML/timeline.nvvp", tmp_path)
    assert data["kernels"]
    for kernel in data["kernels"]:
        locs = kernel["locations"]
        assert locs["available"] == []
        assert locs["missing"]["instructions"] == HOW_NVPROF["instructions"]
        assert "--source-level-analysis" in locs["missing"]["instructions"]


@pytest.mark.real_profiles
def test_the_facts_line_names_at_most_three_limits(real_profiles: Path, tmp_path: Path) -> None:
    """A report with six kernels over 10 % of the GPU time names the three hottest's limiting
    units on its facts line and counts the others (all six stay in the JSON)."""
    data, md = _report(real_profiles / "reports/CUDA_Learning/shared_report.ncu-rep", tmp_path)
    limits = data["verdict"]["limits"]
    assert len(limits) == 6
    facts = md.split("\n\n")[1]
    hottest = sorted(limits, key=lambda u: -u["share_of_gpu_time"])
    named = [u for u in limits if f"`{u['kernel'].split('(')[0]}(" in facts]
    assert sorted(u["kernel"] for u in named) == sorted(u["kernel"] for u in hottest[:3])
    assert "; 3 more hot kernels" in facts
