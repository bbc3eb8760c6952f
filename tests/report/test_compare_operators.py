"""``compare`` on two PyTorch profiler traces: kernels paired by their operator when their names
differ, and the GPU time per operator across the versions (every figure computed by hand from
tests/parsers/kineto/trace_builder.py's step)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import main
from advisor.report.compare import (
    OPERATOR,
    ORDER_CONFIG,
    KernelLaunch,
    match_kernels,
)
from advisor.report.compare_operators import operator_tracks
from tests.parsers.kineto.trace_builder import step_events, write_trace


def _renamed_gemm(tmp_path: Path) -> tuple[Path, Path]:
    base = write_trace(tmp_path / "base.json", step_events())
    events = [dict(e) for e in step_events()]
    for e in events:
        if e.get("name") == "gemm_kernel":
            e["name"], e["dur"] = "gemm_64x64_tile", 10  # another kernel, 20 -> 10 us
    return base, write_trace(tmp_path / "test.json", events)


def test_a_renamed_kernel_is_paired_through_its_operator(tmp_path: Path) -> None:
    base, test = _renamed_gemm(tmp_path)
    out, md = tmp_path / "c.json", tmp_path / "c.md"
    result = CliRunner().invoke(
        main, ["compare", str(base), str(test), "--json", str(out), "--markdown", str(md)]
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    gemm = next(k for k in data["kernels"] if k["name"] == "gemm_kernel")
    assert gemm["names"] == ["gemm_kernel", "gemm_64x64_tile"]
    assert gemm["matched_by"] == [None, OPERATOR]
    assert gemm["speedup_vs_previous"][1] == pytest.approx(2.0)  # 20 us -> 10 us
    # aten::linear launched gemm (20 -> 10 us) and two copies (5 + 5 us): 30 -> 20 us
    linear = next(o for o in data["operators"] if o["operator"] == "aten::linear")
    assert linear["gpu_time_ns"] == [30_000, 20_000]
    assert linear["launches"] == [3, 3]
    assert linear["speedup_vs_previous"] == [None, pytest.approx(1.5)]
    assert data["operators"][0]["operator"] == "aten::linear"  # the most GPU time first
    text = md.read_text()
    assert "### By PyTorch operator" in text and "`aten::linear`" not in text
    assert "| aten::linear | 0.030 ms (baseline) | 0.020 ms (1.50x) |" in text


def test_the_html_shows_the_operator_table(tmp_path: Path) -> None:
    base, test = _renamed_gemm(tmp_path)
    html = tmp_path / "c.html"
    result = CliRunner().invoke(main, ["compare", str(base), str(test), "-o", str(html)])
    assert result.exit_code == 0, result.stderr
    page = html.read_text()
    assert 'id="operator-table"' in page and "aten::linear" in page


def test_the_operator_stage_leaves_shared_operators_to_order_and_config() -> None:
    facts_before = {
        "a": KernelLaunch(0, 10, 256, ("aten::linear",)),
        "b": KernelLaunch(1, 10, 256, ("aten::linear",)),
        "c": KernelLaunch(2, 4, 128, ("aten::add",)),
    }
    facts_after = {
        "x": KernelLaunch(0, 10, 256, ("aten::linear",)),
        "y": KernelLaunch(1, 10, 256, ("aten::linear",)),
        "z": KernelLaunch(2, 4, 128, ("aten::add",)),
    }
    pairs = match_kernels(["a", "b", "c"], ["x", "y", "z"], facts_before, facts_after)
    methods = {(p.before, p.after): p.method for p in pairs}
    # aten::add has one kernel on each side; aten::linear two: launch order and configuration
    assert methods == {("c", "z"): OPERATOR, ("a", "x"): ORDER_CONFIG, ("b", "y"): ORDER_CONFIG}


def test_operator_tracks_need_a_host_block_in_every_version() -> None:
    host = {"operators": [{"operator": "aten::mm", "gpu_time_ns": 10.0, "launches": 1}]}
    assert operator_tracks([host, None]) == ()
    assert operator_tracks([host]) == ()
    later = {"operators": [{"operator": "aten::bmm", "gpu_time_ns": 5.0, "launches": 2}]}
    tracks = operator_tracks([host, later])
    assert [t.operator for t in tracks] == ["aten::mm", "aten::bmm"]
    assert tracks[0].gpu_time_ns == (10.0, None) and tracks[0].speedup_vs_previous == (None, None)
    assert tracks[1].launches == (None, 2)


def test_template_instances_that_shorten_alike_get_distinct_names(tmp_path: Path) -> None:
    long_args = "at::native::FillFunctor<float>, at::detail::Array<char*, 1>, " * 3
    names = [f"void elementwise<4, {long_args}{i}>(int)" for i in range(3)]
    events = [dict(e) for e in step_events()]
    kernels = [e for e in events if e.get("cat") == "kernel"][:3]
    for e, name in zip(kernels, names, strict=True):
        e["name"] = name
    base = write_trace(tmp_path / "base.json", events)
    test = write_trace(tmp_path / "test.json", events)
    out = tmp_path / "c.md"
    result = CliRunner().invoke(main, ["compare", str(base), str(test), "--markdown", str(out)])
    assert result.exit_code == 0, result.stderr
    rows = [ln.split(" | ")[0] for ln in out.read_text().splitlines() if "elementwise" in ln]
    # the kernel table and the scored ledger, each naming the three kernels apart, alike
    assert len(rows) == 6 and len(set(rows[:3])) == 3 and rows[3:] == rows[:3], rows
