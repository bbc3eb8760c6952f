"""The report: HTML (parsed back with html.parser), Markdown, JSON, CI gates, escaping,
determinism and bounded size."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

import parsers
from advisor.cli import main
from advisor.criteria import evaluate
from advisor.criteria.engine.analysis import (
    COMPUTED,
    Analysis,
    ApplicationAnalysis,
    CriterionResult,
    Hint,
    KernelAnalysis,
    Speedups,
    Throughputs,
)
from advisor.profile import merge
from advisor.render import charts, display
from advisor.render import report as render
from advisor.report import build as report
from advisor.report import timeline as report_timeline

EVIL_KERNEL = "<script>alert(1)</script>"
EVIL_DEVICE = 'Tesla "V100" <i>&\'x'
NAIVE = "transposeNaive(float*, const float*, int, int)"
PIPE_KERNEL = "pipe|kernel`tick`<int>"
COALESCED = "transposeCoalesced(float*, const float*, int, int)"


class _Page(HTMLParser):
    """Collects what the tests look at: elements with attributes, table rows (nested tables
    give their own rows), text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[tuple[str | None, list[str]]] = []
        self.text: list[str] = []
        self.headers: dict[str, list[str]] = {}  # table id -> its header cells
        self._open: list[tuple[str | None, list[str], list[str]]] = []  # class, cells, cell text
        self._tables: list[str | None] = []  # ids of the open tables
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self._tables.append(dict(attrs).get("id"))
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._open.append((dict(attrs).get("class"), [], []))
        elif tag in ("td", "th") and self._open:
            self._open[-1][2].clear()

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._open:
            self._open[-1][1].append("".join(self._open[-1][2]).strip())
        elif tag == "tr" and self._open:
            cls, cells, _ = self._open.pop()
            self.rows.append((cls, cells))
            table = self._tables[-1] if self._tables else None
            if self._in_head and table is not None:
                self.headers.setdefault(table, cells)
        elif tag == "thead":
            self._in_head = False
        elif tag == "table" and self._tables:
            self._tables.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._open:
            self._open[-1][2].append(data)

    def kernel_rows(self) -> list[list[str]]:
        return [cells for cls, cells in self.rows if cls == "kernel-row"]

    def table_rows(self) -> list[list[str]]:
        return [cells for _, cells in self.rows]


def _header(page: _Page, table_id: str) -> list[str]:
    """The header cells of the table with ``id=table_id``."""
    assert table_id in page.headers, sorted(page.headers)
    return page.headers[table_id]


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def _build(*paths: Path) -> report.Report:
    profile = merge([parsers.read(p) for p in paths])
    return report.build(evaluate(profile, None), profile)


def _evil_files(samples: Path, folder: Path) -> list[Path]:
    """The synthetic nvprof trace and metrics with a hostile kernel and device name."""
    out = []
    for name in ("synthetic_nvprof_gputrace.csv", "synthetic_nvprof_metrics.csv"):
        text = (samples / name).read_text(encoding="utf-8")
        text = text.replace(NAIVE, EVIL_KERNEL).replace(COALESCED, PIPE_KERNEL)
        text = text.replace("Tesla V100-SXM2-16GB", EVIL_DEVICE.replace('"', '""'))
        target = folder / name
        target.write_text(text, encoding="utf-8")
        out.append(target)
    return out


# --- real profiles ---------------------------------------------------------------------------


