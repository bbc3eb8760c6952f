"""The HTML report in a real browser: headless Chromium (the OS package) opens it with no
console message (no CSP violation, no error) and saves a PNG screenshot.

Skips when no Chromium is installed (``apt-get install chromium``), except under ``CI=true``,
where ``.ci/run`` installs it and its absence is an error."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import main

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "headless_shell")


def _browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("CI=true but no headless Chromium is installed (.ci/run installs it)")
    pytest.skip("no headless Chromium installed (apt-get install chromium)")


def _open(browser: str, page: Path, screenshot: Path) -> list[str]:
    """Console lines Chromium logs while loading ``page``; the screenshot is written."""
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2600",
            f"--screenshot={screenshot}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert screenshot.is_file() and screenshot.stat().st_size > 10_000, done.stderr[-2000:]
    return [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def test_browser_sees_console_messages(tmp_path: Path) -> None:
    """Control: a page that breaks its CSP does produce console lines we can see."""
    browser = _browser()
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'\"></head><body>"
        + "<p>padding</p>" * 200
        + '<img src="https://example.invalid/x.png"></body></html>',
        encoding="utf-8",
    )
    lines = _open(browser, bad, tmp_path / "bad.png")
    assert any("Content Security Policy" in line for line in lines)


def test_report_opens_without_console_messages(samples: Path, tmp_path: Path) -> None:
    browser = _browser()
    out = tmp_path / "report.html"
    files = [
        str(samples / "synthetic_ncu_details.csv"),
        str(samples / "synthetic_nsys_cuda_gpu_trace.csv"),
    ]
    result = CliRunner().invoke(main, ["report", *files, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert _open(browser, out, tmp_path / "report.png") == []


def test_comparison_opens_without_console_messages(samples: Path, tmp_path: Path) -> None:
    browser = _browser()
    out = tmp_path / "tuning.html"
    nvprof = (
        f"{samples / 'synthetic_nvprof_gputrace.csv'},{samples / 'synthetic_nvprof_metrics.csv'}"
    )
    ncu = f"{samples / 'synthetic_ncu_details.csv'},{samples / 'synthetic_nsys_cuda_gpu_trace.csv'}"
    result = CliRunner().invoke(
        main, ["compare", "--version", f"v1={nvprof}", "--version", f"v2={ncu}", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert _open(browser, out, tmp_path / "tuning.png") == []
