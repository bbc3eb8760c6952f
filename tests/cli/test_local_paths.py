"""No directory of this machine in any output (advisor/report/local_paths.py, docs/report.md):
an input given by an absolute path is written as its base name, a relative one as given."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import main
from advisor.report.local_paths import hide, replacements, shown_path

GPUTRACE, METRICS = "synthetic_nvprof_gputrace.csv", "synthetic_nvprof_metrics.csv"


def _machine_dirs(*more: Path) -> list[str]:
    """Directories of this machine no output may name (the test's folders, the checkout, the
    working directory, the home folder)."""
    repo = Path(__file__).resolve().parents[2]
    dirs = {str(repo), str(repo.parent), os.getcwd(), os.path.expanduser("~"), *map(str, more)}
    return sorted(d for d in dirs if d not in ("/", ""))


def _outputs(folder: Path) -> dict[str, str]:
    return {str(p): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def _assert_no_local_dir(folder: Path, dirs: list[str]) -> None:
    outputs = _outputs(folder)
    assert outputs, "no output written"
    for name, text in outputs.items():
        for d in dirs:
            for spelled in (d, json.dumps(d)[1:-1]):
                assert spelled not in text, f"{name} holds the local directory {d}"


def _inputs(tmp_path: Path, samples: Path) -> Path:
    """The sample pair under ``tmp_path/in`` plus a trace with a negative duration (its drop
    note names the file) under ``tmp_path/bad``."""
    (tmp_path / "in").mkdir()
    (tmp_path / "bad").mkdir()
    for name in (GPUTRACE, METRICS):
        shutil.copy(samples / name, tmp_path / "in" / name)
    lines = (samples / GPUTRACE).read_text().splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if "transposeNaive" in line)
    start, duration, rest = lines[row].split(",", 2)
    lines[row] = f"{start},-{duration},{rest}"
    (tmp_path / "bad" / "trace.csv").write_text("".join(lines))
    return tmp_path


def _run(args: list[str]) -> None:
    result = CliRunner().invoke(main, [*args, "-q"])
    assert result.exit_code in (0, 4), result.output + result.stderr


def test_report_per_file_and_compare_from_absolute_paths_name_no_local_directory(
    tmp_path: Path, samples: Path
) -> None:
    base = _inputs(tmp_path, samples)
    out = tmp_path / "out"
    out.mkdir()
    pair = [str(base / "in" / GPUTRACE), str(base / "in" / METRICS)]
    bad = str(base / "bad" / "trace.csv")
    for stem, files in (("pair", pair), ("bad", [bad])):
        _run(["report", *files, "-o", str(out / f"{stem}.html"), "--markdown",
              str(out / f"{stem}.md"), "--json", str(out / f"{stem}.json"),
              "--sarif", str(out / f"{stem}.sarif")])  # fmt: skip
    folders = [str(out / kind) for kind in ("pf_html", "pf_md", "pf_json")]
    for folder in folders:
        os.mkdir(folder)
    _run(["report", "--per-file", str(base / "in"), str(base / "bad"), "-o", folders[0],
          "--markdown", folders[1], "--json", folders[2], "--jobs", "1"])  # fmt: skip
    _run(["compare", pair[0], str(base / "bad"), "-o", str(out / "c.html"), "--markdown",
          str(out / "c.md"), "--json", str(out / "c.json")])  # fmt: skip
    _assert_no_local_dir(out, _machine_dirs(tmp_path))
    # the inputs and the drop note are still named, by base name
    data = json.loads((out / "pair.json").read_text())
    assert [i["path"] for i in data["inputs"]] == [GPUTRACE, METRICS]
    bad_data = json.loads((out / "bad.json").read_text())
    assert any(n.startswith("trace.csv: kernel launch row") for n in bad_data["notes"])
    assert "trace.csv: kernel launch row" in (out / "bad.md").read_text()
    versions = json.loads((out / "c.json").read_text())["versions"]
    assert [v["files"] for v in versions] == [[GPUTRACE], ["trace.csv"]]


def test_relative_inputs_are_written_as_given(
    tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _inputs(tmp_path, samples)
    monkeypatch.chdir(tmp_path)
    _run(["report", f"in/{GPUTRACE}", f"in/{METRICS}", "--json", "r.json", "-o", "r.html"])
    _run(["compare", f"in/{GPUTRACE}", "bad", "--json", "c.json"])
    data = json.loads(Path("r.json").read_text())
    assert [i["path"] for i in data["inputs"]] == [f"in/{GPUTRACE}", f"in/{METRICS}"]
    versions = json.loads(Path("c.json").read_text())["versions"]
    assert [v["files"] for v in versions] == [[f"in/{GPUTRACE}"], ["bad/trace.csv"]]
    for name in ("r.json", "r.html", "c.json"):
        assert str(tmp_path) not in Path(name).read_text()


def test_a_real_nsight_compute_report_and_its_sarif(tmp_path: Path, real_profiles: Path) -> None:
    rep = (real_profiles / "reports" / "seq_align" / "profile.ncu-rep").absolute()
    _run(["report", str(rep), "-o", str(tmp_path / "r.html"), "--markdown",
          str(tmp_path / "r.md"), "--json", str(tmp_path / "r.json"),
          "--sarif", str(tmp_path / "r.sarif")])  # fmt: skip
    _assert_no_local_dir(tmp_path, _machine_dirs(real_profiles, tmp_path))
    assert json.loads((tmp_path / "r.json").read_text())["inputs"][0]["path"] == "profile.ncu-rep"


def test_hide_covers_every_escaping_and_the_longest_path_first(tmp_path: Path) -> None:
    folder = tmp_path / "a&b é"
    file = folder / "x_y.csv"
    assert shown_path(str(file)) == "x_y.csv" and shown_path("rel/x.csv") == "rel/x.csv"
    assert shown_path(str(folder) + "/") == "a&b é"
    pairs = dict(replacements([str(folder), str(file)]))
    assert pairs[str(file)] == "x_y.csv" and pairs[str(folder)] == "a&b é"
    for text in (
        f"note: {file}: dropped",  # as is (and in a code span)
        json.dumps({"path": str(file)}),  # JSON escapes the é
        f"<li>{str(file).replace('&', '&amp;')}</li>",  # HTML
        str(file).replace("_", r"\_").replace("&", "&amp;"),  # Markdown prose
    ):
        hidden = hide(text, [str(file)])
        assert str(tmp_path) not in hidden and json.dumps(str(tmp_path))[1:-1] not in hidden
        assert "x" in hidden and "y.csv" in hidden
    # a file inside a folder given on the command line: the file's own rule wins
    assert hide(f"{file} and {folder}/z.csv", [str(folder), str(file)]) == "x_y.csv and a&b é/z.csv"
