"""Values, text and scale: infinite, missing and negative times are dropped with a note naming
the row where rows become a Profile; text UTF-8 cannot write is escaped there; every output
shows invisible characters escaped and links nothing; a trace of many distinct kernel names
gives bounded outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest

import parsers
from advisor.criteria import evaluate, to_json
from advisor.criteria.engine.folding import KERNELS_MAX
from advisor.profile import Profile, Provenance
from advisor.render import markdown as md
from advisor.render import report as render
from advisor.report import build as report
from benchmarks.gen_nsys import write_nsys_distinct_names
from tests.cli_helpers import assert_one_line_error, run
from tests.render.test_markdown import markdown_renderer

SAMPLES = Path(__file__).resolve().parents[2] / "sample_profiles"
HTML_LIMIT_BYTES = 5_000_000


def _data_lines(sample: str) -> tuple[list[str], list[str]]:
    """(the lines up to and including the header or units row, the data rows) of a sample."""
    lines = (SAMPLES / sample).read_text(encoding="utf-8").splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith(('"Start"', "Start (ns)")))
    head = first + 2 if lines[first].startswith('"Start"') else first + 1  # nvprof: units row
    return lines[:head], lines[head:]


def _with_durations(sample: str, durations: dict[int, str], out: Path) -> Path:
    """The sample trace with the Duration cell (second field) of data row i set."""
    head, rows = _data_lines(sample)
    for i, value in durations.items():
        start, _, rest = rows[i].split(",", 2)
        rows[i] = f"{start},{value},{rest}"
    out.write_text("\n".join([*head, *rows]) + "\n", encoding="utf-8")
    return out


def _kernel_rows(sample: str) -> list[int]:
    _, rows = _data_lines(sample)
    return [i for i, r in enumerate(rows) if "CUDA mem" not in r]


@pytest.mark.parametrize(
    ("sample", "scale_ns"),
    [("synthetic_nsys_cuda_gpu_trace.csv", 1.0), ("synthetic_nvprof_gputrace.csv", 1e3)],
)
def test_infinite_and_negative_durations_are_dropped_with_a_note(
    tmp_path: Path, sample: str, scale_ns: float
) -> None:
    kernels = _kernel_rows(sample)
    bad = {kernels[0]: "1e309", kernels[1]: "-500", kernels[2]: "inf"}
    path = _with_durations(sample, bad, tmp_path / "bad.csv")
    good = parsers.read(SAMPLES / sample)
    profile = parsers.read(path)
    assert len(profile.launches) == len(good.launches) - 3
    notes = [n for p in profile.provenance for n in p.notes if n.endswith(": dropped")]
    assert len(notes) == 3
    # the first kernel launch row of the file is launch row 1 of the profile
    assert notes[0].startswith(f"{path}: kernel launch row 1 (")
    assert "duration inf: dropped" in notes[0]
    assert "duration -" in notes[1]
    kept = good.launches["launch_id"].isin(profile.launches["launch_id"] + 3)
    expected_ns = good.launches["duration_ns"][3:].sum()  # the three dropped are the first three
    assert not kept.empty
    assert profile.launches["duration_ns"].sum() == pytest.approx(expected_ns)
    out = tmp_path / "r"
    code, _, err = run("report", str(path), "--json", f"{out}.json", "-o", f"{out}.html",
                       "--markdown", f"{out}.md")  # fmt: skip
    assert code == 0, err
    data = json.loads(Path(f"{out}.json").read_text(encoding="utf-8"))
    assert data["application"]["gpu_time_ns"] == pytest.approx(expected_ns)
    assert all(0 <= (k["share_of_gpu_time"] or 0) <= 1 for k in data["kernels"])
    assert any("duration inf: dropped" in n for n in data["notes"])
    assert "Axis limits" not in err and "Warning" not in err


def test_a_missing_duration_counts_without_a_time(tmp_path: Path) -> None:
    sample = "synthetic_nsys_cuda_gpu_trace.csv"
    path = _with_durations(sample, {_kernel_rows(sample)[0]: "nan"}, tmp_path / "nan.csv")
    profile = parsers.read(path)
    assert profile.launches["duration_ns"].isna().sum() == 1
    assert any("a start but no duration" in n for p in profile.provenance for n in p.notes)
    code, _, err = run("report", str(path), "--json", str(tmp_path / "r.json"),
                       "-o", str(tmp_path / "r.html"))  # fmt: skip
    assert code == 0, err
    assert "Warning" not in err


def test_every_kernel_row_bad_is_exit_3(tmp_path: Path) -> None:
    sample = "synthetic_nsys_cuda_gpu_trace.csv"
    path = _with_durations(
        sample, dict.fromkeys(_kernel_rows(sample), "inf"), tmp_path / "allbad.csv"
    )
    code, _, err = run("report", str(path), "--json", str(tmp_path / "r.json"))
    assert code == 3
    assert_one_line_error(err, str(path), "no usable kernel data", "duration inf")


def test_overlapping_rows_on_one_stream_do_not_crash(tmp_path: Path) -> None:
    head, rows = _data_lines("synthetic_nsys_cuda_gpu_trace.csv")
    start = rows[0].split(",", 1)[0]
    same = [f"{start},{r.split(',', 1)[1]}" for r in rows]  # every row starts at one time
    path = tmp_path / "overlap.csv"
    path.write_text("\n".join([*head, *same]) + "\n", encoding="utf-8")
    for command in (["report", "--json", "r.json", "-o", "r.html"], ["streams"]):
        args = [command[0], str(path), *(str(tmp_path / a) if a.startswith("r.") else a
                                          for a in command[1:])]  # fmt: skip
        code, _, err = run(*args)
        assert code in (0, 3), err
        assert "internal error" not in err


def _profile_named(*names: str) -> Profile:
    launches = pd.DataFrame(
        {
            "launch_id": range(len(names)),
            "name": pd.Series(list(names), dtype=object),
            "stream": 7,
            "start_ns": [1000.0 * i for i in range(len(names))],
            "duration_ns": 500.0,
        }
    )
    path = "trace-\udcff.csv"  # a file name that is not UTF-8 (surrogate-escaped by Python)
    return Profile(provenance=(Provenance(path, "nsys-csv", "nsys"),), launches=launches)


def _outputs(profile: Profile) -> tuple[str, str, str]:
    analysis = evaluate(profile)
    built = report.build(analysis, profile)
    data = to_json(analysis)
    text = json.dumps(data, allow_nan=False)
    return render.html(built), md.markdown(built), text


def test_lone_surrogates_are_escaped_where_the_profile_is_built(tmp_path: Path) -> None:
    profile = _profile_named("k\udcff\ud800(int)", "plain(int)")
    assert profile.path == "trace-\\udcff.csv"
    assert "k\\udcff\\ud800(int)" in profile.kernel_names()
    html, markdown, text = _outputs(profile)
    for name, content in (("r.html", html), ("r.md", markdown), ("r.json", text)):
        (tmp_path / name).write_text(content, encoding="utf-8")  # every writer can write it
    assert "k\\udcff\\ud800(int)" in html


def test_invisible_and_direction_characters_are_shown_escaped() -> None:
    hidden = "\u200b\u200f\u061c\u202a\u202e\u2066\u2069\ufeff"
    html, markdown, _ = _outputs(_profile_named(f"z{hidden}k(int)", "plain(int)"))
    for output in (html, markdown):
        assert not any(ch in output for ch in hidden)
        assert "\\u200b" in output and "\\u061c" in output and "\\ufeff" in output


def test_markdown_links_and_mentions_nothing() -> None:
    names = ("https://x.y/k(int)", "www.x.y(int)", "@user(int)")
    _, markdown, _ = _outputs(_profile_named(*names))
    renderer = markdown_renderer()
    tokens = renderer.parse(markdown)
    links = [t for tok in tokens for t in (tok.children or []) if t.type == "link_open"]
    assert links == []
    for text in (md.md_escape(f"see {n} and mail a@b.c") for n in names):
        assert "<a " not in renderer.render(text)
        assert "@" not in text


def test_many_distinct_names_give_bounded_outputs(tmp_path: Path) -> None:
    path = tmp_path / "names.csv"
    write_nsys_distinct_names(path, 22_000, 0)
    profile = parsers.read(path)
    names = len(profile.kernel_names())
    assert names > 19_000
    analysis = evaluate(profile)
    assert len(analysis.kernels) == KERNELS_MAX
    other = analysis.application.other_kernels
    assert other is not None and other.kernels == names - KERNELS_MAX
    assert analysis.application.kernels == names
    assert analysis.application.launches == len(profile.launches)
    total = float(profile.launches["duration_ns"].sum())
    assert analysis.application.gpu_time_ns == pytest.approx(total)
    folded = [n for n in analysis.notes if "folded" in n]
    assert folded and f"{names - KERNELS_MAX:,} kernels" in folded[0]
    html = render.html(report.build(analysis, profile))
    assert len(html.encode("utf-8")) < HTML_LIMIT_BYTES
    assert re.search(r"folded into application\.other_kernels", html)
    assert f"{names - 220:,} more kernels" in html


class _Metric:
    def __init__(self, value: object) -> None:
        self.value = value

    def has_value(self) -> bool:
        return True

    def kind(self) -> int:
        return 2 if isinstance(self.value, str) else 1

    def unit(self) -> str:
        return "nsecond" if not isinstance(self.value, str) else ""

    def as_string(self) -> str:
        return str(self.value)

    def as_double(self) -> float:
        return float(self.value)  # type: ignore[arg-type]


class _Result:
    """A rule result whose strings hold lone surrogates (a damaged report)."""

    def has_rule_message(self) -> bool:
        return True

    def rule_message(self) -> dict[str, object]:
        return {"type": 1, "title": "t\udcff", "message": "broken \ud800 message"}

    def has_speedup_estimation(self) -> bool:
        return False

    def section_identifier(self) -> str:
        return "SpeedOfLight"

    def rule_identifier(self) -> str:
        return "Rule\udc80"


class _Action:
    NameBase_DEMANGLED = 1
    metrics: ClassVar[dict[str, _Metric]] = {
        "gpu__time_duration.sum": _Metric(1500.0),
        "device__attribute_display_name": _Metric("GPU \udcff"),
    }

    def name(self, base: int | None = None) -> str:
        return "k\udcff(int)"

    def metric_names(self) -> list[str]:
        return list(self.metrics)

    def metric_by_name(self, name: str) -> _Metric:
        return self.metrics[name]

    def rule_results(self) -> list[_Result]:
        return [_Result()]


class _Module:
    class IMetric:
        ValueKind_DOUBLE = 1
        ValueKind_STRING = 2


def test_damaged_report_strings_are_escaped_where_they_are_read(tmp_path: Path) -> None:
    from advisor import ncu_read
    from parsers.ncu import rep

    kinds = ncu_read.value_kinds(_Module)
    action = ncu_read.read_action(_Module, _Action(), kinds)
    assert action is not None and action.name == "k\\udcff(int)"
    layout = rep.scan(b"")  # no layout facts needed beyond defaults
    profile = rep._profile("damaged.ncu-rep", layout, [action], "test")
    assert profile.rules["description"].str.contains("\\ud800", regex=False).all()
    html, markdown, text = _outputs(profile)
    for name, content in (("r.html", html), ("r.md", markdown), ("r.json", text)):
        (tmp_path / name).write_text(content, encoding="utf-8")


def test_the_wrote_line_counts_folded_kernels_too(tmp_path: Path) -> None:
    path = tmp_path / "names.csv"
    write_nsys_distinct_names(path, 1_500, 0)
    names = len(parsers.read(path).kernel_names())
    assert names > KERNELS_MAX  # some kernels are folded
    out = tmp_path / "r.json"
    code, stdout, stderr = run("report", str(path), "--json", str(out))
    assert code == 0, stderr
    assert f"wrote {out}: {names:,} kernels" in stdout
    data = json.loads(out.read_text())
    assert len(data["kernels"]) == KERNELS_MAX
    assert data["application"]["other_kernels"]["kernels"] == names - KERNELS_MAX
