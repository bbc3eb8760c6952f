"""The HTML report scales with what the input holds ("a reviewer gets it in ten seconds"): the
verdict first; kernels without a computed criterion in one compact table of times with the spread
of their launch times; charts and detail sections only for kernels with criteria; what to collect
said once; notes only for the profiler the input comes from; times in the unit their magnitude
calls for; no internal words (seed numbers, decisions, figure numbers) in what a reader sees."""

from __future__ import annotations

import csv
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import parsers
from advisor import schema
from advisor.cli import main
from advisor.criteria import CRITERIA, evaluate
from advisor.criteria.engine.analysis import (
    COMPUTED,
    NOT_COMPUTABLE,
    Analysis,
    ApplicationAnalysis,
    CriterionResult,
    KernelAnalysis,
    Speedups,
    Throughputs,
)
from advisor.criteria.engine.collect import everything
from advisor.profile import Profile, Provenance, merge
from advisor.render import report as render
from advisor.render.display import duration
from advisor.render.templating import (
    fmt_count,
    fmt_duration,
    fmt_duration_ms,
    fmt_input,
    fmt_quantity,
    fmt_share,
    fmt_value,
    in_words,
)
from advisor.report import build as report
from advisor.report.missing import for_inputs
from advisor.report.spread import spreads
from tests.render.test_report_html import _parse

SAMPLES = Path(__file__).resolve().parents[2] / "sample_profiles"
KERN_SUM = SAMPLES / "synthetic_nsys_cuda_gpu_kern_sum.csv"
#: the real nsys kernel summary of an LLM run: 113 kernels, times only
REAL_KERN_SUM = Path("csv/llmperfopt_rtx5090/nsys/all-stage_summary_cuda_gpu_kern_sum.csv")
#: its HTML was 399,776 bytes (20 detail sections of nine hatched bars, the same eight commands
#: in each, a table of 11 n/c columns); now about 70,000, most of it the 113 full C++ names
REAL_KERN_SUM_MAX_BYTES = 100_000
NVPROF_ONLY_NOTE = "aggregate-mode off"
_INTERNAL = re.compile(r"\bseeds? \d{3}|\bDecision [A-Z]*\d|\bFig\. ?\d")
_EXPONENT = re.compile(r"\d(?:\.\d+)?e[-+]?\d+")
_SUB_MS_IN_MS = re.compile(r"\b0\.\d+ ms\b")


class _Visible(HTMLParser):
    """The text a reader sees (not the CSS, not the SVG's text), and the headings' texts."""

    HEADINGS = ("h1", "h2", "h3", "h4", "figcaption", "summary", "th")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.headings: list[str] = []
        self._skip = 0
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "svg"):
            self._skip += 1
        elif tag in self.HEADINGS:
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "svg"):
            self._skip -= 1
        elif tag in self.HEADINGS and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)
            if self._heading is not None:
                self._heading.append(data)


def _visible(html: str) -> _Visible:
    page = _Visible()
    page.feed(html)
    page.close()
    return page


def _html(*paths: Path, tmp_path: Path, name: str = "r.html") -> str:
    out = tmp_path / name
    result = CliRunner().invoke(main, ["report", *map(str, paths), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def _kern_sum_rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:1] != "#"]
    return list(csv.DictReader(lines))


def _time_rows(html: str) -> list[list[str]]:
    return [cells for cls, cells in _parse(html).rows if cls == "time-row"]


# --- kernel times only: one compact table with the spread --------------------------------------


