"""``report DIR --per-file`` (advisor/report/batch.py, batch_index.py, cli_batch.py): one report per
profile, an index, the same bytes as ``report FILE``, whatever --jobs is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from advisor import pipeline, progress
from advisor.report import batch
from tests.cli.test_progress import ERASE, FakeTerminal, line
from tests.cli_helpers import run

#: the synthetic samples copied into the batch folder, by relative path
PROFILES = {
    "nvprof_trace.csv": "synthetic_nvprof_gputrace.csv",
    "ncu/raw.csv": "synthetic_ncu_raw.csv",
    "ncu/deep/nsys trace.csv": "synthetic_nsys_cuda_gpu_trace.csv",
}
JUNK_REASON = "unrecognised content (known formats: "


def make_runs(folder: Path, samples: Path) -> Path:
    """A folder of three profiles (nested), a junk file and a hidden file."""
    for rel, sample in PROFILES.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(samples / sample, folder / rel)
    (folder / "notes.txt").write_text("this is not a profile\n")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "hidden.csv").write_text("ignored\n")
    return folder


@pytest.fixture
def runs(tmp_path: Path, samples: Path) -> Path:
    return make_runs(tmp_path / "runs", samples)


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> tuple[Path, Path, tuple]:
    """One --jobs 1 run writing every format into one folder: (runs, out, run() result)."""
    base = tmp_path_factory.mktemp("full")
    folder, out = make_runs(base / "runs", samples), base / "out"
    result = run(
        "report", str(folder), "--per-file", "--jobs", "1", "-o", str(out),
        "--markdown", str(out), "--json", str(out),
    )  # fmt: skip
    return folder, out, result


def index_json(folder: Path) -> dict:
    return json.loads((folder / "index.json").read_text())


def test_index_lists_every_profile_and_the_junk_file(full: tuple[Path, Path, tuple]) -> None:
    runs, out, (code, stdout, stderr) = full
    assert code == 0, stderr
    summary = "4 profiles: 3 reported, 1 skipped"
    assert stdout == "".join(
        f"wrote {out}/index.{suffix}: {summary}\n" for suffix in ("html", "md", "json")
    )
    assert stderr.startswith(f"cuda-advisor: skipped {runs}/notes.txt: {JUNK_REASON}")
    assert len(stderr.splitlines()) == 1
    data = index_json(out)
    assert data["summary"] == {"profiles": 4, "reported": 3, "skipped": 1, "failed": 0}
    rows = {p["path"]: p for p in data["profiles"]}
    # sorted by path; the hidden folder is not searched
    assert [p["path"] for p in data["profiles"]] == [
        "ncu/deep/nsys trace.csv",
        "ncu/raw.csv",
        "notes.txt",
        "nvprof_trace.csv",
    ]
    assert rows["notes.txt"]["status"] == "skipped"
    assert rows["notes.txt"]["reason"].startswith(JUNK_REASON)
    assert rows["notes.txt"]["report"] is None
    assert rows["ncu/raw.csv"]["format"] == "ncu-csv (raw)"
    assert rows["ncu/deep/nsys trace.csv"]["report"] == "ncu__deep__nsys trace.csv.json"
    for rel in PROFILES:
        row = rows[rel]
        own = json.loads((out / row["report"]).read_text())
        assert row["status"] == "reported"
        assert row["kernels"] == own["application"]["kernels"] == 3
        assert row["gpu_time_ns"] == own["application"]["gpu_time_ns"]
        assert row["potential_speedup"] == own["application"]["potential_speedup"]
        assert (out / (row["name"] + ".html")).is_file()
    # the trace's only hint is HOSTSYNC (application level: no kernel name in front)
    assert rows["nvprof_trace.csv"]["top_hint"].startswith(
        "the GPU idles between kernels (host synchronization) [HOSTSYNC = "
    )
    html = (out / "index.html").read_text()
    assert html.count('class="profile-row reported"') == 3
    assert html.count('class="profile-row skipped"') == 1
    assert '<a href="ncu__deep__nsys%20trace.csv.html">ncu/deep/nsys trace.csv</a>' in html
    md = (out / "index.md").read_text()
    assert "| [ncu/raw.csv](ncu__raw.csv.md) | ncu-csv (raw) | 3 | 3 | " in md


def test_each_report_equals_what_report_file_writes(
    full: tuple[Path, Path, tuple], tmp_path: Path
) -> None:
    runs, out, _ = full
    outs = [str(tmp_path / n) for n in ("r.html", "r.md", "r.json")]
    code, _, stderr = run(
        "report", str(runs / "ncu/raw.csv"), "-o", outs[0], "--markdown", outs[1], "--json", outs[2]
    )  # fmt: skip
    assert code == 0, stderr
    for suffix in ("html", "md", "json"):
        mine = (out / f"ncu__raw.csv.{suffix}").read_bytes()
        assert mine == (tmp_path / f"r.{suffix}").read_bytes()


def test_jobs_do_not_change_a_byte(full: tuple[Path, Path, tuple], tmp_path: Path) -> None:
    runs, out1, _ = full
    out2 = tmp_path / "out2"
    code, _, stderr = run(
        "report", str(runs), "--per-file", "--jobs", "2", "-o", str(out2),
        "--markdown", str(out2), "--json", str(out2),
    )  # fmt: skip
    assert code == 0, stderr
    first, second = ({p.name: p.read_bytes() for p in sorted(o.iterdir())} for o in (out1, out2))
    assert len(first) == 3 * 3 + 3  # three reports in three formats, three indexes
    assert first == second


def test_exit_code_3_when_nothing_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "junk"
    folder.mkdir()
    (folder / "a.txt").write_text("nothing\n")
    (folder / "b.csv").write_text("")
    out = tmp_path / "out"
    code, _, stderr = run("report", str(folder), "--per-file", "--jobs", "1", "--json", str(out))
    assert code == 3
    assert [ln.split(": ")[1] for ln in stderr.splitlines()] == [
        f"skipped {folder}/a.txt",
        f"skipped {folder}/b.csv",
    ]
    data = index_json(out)
    assert data["summary"] == {"profiles": 2, "reported": 0, "skipped": 2, "failed": 0}
    assert [p["reason"] for p in data["profiles"]][1] == "the file is empty"


def test_exit_code_4_when_a_gate_fails_for_one_profile(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, stderr = run(
        "report", str(runs), "--per-file", "--jobs", "1", "--json", str(out),
        "--fail-if", "potential_speedup>7", "-q",
    )  # fmt: skip
    assert code == 4
    gate = [ln for ln in stderr.splitlines() if "gate failed" in ln]
    # only the nsys trace (1 / HOSTSYNC = 8.0: its GPU idles between kernels) exceeds 7; the ncu
    # raw sample (2.0) and the nvprof trace (5.76) do not (Decision A1)
    assert gate == [
        f"cuda-advisor: {runs}/ncu/deep/nsys trace.csv: gate failed: potential_speedup>7 "
        "(application: potential_speedup = 8.007)"
    ]
    rows = {p["path"]: p for p in index_json(out)["profiles"]}
    assert rows["ncu/deep/nsys trace.csv"]["gate_failures"] == [gate[0].split(": ", 2)[2]]
    assert rows["ncu/raw.csv"]["gate_failures"] == []
    assert rows["nvprof_trace.csv"]["gate_failures"] == []


def test_a_bug_fails_one_profile_and_exit_1(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pipeline.evaluate

    def flaky(profile, *args, **kwargs):  # type: ignore[no-untyped-def]
        if "raw.csv" in profile.path:
            raise ZeroDivisionError("boom")
        return real(profile, *args, **kwargs)

    monkeypatch.setattr(pipeline, "evaluate", flaky)
    out = tmp_path / "out"
    code, _, stderr = run("report", str(runs), "--per-file", "--jobs", "1", "--json", str(out))
    assert code == 1
    assert f"cuda-advisor: failed {runs}/ncu/raw.csv: internal error: ZeroDivisionError: boom" in (
        stderr
    )
    assert index_json(out)["summary"] == {"profiles": 4, "reported": 2, "skipped": 1, "failed": 1}
    assert (out / "nvprof_trace.csv.json").is_file()
    assert not (out / "ncu__raw.csv.json").exists()


def test_folder_without_per_file_says_how(runs: Path, tmp_path: Path) -> None:
    code, _, stderr = run("report", str(runs), "--json", str(tmp_path / "a.json"))
    assert code == 3
    assert stderr == (
        f"cuda-advisor: error: {runs}: is a folder; give its profile files, or --per-file for "
        "one report per file\n"
    )


def test_usage_errors(runs: Path, tmp_path: Path) -> None:
    trace = str(runs / "nvprof_trace.csv")
    code, _, err = run("report", trace, "--jobs", "2", "--json", str(tmp_path / "a.json"))
    assert (code, err) == (2, "cuda-advisor: error: report: --jobs works with --per-file only\n")
    code, _, err = run("report", trace, "--json", str(tmp_path))
    assert code == 2 and "is a folder; give a file name" in err
    code, _, err = run("report", str(runs), "--per-file", "--json", str(runs))
    assert code == 2 and "is also an output folder" in err
    a_file = tmp_path / "taken"
    a_file.write_text("")
    code, _, err = run("report", str(runs), "--per-file", "--json", str(a_file))
    assert code == 2 and "not a folder" in err
    code, _, err = run("report", str(tmp_path / "nope"), "--per-file", "--json", str(tmp_path))
    assert (code, err) == (3, f"cuda-advisor: error: {tmp_path}/nope: no such file or folder\n")
    code, _, err = run("report", str(runs), "--per-file", "--jobs", "0", "--json", "o")
    assert code == 2


def test_an_output_that_would_replace_an_input_is_refused(tmp_path: Path, samples: Path) -> None:
    shutil.copy(samples / "synthetic_ncu_raw.csv", tmp_path / "a.csv")
    shutil.copy(samples / "synthetic_ncu_raw.csv", tmp_path / "a.csv.json")
    before = (tmp_path / "a.csv.json").read_bytes()
    code, _, err = run(
        "report", str(tmp_path / "a.csv"), str(tmp_path / "a.csv.json"), "--per-file",
        "--json", str(tmp_path),
    )  # fmt: skip
    assert code == 2 and "refusing to overwrite an input file" in err
    assert (tmp_path / "a.csv.json").read_bytes() == before


def test_names_paths_and_clashes(tmp_path: Path) -> None:
    for rel in ("a/b.csv", "a__b.csv", "A__B.csv", "index", "x/.hidden", "out/old.html"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    jobs = batch.find_profiles([str(tmp_path)], exclude=[str(tmp_path / "out")])
    assert [(j.rel, j.name) for j in jobs] == [
        ("A__B.csv", "A__B.csv"),
        ("a/b.csv", "a__b.csv-2"),
        ("a__b.csv", "a__b.csv-3"),
        ("index", "index-2"),
    ]
    assert jobs[1].path == str(tmp_path / "a" / "b.csv")
    # two folders: names relative to their common parent; a file reached twice counts once
    both = batch.find_profiles([str(tmp_path / "a"), str(tmp_path), str(tmp_path / "a/b.csv")])
    assert [j.rel for j in both] == ["A__B.csv", "a/b.csv", "a__b.csv", "index", "out/old.html"]


def test_hostile_file_names_are_escaped(tmp_path: Path, samples: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    hostile = "<img src=x onerror=alert(1)>.csv"
    shutil.copy(samples / "synthetic_ncu_raw.csv", folder / hostile)
    out = tmp_path / "out"
    code, _, err = run(
        "report", str(folder), "--per-file", "--jobs", "1", "-o", str(out),
        "--markdown", str(out),
    )  # fmt: skip
    assert code == 0, err
    html = (out / "index.html").read_text()
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;.csv" in html
    assert 'href="%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.csv.html"' in html
    assert "<img" not in (out / "index.md").read_text()


def test_progress_counts_profiles_on_a_terminal(
    tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text("nothing\n")  # 8 bytes
    shutil.copy(samples / "synthetic_nvprof_gputrace.csv", folder / "b.csv")
    terminal = FakeTerminal()
    monkeypatch.setattr(progress, "stderr", lambda: terminal)
    monkeypatch.setattr(progress, "LARGE_INPUT_BYTES", 1)
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.delenv("CI", raising=False)
    out = tmp_path / "out"
    code, _, err = run("report", str(folder), "--per-file", "--jobs", "1", "--json", str(out))
    assert code == 0, err
    assert err.startswith(f"cuda-advisor: skipped {folder}/a.txt: ")
    size = progress.format_bytes((folder / "b.csv").stat().st_size)
    assert terminal.getvalue() == (
        line(0, 2, "analysing 2 profiles")
        + ERASE  # erased before the 'skipped' line
        + line(1, 2, "analysed a.txt (8 B)")
        + line(2, 2, f"analysed b.csv ({size})")
        + ERASE
    )
