"""The pull-request comment (advisor/render/markdown.py) and its display helpers
(advisor/render/display.py): the verdict line, the top kernels, the hints one per criterion,
distinct and demangled kernel names, and strings from a profile that stay inert text.

The width of the comment (at most six columns, ~110 characters a row) is checked by rendering it:
tests/render/test_markdown_width.py."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

import parsers
from advisor import pipeline
from advisor.criteria.engine.analysis import Analysis, ApplicationAnalysis, CriterionResult
from advisor.criteria.engine.hints import rank
from advisor.render import display
from advisor.render import markdown as md
from advisor.render import report as render
from advisor.report import build as report
from tests.report.test_hint_ranking import _hint, _kernel, hand_built

#: two instantiations of one cuDNN template (nvvp names of reports/GPU_ML/timeline.nvvp)
FFT_0 = "_Z15fft2d_r2c_32x32IfLb0ELj0ELb0EEvP6float2PKT_iiiiiiiiiN5cudnn15reduced_divisorEb4int2ii"
FFT_5 = "_Z15fft2d_r2c_32x32IfLb0ELj5ELb1EEvP6float2PKT_iiiiiiiiiN5cudnn15reduced_divisorEb4int2ii"
OFFSETS = "_ZN5cudnn4gemm20computeOffsetsKernelENS0_20ComputeOffsetsParamsE"

LONG_INT = (
    "void my_library::detail::transpose_kernel<int, 32, true>"
    "(int const*, int*, unsigned long, unsigned long)"
)
LONG_FLOAT = LONG_INT.replace("<int,", "<float,").replace(
    "(int const*, int*", "(float const*, float*"
)
HUGE = "void huge<" + ", ".join(f"std::integral_constant<int, {i}>" for i in range(12)) + ">(int)"

HOSTILE = {
    "link": "https://evil.example/k()",
    "www": "www.evil.example()",
    "mention": "@octocat()",
    "bidi": "k\u202eevil()",
    "zero_width": "z\u200bw\u200fi\u061cd()",
    "script": "<script>alert(1)</script>",
    "md_link": "[x](javascript:alert(1))",
    "backtick": "a|b`c()",
    "backslash_pipe": "back\\slash|pipe()",
}


def analysis_of(
    kernels: dict[str, tuple[float, list[tuple[str, float, float]]]],
    rules: dict[str, tuple[dict[str, object], ...]] | None = None,
    potential: float | None = 2.0,
) -> Analysis:
    """Kernels name -> (share of GPU time, [(criterion, potential speedup, value)]), one launch
    each, the application's hints ranked (grouped per criterion) as the engine does."""
    built = [
        _kernel(
            name,
            share,
            [_hint(c, name, share, speedup, value=value) for c, speedup, value in hints],
            (rules or {}).get(name, ()),
        )
        for name, (share, hints) in kernels.items()
    ]
    return Analysis(
        inputs=(),
        device={"name": None},
        speedup_form="amdahl",
        application=ApplicationAnalysis(
            gpu_time_ns=1e6,
            kernels=len(built),
            launches=len(built),
            hostsync=CriterionResult(name="HOSTSYNC", status="not_computable", scope="application"),
            potential_speedup=potential,
            kernels_without_estimate=0,
            hints=rank([h for k in built for h in k.hints], by_application=True),
        ),
        kernels=tuple(built),
    )


def long_names_analysis() -> Analysis:
    """Two long names that differ only in their template arguments, a huge one, and nine more
    kernels (twelve: eight in the top table, four folded)."""
    kernels = {
        LONG_INT: (0.3, [("SHMEM_EFFICIENCY", 1.5, 0.2)]),
        LONG_FLOAT: (0.2, [("SHMEM_EFFICIENCY", 1.4, 0.3)]),
        HUGE: (0.1, [("THROUGHPUT_OCCUPANCY", 1.2, 0.5)]),
    }
    kernels.update({f"small_kernel_{i}(float*)": (0.04, []) for i in range(9)})
    return analysis_of(kernels)