def test_kernel_summary_gives_one_table_with_the_spread(tmp_path: Path) -> None:
    html = _html(KERN_SUM, tmp_path=tmp_path)
    page = _parse(html)
    rows = _time_rows(html)
    sums = _kern_sum_rows(KERN_SUM)
    assert [r[1] for r in rows] == [s["Name"] for s in sums]
    header = page.headers["kernel-times"]
    spread = ["mean", "median", "min", "max", "std. dev."]
    assert header == ["#", "kernel", "launches", "time", "share", *spread]
    for row, s in zip(rows, sums, strict=True):
        # hand: 285984.0 ns -> 286 µs, 822.7 ns -> 823 ns, 857952 ns -> 858 µs
        expected = [s[k] for k in ("Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)")]
        assert row[5:] == [duration(float(v)) for v in expected]
        assert row[3] == duration(float(s["Total Time (ns)"]))
        assert row[2] == s["Instances"]
    assert rows[0][5:] == ["286 µs", "286 µs", "285 µs", "287 µs", "823 ns"]
    assert not page.kernel_rows()  # no criteria table
    assert '<section class="kernel"' not in html and "<svg" not in html  # no charts, no details
    assert 'id="kernel-times"' in html


@pytest.mark.real_profiles
def test_real_kernel_summary_html_is_small_and_holds_the_spread(
    real_profiles: Path, tmp_path: Path
) -> None:
    path = real_profiles / REAL_KERN_SUM
    html = _html(path, tmp_path=tmp_path)
    assert len(html.encode("utf-8")) < REAL_KERN_SUM_MAX_BYTES
    rows = _time_rows(html)
    sums = _kern_sum_rows(path)
    assert len(rows) == len(sums) == 113
    # the first kernel (cuBLAS gemv, 24.9 %): Avg 3743.7, Med 3712.0, Min 2079, Max 5856,
    # StdDev 416.2 ns over 329,035 launches, 1231822285 ns in all
    assert rows[0][2:] == [
        "329,035", "1.23 s", "24.9%", "3.74 µs", "3.71 µs", "2.08 µs", "5.86 µs", "416 ns"
    ]  # fmt: skip
    # the second: StdDev 33056.8 > Avg 11471.1 ns, shaded (a few launches take far longer)
    second = re.findall(r'<tr class="time-row">.*?</tr>', html)[1]
    assert '<td class="low">33.1 µs</td>' in second
    assert '<section class="kernel"' not in html and "<svg" not in html
    # what to collect: once, the one Nsight Compute run for every criterion's metrics
    assert html.count('id="collect"') == 1
    assert html.count(everything("ncu")[0]) == 1
    assert html.count("--section WarpStateStats --metrics") == 1  # DEVICESYNC's own command
    verdict = re.search(r'<section id="verdict".*?</section>', html, re.DOTALL)
    assert verdict is not None
    assert "n/a" in verdict.group(0) and 'href="#collect"' in verdict.group(0)
    assert "113 kernels" in verdict.group(0) and "4.95 s" in verdict.group(0)


def _summary(rows: list[dict[str, object]]) -> Profile:
    frame = schema.validate(
        "kernel_summary", pd.DataFrame(rows, columns=list(schema.TABLES["kernel_summary"]))
    )
    return Profile(provenance=(Provenance("s.csv", "test", "nsys"),), kernel_summary=frame)


def test_spread_of_several_summary_rows_is_combined_exactly() -> None:
    # one kernel in two grid shapes: 2 launches of 10 and 20 ns (mean 15, sample sd 7.0711),
    # 3 launches of 30, 40 and 50 ns (mean 40, sample sd 10).  All five: mean 150 / 5 = 30,
    # sample sd sqrt(((2-1) 50 + (3-1) 100 + 2 (15-30)^2 + 3 (40-30)^2) / 4)
    #   = sqrt((50 + 200 + 450 + 300) / 4) = sqrt(250) = 15.811, as of 10, 20, 30, 40, 50 directly
    rows = [
        {"name": "k", "calls": 2, "total_ns": 30.0, "avg_ns": 15.0, "min_ns": 10.0,
         "max_ns": 20.0, "median_ns": 15.0, "stddev_ns": math.sqrt(50.0)},
        {"name": "k", "calls": 3, "total_ns": 120.0, "avg_ns": 40.0, "min_ns": 30.0,
         "max_ns": 50.0, "median_ns": 40.0, "stddev_ns": 10.0},
        {"name": "one", "calls": 4, "total_ns": 40.0, "avg_ns": None, "min_ns": 9.0,
         "max_ns": 11.0, "median_ns": None, "stddev_ns": None},
    ]  # fmt: skip
    spread = spreads(_summary(rows))
    k = spread["k"]
    assert (k.launches, k.avg_ns, k.min_ns, k.max_ns) == (5, 30.0, 10.0, 50.0)
    assert k.stddev_ns == pytest.approx(math.sqrt(250.0))
    assert k.stddev_ns == pytest.approx(pd.Series([10.0, 20, 30, 40, 50]).std())
    assert k.median_ns is None  # medians of groups do not combine
    one = spread["one"]  # nvprof's summary: no median or deviation; the mean from the total
    assert (one.avg_ns, one.median_ns, one.stddev_ns, one.source) == (10.0, None, None, "summary")


