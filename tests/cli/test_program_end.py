"""The program (``cuda-advisor``, ``python -m advisor``: advisor.cli.run) ends the process once the
command has set its exit status, without tearing the interpreter down: every output is written
and flushed, the exit handlers run, and the exit status is the command's.  ``main`` itself still
raises SystemExit (tests and embedding programs call it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_profiles" / "synthetic_ncu_raw.csv"

#: run a command line through advisor.cli.run with an exit handler of the caller's registered
PROBE = """
import atexit, json, sys
from advisor.cli import run
atexit.register(lambda: print("handler ran", flush=True))
sys.argv = ["cuda-advisor", *json.loads(sys.argv[1])]
run()
print("not reached")
"""


def _program(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_outputs_and_status_of_a_run_that_succeeds(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = _program(["report", str(SAMPLE), "--json", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "handler ran"  # after the command, before the end
    assert "not reached" not in proc.stdout
    # the same bytes as the command run in this process (CliRunner calls main)
    again = tmp_path / "again.json"
    result = CliRunner().invoke(main, ["report", str(SAMPLE), "--json", str(again)])
    assert result.exit_code == 0
    assert out.read_bytes() == again.read_bytes()


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["report", "does-not-exist.csv", "--json", "x.json"], 3, "does-not-exist.csv"),
        (["report", "--bogus"], 2, "--bogus"),
    ],
)
def test_the_status_and_message_of_a_run_that_fails(
    args: list[str], status: int, message: str
) -> None:
    proc = _program(args)
    assert proc.returncode == status
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[-1] == "handler ran"


def test_printed_output_is_flushed_before_the_end() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "advisor", "formats"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    result = CliRunner().invoke(main, ["formats"])
    assert proc.returncode == result.exit_code == 0
    assert proc.stdout == result.output and proc.stdout.strip()


def test_main_still_raises_system_exit() -> None:
    with pytest.raises(SystemExit) as raised:
        main(["formats"])
    assert raised.value.code == 0