def hostile_analysis() -> Analysis:
    """Kernel names that would be links, mentions, markup or invisible text, each with a hint."""
    share = 0.9 / len(HOSTILE)
    return analysis_of(
        {
            name: (share, [("DIVERGENCE", 1.5 + i / 10, 0.4)])
            for i, name in enumerate(HOSTILE.values())
        }
    )


def _built(analysis: Analysis, samples: Path) -> report.Report:
    return report.build(analysis, parsers.read(samples / "synthetic_ncu_details.csv"))


def _comment_of(*paths: Path) -> str:
    run = pipeline.analyse([str(p) for p in paths], None, "amdahl")
    return md.markdown(pipeline.build(run))


def _section(text: str, heading: str) -> list[str]:
    """The lines of a ``#### heading`` section up to the next blank-line-separated block that
    starts something else."""
    lines = text.split("#### " + heading, 1)[1].split("\n\n", 2)[1]
    return lines.splitlines()


def _table_rows(text: str) -> list[list[str]]:
    """The cells of the top kernels table (its body rows)."""
    block = text.split("#### Top kernels\n\n", 1)[1].split("\n\n", 1)[0]
    rows = [re.split(r"(?<!\\) \| ", line.strip("| ")) for line in block.splitlines()]
    return rows[2:]


# --- the verdict -------------------------------------------------------------------------------


def test_verdict_says_what_to_fix_first_what_it_buys_on_how_much_gpu_time(samples: Path) -> None:
    built = _built(hand_built(), samples)
    first = built.summary.top_hints[0]
    text = md.markdown(built)
    verdict = text.splitlines()[0]
    assert verdict.startswith(
        "**cuda-advisor: fix SHMEM_EFFICIENCY first** in 3 kernels (89.8% of GPU time): "
    )
    assert md.md_escape(first.title) in verdict
    assert f"up to **{first.application_speedup:.2f}x** on the whole GPU time" in verdict
    assert "the whole application: up to 2.00x" in verdict


def test_verdict_of_one_kernel_names_it(samples: Path) -> None:
    built = _built(analysis_of({"only(float*)": (1.0, [("DIVERGENCE", 1.8, 0.5)])}), samples)
    verdict = md.markdown(built).splitlines()[0]
    assert verdict.startswith(
        "**cuda-advisor: fix DIVERGENCE first** in `only(float*)` (100.0% of GPU time): "
    )
    assert "up to **1.80x** on the whole GPU time" in verdict


def test_verdict_hostsync_first(samples: Path) -> None:
    text = _comment_of(
        samples / "synthetic_nvprof_gputrace.csv", samples / "synthetic_nvprof_metrics.csv"
    )
    verdict = text.splitlines()[0]
    assert verdict.startswith("**cuda-advisor: fix HOSTSYNC first**: the GPU idles between kernels")
    assert re.search(r"up to \*\*\d+\.\d\dx\*\* on the whole GPU time", verdict)


def test_verdict_without_an_estimate_says_what_to_collect(samples: Path) -> None:
    text = _comment_of(samples / "synthetic_nsys_cuda_gpu_kern_sum.csv")
    verdict = text.splitlines()[0]
    assert verdict.startswith("**cuda-advisor: no estimate yet**: no criterion computable")
    assert "`cuda-advisor metrics --tool ncu`" in verdict
    assert "The longest kernel: `transposeNaive(float*, const float*, int, int)`" in verdict
    assert "<details><summary>Collect the missing metrics</summary>" in text
    assert "\nncu --metrics " in text  # the commands, in a code block
    # kernel times only: no criterion, speedup or NVIDIA column of n/c, n/a and —
    assert "| kernel | time | share |\n" in text
    assert "None: no criterion is computable" in text


def test_verdict_potential_na_beside_a_hint(samples: Path) -> None:
    built = _built(
        analysis_of({"k(int)": (1.0, [("DIVERGENCE", 1.8, 0.5)])}, potential=None), samples
    )
    verdict = md.markdown(built).splitlines()[0]
    assert "; the whole application: n/a (" in verdict
    assert "`cuda-advisor metrics --tool ncu`" in verdict