def test_spread_from_a_trace_without_summary() -> None:
    profile = parsers.read(SAMPLES / "synthetic_nvprof_gputrace.csv")
    naive = spreads(profile)["transposeNaive(float*, const float*, int, int)"]
    durations = profile.launches.loc[
        profile.launches["name"] == "transposeNaive(float*, const float*, int, int)",
        "duration_ns",
    ]
    assert naive.source == "trace" and naive.launches == len(durations) == 3
    assert naive.avg_ns == pytest.approx(durations.mean())
    assert naive.median_ns == pytest.approx(durations.median())
    assert naive.stddev_ns == pytest.approx(durations.std())


# --- criteria only where computed --------------------------------------------------------------


def _kernel(name: str, share: float, computed: bool) -> KernelAnalysis:
    status = COMPUTED if computed else NOT_COMPUTABLE
    value = 0.5 if computed else None
    criteria = tuple(
        CriterionResult(
            name=c,
            status=status,
            value=value,
            speedups=Speedups(2.0, 2.0) if computed else Speedups(),
            collect={} if computed else {"ncu": f"ncu --metrics {c.lower()} -o x ./APP"},
            missing=() if computed else (f"{c.lower()}_metric",),
        )
        for c in CRITERIA[1:]
    )
    return KernelAnalysis(
        name=name,
        launches=2,
        duration_ns=share * 1e6,
        share_of_gpu_time=share,
        bound="memory" if computed else None,
        throughputs=Throughputs(memory_frac=0.5 if computed else None),
        potential_speedup=2.0 if computed else None,
        criteria=criteria,
        hints=(),
    )


def test_only_kernels_with_a_criterion_get_a_chart_and_a_section() -> None:
    kernels = (
        _kernel("big()", 0.5, computed=True),
        _kernel("timed()", 0.3, computed=False),
        _kernel("small()", 0.2, computed=True),
    )
    analysis = Analysis(
        inputs=(),
        device={"name": None},
        speedup_form="amdahl",
        application=ApplicationAnalysis(
            gpu_time_ns=1e6,
            kernels=3,
            launches=6,
            hostsync=CriterionResult(name="HOSTSYNC", status=NOT_COMPUTABLE, scope="application"),
            potential_speedup=None,
            kernels_without_estimate=1,
            hints=(),
        ),
        kernels=kernels,
    )
    profile = Profile(provenance=(Provenance("x.csv", "test", "ncu"),))
    built = report.build(analysis, profile)
    assert [d.row.name for d in built.details] == ["big()", "small()"]
    assert [r.name for r in built.criteria_rows] == ["big()", "small()"]
    assert [(r.rank, r.name) for r in built.timing_rows] == [(2, "timed()")]
    # one item per criterion, counting the one kernel it is missing for, said once
    assert [(i.criterion, i.kernels) for i in built.collect.items] == [("HOSTSYNC", 0)] + [
        (c, 1) for c in CRITERIA[1:]
    ]
    assert all(i.commands for i in built.collect.items[1:])
    html = render.html(built)
    assert html.count('<section class="kernel"') == 2 and html.count("<svg") == 2
    assert [r[1] for r in _time_rows(html)] == ["timed()"]
    assert html.count("ncu --metrics divergence -o x ./APP") == 1  # once, not per kernel
    assert 'href="#k2"' not in html  # the timed kernel has no section to link to


