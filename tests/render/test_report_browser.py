"""The HTML report in a real browser: headless Chromium (the OS package) opens it with no
console message (no CSP violation, no error) and saves a PNG screenshot; at a 1280-pixel-wide
window the page never scrolls sideways and the verdict line is above the fold.

The layout is measured on a copy of the page with its Content-Security-Policy removed and a
script added that writes ``document.documentElement.scrollWidth`` and the verdict's bounding box
into the DOM, which ``--dump-dom`` prints (the report itself has no script, and its CSP would
refuse one; the policy does not change the layout).  Screenshots go to ``tmp_path``, or to the
folder named by ``REPORT_SCREENSHOTS`` to look at them.

Skips when no Chromium is installed (``apt-get install chromium``), except under ``CI=true``,
where ``.ci/run`` installs it and its absence is an error."""

from __future__ import annotations

import html as html_text
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import main

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "headless_shell")
#: the laptop window the report must fit: no horizontal scrolling, the verdict above the fold
WIDTH, FOLD = 1280, 800
SAMPLES = sorted(
    p.name for p in (Path(__file__).resolve().parents[2] / "sample_profiles").glob("synthetic_*")
)
_CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')
_MEASURE = """<script>
const v = document.getElementById("verdict");
const box = v ? v.getBoundingClientRect() : null;
document.body.setAttribute("data-measure", JSON.stringify({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  verdictTop: box ? box.top : null,
  verdictBottom: box ? box.bottom : null,
}));
</script>"""


def _browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("CI=true but no headless Chromium is installed (.ci/run installs it)")
    pytest.skip("no headless Chromium installed (apt-get install chromium)")


def _run(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _open(browser: str, page: Path, screenshot: Path, width: int = 1200) -> list[str]:
    """Console lines Chromium logs while loading ``page``; the screenshot is written."""
    done = _run(
        browser,
        "--enable-logging=stderr",
        "--v=0",
        f"--window-size={width},2600",
        f"--screenshot={screenshot}",
        page.resolve().as_uri(),
    )
    assert screenshot.is_file() and screenshot.stat().st_size > 10_000, done.stderr[-2000:]
    shots = os.environ.get("REPORT_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(screenshot, Path(shots) / screenshot.name)
    return [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def _measure(browser: str, page: Path, folder: Path) -> dict[str, float | None]:
    """The layout of ``page`` in a ``WIDTH`` × ``FOLD`` window (see the module docstring)."""
    copy = folder / f"measure-{page.name}"
    text = _CSP_META.sub("", page.read_text(encoding="utf-8"), count=1)
    copy.write_text(text.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    done = _run(browser, f"--window-size={WIDTH},{FOLD}", "--dump-dom", copy.resolve().as_uri())
    found = re.search(r'data-measure="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    measured: dict[str, float | None] = json.loads(html_text.unescape(found.group(1)))
    return measured


def _check_layout(browser: str, page: Path, folder: Path) -> None:
    """At 1280 pixels: console clean, a screenshot, no horizontal overflow, verdict above the
    fold."""
    assert _open(browser, page, folder / f"{page.stem}.png", width=WIDTH) == []
    m = _measure(browser, page, folder)
    assert m["innerWidth"] == WIDTH, m
    assert m["scrollWidth"] is not None and m["scrollWidth"] <= WIDTH, m
    assert m["verdictBottom"] is not None and m["verdictBottom"] < FOLD, m


def _report(files: list[str], out: Path) -> Path:
    result = CliRunner().invoke(main, ["report", *files, "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


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


def test_layout_measure_sees_overflow(tmp_path: Path) -> None:
    """Control: the measurement sees a page wider than the window and a verdict below the fold."""
    browser = _browser()
    wide = tmp_path / "wide.html"
    wide.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'\"></head><body>"
        '<div style="width:3000px;height:1500px">wide</div><p id="verdict">late</p></body></html>',
        encoding="utf-8",
    )
    m = _measure(browser, wide, tmp_path)
    assert m["scrollWidth"] is not None and m["scrollWidth"] > WIDTH
    assert m["verdictBottom"] is not None and m["verdictBottom"] > FOLD


def test_report_opens_without_console_messages(samples: Path, tmp_path: Path) -> None:
    browser = _browser()
    files = [
        str(samples / "synthetic_ncu_details.csv"),
        str(samples / "synthetic_nsys_cuda_gpu_trace.csv"),
    ]
    out = _report(files, tmp_path / "report.html")
    assert _open(browser, out, tmp_path / "report.png") == []


@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_report_fits_1280_pixels_with_verdict_above_the_fold(
    sample: str, samples: Path, tmp_path: Path
) -> None:
    browser = _browser()
    out = _report([str(samples / sample)], tmp_path / f"{sample}.html")
    _check_layout(browser, out, tmp_path)


@pytest.mark.real_profiles
def test_real_report_fits_1280_pixels_with_verdict_above_the_fold(
    real_profiles: Path, tmp_path: Path
) -> None:
    browser = _browser()
    path = real_profiles / "reports" / "CUDA_Learning" / "shared_report.ncu-rep"
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            raise
        pytest.skip("ncu_report (Nsight Compute's Python module) is not installed")
    out = _report([str(path)], tmp_path / "shared_report.html")
    _check_layout(browser, out, tmp_path)


@pytest.mark.real_profiles
def test_kernel_summary_report_fits_1280_pixels(real_profiles: Path, tmp_path: Path) -> None:
    """113 kernels of an LLM run with long cuBLAS/CUTLASS/PyTorch names, times only."""
    browser = _browser()
    path = (
        real_profiles
        / "csv"
        / "llmperfopt_rtx5090"
        / "nsys"
        / "all-stage_summary_cuda_gpu_kern_sum.csv"
    )
    out = _report([str(path)], tmp_path / "kern_sum.html")
    _check_layout(browser, out, tmp_path)


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