def test_verdict_without_a_hint(samples: Path) -> None:
    text = _comment_of(samples / "synthetic_ncu_details.csv")
    # no hint, but the hottest kernel runs far under its roofline bound: named, never "nothing"
    assert text.startswith("**cuda-advisor: no criterion is below its threshold, but ")
    assert "has a roofline headroom of 3.28x** (1.62x on the whole GPU time)" in text
    assert "nothing to fix" not in text


def test_verdict_without_kernels(samples: Path) -> None:
    text = _comment_of(samples / "synthetic_nsys_cuda_api_trace.csv")
    assert text.startswith("**cuda-advisor: no kernel in the profile**")
    assert "#### Top kernels" not in text


# --- top kernels and hints ---------------------------------------------------------------------


def test_top_kernels_table(samples: Path) -> None:
    text = md.markdown(_built(hand_built(), samples))
    assert "| kernel | time | share | worst criterion | headroom | NVIDIA |\n" in text
    rows = {cells[0]: cells[1:] for cells in _table_rows(text)}
    assert rows["`k1()`"] == ["400 µs", "40.0%", "SHMEM_EFFICIENCY 0.05", "2.00x", "2.00x"]
    assert rows["`k4()`"] == ["100 µs", "10.0%", "DIVERGENCE 0.50", "2.00x", "—"]
    assert rows["`marker()`"][-1] == "100x"  # LaunchConfiguration's 0.99: no decimals from 100x


def test_top_kernels_at_most_eight_the_rest_folded(samples: Path) -> None:
    text = md.markdown(_built(long_names_analysis(), samples))
    assert len(_table_rows(text)) == md.TOP_KERNELS
    folded = text.split("<details><summary>4 more kernels</summary>", 1)[1]
    assert folded.split("</details>", 1)[0].count("\n| `small_kernel_") == 4


def test_hints_one_line_per_criterion_with_its_gain(samples: Path) -> None:
    built = _built(hand_built(), samples)
    text = md.markdown(built)
    lines = _section(text, "Hints, best gain first")
    assert len(lines) == len(built.summary.top_hints) == 3
    criteria = [re.match(r"\d+\. \*\*(\w+)\*\*", line).group(1) for line in lines]  # type: ignore[union-attr]
    assert criteria == ["SHMEM_EFFICIENCY", "DIVERGENCE", "LOADBALANC_SM"]
    shmem = built.summary.top_hints[0]
    assert lines[0].startswith(
        "1. **SHMEM_EFFICIENCY** = 0.05–0.60 in 3 kernels (`k1()`, `k2()`, `k3()`), "
        "89.8% of GPU time: "
    )
    assert f"this fix on the whole GPU time: {shmem.application_speedup:.2f}x" in lines[0]
    assert f"({shmem.nvidia_text})" in lines[0]
    assert lines[1].startswith("2. **DIVERGENCE** = 0.50 in `k4()`, 10.0% of GPU time: ")
    assert lines[1].endswith("(NVIDIA: —)")
    # what each hint asks for, folded
    todo = text.split("<details><summary>What to do</summary>", 1)[1].split("</details>")[0]
    assert "**1. SHMEM_EFFICIENCY** = 0.05–0.60 (threshold 0.80)" in todo
    assert "kernels: `k1()`, `k2()`, `k3()`" in todo


def test_a_big_group_counts_its_kernels(samples: Path) -> None:
    kernels = {f"k{i}()": (0.1, [("LOADBALANC_SM", 2.0, 0.1)]) for i in range(6)}
    line = _section(md.markdown(_built(analysis_of(kernels), samples)), "Hints, best gain first")
    assert len(line) == 1
    assert line[0].startswith("1. **LOADBALANC_SM** = 0.10 in 6 kernels (`k0()`, `k1()`, `k2()` ")
    assert "and 3 more), 60.0% of GPU time" in line[0]


