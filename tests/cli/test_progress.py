"""Progress display (advisor/progress.py): shown only on a terminal, for large inputs, outside CI
and without --quiet; otherwise not one byte on stderr."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor import progress
from advisor.cli import main

ERASE = "\r\x1b[K"


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def trace(tmp_path: Path, samples: Path) -> Path:
    path = tmp_path / "trace.csv"
    shutil.copy(samples / "synthetic_nvprof_gputrace.csv", path)
    return path


@pytest.fixture
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


def line(done: int, total: int, label: str) -> str:
    filled = 20 * done // total
    return f"{ERASE}cuda-advisor: [{'#' * filled}{'.' * (20 - filled)}] {done}/{total} {label}"


def test_format_bytes() -> None:
    assert progress.format_bytes(0) == "0 B"
    assert progress.format_bytes(999) == "999 B"
    assert progress.format_bytes(1500) == "1.5 kB"
    assert progress.format_bytes(999_950) == "1.0 MB"  # 999.95 kB rounds up to the next unit
    assert progress.format_bytes(512_000_000) == "512.0 MB"
    assert progress.format_bytes(1_234_567_890) == "1.2 GB"


def test_steps_are_drawn_and_erased_exactly() -> None:
    out = FakeTerminal()
    bar = progress.Progress(4, out)
    assert bar.call("parsing a.csv", lambda x: x * 2, 21) == 42
    with bar.step("analysing"):
        pass
    bar.advance("rendering")
    bar.echo("a line")
    bar.clear()  # nothing drawn since the echo: writes nothing
    # 1/4 of 20 characters = 5 '#', 2/4 = 10, 3/4 = 15
    assert out.getvalue() == (
        f"{ERASE}cuda-advisor: [....................] 0/4 parsing a.csv{ERASE}"
        f"{ERASE}cuda-advisor: [#####...............] 1/4 analysing{ERASE}"
        f"{ERASE}cuda-advisor: [###############.....] 3/4 rendering{ERASE}a line\n"
    )


def test_a_line_is_cut_to_the_terminal_width() -> None:
    out = FakeTerminal()
    progress.Progress(2, out, width=40).show("parsing a-very-long-file-name.csv (1.0 GB)")
    # 39 characters: the last column is left free so the terminal never wraps the line
    assert out.getvalue() == ERASE + "cuda-advisor: [....................] 0/2"[:39]


def test_silent_progress_writes_nothing_and_still_calls() -> None:
    bar = progress.Progress(3, None)
    assert not bar.active
    assert bar.call("x", len, "abc") == 3
    bar.show("y")
    bar.echo("z")
    bar.clear()
    assert bar.done == 1


def test_wanted_needs_every_condition(monkeypatch: pytest.MonkeyPatch) -> None:
    tty, pipe = FakeTerminal(), io.StringIO()
    big = progress.LARGE_INPUT_BYTES
    assert big == 50 * 1024 * 1024
    assert progress.wanted(big, False, tty, environ={})
    assert not progress.wanted(big - 1, False, tty, environ={})  # small input
    assert not progress.wanted(big, True, tty, environ={})  # --quiet
    assert not progress.wanted(big, False, pipe, environ={})  # not a terminal
    for value in ("true", "1", "TRUE", "yes"):
        assert not progress.wanted(big, False, tty, environ={"CI": value})
    for value in ("", "0", "false"):
        assert progress.wanted(big, False, tty, environ={"CI": value})


def test_sizes_of_regular_files_only(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b"x" * 1500)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert progress.file_bytes(path) == 1500
    assert progress.file_bytes(fifo) is None
    assert progress.file_bytes(tmp_path / "missing") is None
    assert progress.total_bytes([path, fifo, tmp_path / "missing", path]) == 3000
    assert progress.describe(path) == "a.csv (1.5 kB)"
    assert progress.describe(fifo) == "pipe"


def test_for_inputs_uses_the_size_threshold(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b"x" * 100)
    monkeypatch.setattr(progress, "LARGE_INPUT_BYTES", 100)
    assert progress.for_inputs([path], 2, False, FakeTerminal(), environ={}).active
    monkeypatch.setattr(progress, "LARGE_INPUT_BYTES", 101)
    assert not progress.for_inputs([path], 2, False, FakeTerminal(), environ={}).active


def report(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["report", *args])
    return result.exit_code, result.stdout, result.stderr


def test_report_draws_its_stages_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, trace: Path, tmp_path: Path, no_ci: None
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(progress, "stderr", lambda: terminal)
    monkeypatch.setattr(progress, "LARGE_INPUT_BYTES", 1)
    monkeypatch.setenv("COLUMNS", "1000")  # tmp_path makes the last label long
    html, js = tmp_path / "r.html", tmp_path / "r.json"
    code, out, err = report(str(trace), "-o", str(html), "--json", str(js))
    assert code == 0, err
    assert err == ""
    assert out == f"wrote {js}: 3 kernels, 1 hint\nwrote {html}: 3 kernels, 1 hint\n"
    size = progress.format_bytes(trace.stat().st_size)
    # steps: parse 1 file, analysis, build, render the HTML = 4 (the synthetic trace: 9 launches)
    assert terminal.getvalue() == (
        line(0, 4, f"parsing trace.csv ({size})")
        + ERASE
        + line(1, 4, "analysing 9 launches")
        + ERASE
        + line(2, 4, "building the report")
        + ERASE
        + line(3, 4, f"rendering {html}")
        + ERASE
    )


@pytest.mark.parametrize("case", ["ci", "quiet", "small", "not-a-terminal"])
def test_report_shows_nothing_when_a_condition_fails(
    monkeypatch: pytest.MonkeyPatch, trace: Path, tmp_path: Path, no_ci: None, case: str
) -> None:
    terminal = FakeTerminal()
    if case != "not-a-terminal":  # else the CliRunner's own stderr, which is no terminal
        monkeypatch.setattr(progress, "stderr", lambda: terminal)
    if case != "small":
        monkeypatch.setattr(progress, "LARGE_INPUT_BYTES", 1)
    if case == "ci":
        monkeypatch.setenv("CI", "true")
    js = tmp_path / "r.json"
    flags = ["--quiet"] if case == "quiet" else []
    code, out, err = report(str(trace), "--json", str(js), *flags)
    assert code == 0, err
    assert err == ""
    assert terminal.getvalue() == ""
    assert out == ("" if case == "quiet" else f"wrote {js}: 3 kernels, 1 hint\n")
    assert js.stat().st_size > 0


def test_quiet_keeps_errors_and_gate_failures(trace: Path, tmp_path: Path) -> None:
    js = tmp_path / "r.json"
    code, out, err = report(str(trace), "--json", str(js), "-q", "--fail-if", "hints>0")
    assert code == 4
    assert out == ""
    assert err == "cuda-advisor: gate failed: hints>0 (application: hints = 1)\n"
    code, out, err = report(str(tmp_path / "missing.csv"), "--json", str(js), "-q")
    assert code == 3
    assert out == ""
    assert err.startswith("cuda-advisor: error: ") and "no such file" in err


def test_compare_quiet_drops_the_wrote_lines(trace: Path, tmp_path: Path) -> None:
    js = tmp_path / "c.json"
    versions = ["--version", f"a={trace}", "--version", f"b={trace}"]
    result = CliRunner().invoke(main, ["compare", *versions, "--json", str(js)])
    assert (result.exit_code, result.stdout) == (0, f"wrote {js}\n")
    result = CliRunner().invoke(main, ["compare", *versions, "--json", str(js), "--quiet"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
