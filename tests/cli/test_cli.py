"""Command line: exit codes, one-line errors, no tracebacks, atomic output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parsers
from advisor.errors import UsageError
from advisor.output import write_atomic
from tests.cli_helpers import assert_one_line_error, run


def test_version_and_help() -> None:
    code, out, _ = run("--version")
    assert code == 0 and "cuda-advisor" in out
    code, out, _ = run("--help")
    assert code == 0 and "Exit codes" in out


def test_missing_argument_is_usage_error() -> None:
    code, _, err = run("inspect")
    assert code == 2
    assert "Missing argument" in err


def test_unknown_option_is_usage_error() -> None:
    code, _, _ = run("inspect", "--no-such-option", "x")
    assert code == 2


def test_missing_file_exits_3_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.csv"
    code, _, err = run("inspect", str(missing))
    assert code == 3
    assert_one_line_error(err, str(missing), "no such file")


def test_directory_exits_3(tmp_path: Path) -> None:
    code, _, err = run("inspect", str(tmp_path))
    assert code == 3
    assert_one_line_error(err, "is a directory")


def test_empty_file_exits_3(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    code, _, err = run("inspect", str(empty))
    assert code == 3
    assert_one_line_error(err, str(empty), "empty")


def test_unrecognised_text_lists_known_formats(tmp_path: Path) -> None:
    f = tmp_path / "notes.csv"
    f.write_text("hello,world\n1,2\n")
    code, _, err = run("inspect", str(f))
    assert code == 3
    assert_one_line_error(err, str(f), "unrecognised", "known formats")
    for name in parsers.known_format_names():
        assert name in err


def test_unknown_binary_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\x00\x01\x02garbage" * 100)
    code, _, err = run("inspect", str(f))
    assert code == 3
    assert_one_line_error(err, str(f), "binary")


def test_profiler_error_line_is_quoted(tmp_path: Path) -> None:
    f = tmp_path / "failed.csv"
    f.write_text(
        "==PROF== Connected to process 1 (/bin/app)\n"
        "==PROF== Disconnected from process 1\n"
        "==ERROR== The application returned an error code (1).\n"
    )
    code, _, err = run("inspect", str(f))
    assert code == 3
    assert_one_line_error(err, "==ERROR== The application returned an error code (1).")


def test_internal_error_exits_1_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(path: str) -> None:
        raise RuntimeError("synthetic failure")

    monkeypatch.setattr(parsers, "read", boom)
    f = tmp_path / "x.csv"
    f.write_text("x")
    code, _, err = run("inspect", str(f))
    assert code == 1
    assert_one_line_error(err, "internal error", "synthetic failure")
    code, _, err = run("--debug", "inspect", str(f))
    assert code == 1
    assert "Traceback" in err


def test_inspect_continues_after_a_bad_file_and_exits_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("")
    missing = tmp_path / "missing.csv"
    code, out, err = run("inspect", "--json", str(bad), str(missing))
    assert code == 3
    assert json.loads(out) == []
    assert len(err.strip().splitlines()) == 2


def test_formats_lists_registered_formats() -> None:
    code, out, _ = run("formats")
    assert code == 0
    for name in parsers.known_format_names():
        assert name in out


def test_write_atomic_refuses_to_overwrite_an_input(tmp_path: Path) -> None:
    src = tmp_path / "profile.csv"
    src.write_text("original")
    with pytest.raises(UsageError, match="refusing to overwrite an input"):
        write_atomic(src, "new", inputs=[str(src)])
    assert src.read_text() == "original"


def test_write_atomic_replaces_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("old")
    write_atomic(out, "new content")
    assert out.read_text() == "new content"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_write_atomic_missing_folder_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        write_atomic(tmp_path / "no" / "dir" / "r.html", "x")


def test_inspect_text_output_on_a_sample(samples: Path) -> None:
    path = samples / "synthetic_nvprof_gputrace.csv"
    code, out, _ = run("inspect", str(path))
    assert code == 0
    lines = [ln.strip() for ln in out.splitlines()]
    assert lines[0] == str(path)
    # the sample holds 3 kernels x 3 launches, one HtoD copy and three DtoH copies
    assert "format:        nvprof-csv (gpu-trace)" in lines
    assert "launches:      9 (per-launch rows)" in lines
    assert "kernels:       3" in lines
    assert "transfers:     4" in lines


def test_inspect_merge_combines_inputs_of_one_run(samples: Path) -> None:
    trace = samples / "synthetic_nvprof_gputrace.csv"
    api = samples / "synthetic_nvprof_apitrace.csv"
    code, out, _ = run("inspect", "--json", "--merge", str(trace), str(api))
    assert code == 0
    [merged] = json.loads(out)
    separate = json.loads(run("inspect", "--json", str(trace), str(api))[1])
    assert merged["path"] == f"{trace} + {api}"
    assert merged["launches"] == separate[0]["launches"] == 9
    assert merged["api_calls"] == separate[1]["api_calls"] > 0


def test_write_atomic_gives_new_files_the_usual_permissions(tmp_path: Path) -> None:
    import os

    umask = os.umask(0o022)
    try:
        out = tmp_path / "shared.html"
        write_atomic(out, "x")
        assert out.stat().st_mode & 0o777 == 0o644
        out.chmod(0o600)
        write_atomic(out, "y")  # an existing file keeps its mode
        assert out.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(umask)