def test_hints_past_the_fifth_are_folded_one_line_each(samples: Path) -> None:
    criteria = ["DEVICESYNC", "DIVERGENCE", "LOADBALANC_WARP", "LOADBALANC_SM", "L1_GRANULARITY"]
    criteria += ["SHMEM_EFFICIENCY", "THROUGHPUT_OCCUPANCY"]
    kernels = {f"k{i}()": (0.1, [(c, 1.5 + i / 10, 0.3)]) for i, c in enumerate(criteria)}
    built = _built(analysis_of(kernels), samples)
    text = md.markdown(built)
    assert built.summary.hints_total == 7
    lines = _section(text, "Hints, best gain first")
    assert len(lines) == 5
    assert "\n\n2 more under *What to do*.\n" in text
    todo = text.split("<details><summary>What to do</summary>", 1)[1].split("</details>")[0]
    later = [line for line in todo.splitlines() if re.match(r"[67]\. \*\*", line)]
    assert len(later) == 2 and all("on the whole GPU time" in line for line in later)
    shown = {re.match(r"\d+\. \*\*(\w+)\*\*", x).group(1) for x in lines + later}  # type: ignore[union-attr]
    assert shown == set(criteria)  # one line per criterion, none repeated


def test_criteria_of_every_kernel_are_folded(samples: Path) -> None:
    text = md.markdown(_built(hand_built(), samples))
    folded = text.split("<details><summary>Criteria of every kernel (1 = best)</summary>", 1)[1]
    line = next(x for x in folded.splitlines() if x.startswith("- `k1()`"))
    assert "**SHMEM_EFFICIENCY 0.05** (NVIDIA 2.00x)" in line
    assert "n/c: " in line


# --- distinct, demangled names -----------------------------------------------------------------


def test_distinct_names_keep_the_template_arguments_that_differ() -> None:
    names = display.distinct_names(["void k<int>(float*)", "void k<float>(float*)"], 12)
    assert names == {"void k<int>(float*)": "k<int>(…)", "void k<float>(float*)": "k<float>(…)"}
    # several arguments, one differing: the others collapse
    a, b = "void t<float, 32, (bool)1>(float*)", "void t<float, 64, (bool)1>(float*)"
    assert display.distinct_names([a, b], 16) == {a: "t<…, 32, …>(…)", b: "t<…, 64, …>(…)"}
    assert display.distinct_names([LONG_INT, LONG_FLOAT], 40) == {
        LONG_INT: "…::transpose_kernel<int, …>(…)",
        LONG_FLOAT: "…::transpose_kernel<float, …>(…)",
    }


def test_distinct_names_number_what_cannot_be_told_apart() -> None:
    names = ["x", "x ", " x"]  # read the same once white space is folded
    assert display.distinct_names(names, 20) == {"x": "x", "x ": "x #2", " x": "x #3"}
    # told apart only past the limit: numbered, all on the same base
    long = [f"void k<{'A' * 40}{i}>(int)" for i in range(3)]
    shown = display.distinct_names(long, 12)
    assert list(shown.values()) == ["k<…>(int)", "k<…>(int) #2", "k<…>(int) #3"]
    assert all(len(v) <= 12 for v in shown.values())


def test_distinct_names_leave_distinct_short_names_alone() -> None:
    names = ["setColReadCol(int *)", "setRowReadCol(int *)", "warmup(int *)"]
    assert display.distinct_names(names, 30) == {n: n for n in names}


def test_markdown_tells_template_instantiations_apart(samples: Path) -> None:
    text = md.markdown(_built(long_names_analysis(), samples))
    rows = [cells[0] for cells in _table_rows(text)]
    assert len(rows) == len(set(rows))
    assert any("transpose_kernel<int, …>" in r for r in rows)
    assert any("transpose_kernel<float, …>" in r for r in rows)
    names = text.split("<details><summary>Full kernel names</summary>", 1)[1]
    assert f"`{LONG_INT}`" in names and f"`{LONG_FLOAT}`" in names


def test_demangle_with_cpp_demangle() -> None:
    pytest.importorskip("cpp_demangle")
    assert display.demangle("_Z1kIiEvPT_") == "void k<int>(int*)"
    assert display.readable_name("_Z1kIiEvPT_") == "k<int>(int*)"
    assert display.demangle(FFT_5).startswith("void fft2d_r2c_32x32<float, false, (unsigned int)5,")
    shown = display.distinct_names([FFT_0, FFT_5], 36)
    assert shown == {
        FFT_0: "fft2d_r2c_32x32<…, 0, false>(…)",
        FFT_5: "fft2d_r2c_32x32<…, 5, true>(…)",
    }


