"""Running the command line in-process and checking its one-line errors (shared by the tests)."""

from __future__ import annotations

from click.testing import CliRunner

from advisor.cli import main


def run(*args: str) -> tuple[int, str, str]:
    """``cuda-advisor ARGS...`` in-process: exit code, stdout, stderr."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_line_error(stderr: str) -> str:
    """The one ``cuda-advisor: error: ...`` line ``stderr`` must consist of (no traceback)."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("cuda-advisor: error: "), lines[0]
    assert "Traceback" not in stderr
    return lines[0]


def assert_one_line_error(stderr: str, *needles: str) -> None:
    """:func:`one_line_error`, naming every one of ``needles``."""
    line = one_line_error(stderr)
    for needle in needles:
        assert needle in line, line
