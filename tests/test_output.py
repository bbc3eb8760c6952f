"""The output side of the command-line contract (advisor/output.py, advisor/cli/group.py).

No output replaces an input of the run (profiles, --app/--kernels/--device files, saved
analyses), under any spelling; device nodes and FIFOs are written into, not replaced; read-only
files are refused; a signal during a write leaves no temporary file; every error, click's usage
errors included, is one line with its documented exit code (2 usage and outputs, 3 inputs and
memory, 130 interrupted).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import parsers
from advisor.output import write_atomic
from tests.cli_helpers import assert_one_line_error, one_line_error, run
from tests.conftest import REPO, SAMPLES

TRACE = SAMPLES / "synthetic_nvprof_gputrace.csv"
APP = SAMPLES / "apps" / "matMul-Gm-SP.json"
KERNELS = SAMPLES / "kernels" / "matMul-gtx280.json"
REFUSED = "refusing to overwrite an input file"


def _copy(source: Path, folder: Path, name: str | None = None) -> Path:
    target = folder / (name or source.name)
    target.write_bytes(source.read_bytes())
    return target


def _device_file(folder: Path) -> Path:
    path = folder / "k40.json"
    code, _, err = run("devices", "Tesla K40c", "-o", str(path))
    assert code == 0, err
    return path


def _side_input(option: str, folder: Path) -> tuple[Path, list[str]]:
    """A copy of the side file ``option`` takes, and the options that give it."""
    if option == "--app":
        path = _copy(APP, folder, "app.json")
        return path, ["--app", str(path), "--app-size", "1024"]
    if option == "--kernels":
        path = _copy(KERNELS, folder, "kernels.json")
        return path, ["--kernels", str(path)]
    path = _device_file(folder)
    return path, ["--device", str(path)]


# --- no output over an input --------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--app", "--kernels", "--device"])
@pytest.mark.parametrize("output", ["--json", "--markdown", "-o"])
def test_report_refuses_a_side_input_as_output(tmp_path: Path, option: str, output: str) -> None:
    side, args = _side_input(option, tmp_path)
    if output != "--json":  # a .json name is --json's: the side file under a neutral suffix
        side = side.rename(side.with_suffix(".txt"))
        args[1] = str(side)
    before = side.read_bytes()
    code, _, err = run("report", str(TRACE), *args, output, str(side))
    assert code == 2, err
    assert_one_line_error(err, str(side), REFUSED)
    assert side.read_bytes() == before


@pytest.mark.parametrize("spelling", ["symlink", "dotdot", "hardlink"])
def test_side_input_refused_under_another_spelling(tmp_path: Path, spelling: str) -> None:
    app = _copy(APP, tmp_path, "app.json")
    (tmp_path / "sub").mkdir()
    if spelling == "symlink":
        target = tmp_path / "link.json"
        target.symlink_to(app)
    elif spelling == "dotdot":
        target = tmp_path / "sub" / ".." / "app.json"
    else:
        target = tmp_path / "sub" / "hard.json"
        os.link(app, target)
    code, _, err = run(
        "report", str(TRACE), "--app", str(app), "--app-size", "1024", "--json", str(target)
    )
    assert code == 2, err
    assert_one_line_error(err, REFUSED)
    assert app.read_bytes() == APP.read_bytes()
    assert not target.is_symlink() or target.resolve() == app.resolve()


def test_compare_refuses_a_saved_analysis_as_output(tmp_path: Path) -> None:
    saved = tmp_path / "base.json"
    code, _, err = run("report", str(TRACE), "--json", str(saved))
    assert code == 0, err
    before = saved.read_bytes()
    code, _, err = run("compare", str(saved), str(TRACE), "--json", str(saved))
    assert code == 2, err
    assert_one_line_error(err, REFUSED)
    assert saved.read_bytes() == before


def test_devices_refuses_its_characterization_file_as_output(tmp_path: Path) -> None:
    device = _device_file(tmp_path)
    before = device.read_bytes()
    code, _, err = run("devices", str(device), "-o", str(tmp_path / "." / device.name))
    assert code == 2, err
    assert_one_line_error(err, REFUSED)
    assert device.read_bytes() == before


def test_symlinked_output_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, ["{", "}"])
    assert link.is_symlink()
    assert real.read_text() == "{}"


# --- what the output path names -----------------------------------------------------------------


def test_dev_null_is_written_into_and_stays_a_device() -> None:
    if not os.access(os.devnull, os.W_OK):
        pytest.skip("/dev/null is not writable here")
    code, _, err = run("report", str(TRACE), "--json", os.devnull, "-q")
    assert code == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_dev_full_is_one_line_exit_2() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    code, _, err = run("report", str(TRACE), "--json", "/dev/full")
    assert code == 2, err
    assert_one_line_error(err, "/dev/full: cannot write: No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_dev_stdout_writes_to_the_pipe(tmp_path: Path) -> None:
    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout here")
    done = _cli("report", str(TRACE), "-q", "--json", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kernels"]


def test_fifo_is_written_into_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, err = run("report", str(TRACE), "-q", "--json", str(fifo))
    reader.join(timeout=30)
    assert code == 0, err
    assert not reader.is_alive()
    assert json.loads(received[0])["kernels"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_read_only_target_is_refused_and_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("keep")
    out.chmod(0o444)
    code, _, err = run("report", str(TRACE), "--json", str(out))
    assert code == 2, err
    assert_one_line_error(err, str(out), "read-only")
    assert out.read_text() == "keep"
    assert stat.S_IMODE(out.stat().st_mode) == 0o444


def test_socket_target_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        code, _, err = run("report", str(TRACE), "--json", str(path))
    assert code == 2, err
    assert_one_line_error(err, "is a socket")


# --- signals ------------------------------------------------------------------------------------

_BLOCKED_WRITER = """
import sys, time
from advisor.output import write_atomic