def test_demangle_without_cpp_demangle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, display.DEMANGLER_MODULE, None)  # import fails
    assert display.demangle(FFT_0) == "fft2d_r2c_32x32<…>(…)"
    assert display.demangle(OFFSETS) == "cudnn::gemm::computeOffsetsKernel(…)"
    assert display.demangle("_Z6kernelv") == "kernel()"
    assert display.demangle("_ZN12_GLOBAL__N_16kernelEv") == "(anonymous namespace)::kernel()"
    assert display.demangle("_Zbroken") == "_Zbroken"  # no name to read: as it is
    assert display.demangle("volta_sgemm_128x128_tn") == "volta_sgemm_128x128_tn"
    # the outlines of two instantiations read the same: numbered
    assert display.distinct_names([FFT_0, FFT_5], 36) == {
        FFT_0: "fft2d_r2c_32x32<…>(…)",
        FFT_5: "fft2d_r2c_32x32<…>(…) #2",
    }


def test_demangle_when_cpp_demangle_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str) -> str:
        raise ValueError("Could not demangle symbol")

    broken = types.ModuleType(display.DEMANGLER_MODULE)
    broken.demangle = refuse  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, display.DEMANGLER_MODULE, broken)
    assert display.demangle(OFFSETS) == "cudnn::gemm::computeOffsetsKernel(…)"


@pytest.mark.parametrize("demangler", [True, False])
def test_markdown_shows_mangled_names_demangled_and_keeps_them_whole(
    samples: Path, monkeypatch: pytest.MonkeyPatch, demangler: bool
) -> None:
    if demangler:
        pytest.importorskip("cpp_demangle")
    else:
        monkeypatch.setitem(sys.modules, display.DEMANGLER_MODULE, None)
    analysis = analysis_of(
        {
            FFT_0: (0.5, [("LOADBALANC_SM", 1.5, 0.2)]),
            FFT_5: (0.3, [("LOADBALANC_SM", 1.2, 0.4)]),
            OFFSETS: (0.2, []),
        }
    )
    text = md.markdown(_built(analysis, samples))
    rows = [cells[0] for cells in _table_rows(text)]
    if demangler:
        assert rows[:2] == [
            "`fft2d_r2c_32x32<…, 0, false>(…)`",
            "`fft2d_r2c_32x32<…, 5, true>(…)`",
        ]
    else:
        assert rows[:2] == ["`fft2d_r2c_32x32<…>(…)`", "`fft2d_r2c_32x32<…>(…) #2`"]
    assert rows[2] == "`cudnn::gemm::computeOffsetsKernel(…)`"
    names = text.split("<details><summary>Full kernel names</summary>", 1)[1]
    for raw in (FFT_0, FFT_5, OFFSETS):
        assert f"(mangled: `{raw}`)" in names
    assert "_Z15" not in text.split("<details>", 1)[0]  # raw names only in the folded list


# --- escaping ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://evil.example/x", "see https&#58;//evil.example/x"),
        ("HTTP://A.B and ftp://c", "HTTP&#58;//A.B and ftp&#58;//c"),
        ("www.evil.example", "www&#46;evil.example"),
        ("ping @octocat", "ping &#64;octocat"),
        ("mailto:a@b.c", "mailto&#58;a&#64;b.c"),
        ("a\u200bb\u200fc\u061cd\ufeffe", "a\\\\u200bb\\\\u200fc\\\\u061cd\\\\ufeffe"),
        ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),  # no '//': not a link
        ("<b>&", "&lt;b&gt;&amp;"),
        ("rtl\u202eevil", "rtl\\\\u202eevil"),
    ],
)
def test_md_escape(text: str, expected: str) -> None:
    assert md.md_escape(text) == expected
    assert render.md_escape(text) == expected  # still importable from render.report