# --- notes for the input's profiler only -------------------------------------------------------


def test_nsys_input_has_no_nvprof_note(tmp_path: Path) -> None:
    profile = parsers.read(KERN_SUM)
    analysis = evaluate(profile)
    notes = [
        n for k in analysis.kernels for c in k.criteria for n in c.notes if NVPROF_ONLY_NOTE in n
    ]
    assert notes, "the engine attaches the nvprof note; the report must leave it out"
    html = _html(KERN_SUM, tmp_path=tmp_path)
    assert NVPROF_ONLY_NOTE not in html and "nvprof gives" not in html
    for name in ("synthetic_nsys_cuda_gpu_trace.csv", "synthetic_nsys_stats_multi.csv"):
        assert NVPROF_ONLY_NOTE not in _html(SAMPLES / name, tmp_path=tmp_path, name=name)
    # control: on nvprof input the note is the reason LOADBALANC_SM is missing, and it is shown
    nvprof = _html(SAMPLES / "synthetic_nvprof_metrics.csv", tmp_path=tmp_path, name="n.html")
    assert NVPROF_ONLY_NOTE in nvprof


def test_notes_about_another_profiler_are_left_out() -> None:
    notes = (
        "nvprof gives per-SM active cycles only with --aggregate-mode off",
        "Nsight Compute's rule fired",
        "ncu replays each kernel",
        "the device was not identified",
        "nvprofiler-like words are not a tool",
    )
    assert for_inputs(notes, ("nsys",)) == (notes[3], notes[4])
    assert for_inputs(notes, ("nvprof",)) == (notes[0], notes[3], notes[4])
    assert for_inputs(notes, ("ncu", "nsys")) == notes[1:]
    assert for_inputs(notes, ()) == notes  # inputs unknown: every note


# --- units and words ---------------------------------------------------------------------------


def test_times_and_numbers_are_written_for_a_reader() -> None:
    assert fmt_duration(5250.0) == "5.25 µs"  # not 0.00525 ms
    assert fmt_duration_ms(9.819e-05) == "98.2 ns"  # not 9.819e-05 ms
    assert fmt_duration(4_946_064_742.0) == "4.95 s"
    assert fmt_duration(850.0) == "850 ns" and fmt_duration(None) == "n/a"
    assert fmt_count(1_695_983) == "1,695,983"
    assert fmt_quantity(4_194_304) == "4.19 M" and fmt_quantity(1.125e11, "FLOP/s") == (
        "112 GFLOP/s"
    )
    assert fmt_quantity(33_554_432, "B") == "33.6 MB" and fmt_quantity(131_072) == "131,072"
    assert fmt_quantity(0.125) == "0.125" and fmt_quantity(9.819e-05) == "0.00009819"
    assert fmt_value(0.84) == "0.84" and fmt_value(0.0031) == "0.0031"  # not 3.10e-03
    assert fmt_share(0.249) == "24.9%" and fmt_share(7.1e-05) == "0.0071%"
    assert fmt_input(10_883_770.0, "idle_ns") == "10.9 ms" and fmt_input(256.0, "x") == "256"
    for value in (1e-9, 3.3e-7, 1e-3, 0.5, 7.0, 12345.678, 1e7, 2.5e14, 1e18):
        for text in (fmt_quantity(value), fmt_value(value), fmt_duration(value)):
            assert not _EXPONENT.search(text), (value, text)
    assert math.isclose(float(fmt_quantity(1234.5678 / 1e6)), 0.001235)


def test_engine_texts_cite_sources_by_name() -> None:
    assert in_words("dram latency 500 cycles: seed 000 section V (g_GM = 500)") == (
        "dram latency 500 cycles: the BSP model paper (section V) (g_GM = 500)"
    )
    assert in_words("A100 is not in seed 004 Table 3 (GTX 580's value)") == (
        "A100 is not in the CUDA streams paper (Table 3) (GTX 580's value)"
    )
    assert in_words("one λ per run (Decision A1).") == "one λ per run."