@pytest.mark.real_profiles
def test_nvprof_trace_and_metrics_html_content(real_profiles: Path, tmp_path: Path) -> None:
    folder = real_profiles / "csv" / "magus_nvprof" / "gtx1080ti"
    files = [str(folder / "matrixMul_trace.csv"), str(folder / "matrixMul_metrics.csv")]
    out, md, js = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["report", *files, "-o", str(out), "--markdown", str(md), "--json", str(js)]
    )
    assert result.exit_code == 0, result.output
    page = _parse(out.read_text(encoding="utf-8"))
    data = json.loads(js.read_text(encoding="utf-8"))
    rows = page.kernel_rows()
    assert len(rows) == 1 == len(data["kernels"])
    kernel = data["kernels"][0]
    # the table shows the name without its return type; the JSON keeps it whole
    assert kernel["name"] == "void matrixMulCUDA<int=32>(float*, float*, float*, int, int)"
    assert rows[0][1] == "matrixMulCUDA<int=32>(float*, float*, float*, int, int)"
    assert rows[0][2] == "301"  # launches in the trace
    # SHMEM_EFFICIENCY (its column, under its short header) from the metrics file: 0.84 (hand:
    # 1 / 1.2 load, 1.0 store transactions per request, weighted by transactions -> 0.84 as the
    # JSON says)
    shmem = rows[0][_header(page, "kernel-table").index(render.CRITERIA_SHORT["SHMEM_EFFICIENCY"])]
    assert shmem == f"{kernel['criteria']['SHMEM_EFFICIENCY']['value']:.2f}" == "0.84"
    criteria_rows = [r for r in page.table_rows() if r and r[0] == "SHMEM_EFFICIENCY"]
    assert criteria_rows and criteria_rows[0][1] == "0.84"
    text = "".join(page.text)
    assert "The whole application: up to" in text
    assert f"{data['application']['potential_speedup']:.2f}x" in text
    name = "`matrixMulCUDA<int=32>(float*, float*, float*, int, int)`"  # no return type
    assert md.read_text(encoding="utf-8").count(f"| {name} |") == 1


@pytest.mark.real_profiles
def test_ncu_rep_hints_and_rules_in_html(real_profiles: Path, tmp_path: Path) -> None:
    path = real_profiles / "reports" / "CUDA_Learning" / "shared_report.ncu-rep"
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            raise
        pytest.skip("ncu_report (Nsight Compute's Python module) is not installed")
    out, js = tmp_path / "r.html", tmp_path / "r.json"
    result = CliRunner().invoke(main, ["report", str(path), "-o", str(out), "--json", str(js)])
    assert result.exit_code == 0, result.output
    data = json.loads(js.read_text(encoding="utf-8"))
    page = _parse(out.read_text(encoding="utf-8"))
    rows = page.kernel_rows()
    assert [r[1] for r in rows] == [
        report.display_name(k["name"])
        for k in sorted(data["kernels"], key=lambda k: (-(k["share_of_gpu_time"] or 0), k["name"]))
    ]
    hints = [a for t, a in page.tags if t == "div" and a.get("class") == "hint"]
    assert len(hints) == sum(len(k["hints"]) for k in data["kernels"]) > 0
    assert {a["data-criterion"] for a in hints} == {
        h["criterion"] for k in data["kernels"] for h in k["hints"]
    }
    text = "".join(page.text)
    assert "NVIDIA Nsight Compute rules" in text
    top = data["application"]["hints"][0]
    assert top["title"] in text


# --- escaping ----------------------------------------------------------------------------------


def test_hostile_names_escaped_in_html_markdown_json(samples: Path, tmp_path: Path) -> None:
    files = [str(p) for p in _evil_files(samples, tmp_path)]
    out, md, js = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["report", *files, "-o", str(out), "--markdown", str(md), "--json", str(js)]
    )
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<i>" not in html
    page = _parse(html)
    assert EVIL_KERNEL in [r[1] for r in page.kernel_rows()]  # the text survives, as text
    assert all(t != "script" for t, _ in page.tags)
    assert EVIL_DEVICE in "".join(page.text)
    assert "Tesla &#34;V100&#34; &lt;i&gt;&amp;&#39;x" in html
    markdown = md.read_text(encoding="utf-8")
    # a kernel name is a code span (shown as text: no tag, link or mention inside one); any
    # other string from the profile is escaped
    assert "<i>" not in markdown
    assert "| `<script>alert(1)</script>` |" in markdown  # a table cell
    assert "in `<script>alert(1)</script>`" in markdown  # a hint
    assert "Tesla &quot;V100&quot; &lt;i&gt;&amp;'x" in markdown
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert len({line.count(" | ") for line in table}) == 1  # the | in a name adds no cell
    assert "| ``pipe\\|kernel`tick`<int>`` |" in markdown  # a longer fence, the pipe escaped
    data = json.loads(js.read_text(encoding="utf-8"))  # JSON escapes by construction
    assert EVIL_KERNEL in [k["name"] for k in data["kernels"]]
    assert data["device"]["name"] is None or isinstance(data["device"]["name"], str)