def pieces():
    yield "x" * 100_000
    print("writing", flush=True)
    time.sleep(60)
    yield "never"

write_atomic(sys.argv[1], pieces())
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_signal_during_a_write_removes_the_temporary_file(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "big.html"
    out.write_text("old")
    child = subprocess.Popen(
        [sys.executable, "-c", _BLOCKED_WRITER, str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    assert child.stdout.readline() == "writing\n"
    assert len(list(tmp_path.iterdir())) == 2  # the old file and the temporary one
    child.send_signal(signum)
    child.wait(timeout=30)
    assert child.returncode == 128 + signum
    assert [p.name for p in tmp_path.iterdir()] == ["big.html"]
    assert out.read_text() == "old"


_BLOCKED_READ = """
import sys, time
import parsers
from advisor.cli import main

def blocked(path, metrics=None):
    print("reading", flush=True)
    time.sleep(60)

parsers.read = blocked
main(["inspect", sys.argv[1]])
"""


def test_sigint_exits_130_with_one_line() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _BLOCKED_READ, str(TRACE)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    assert child.stdout.readline() == "reading\n"
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130
    assert err == "cuda-advisor: error: interrupted\n"


# --- one-line errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["report", str(TRACE), "--jsn", "x.json"],  # unknown option
        ["report"],  # missing argument
        ["report", str(TRACE), "--speedup-form", "nope", "--json", "x.json"],  # bad choice
        ["--bogus"],  # unknown option of the group
        ["nosuch"],  # unknown command
        ["predict", "bsp"],  # missing required option
        ["report", str(TRACE), "--jobs", "0", "--per-file", "--json", "out"],  # out of range
    ],
)
def test_click_usage_errors_are_one_line_exit_2(args: list[str]) -> None:
    code, _, err = run(*args)
    assert code == 2, err
    one_line_error(err)


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{missing}", "--json", "{out}"],
        ["inspect", "{missing}"],
        ["streams", "{missing}"],
        ["report", str(TRACE), "--app", "{missing}", "--app-size", "1", "--json", "{out}"],
        ["report", str(TRACE), "--kernels", "{missing}", "--json", "{out}"],
        ["predict", "maxsum", "--kernel", "{missing}"],
        ["microbench", "fit", "{missing}", "-o", "{out}"],
    ],
)
def test_missing_input_is_one_line_exit_3(tmp_path: Path, args: list[str]) -> None:
    missing, out = tmp_path / "missing.json", tmp_path / "out.json"
    code, _, err = run(*(a.format(missing=missing, out=out) for a in args))
    assert code == 3, err
    assert_one_line_error(err, str(missing))
    assert not out.exists()


