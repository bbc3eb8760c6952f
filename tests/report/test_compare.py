"""``cuda-advisor compare``: kernels matched by name across versions, measured speedups, the
prediction ledger, the --max-regression gate, escaping and determinism."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner

from advisor.cli import main
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
        crit = {c: {"value": None, "potential_speedup": None} for c in compare.CRITERIA}
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