def test_chart_text_from_profile_is_escaped() -> None:
    timeline = report_timeline.Timeline(
        intervals=(
            report_timeline.Interval(EVIL_KERNEL, "kernel", 0.0, 10.0),
            report_timeline.Interval('"><b>', "<img src=x onerror=y>", 12.0, 20.0),
        ),
        gaps=((10.0, 12.0),),
        span_ns=(0.0, 20.0),
        dropped=0,
    )
    svg = str(charts.timeline_chart(timeline))
    assert "<script" not in svg and "<img" not in svg and "<b>" not in svg
    assert "stream &lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert "&lt;img src=x onerror=y&gt;" in svg


# --- HTML properties ---------------------------------------------------------------------------


def _synthetic_report(samples: Path) -> report.Report:
    return _build(
        samples / "synthetic_ncu_details.csv", samples / "synthetic_nsys_cuda_gpu_trace.csv"
    )


def test_html_is_self_contained_with_csp(samples: Path) -> None:
    html = render.html(_synthetic_report(samples))
    page = _parse(html)
    metas = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert metas == [{"http-equiv": "Content-Security-Policy", "content": render.CSP}]
    for tag, attrs in page.tags:
        assert tag not in ("script", "link", "iframe", "img", "object", "embed")
        for name in ("src", "href", "xlink:href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:)?//", value), (tag, name, value)
    assert len([t for t, _ in page.tags if t == "svg"]) == 3 + 2  # 3 kernels, timeline, streams
    text = "".join(page.text)
    assert "optimal n = 25" in html and "Streams (sequence 1)" in text
    assert "the GPU idles between kernels" in text  # the HOSTSYNC hint in the summary


def test_html_and_markdown_are_deterministic(samples: Path, tmp_path: Path) -> None:
    files = [
        str(samples / "synthetic_ncu_details.csv"),
        str(samples / "synthetic_nsys_cuda_gpu_trace.csv"),
    ]
    outputs = []
    for run in ("a", "b"):
        out, md = tmp_path / f"{run}.html", tmp_path / f"{run}.md"
        result = CliRunner().invoke(main, ["report", *files, "-o", str(out), "--markdown", str(md)])
        assert result.exit_code == 0, result.output
        outputs.append((out.read_bytes(), md.read_bytes()))
    assert outputs[0] == outputs[1]


def test_long_names_are_shortened_with_full_name_kept() -> None:
    name = "void ns::kernel<" + ", ".join(f"Type{i}<int, float>" for i in range(20)) + ">(int*)"
    short = report.display_name(name)
    assert short == "ns::kernel<…>(int*)"  # shortened, without the return type
    assert report.display_name("k(int)") == "k(int)"
    # a mangled name is demangled for display (the JSON keeps it as the profiler wrote it)
    assert report.display_name("_Z6vecAddPdS_S_i").startswith("vecAdd")
    assert len(display.shorten("x" * 300)) == display.DISPLAY_NAME_CHARS


def _analysis(kernels: tuple[KernelAnalysis, ...], gpu_time_ns: float, launches: int) -> Analysis:
    """An analysis of ``kernels`` on an unnamed device, without a timeline (HOSTSYNC not
    computable), with the application figure 2x."""
    hostsync = CriterionResult(name="HOSTSYNC", status="not_computable", scope="application")
    return Analysis(
        inputs=(),
        device={"name": None},
        speedup_form="amdahl",
        application=ApplicationAnalysis(
            gpu_time_ns=gpu_time_ns,
            kernels=len(kernels),
            launches=launches,
            hostsync=hostsync,
            potential_speedup=2.0,
            kernels_without_estimate=0,
            hints=(),
        ),
        kernels=kernels,
    )


