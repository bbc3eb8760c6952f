"""``report`` and ``compare`` on PyTorch profiler (Kineto) traces: the host section in every
output format."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from advisor.cli import main
from tests.parsers.kineto.trace_builder import step_events, write_trace


def test_report_has_the_host_section_in_every_format(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "rank0.pt.trace.json", step_events(), compress=True)
    html, md, js = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["report", str(trace), "-o", str(html), "--markdown", str(md), "--json", str(js)]
    )
    assert result.exit_code == 0, result.stderr
    page = html.read_text()
    assert 'id="host"' in page and 'id="sync-table"' in page and 'id="operator-table"' in page
    assert "aten::item" in page
    text = md.read_text()
    assert "### Host and GPU" in text and "`aten::item`" in text
    data = json.loads(js.read_text())
    assert data["host"]["syncs"][0]["operator"] == "aten::item"
    assert data["host"]["operators"][0]["operator"] == "aten::linear"


def test_compare_two_traces(tmp_path: Path) -> None:
    base = write_trace(tmp_path / "base.json", step_events())
    faster = [dict(e) for e in step_events()]
    for e in faster:
        if e.get("name") == "gemm_kernel":
            e["dur"] = 10  # 20 -> 10 us
    test = write_trace(tmp_path / "test.json", faster)
    out = tmp_path / "c.json"
    result = CliRunner().invoke(main, ["compare", str(base), str(test), "--json", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "gemm_kernel" in out.read_text()


def test_the_hostsync_verdict_says_what_removing_the_syncs_buys(tmp_path: Path) -> None:
    # the step of trace_builder: HOSTSYNC is the first hint (the GPU idles most of the 200 us)
    trace = write_trace(tmp_path / "rank0.json", step_events())
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    result = CliRunner().invoke(
        main, ["report", str(trace), "-o", str(html), "--markdown", str(md)]
    )
    assert result.exit_code == 0, result.stderr
    first = md.read_text().splitlines()[0]
    assert first.startswith("**cuda-advisor: fix HOSTSYNC first**")
    assert "removing the host synchronizations alone buys up to" in first
    assert 'class="host-note"' in html.read_text()


def test_the_operator_table_has_a_heading_in_the_html_and_the_markdown(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "rank0.pt.trace.json", step_events(), compress=True)
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    args = ["report", str(trace), "-o", str(html), "--markdown", str(md)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    lines = md.read_text().splitlines()
    header = lines.index("| operator | launches | GPU time | share |")
    # the nearest non-blank line above the table is its heading, not the previous table's rows
    above = [line for line in lines[:header] if line.strip()][-1]
    assert above == "#### Kernels by PyTorch operator"
    page = html.read_text()
    heading = page.index('<h3 id="operators">Kernels by PyTorch operator</h3>')
    assert heading < page.index('id="operator-table"')
    assert "<h3" not in page[heading + 5 : page.index('id="operator-table"')]
