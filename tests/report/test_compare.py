"""``cuda-advisor compare``: kernels matched by name across versions, measured speedups, the
prediction ledger (and its scoring with :mod:`advisor.validation`, the benchmark's statistics),
unmatched kernels, the --max-regression gate, escaping and determinism."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from advisor import validation
from advisor.cli import main
from advisor.render import compare as render_compare
from advisor.render import display
from advisor.report import compare
from tests.cli_helpers import assert_one_line_error, run

NAIVE = "transposeNaive(float*, const float*, int, int)"


def _slower_naive(samples: Path, folder: Path, factor: float) -> list[str]:
    """The synthetic nvprof trace with transposeNaive's durations multiplied by ``factor``,
    and the metrics file unchanged."""
    folder.mkdir()
    lines = (samples / "synthetic_nvprof_gputrace.csv").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        if NAIVE in line:
            row = next(csv.reader([line]))
            row[1] = f"{float(row[1]) * factor:.6f}"
            buffer = io.StringIO()
            csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="").writerow(row)
            line = buffer.getvalue()
        out.append(line)
    (folder / "trace.csv").write_text("\n".join(out) + "\n", encoding="utf-8")
    metrics = (samples / "synthetic_nvprof_metrics.csv").read_text(encoding="utf-8")
    (folder / "metrics.csv").write_text(metrics, encoding="utf-8")
    return [str(folder / "trace.csv"), str(folder / "metrics.csv")]


def test_speedups_and_regression_gate(samples: Path, tmp_path: Path) -> None:
    base = f"{samples / 'synthetic_nvprof_gputrace.csv'},{samples / 'synthetic_nvprof_metrics.csv'}"
    _slower_naive(samples, tmp_path / "v2", 2.0)
    js, out, md = tmp_path / "c.json", tmp_path / "c.html", tmp_path / "c.md"
    args = ["compare", "--version", f"v1={base}", "--version", f"v2={tmp_path / 'v2'}"]
    result = CliRunner().invoke(
        main, [*args, "--json", str(js), "-o", str(out), "--markdown", str(md)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(js.read_text(encoding="utf-8"))
    naive = next(k for k in data["kernels"] if k["name"] == NAIVE)
    # durations doubled: v1 / v2 = 0.5 for transposeNaive, 1.0 for the others
    assert abs(naive["speedup_vs_previous"][1] - 0.5) < 1e-9
    # the first version is the baseline: no speedup versus itself
    assert naive["speedup_vs_first"][0] is None and data["baseline"] == "v1"
    assert abs(naive["speedup_vs_first"][1] - 0.5) < 1e-9
    others = [k for k in data["kernels"] if k["name"] != NAIVE]
    assert all(abs(k["speedup_vs_previous"][1] - 1.0) < 1e-9 for k in others)
    gate = CliRunner().invoke(main, [*args, "--json", str(js), "--max-regression", "50"])
    assert gate.exit_code == 4
    lines = [line for line in gate.output.splitlines() if "regression:" in line]
    assert len(lines) == 1 and "100.0% slower in v2 than in v1" in lines[0]
    ok = CliRunner().invoke(main, [*args, "--json", str(js), "--max-regression", "150"])
    assert ok.exit_code == 0
    rows: list[str] = []

    class Rows(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "tr" and dict(attrs).get("class") == "kernel-row":
                rows.append(tag)

    Rows().feed(out.read_text(encoding="utf-8"))
    assert len(rows) == len(data["kernels"]) == 3
    assert "| v2 |" in md.read_text(encoding="utf-8")


def test_ledger_pairs_improved_criteria_with_measured_speedup() -> None:
    def kernel(value: float, duration: float) -> dict[str, object]:
        crit: dict[str, dict[str, float | None]] = {
            c: {"value": None, "potential_speedup": None} for c in compare.CRITERIA
        }
        crit["SHMEM_EFFICIENCY"] = {"value": value, "potential_speedup": 1.8}
        return {"name": "k", "duration_ns": duration, "criteria": crit}

    def version(value: float, duration: float) -> dict[str, object]:
        app = {"gpu_time_ns": duration, "potential_speedup": 2.0}
        return {"application": app, "kernels": [kernel(value, duration)]}

    result = compare.compare(
        [("a", ["x"], version(0.25, 200.0)), ("b", ["y"], version(1.0, 125.0))]
    )
    (entry,) = result.ledger
    # SHMEM 0.25 -> 1.0 improved; predicted 1.8x by version a; measured 200 / 125 = 1.6x
    assert (entry.criterion, entry.predicted_speedup, entry.measured_speedup) == (
        "SHMEM_EFFICIENCY",
        1.8,
        1.6,
    )


def test_version_names_and_files_are_checked(samples: Path, tmp_path: Path) -> None:
    bad = CliRunner().invoke(main, ["compare", "--version", "v1", "--json", str(tmp_path / "j")])
    assert bad.exit_code == 2 and "NAME=FILE" in bad.output
    f = str(samples / "synthetic_nvprof_gputrace.csv")
    dup = CliRunner().invoke(
        main,
        ["compare", "--version", f"v={f}", "--version", f"v={f}", "--json", str(tmp_path / "j")],
    )
    assert dup.exit_code == 2 and "must differ" in dup.output


def test_compare_html_escapes_and_is_deterministic(samples: Path, tmp_path: Path) -> None:
    f = f"{samples / 'synthetic_nvprof_gputrace.csv'},{samples / 'synthetic_nvprof_metrics.csv'}"
    outputs = []
    for label in ("a", "b"):
        out = tmp_path / f"{label}.html"
        result = CliRunner().invoke(
            main,
            ["compare", "--version", f"<b>v1</b>={f}", "--version", f"v2\"'={f}", "-o", str(out)],
        )
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    html = outputs[0].decode("utf-8")
    assert "<b>v1</b>" not in html and "&lt;b&gt;v1&lt;/b&gt;" in html
    assert "Content-Security-Policy" in html


def test_saved_analysis_as_a_version_gives_the_same_speedups(samples: Path, tmp_path: Path) -> None:
    base = f"{samples / 'synthetic_nvprof_gputrace.csv'},{samples / 'synthetic_nvprof_metrics.csv'}"
    v2 = _slower_naive(samples, tmp_path / "v2", 2.0)
    saved = tmp_path / "v1-analysis.data"  # detected by content, not by its name
    made = CliRunner().invoke(main, ["report", *base.split(","), "--json", str(saved)])
    assert made.exit_code == 0, made.output
    outputs = []
    for v1 in (base, str(saved)):
        js = tmp_path / "c.json"
        args = ["compare", "--version", f"v1={v1}", "--version", f"v2={','.join(v2)}"]
        result = CliRunner().invoke(main, [*args, "--json", str(js)])
        assert result.exit_code == 0, result.output
        data = json.loads(js.read_text(encoding="utf-8"))
        outputs.append(
            (
                {k["name"]: k["speedup_vs_previous"] for k in data["kernels"]},
                data["prediction_ledger"],
                [v["potential_speedup"] for v in data["versions"]],
            )
        )
    assert outputs[0] == outputs[1]
    assert abs(outputs[1][0][NAIVE][1] - 0.5) < 1e-9  # durations doubled in v2
    # the other way round too: profiles first, the saved analysis second
    back = CliRunner().invoke(
        main,
        ["compare", "--version", f"a={','.join(v2)}", "--version", f"b={saved}", "--json",
         str(tmp_path / "d.json")],
    )  # fmt: skip
    assert back.exit_code == 0, back.output
    data = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert abs(next(k for k in data["kernels"] if k["name"] == NAIVE)["speedup_vs_previous"][1]
               - 2.0) < 1e-9  # fmt: skip


def test_saved_analysis_speedup_form_is_re_picked(samples: Path, tmp_path: Path) -> None:
    files = [
        str(samples / "synthetic_nvprof_gputrace.csv"),
        str(samples / "synthetic_nvprof_metrics.csv"),
    ]
    saved = tmp_path / "a.json"
    assert CliRunner().invoke(main, ["report", *files, "--json", str(saved)]).exit_code == 0
    data = compare.read_analysis(str(saved), "paper")
    crit = [c for k in data["kernels"] for c in k["criteria"].values()]
    assert all(c["potential_speedup"] == c["potential_speedup_paper"] for c in crit)
    assert any(c["potential_speedup_paper"] != c["potential_speedup_amdahl"] for c in crit)


def test_json_that_is_not_an_analysis_exits_3(samples: Path, tmp_path: Path) -> None:
    other = tmp_path / "device.json"
    other.write_text('{"schema": "cuda-advisor/comparison@1", "versions": []}', encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    lacking = tmp_path / "lacking.json"
    lacking.write_text('{"schema": "cuda-advisor/analysis@1", "kernels": []}', encoding="utf-8")
    good = f"{samples / 'synthetic_nvprof_gputrace.csv'}"
    for bad in (other, broken, lacking):
        result = CliRunner().invoke(
            main,
            ["compare", "--version", f"v1={bad}", "--version", f"v2={good}", "--json",
             str(tmp_path / "c.json")],
        )  # fmt: skip
        assert result.exit_code == 3, result.output
        assert str(bad) in result.output and "Traceback" not in result.output
    mixed = CliRunner().invoke(
        main,
        ["compare", "--version", f"v1={other},{good}", "--version", f"v2={good}", "--json",
         str(tmp_path / "c.json")],
    )  # fmt: skip
    assert mixed.exit_code == 2 and "only file" in mixed.output


def _kernel(
    name: str, duration: float, overall: float | None, values: dict[str, tuple[float, float | None]]
) -> dict[str, Any]:
    """A kernel of a saved analysis: criterion -> (value, potential speedup); others None."""
    crit: dict[str, Any] = {
        c: {"value": None, "potential_speedup": None} for c in compare.CRITERIA if c != "HOSTSYNC"
    }
    for c, (value, speedup) in values.items():
        crit[c] = {"value": value, "potential_speedup": speedup}
    return {"name": name, "duration_ns": duration, "potential_speedup": overall, "criteria": crit}


def _analysis(kernels: list[dict[str, Any]]) -> dict[str, Any]:
    total = sum(k["duration_ns"] for k in kernels)
    return {
        "schema": "cuda-advisor/analysis@1",
        "application": {"gpu_time_ns": total, "potential_speedup": 2.0},
        "kernels": kernels,
    }


# three versions; "gone" is only in a, "new" only in b and c, "k3" not in c
A = _analysis(
    [
        _kernel("k1", 200.0, 2.5, {"SHMEM_EFFICIENCY": (0.25, 1.8), "DIVERGENCE": (0.5, 1.3)}),
        _kernel("k2", 100.0, 1.5, {"L1_GRANULARITY": (0.4, 2.0)}),
        _kernel("k3", 80.0, 1.2, {"DIVERGENCE": (0.9, 1.05)}),
        _kernel("gone<T>", 50.0, 1.1, {}),
    ]
)
B = _analysis(
    [
        _kernel("k1", 125.0, 1.4, {"SHMEM_EFFICIENCY": (1.0, 1.0), "DIVERGENCE": (0.5, 1.3)}),
        _kernel("k2", 110.0, None, {"L1_GRANULARITY": (0.6, 1.6)}),  # slower; no overall
        _kernel("k3", 40.0, 1.3, {"DIVERGENCE": (0.92, 1.0)}),  # faster, no criterion rose
        _kernel("new", 10.0, 1.0, {}),
    ]
)
C = _analysis(
    [
        # DIVERGENCE and L1 both rise by 0.25 (exact in binary): the first in paper order wins
        _kernel("k1", 100.0, 1.2, {"DIVERGENCE": (0.75, 1.1), "L1_GRANULARITY": (0.75, 1.0)}),
        _kernel("k2", 55.0, 1.3, {"L1_GRANULARITY": (0.9, 1.1)}),
        _kernel("new", 10.0, 1.0, {}),
    ]
)
B["kernels"][0]["criteria"]["L1_GRANULARITY"] = {"value": 0.5, "potential_speedup": 1.25}

#: what each pair must be scored on, written out by hand from A, B and C
EXPECTED: dict[tuple[str, str], dict[str, Any]] = {
    ("a", "b"): {
        # gone<T> and new are the one kernel each version has left: paired by "last left"
        "overall": [(2.5, 200 / 125), (1.5, 100 / 110), (1.2, 80 / 40), (1.1, 50 / 10)],
        "addressed": {
            "k1": ("SHMEM_EFFICIENCY", 1.8, 200 / 125),
            "k2": ("L1_GRANULARITY", 2.0, 100 / 110),
        },
        "only_in_from": [],
        "only_in_to": [],
    },
    ("b", "c"): {
        "overall": [(1.4, 125 / 100), (None, 110 / 55), (1.0, 1.0)],
        "addressed": {
            "k1": ("DIVERGENCE", 1.3, 125 / 100),
            "k2": ("L1_GRANULARITY", 1.6, 110 / 55),
        },
        "only_in_from": ["k3"],
        "only_in_to": [],
    },
}


def _summary(s: dict[str, Any]) -> validation.Summary:
    keys = ("n", "median_error_factor", "within_25", "sign_agree", "sign_counted", "spearman")
    return validation.Summary(**{k: s[k] for k in keys}, dropped=s["dropped"])


def test_ledger_is_scored_with_the_benchmark_statistics(tmp_path: Path) -> None:
    args = ["compare"]
    for name, data in (("a", A), ("b", B), ("c", C)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        args += ["--version", f"{name}={path}"]
    js, out, md = tmp_path / "cmp.json", tmp_path / "cmp.html", tmp_path / "cmp.md"
    result = CliRunner().invoke(
        main, [*args, "--json", str(js), "-o", str(out), "--markdown", str(md)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(js.read_text(encoding="utf-8"))
    # the existing ledger is still there: every criterion that rose by 0.05 or more
    assert sorted((e["from"], e["kernel"], e["criterion"]) for e in data["prediction_ledger"]) == [
        ("a", "k1", "SHMEM_EFFICIENCY"),
        ("a", "k2", "L1_GRANULARITY"),
        ("b", "k1", "DIVERGENCE"),
        ("b", "k1", "L1_GRANULARITY"),
        ("b", "k2", "L1_GRANULARITY"),
    ]
    assert "does not know the change" in data["prediction_ledger_note"]
    pairs = data["prediction_ledger_pairs"]
    assert [(p["from"], p["to"]) for p in pairs] == list(EXPECTED)
    for pair in pairs:
        want = EXPECTED[(pair["from"], pair["to"])]
        overall = want["overall"]
        addressed = [(p, m) for _, p, m in want["addressed"].values()]
        # the pair's figures are advisor.validation's on the same (predicted, measured) pairs
        assert _summary(pair["addressed"]) == validation.summarize(addressed)
        # the roofline headroom is a bound: how many measured speedups stayed within it, never
        # an error factor, tolerance or sign agreement
        bounded = [(p, m) for p, m in overall if p is not None]
        within = sum(m <= p for p, m in bounded)
        assert pair["roofline_bound"] == {
            "n": len(bounded),
            "within_bound": within,
            "within_share": within / len(bounded),
            "dropped": len(overall) - len(bounded),
        }
        assert "overall" not in pair
        assert pair["unmatched"] == {
            "only_in_from": want["only_in_from"],
            "only_in_to": want["only_in_to"],
        }
        for k, (p, m) in zip(pair["kernels"], overall, strict=True):
            assert k["measured_speedup"] == pytest.approx(m, rel=1e-12)
            assert k["roofline_bound"] == p
            assert k["measured_within_bound"] == (None if p is None else m <= p)
            assert "overall_error_factor" not in k and "overall_predicted" not in k
            criterion, p_addr, m_addr = want["addressed"].get(k["kernel"], (None, None, None))
            assert (k["addressed_criterion"], k["addressed_predicted"]) == (criterion, p_addr)
            if criterion is None:
                assert k["addressed_error_factor"] is None
            else:
                assert k["addressed_error_factor"] == pytest.approx(
                    validation.error_factor(p_addr, m_addr), rel=1e-12
                )
    # a -> b: k1 2.5 vs 1.6, k2 1.5 vs 0.909 within; k3 1.2 vs 2.0, gone 1.1 vs 5.0 beyond
    assert pairs[0]["roofline_bound"]["within_bound"] == 2
    assert pairs[1]["roofline_bound"]["dropped"] == 1  # k2 has no overall estimate in b
    assert [(p["from_kernel"], p["matched_by"]) for p in data["matching"][0]["pairs"]][-1] == (
        "gone<T>",
        "last left",
    )
    # the same figures, formatted, in the Markdown and the HTML
    text, page = md.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    first = validation.summarize([(p, m) for _, p, m in EXPECTED[("a", "b")]["addressed"].values()])
    assert first.median_error_factor is not None and first.within_25 is not None
    row = (
        f"| a → b | addressed criterion (prediction) | 2 | {first.median_error_factor:.2f}× | "
        f"{100 * first.within_25:.0f} % | {first.sign_agree}/{first.sign_counted} "
    )
    assert row in text
    assert "| a → b | roofline headroom (upper bound) | 4 | — | — | — | 2/4 (50 %) |" in text
    assert "| k1 | a → b | 1.60× | 2.50× | yes | SHMEM_EFFICIENCY | 1.80× | 1.12× |" in text
    assert "| k3 | a → b | 2.00× | 1.20× | no | none rose (see what changed) |" in text
    assert "only in b (1): k3" in text and "gone&lt;T&gt;" in text
    assert "error factor 3" not in text
    assert page.count('class="ledger-summary-row"') == 4
    assert page.count('class="ledger-kernel-row"') == 7  # 4 matched kernels, then 3
    assert 'title="gone&lt;T&gt; → new"' in page
    assert f'<td class="num">{first.median_error_factor:.2f}×</td>' in page


def test_addressed_criterion_is_the_largest_rise() -> None:
    result = compare.compare([("b", ["x"], B), ("c", ["y"], C)])
    (check,) = result.checks
    k1 = check.kernels[0]
    # DIVERGENCE 0.5 -> 0.75 and L1 0.5 -> 0.75: a tie, DIVERGENCE comes first in paper order
    assert compare.CRITERIA.index("DIVERGENCE") < compare.CRITERIA.index("L1_GRANULARITY")
    assert (k1.kernel, k1.addressed, k1.addressed_rise) == ("k1", "DIVERGENCE", 0.25)
    # a rise below IMPROVED_MIN_DELTA addresses nothing
    small = compare.compare([("a", ["x"], A), ("b", ["y"], B)]).checks[0]
    k3 = next(k for k in small.kernels if k.kernel == "k3")
    assert k3.addressed is None and k3.addressed_predicted is None


def test_a_criterion_that_no_longer_applies_counts_as_fixed() -> None:
    # UM_MIGRATION 0.0114 (88x) before; after cudaMemPrefetchAsync nothing migrates during the
    # kernel, so the criterion is n/a: the problem is gone, the rise is to 1
    before = _analysis([_kernel("inc", 62.3e6, None, {"UM_MIGRATION": (0.0114, 88.0)})])
    after = _analysis([_kernel("inc", 0.89e6, None, {})])
    after["kernels"][0]["criteria"]["UM_MIGRATION"]["status"] = "not_applicable"
    result = compare.compare([("b", ["x"], before), ("c", ["y"], after)])
    k = result.checks[0].kernels[0]
    assert (k.addressed, k.addressed_predicted) == ("UM_MIGRATION", 88.0)
    assert k.addressed_rise == pytest.approx(1 - 0.0114)
    (entry,) = result.ledger
    assert (entry.criterion, entry.value_after) == ("UM_MIGRATION", 1.0)
    # a criterion n/a in the earlier version predicts nothing
    result = compare.compare([("c", ["y"], after), ("b", ["x"], before)])
    assert result.checks[0].kernels[0].addressed is None


def test_every_kernel_is_in_the_json_and_the_gate() -> None:
    """Past the 30 kernels the HTML and Markdown show, the JSON and --max-regression still
    cover every kernel."""
    count = compare.COMPARE_KERNELS + 2
    v1 = _analysis([_kernel(f"k{i:02d}", 1000.0 - i, 1.5, {}) for i in range(count)])
    v2 = _analysis([_kernel(f"k{i:02d}", 1000.0 - i, 1.5, {}) for i in range(count)])
    v2["kernels"][-1]["duration_ns"] *= 2  # the shortest kernel, not shown, is twice as slow
    result = compare.compare([("v1", ["x"], v1), ("v2", ["y"], v2)])
    assert len(result.kernels) == count and result.kernels_not_shown == 2
    assert len(compare.to_json(result)["kernels"]) == count
    assert [line.split(" is ")[0] for line in compare.regressions(result, 50)] == [
        f"regression: k{count - 1:02d}"
    ]
    page = render_compare.html(result)
    assert page.count('class="kernel-row"') == compare.COMPARE_KERNELS
    assert "2 more kernels are in the JSON output" in page
    assert "2 more kernels are in the JSON output" in render_compare.markdown(result)
    assert result.checks[0].overall.n == count


# ---------------------------------------------------------------------------------------------
# kernel matching: forced, exact, base name, launch order and configuration; unmatched warnings


def _version(*kernels: tuple[str, float]) -> dict[str, Any]:
    """A saved analysis of kernels given as (name, duration)."""
    return _analysis([_kernel(name, duration, 1.5, {}) for name, duration in kernels])


def _launch(order: int, grid: int | None = 1024, block: int | None = 256) -> compare.KernelLaunch:
    return compare.KernelLaunch(order=order, grid_blocks=grid, block_threads=block)


def _warnings(stderr: str) -> list[str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert all(line.startswith("cuda-advisor: warning: ") for line in lines), stderr
    return lines


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("sgemm_naive(int, int, float const*, float*)", "sgemm_naive"),
        ("void sgemm_naive<32, 4>(int, float const*)", "sgemm_naive"),
        ("sgemm_naive", "sgemm_naive"),
        ("void ns::kernel<float>::run<(int)2>(float*) const", "ns::kernel::run"),
        ("(anonymous namespace)::scale(float*, int)", "{anonymous}::scale"),
        ("foo(float*) [clone .cuda.1]", "foo"),
        ("unsigned int reduce<std::pair<int, int> >(int)", "reduce"),
        # mangled: the same base name with or without the optional demangler
        ("_Z11sgemm_naiveiiifPKfS0_fPf", "sgemm_naive"),
        ("_Z18transposeCoalescedILi32EEvPfPKfii", "transposeCoalesced"),
        ("_ZN3cub11EmptyKernelIvEEvv", "cub::EmptyKernel"),
        ("_ZN12_GLOBAL__N_16kernelEPf", "{anonymous}::kernel"),
    ],
)
@pytest.mark.parametrize("demangler", ["installed", "absent"])
def test_base_name(name: str, base: str, demangler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if demangler == "installed":
        pytest.importorskip(display.DEMANGLER_MODULE)
    else:  # the optional package missing: the built-in reading of the mangled name
        monkeypatch.setattr(display, "DEMANGLER_MODULE", "cuda_advisor_no_such_demangler")
    compare.demangle.cache_clear()
    compare.base_name.cache_clear()
    try:
        assert compare.base_name(name) == base
    finally:
        compare.demangle.cache_clear()
        compare.base_name.cache_clear()


def test_demangle_with_and_without_the_optional_package(monkeypatch: pytest.MonkeyPatch) -> None:
    mangled = "_Z11sgemm_naiveiiifPKfS0_fPf"
    assert compare.demangle("sgemm_naive(int)") == "sgemm_naive(int)"  # not mangled: kept
    monkeypatch.setattr(display, "DEMANGLER_MODULE", "cuda_advisor_no_such_demangler")
    compare.demangle.cache_clear()
    assert compare.demangle(mangled) == "sgemm_naive(…)"  # the outline, read by hand
    assert compare.demangle("_Zgarbage") == "_Zgarbage"  # unreadable: kept as it is
    monkeypatch.undo()
    compare.demangle.cache_clear()
    if importlib.util.find_spec(display.DEMANGLER_MODULE) is not None:
        full = "sgemm_naive(int, int, int, float, float const*, float const*, float, float*)"
        assert compare.demangle(mangled) == full
    compare.demangle.cache_clear()


def test_kernels_are_matched_by_exact_then_base_name_then_order_and_configuration() -> None:
    before = _version(
        ("copy(float*)", 50.0),
        ("sgemm_naive(int, float*)", 400.0),
        ("void tile<8>(float*)", 100.0),
        ("void tile<16>(float*)", 90.0),
        ("old_reduce(float*)", 80.0),
        ("old_scan(float*)", 70.0),
        ("gone(float*)", 5.0),
    )
    after = _version(
        ("copy(float*)", 40.0),
        ("void sgemm_naive<32>(int, float*)", 200.0),
        ("void tile<32>(float*)", 60.0),
        ("void tile<64>(float*)", 50.0),
        ("new_scan(float*)", 35.0),
        ("new_reduce(float*)", 20.0),
        ("extra(float*)", 1.0),
        ("extra2(float*)", 0.5),  # two kernels left in b: no "last left" pair
    )
    # launch order: the reduce runs before the scan in both versions; the renamed reduce keeps
    # 1024 x 256 threads; the renamed scan reshaped its block but kept 64 x 512 threads
    launches_before = {
        "copy(float*)": _launch(0),
        "sgemm_naive(int, float*)": _launch(1),
        "void tile<16>(float*)": _launch(2),
        "void tile<8>(float*)": _launch(3),
        "old_reduce(float*)": _launch(4),
        "old_scan(float*)": _launch(5, 64, 512),
        "gone(float*)": _launch(6, 1, 32),
    }
    launches_after = {
        "copy(float*)": _launch(0),
        "void sgemm_naive<32>(int, float*)": _launch(1),
        "void tile<32>(float*)": _launch(2),
        "void tile<64>(float*)": _launch(3),
        "new_reduce(float*)": _launch(4),
        "new_scan(float*)": _launch(5, 64, 512),
        "extra(float*)": _launch(6, 2, 32),
        "extra2(float*)": _launch(7, 4, 32),
    }
    result = compare.compare(
        [("a", ["x"], before), ("b", ["y"], after)], [launches_before, launches_after]
    )
    (match,) = result.matches
    pairs = {(p.before, p.after): p.method for p in match.pairs}
    assert pairs == {
        ("copy(float*)", "copy(float*)"): "exact",
        ("sgemm_naive(int, float*)", "void sgemm_naive<32>(int, float*)"): "base name",
        # template instances of one base name: paired in launch order
        ("void tile<16>(float*)", "void tile<32>(float*)"): "base name",
        ("void tile<8>(float*)", "void tile<64>(float*)"): "base name",
        ("old_reduce(float*)", "new_reduce(float*)"): "order+config",
        ("old_scan(float*)", "new_scan(float*)"): "order+config",
    }
    assert (match.only_in_from, match.only_in_to) == (
        ("gone(float*)",),
        ("extra(float*)", "extra2(float*)"),
    )
    sgemm = next(t for t in result.kernels if t.name == "sgemm_naive(int, float*)")
    assert sgemm.speedup_vs_previous == (None, 2.0) and sgemm.matched_by == (None, "base name")
    # shown as the report shows names: return type dropped (advisor.render.display)
    assert sgemm.display_name == "sgemm_naive(int, float*) → sgemm_naive<32>(int, float*)"
    assert sgemm.title == "sgemm_naive(int, float*) → void sgemm_naive<32>(int, float*)"
    assert compare.unmatched_warnings(result) == [
        "a → b: kernel gone(float*) of a matches no kernel of b (pair it with --match OLD=NEW)",
        "a → b: kernel extra(float*) of b matches no kernel of a (pair it with --match OLD=NEW)",
        "a → b: kernel extra2(float*) of b matches no kernel of a (pair it with --match OLD=NEW)",
    ]
    # without launches (saved analyses) there is no order+config stage
    plain = compare.compare([("a", ["x"], before), ("b", ["y"], after)])
    assert plain.matches[0].count(compare.ORDER_CONFIG) == 0
    assert len(plain.matches[0].only_in_from) == 3 and len(plain.matches[0].only_in_to) == 4


def test_order_and_configuration_keeps_the_launch_order() -> None:
    """The stage aligns the two launch sequences: a kernel is never paired across another
    pair, a different configuration is never paired, an unknown one neither."""
    lb = {"a1": _launch(0, 8), "a2": _launch(1, 16), "a3": _launch(2, 32), "a4": _launch(3, None)}
    la = {"b1": _launch(0, 16), "b2": _launch(1, 32), "b3": _launch(2, 8), "b4": _launch(3, None)}
    pairs = compare.match_kernels(list(lb), list(la), lb, la)
    assert [(p.before, p.after, p.method, p.config) for p in pairs] == [
        ("a2", "b1", "order+config", (16, 256)),
        ("a3", "b2", "order+config", (32, 256)),
    ]


def test_launch_facts_from_a_profile_table() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "launch_id": [0, 1, 2, 3],
            "name": ["k", "j", "k", "m"],
            "start_ns": [30.0, 10.0, 40.0, float("nan")],
            "grid_x": [32, 4, 64, 2],
            "grid_y": [32, pd.NA, 1, 1],
            "grid_z": [1, 1, 1, 1],
            "block_x": [32, 128, 32, 256],
            "block_y": [32, 1, 32, 1],
            "block_z": [1, 1, 1, pd.NA],
        }
    )
    facts = compare.launch_facts(frame)
    assert facts == {
        "j": compare.KernelLaunch(0, 4, 128),  # launched first; an unknown grid_y counts as 1
        "k": compare.KernelLaunch(1, 1024, 1024),  # its first launch's configuration
        "m": compare.KernelLaunch(2, 2, 256),  # no start time: after those that have one
    }
    assert compare.launch_facts(frame.iloc[0:0]) == {}


def test_forced_match_comes_first_and_is_checked() -> None:
    before = _version(("alpha(int)", 100.0), ("beta(int)", 100.0))
    # two kernels left unmatched in b: the "last left" stage pairs nothing
    after = _version(("alpha(int)", 50.0), ("gamma(int)", 25.0), ("epsilon(int)", 5.0))
    versions = [("a", ["x"], before), ("b", ["y"], after)]
    # by base name (no parameter list) or by full name; it overrides the exact match
    result = compare.compare(versions, forced=[("beta", "alpha(int)")])
    (match,) = result.matches
    assert [(p.before, p.after, p.method) for p in match.pairs] == [
        ("beta(int)", "alpha(int)", "forced")
    ]
    assert match.only_in_from == ("alpha(int)",)
    assert match.only_in_to == ("gamma(int)", "epsilon(int)")
    with pytest.raises(compare.UsageError, match="no two consecutive versions"):
        compare.compare(versions, forced=[("delta", "gamma")])
    with pytest.raises(compare.UsageError, match="already paired"):
        compare.compare(versions, forced=[("alpha", "gamma"), ("beta", "gamma")])
    twins = _version(("void t<1>(int)", 1.0), ("void t<2>(int)", 1.0))
    with pytest.raises(compare.UsageError, match="base name of 2 kernels"):
        compare.compare([("a", ["x"], twins), ("b", ["y"], after)], forced=[("t", "gamma")])
    assert compare.parse_match("void k<(bool)1>(int)=k2") == ("void k<(bool)1>(int)", "k2")
    for bad in ("k", "=k", "k=", "a=b=c"):
        with pytest.raises(compare.UsageError, match="OLD=NEW"):
            compare.parse_match(bad)


def test_tracks_chain_renames_and_rejoin_after_a_gap() -> None:
    v1 = _version(("k(int)", 100.0), ("sometimes(int)", 10.0))
    v2 = _version(("void k<2>(int)", 50.0))
    v3 = _version(("k_fused(int)", 25.0), ("sometimes(int)", 5.0))
    result = compare.compare(
        [("v1", ["a"], v1), ("v2", ["b"], v2), ("v3", ["c"], v3)],
        forced=[("k", "k_fused")],
    )
    main_track, gapped = result.kernels
    assert main_track.names == ("k(int)", "void k<2>(int)", "k_fused(int)")
    assert main_track.matched_by == (None, "base name", "forced")
    assert main_track.speedup_vs_first == (None, 2.0, 4.0)
    assert main_track.speedup_vs_previous == (None, 2.0, 2.0)
    # missing from v2: unmatched in both pairs, but one track again in v3 by its exact name
    assert gapped.names == ("sometimes(int)", None, "sometimes(int)")
    assert gapped.speedup_vs_previous == (None, None, None)
    assert gapped.speedup_vs_first == (None, None, 2.0)
    assert [m.only_in_from for m in result.matches] == [("sometimes(int)",), ()]
    assert [m.only_in_to for m in result.matches] == [(), ("sometimes(int)",)]
    # the totals: 110 -> 50 -> 30 ns
    assert [v.speedup_vs_previous for v in result.versions] == [None, 2.2, 50 / 30]
    assert [v.speedup_vs_first for v in result.versions] == [None, 2.2, 110 / 30]


def _renamed(samples: Path, folder: Path, renames: dict[str, str]) -> Path:
    """The synthetic nvprof trace and metrics with kernels renamed, in ``folder``."""
    folder.mkdir()
    for source, target in (
        ("synthetic_nvprof_gputrace.csv", "trace.csv"),
        ("synthetic_nvprof_metrics.csv", "metrics.csv"),
    ):
        text = (samples / source).read_text(encoding="utf-8")
        for old, new in renames.items():
            text = text.replace(old, new)
        (folder / target).write_text(text, encoding="utf-8")
    return folder


COALESCED = "transposeCoalesced(float*, const float*, int, int)"


def test_cli_positional_versions_matching_warnings_and_outputs(
    samples: Path, tmp_path: Path
) -> None:
    base = f"{samples / 'synthetic_nvprof_gputrace.csv'},{samples / 'synthetic_nvprof_metrics.csv'}"
    # v2 renames transposeNaive (same launch configuration) and templates transposeCoalesced
    v2 = _renamed(
        samples,
        tmp_path / "tuned",
        {NAIVE: "transposeRenamed(float*, const float*, int, int)",
         COALESCED: "void transposeCoalesced<32>(float*, const float*, int, int)"},
    )  # fmt: skip
    js, out, md = tmp_path / "c.json", tmp_path / "c.html", tmp_path / "c.md"
    code, stdout, stderr = run(
        "compare", base, str(v2), "--json", str(js), "-o", str(out), "--markdown", str(md), "-q"
    )
    assert code == 0, stderr
    assert stdout == "" and stderr == ""  # every kernel matched: no warning
    data = json.loads(js.read_text(encoding="utf-8"))
    # labels from the first file's name and the folder's name
    assert [v["name"] for v in data["versions"]] == ["synthetic_nvprof_gputrace", "tuned"]
    assert (
        data["schema"] == "cuda-advisor/comparison@3"
        and data["baseline"] == data["versions"][0]["name"]
    )
    (matching,) = data["matching"]
    assert matching["counts"] == {
        "forced": 0,
        "exact": 1,
        "base name": 1,
        "operator": 0,
        "order+config": 1,
        "last left": 0,
    }
    methods = {p["from_kernel"]: (p["to_kernel"], p["matched_by"]) for p in matching["pairs"]}
    assert methods[NAIVE] == ("transposeRenamed(float*, const float*, int, int)", "order+config")
    assert methods[COALESCED][1] == "base name"
    naive = next(k for k in data["kernels"] if k["name"] == NAIVE)
    assert naive["matched_by"] == [None, "order+config"]
    assert naive["speedup_vs_previous"][1] == pytest.approx(1.0)
    ledger_pairs = data["prediction_ledger_pairs"][0]["kernels"]
    assert {k["matched_by"] for k in ledger_pairs} == {"exact", "base name", "order+config"}
    # total GPU-time speedup, the baseline and the matching in the HTML and the Markdown
    page, text = out.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")
    assert data["versions"][1]["speedup_vs_previous"] == pytest.approx(1.0)
    assert "| synthetic\\_nvprof\\_gputrace | " in text and "| baseline | baseline |" in text
    assert "| tuned | " in text and "| 1.00x | 1.00x |" in text
    # the kernel rows: the first version is the baseline, the second shows its speedup
    rows = [line for line in text.split("### Kernel matching")[0].splitlines() if "ms (" in line]
    assert len(rows) == 3
    assert all(row.split(" | ")[1].endswith("ms (baseline)") for row in rows)
    assert all(row.split(" | ")[2].endswith("ms (1.00x) |") for row in rows)
    assert "| synthetic\\_nvprof\\_gputrace → tuned | 0 | 1 | 1 | 0 | 1 | 0 | 0 |" in text
    assert (
        "| transposeNaive(float\\*, const float\\*, int, int) | transposeRenamed(float\\*, "
        "const float\\*, int, int) | order+config (16,384 blocks × 256 threads) |" in text
    )
    assert "| base name |" in text
    assert page.count('class="match-row"') == 1 and page.count('class="match-pair-row"') == 2
    assert '<td class="match">order+config</td>' in page
    assert '<td class="num">baseline</td>' in page

    # one kernel dropped from v3: a warning line for it, and --match pairs two others by force
    v3 = _renamed(samples, tmp_path / "v3", {NAIVE: "other(int)"})
    for part in ("trace.csv", "metrics.csv"):
        lines = (v3 / part).read_text(encoding="utf-8").splitlines()
        (v3 / part).write_text(
            "\n".join(line for line in lines if "transposeNoBankConflicts" not in line) + "\n",
            encoding="utf-8",
        )
    code, _, stderr = run(
        "compare", base, str(v3), "--label", "v1", "--label", "v3", "--json", str(js), "-q",
        "--match", f"{NAIVE}=other",
    )  # fmt: skip
    assert code == 0, stderr
    (warning,) = _warnings(stderr)
    assert warning == (
        "cuda-advisor: warning: v1 → v3: kernel transposeNoBankConflicts(float*, const float*, "
        "int, int) of v1 matches no kernel of v3 (pair it with --match OLD=NEW)"
    )
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["matching"][0]["counts"]["forced"] == 1
    assert data["matching"][0]["unmatched"]["only_in_from"] == [
        "transposeNoBankConflicts(float*, const float*, int, int)"
    ]


def test_cli_version_syntax_errors(samples: Path, tmp_path: Path) -> None:
    f = str(samples / "synthetic_nvprof_gputrace.csv")
    js = str(tmp_path / "c.json")
    for args, needle in (
        (["compare", f, "--version", f"v={f}", "--json", js], "not both"),
        (["compare", "--version", f"a={f}", "--version", f"b={f}", "--label", "x", "--json", js],
         "--label"),
        (["compare", f, f, "--label", "a", "--label", "b", "--label", "c", "--json", js],
         "3 --label values for 2 versions"),
        (["compare", "--json", js], "give the versions"),
        (["compare", f, f, "--label", "same", "--label", "same", "--json", js], "must differ"),
        (["compare", f, f, "--match", "nothing", "--json", js], "OLD=NEW"),
        (["compare", f, f, "--match", "nope=nada", "--json", js], "no two consecutive"),
        (["compare", f"v1={f}", f"v2={f}", "--json", js], "--label v1"),
    ):  # fmt: skip
        code, _, stderr = run(*args)
        assert code == 2, (args, stderr)
        assert_one_line_error(stderr, needle)


def test_positional_labels_are_told_apart(tmp_path: Path) -> None:
    for folder in ("run1", "run2"):
        (tmp_path / folder).mkdir()
    one, two = str(tmp_path / "run1" / "naive.ncu-rep"), str(tmp_path / "run2" / "naive.ncu-rep")
    assert compare.version_labels([one, str(tmp_path / "x.csv.gz")]) == ["naive", "x"]
    assert compare.version_labels([one, two]) == ["run1/naive", "run2/naive"]
    assert compare.version_labels([one, one]) == ["naive", "naive-2"]  # the same file twice
    assert compare.version_labels([one, two], ["before"]) == ["before", "naive"]
    assert compare.version_labels([f"{one},{two}", str(tmp_path / "run2")]) == ["naive", "run2"]


def test_same_file_twice_positionally(samples: Path, tmp_path: Path) -> None:
    f = str(samples / "synthetic_ncu_raw.csv")
    js = tmp_path / "c.json"
    code, _, stderr = run("compare", f, f, "--json", str(js), "-q")
    assert code == 0 and stderr == ""
    data = json.loads(js.read_text(encoding="utf-8"))
    names = [v["name"] for v in data["versions"]]
    assert len(set(names)) == 2 and names[1] == names[0] + "-2"
    assert data["versions"][1]["speedup_vs_previous"] == 1.0


def test_real_cudacode_pair_is_matched(real_profiles: Path, tmp_path: Path) -> None:
    """The issue's case: naive_gemm and sgemm_global_mem_coalesce differ in name and base name
    and in block shape (32x32 vs 1024x1), but launch first with 32x32 blocks of 1024 threads."""
    folder = real_profiles / "reports" / "CudaCode"
    js, md, out = tmp_path / "c.json", tmp_path / "c.md", tmp_path / "c.html"
    code, _, stderr = run(
        "compare", str(folder / "naive.ncu-rep"), str(folder / "global_mem_coalesce.ncu-rep"),
        "--json", str(js), "--markdown", str(md), "-o", str(out), "-q",
    )  # fmt: skip
    assert code == 0, stderr
    assert "warning" not in stderr
    data = json.loads(js.read_text(encoding="utf-8"))
    assert [v["name"] for v in data["versions"]] == ["naive", "global_mem_coalesce"]
    (track,) = data["kernels"]
    assert track["names"][0].startswith("naive_gemm(")
    assert track["names"][1].startswith("sgemm_global_mem_coalesce(")
    assert track["matched_by"] == [None, "order+config"]
    assert track["speedup_vs_previous"][1] == pytest.approx(9.582 / 9.295, rel=1e-3)
    assert data["versions"][0]["speedup_vs_previous"] is None
    assert data["versions"][1]["speedup_vs_previous"] == pytest.approx(9.582 / 9.295, rel=1e-3)
    assert data["matching"][0]["unmatched"] == {"only_in_from": [], "only_in_to": []}
    (pair,) = data["matching"][0]["pairs"]
    assert (pair["grid_blocks"], pair["block_threads"]) == (1024, 1024)
    text = md.read_text(encoding="utf-8")
    assert "| naive | 9.582 ms | baseline | baseline |" in text
    assert f"| global\\_mem\\_coalesce | 9.295 ms | {9.582 / 9.295:.2f}x |" in text
    assert "n/a | n/a" not in text.split("### Kernel matching")[0]
    assert "order+config (1,024 blocks × 1,024 threads)" in out.read_text(encoding="utf-8")
    assert "| order+config (1,024 blocks × 1,024 threads) |" in text