def _alike_kernel(name: str, duration_ns: float, total_ns: float) -> KernelAnalysis:
    """A kernel with one computed criterion below its threshold (so it has a hint and a
    detail section)."""
    shmem = CriterionResult(
        name="SHMEM_EFFICIENCY", status=COMPUTED, value=0.25, speedups=Speedups(4.0, 2.0)
    )
    share = duration_ns / total_ns
    hint = Hint(
        criterion="SHMEM_EFFICIENCY",
        kernel=name,
        value=0.25,
        threshold=0.8,
        potential_speedup=2.0,
        application_speedup=1 / (1 - share / 2),
        title="shared-memory bank conflicts replay shared accesses",
        evidence={},
        actions=("pad the shared array",),
    )
    return KernelAnalysis(
        name=name,
        launches=10,
        duration_ns=duration_ns,
        share_of_gpu_time=share,
        bound="memory",
        throughputs=Throughputs(memory_frac=0.5),
        potential_speedup=2.0,
        criteria=(shmem,),
        hints=(hint,),
    )


def test_kernels_whose_short_names_read_alike_are_told_apart_everywhere(samples: Path) -> None:
    """Two instantiations of one template read alike once shortened (``gemv<…>(float*)``): the
    HTML names them by the template argument in which they differ, in the kernel table, the
    detail sections and the hints, and the Markdown and JSON keep telling them apart too."""
    args = ", ".join(f"Traits{i}<float, int>" for i in range(6))
    names = [f"void ns::gemv<{args}, {n}, true>(float*)" for n in (7, 6, 5)]
    profile = parsers.read(samples / "synthetic_ncu_details.csv")
    total = 600.0
    times = (300.0, 200.0, 100.0)
    kernels = tuple(_alike_kernel(n, d, total) for n, d in zip(names, times, strict=True))
    analysis = _analysis(kernels, total, 30)
    built = report.build(analysis, profile)
    shown = [r.display_name for r in built.table]
    assert shown == [f"ns::gemv<…, {n}, …>(…)" for n in (7, 6, 5)]
    assert [d.row.display_name for d in built.details] == shown
    assert [h.kernel_display for d in built.details for h in d.hints] == shown
    page = _parse(render.html(built))
    assert [cells[1] for cells in page.kernel_rows()] == shown
    headings = "".join(page.text)
    assert all(f". {s}" in headings for s in shown)  # each detail section's heading
    markdown = render.markdown(built)
    assert all(f"`{s}`" in markdown for s in shown)


# --- scaling -----------------------------------------------------------------------------------


def _kernel(i: int, n: int) -> KernelAnalysis:
    criteria = tuple(
        CriterionResult(name=c, status=COMPUTED, value=0.5, speedups=Speedups(1.5, 1.5))
        for c in report.CRITERIA
    )
    return KernelAnalysis(
        name=f"kernel_{i:05d}<" + "T, " * 30 + ">(float*)",
        launches=1,
        duration_ns=float(n - i),
        share_of_gpu_time=(n - i) / (n * (n + 1) / 2),
        bound="memory",
        throughputs=Throughputs(memory_frac=0.5),
        potential_speedup=2.0,
        criteria=criteria[1:],
        hints=(),
    )


