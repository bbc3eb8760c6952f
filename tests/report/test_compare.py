"""``cuda-advisor compare``: kernels matched by name across versions, measured speedups, the
prediction ledger (and its scoring with :mod:`advisor.validation`, the benchmark's statistics),
unmatched kernels, the --max-regression gate, escaping and determinism."""

from __future__ import annotations

import csv
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
from advisor.report import compare

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
    assert naive["speedup_vs_first"][0] == 1.0
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
    for run in ("a", "b"):
        out = tmp_path / f"{run}.html"
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
        "overall": [(2.5, 200 / 125), (1.5, 100 / 110), (1.2, 80 / 40)],
        "addressed": {
            "k1": ("SHMEM_EFFICIENCY", 1.8, 200 / 125),
            "k2": ("L1_GRANULARITY", 2.0, 100 / 110),
        },
        "only_in_from": ["gone<T>"],
        "only_in_to": ["new"],
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
        assert _summary(pair["overall"]) == validation.summarize(overall)
        assert _summary(pair["addressed"]) == validation.summarize(addressed)
        bounded = [(p, m) for p, m in overall if p is not None]
        assert pair["overall"]["bounds_share"] == validation.bounds_share(
            [p for p, _ in bounded], [m for _, m in bounded]
        )
        assert pair["unmatched"] == {
            "only_in_from": want["only_in_from"],
            "only_in_to": want["only_in_to"],
        }
        for k, (p, m) in zip(pair["kernels"], overall, strict=True):
            assert k["measured_speedup"] == pytest.approx(m, rel=1e-12)
            assert k["overall_predicted"] == p
            expected = None if p is None else validation.error_factor(p, m)
            assert k["overall_error_factor"] == pytest.approx(expected, rel=1e-12)
            criterion, p_addr, m_addr = want["addressed"].get(k["kernel"], (None, None, None))
            assert (k["addressed_criterion"], k["addressed_predicted"]) == (criterion, p_addr)
            if criterion is None:
                assert k["addressed_error_factor"] is None
            else:
                assert k["addressed_error_factor"] == pytest.approx(
                    validation.error_factor(p_addr, m_addr), rel=1e-12
                )
    # a -> b: k1 overall 2.5 vs 1.6, k2 1.5 vs 0.909, k3 1.2 vs 2.0 -> 2 of 3 bound the gain
    assert pairs[0]["overall"]["bounds_share"] == pytest.approx(2 / 3)
    assert pairs[1]["overall"]["dropped"] == 1  # k2 has no overall estimate in b
    # the same figures, formatted, in the Markdown and the HTML
    text, page = md.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    first = validation.summarize(EXPECTED[("a", "b")]["overall"])
    assert first.median_error_factor is not None and first.within_25 is not None
    row = (
        f"| a → b | overall potential | 3 | {first.median_error_factor:.2f}× | "
        f"{100 * first.within_25:.0f} % | {first.sign_agree}/{first.sign_counted} "
    )
    assert row in text
    assert "| k1 | a → b | 1.60× | 2.50× | 1.56× | SHMEM_EFFICIENCY | 1.80× | 1.12× |" in text
    assert "only in a (1): gone&lt;T&gt;" in text and "only in b (1): k3" in text
    assert "only in b (1): new" in text
    assert page.count('class="ledger-summary-row"') == 4
    assert page.count('class="ledger-kernel-row"') == 6  # 3 matched kernels per pair
    assert 'title="gone&lt;T&gt;"' in page and "only in a (1)" in page
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