def test_unreadable_input_is_one_line_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(TRACE, tmp_path)
    path.chmod(0)
    if os.geteuid() == 0:  # root reads every file: the open fails as it does for other users
        import parsers.source

        real_open = parsers.source.os.open

        def denied(name: object, *args: object, **kwargs: object) -> int:
            if str(name) == str(path):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(name, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(parsers.source.os, "open", denied)
    code, _, err = run("report", str(path), "--json", str(tmp_path / "r.json"))
    assert code == 3, err
    assert_one_line_error(err, str(path), "Permission denied")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``cuda-advisor ARGS`` as a process: its real stderr, encoded as the terminal would."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args],
        cwd=REPO, capture_output=True, text=True, errors="replace", env=env, timeout=120,
    )  # fmt: skip


def test_non_utf8_file_names_are_one_line(tmp_path: Path) -> None:
    name = os.fsdecode(b"bad\xff.csv")
    done = _cli("inspect", str(tmp_path / name))
    assert done.returncode == 3, done.stderr
    assert_one_line_error(done.stderr, "bad\\udcff.csv: no such file")
    done = _cli("report", str(TRACE), "--json", str(tmp_path / "none" / name))
    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, "bad\\udcff.csv", "does not exist")


def test_non_utf8_output_name_is_written(tmp_path: Path) -> None:
    out = tmp_path / os.fsdecode(b"r\xff.json")
    done = _cli("report", str(TRACE), "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["kernels"]


def test_over_long_file_names_are_one_line(tmp_path: Path) -> None:
    long = "a" * 300
    code, _, err = run("inspect", str(tmp_path / f"{long}.csv"))
    assert code == 3, err
    assert_one_line_error(err, "File name too long")
    code, _, err = run("report", str(TRACE), "--json", str(tmp_path / f"{long}.json"))
    assert code == 2, err
    assert_one_line_error(err, "cannot write: File name too long")
    code, _, err = run("report", str(TRACE), "--app", long, "--app-size", "1", "--json", "x.json")
    assert code == 3, err
    one_line_error(err)


def test_long_but_valid_output_name_is_written(tmp_path: Path) -> None:
    out = tmp_path / ("b" * 250 + ".json")  # 255 bytes: its temporary name must fit too
    write_atomic(out, "{}")
    assert out.read_text() == "{}"


# --- memory -------------------------------------------------------------------------------------


def _memory_error() -> MemoryError:
    return MemoryError()


def _wrapped_memory_error() -> SystemError:
    try:
        raise MemoryError
    except MemoryError:
        try:
            raise SystemError("<built-in method read> returned NULL without setting an exception")
        except SystemError as exc:
            return exc


@pytest.mark.parametrize("make", [_memory_error, _wrapped_memory_error])
def test_memory_exhausted_reading_is_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: object
) -> None:
    def exhausted(path: str, metrics: object) -> None:
        raise make()  # type: ignore[operator]

    monkeypatch.setattr(parsers, "_read", exhausted)
    code, _, err = run("report", str(TRACE), "--json", str(tmp_path / "r.json"))
    assert code == 3, err
    assert_one_line_error(err, f"out of memory reading {TRACE}: ")


def test_memory_exhausted_elsewhere_is_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from advisor import pipeline

    def exhausted(data: object) -> str:
        raise MemoryError

    monkeypatch.setattr(pipeline, "json_text", exhausted)
    code, _, err = run("report", str(TRACE), "--json", str(tmp_path / "r.json"))
    assert code == 3, err
    assert_one_line_error(err, "out of memory: ")


def test_unrelated_system_error_stays_internal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: str, metrics: object) -> None:
        raise SystemError("a bug")

    monkeypatch.setattr(parsers, "_read", broken)
    code, _, err = run("report", str(TRACE), "--json", str(tmp_path / "r.json"))
    assert code == 1, err
    assert_one_line_error(err, "internal error: SystemError: a bug")


@pytest.mark.parametrize("second", ["--markdown", "--json"])
def test_two_outputs_naming_one_file_are_refused(tmp_path: Path, second: str) -> None:
    out = tmp_path / "out"
    code, _, err = run(
        "report", str(TRACE), "-o", str(out), second, str(tmp_path / ".." / tmp_path.name / "out")
    )
    assert code == 2, err
    assert_one_line_error(err, "name the same file")
    assert not out.exists()  # refused before anything is written