def test_ten_thousand_kernels_give_a_bounded_report(samples: Path) -> None:
    n = 10_000
    base = _synthetic_report(samples)
    profile = parsers.read(samples / "synthetic_ncu_details.csv")
    analysis = _analysis(tuple(_kernel(i, n) for i in range(n)), float(n * (n + 1) / 2), n)
    built = report.build(analysis, profile)
    assert len(built.details) == report.DETAIL_KERNELS
    assert len(built.table) == report.DETAIL_KERNELS + report.TABLE_KERNELS
    assert built.kernels_not_listed == n - len(built.table)
    html = render.html(built)
    assert len(html) < 2_000_000
    page = _parse(html)
    assert len(page.kernel_rows()) == len(built.table)
    assert f"{built.kernels_not_listed:,} more kernels" in "".join(page.text)
    markdown = render.markdown(built)
    assert len(markdown) < render.MARKDOWN_MAX_CHARS
    assert base.summary.kernels == 3


# --- CLI: outputs and gates --------------------------------------------------------------------


def test_report_needs_an_output(samples: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(samples / "synthetic_ncu_details.csv")])
    assert result.exit_code == 2
    assert "give at least one output" in result.output


def test_fail_if_gates(samples: Path, tmp_path: Path) -> None:
    files = [
        str(samples / "synthetic_ncu_details.csv"),
        str(samples / "synthetic_nsys_cuda_gpu_trace.csv"),
    ]
    js = str(tmp_path / "r.json")
    ok = CliRunner().invoke(main, ["report", *files, "--json", js, "--fail-if", "hints>5"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(Path(js).read_text(encoding="utf-8"))
    # application potential speedup 16.0 (JSON: 1 / HOSTSYNC 8.0 of the nsys trace x the ncu
    # kernels' 2.0, Decision A1) -> potential_speedup>1.5 fails, one line
    app = data["application"]
    assert app["potential_speedup"] == pytest.approx(
        app["kernels_potential_speedup"] / app["HOSTSYNC"]["value"]
    )
    assert app["potential_speedup"] > 1.5
    bad = CliRunner().invoke(
        main,
        [
            "report", *files, "--json", js,
            "--fail-if", "potential_speedup>1.5",
            "--fail-if", "LOADBALANC_WARP < 0.95",
        ],
    )  # fmt: skip
    assert bad.exit_code == 4
    lines = [line for line in bad.output.splitlines() if "gate failed" in line]
    warp_low = [
        k for k in data["kernels"] if (k["criteria"]["LOADBALANC_WARP"]["value"] or 1) < 0.95
    ]
    assert len(lines) == 1 + len(warp_low) == 4
    assert lines[0].startswith("cuda-advisor: gate failed: potential_speedup>1.5 (application")
    syntax = CliRunner().invoke(main, ["report", *files, "--json", js, "--fail-if", "x>>2"])
    assert syntax.exit_code == 2 and "NAME OP NUMBER" in syntax.output
    unknown = CliRunner().invoke(main, ["report", *files, "--json", js, "--fail-if", "FOO<1"])
    assert unknown.exit_code == 2 and "unknown name" in unknown.output


def test_html_is_identical_across_processes_with_different_hash_seeds(
    samples: Path, tmp_path: Path
) -> None:
    files = [
        str(samples / "synthetic_ncu_details.csv"),
        str(samples / "synthetic_nsys_cuda_gpu_trace.csv"),
    ]
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"{seed}.html"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-m", "advisor", "report", *files, "-o", str(out)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_counts_on_the_page_agree_with_their_words(samples: Path) -> None:
    """One kernel reads "1 kernel" on the facts card, one launch "1 launch"; a profile of
    kernel times only says no kernel criterion was computed, not "only 0 kernel criteria"."""
    name = "void k(float*)"
    analysis = _analysis((_alike_kernel(name, 100.0, 100.0),), 100.0, 1)
    profile = parsers.read(samples / "synthetic_ncu_details.csv")
    text = "".join(_parse(render.html(report.build(analysis, profile))).text)
    assert "1 kernel, 1 launch" in text and "1 kernels" not in text
    times_only = _build(samples / "synthetic_nsys_cuda_gpu_kern_sum.csv")
    assert times_only.verdict.basis.endswith("no kernel criterion computed")
    assert "only 0" not in render.html(times_only)
