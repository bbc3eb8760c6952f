"""The HTML and Markdown of every sample profile, byte for byte, against committed goldens.

The goldens in ``tests/golden/reports/`` were written by ``cuda-advisor report`` (and
``compare``) run from the repository root on the relative sample paths; the same commands must
give the same bytes, nothing scrubbed.  A deliberate change of the report regenerates them with
``UPDATE_GOLDEN=1 python -m pytest tests/render/test_golden_reports.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_helpers import run

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "reports"
SAMPLES = sorted(p.name for p in (REPO / "sample_profiles").glob("synthetic_*"))

#: golden stem -> the report command's inputs (relative to the repository root)
REPORTS: dict[str, tuple[str, ...]] = {
    **{name: (f"sample_profiles/{name}",) for name in SAMPLES},
    "merged_nvprof_gputrace_metrics": (
        "sample_profiles/synthetic_nvprof_gputrace.csv",
        "sample_profiles/synthetic_nvprof_metrics.csv",
    ),
}


def _check(stem: str, suffix: str, produced: Path) -> None:
    golden = GOLDEN / f"{stem}{suffix}"
    text = produced.read_bytes()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_bytes(text)
    assert golden.is_file(), f"no golden {golden.name}: run with UPDATE_GOLDEN=1 once"
    assert text == golden.read_bytes(), f"{stem}{suffix} differs from its golden"


def test_every_sample_has_a_golden() -> None:
    assert SAMPLES, "no sample profiles found"
    for stem in REPORTS:
        assert (GOLDEN / f"{stem}.html").is_file() and (GOLDEN / f"{stem}.md").is_file(), stem


@pytest.mark.parametrize("stem", sorted(REPORTS))
def test_report_matches_golden(
    stem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the reports show the input paths as given
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    code, _, stderr = run("report", *REPORTS[stem], "-o", str(html), "--markdown", str(md), "-q")
    assert code == 0, stderr
    _check(stem, ".html", html)
    _check(stem, ".md", md)


def test_compare_matches_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    html, md = tmp_path / "c.html", tmp_path / "c.md"
    code, _, stderr = run(
        "compare",
        "--version",
        "a=sample_profiles/synthetic_ncu_raw.csv",
        "--version",
        "b=sample_profiles/synthetic_ncu_details.csv",
        "-o",
        str(html),
        "--markdown",
        str(md),
        "-q",
    )
    assert code == 0, stderr
    _check("compare_ncu_raw_details", ".html", html)
    _check("compare_ncu_raw_details", ".md", md)