@pytest.mark.parametrize(
    ("text", "table", "expected"),
    [
        ("k<int>(float*)", False, "`k<int>(float*)`"),
        ("https://evil.example", False, "`https://evil.example`"),
        ("a`b", False, "``a`b``"),
        ("`edge`", False, "`` `edge` ``"),
        ("a|b", True, "`a\\|b`"),
        ("a|b", False, "`a|b`"),
        ("back\\slash|pipe", True, "back\\\\slash\\|pipe"),  # not a code span: md_escape
        ("z\u200bw\u202e", False, "`z\\u200bw\\u202e`"),
        ("line\nbreak", False, "`line break`"),
        ("", False, "(no name)"),
    ],
)
def test_md_code(text: str, table: bool, expected: str) -> None:
    assert md.md_code(text, table) == expected


def test_visible_text() -> None:
    assert display.visible_text("kernel<int>(float*) é 漢") == "kernel<int>(float*) é 漢"
    assert display.visible_text("a\tb\nc") == "a\tb\nc"
    hidden = "\u200b\u200c\u200d\u200e\u200f\u061c\u202a\u202e\u2066\u2069\u2060\ufeff\u00ad\x1b"
    shown = display.visible_text(hidden)
    assert shown.isascii() and shown.isprintable()
    assert shown.startswith("\\u200b\\u200c\\u200d\\u200e\\u200f\\u061c")
    assert display.visible_text("\u3164\U000e0041") == "\\u3164\\U000e0041"


def test_hostile_names_are_inert_text(samples: Path) -> None:
    text = md.markdown(_built(hostile_analysis(), samples))
    for ch in "\u202e\u200b\u200f\u061c":
        assert ch not in text
    assert "`k\\u202eevil()`" in text
    assert "`z\\u200bw\\u200fi\\u061cd()`" in text
    # every kernel name is a code span (in the table, in the hints, in the verdict)
    for name in ("https://evil.example/k()", "www.evil.example()", "@octocat()"):
        assert f"`{name}`" in text
        assert text.replace(f"`{name}`", "").count(name) == 0, name
    assert "`<script>alert(1)</script>`" in text
    assert "`[x](javascript:alert(1))`" in text
    assert "``a\\|b`c()``" in text  # in the table: a longer fence, the pipe escaped
    assert "``a|b`c()``" in text  # elsewhere
    assert "back\\\\slash\\|pipe()" in text  # a backslash before a pipe: escaped text


def test_hostile_names_render_without_links_or_markup(samples: Path) -> None:
    renderer = markdown_renderer()
    html = renderer.render(md.markdown(_built(hostile_analysis(), samples)))
    assert "<a " not in html and "<script" not in html
    assert "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>" in html
    assert "<code>@octocat()</code>" in html
    assert "<code>https://evil.example/k()</code>" in html
    tokens = [t for block in renderer.parse(md.markdown(_built(hostile_analysis(), samples)))
              for t in (block.children or ())]  # fmt: skip
    for token in tokens:  # outside code spans no name is a link, a mention or a scheme
        if token.type == "text":
            assert "@octocat" not in token.content and "https://" not in token.content


# --- size --------------------------------------------------------------------------------------


def test_the_comment_stays_under_its_limit(samples: Path) -> None:
    built = _built(long_names_analysis(), samples)
    full = md.markdown(built)
    for limit in (6000, 3000, 1200):
        text = md.markdown(built, max_chars=limit)
        assert len(text) <= limit < len(full)
        assert text.count("<details>") == text.count("</details>")
        assert text.count("\n```") % 2 == 0
        assert text.startswith("**cuda-advisor: fix SHMEM_EFFICIENCY first**")


def test_same_report_same_bytes(samples: Path) -> None:
    built = _built(hostile_analysis(), samples)
    assert md.markdown(built) == md.markdown(built) == render.markdown(built)


def markdown_renderer():  # type: ignore[no-untyped-def]
    """markdown-it-py's GitHub-like renderer (tables, autolinks): required under CI=true,
    skipped elsewhere when ``markdown-it-py[linkify]`` is not installed."""
    from tests.render.test_markdown_width import _renderer

    return _renderer()