def _reports(tmp_path: Path) -> dict[str, str]:
    out = {
        p.name: _html(p, tmp_path=tmp_path, name=f"{p.name}.html")
        for p in sorted(SAMPLES.glob("synthetic_*"))
    }
    out["merged"] = _html(
        SAMPLES / "synthetic_nvprof_gputrace.csv",
        SAMPLES / "synthetic_nvprof_metrics.csv",
        tmp_path=tmp_path,
        name="merged.html",
    )
    return out


def test_every_sample_shows_units_and_plain_words(tmp_path: Path) -> None:
    for name, html in _reports(tmp_path).items():
        page = _visible(html)
        text = " ".join(page.text)
        assert not _EXPONENT.search(text), (name, _EXPONENT.findall(text)[:5])
        assert not _SUB_MS_IN_MS.search(text), (name, _SUB_MS_IN_MS.findall(text)[:5])
        assert not _INTERNAL.search(text), (name, _INTERNAL.findall(text)[:5])
        assert not [h for h in page.headings if _INTERNAL.search(h)], name
    gputrace = _visible(_reports(tmp_path)["synthetic_nvprof_gputrace.csv"])
    assert "BSP" in " ".join(gputrace.headings)


@pytest.mark.real_profiles
def test_real_ncu_report_shows_units(real_profiles: Path, tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    path = real_profiles / "reports" / "CUDA_Learning" / "shared_report.ncu-rep"
    html = _html(path, tmp_path=tmp_path)
    text = " ".join(_visible(html).text)
    # before: "0.00525 ms" (roofline), "9.819e-05" (BSP, in ms), "1.062e+04" (DRAM bytes)
    assert not _EXPONENT.search(text) and not _SUB_MS_IN_MS.search(text)
    assert "5.25 µs" in text and "98.2 ns" in text and "10,624 B" in text


# --- the verdict -------------------------------------------------------------------------------


def test_verdict_says_what_to_fix_first_and_what_it_buys(tmp_path: Path) -> None:
    files = (SAMPLES / "synthetic_ncu_details.csv", SAMPLES / "synthetic_nsys_cuda_gpu_trace.csv")
    profile = merge([parsers.read(f) for f in files])
    built = report.build(evaluate(profile), profile)
    html = _html(*files, tmp_path=tmp_path)
    found = re.search(r'<section id="verdict".*?</section>', html, re.DOTALL)
    assert found is not None
    assert html.index('id="verdict"') < html.index('id="summary"') < html.index('id="kernels"')
    verdict = "".join(_visible(found.group(0)).text)
    # the application's first hint: HOSTSYNC = 0.12 of the trace, up to 8.01x (1 / 0.1249)
    assert built.verdict is not None and built.verdict.hint is not None
    assert built.verdict.hint.criterion == "HOSTSYNC"
    assert "Fix first: the GPU idles between kernels" in verdict
    assert "HOSTSYNC = 0.12" in verdict and "8.01x on the whole GPU time" in verdict
    assert "10.9 ms of the 12.4 ms" in verdict  # idle of the span: HOSTSYNC's inputs
    # 1 / HOSTSYNC x the ncu kernels' Amdahl speedup (about 2.00x)
    app = built.summary.potential_speedup
    assert app is not None and f"The whole application: up to {app:.2f}x" in verdict
    assert 15.9 < app < 16.1


def test_verdict_without_estimate_says_what_to_collect(tmp_path: Path) -> None:
    verdict = re.search(
        r'<section id="verdict".*?</section>', _html(KERN_SUM, tmp_path=tmp_path), re.DOTALL
    )
    assert verdict is not None
    text = "".join(_visible(verdict.group(0)).text)
    assert "No bottleneck found yet: the profile holds the times of 3 kernels" in text
    assert "The whole application: n/a" in text
    assert "a timeline of the launches (Nsight Systems) for HOSTSYNC" in text
    assert "hardware metrics (Nsight Compute)" in text and 'href="#collect"' in verdict.group(0)
