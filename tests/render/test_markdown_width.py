"""The pull-request comment fits GitHub's ~860 px comment column (advisor/render/markdown.py).

Every comment is rendered with a GitHub-flavoured Markdown renderer (markdown-it-py's
``gfm-like`` preset: tables, strikethrough, autolinks) and every table of it checked: at most six
columns, no row whose visible text (the cells' text, `` | `` between them) is longer than
:data:`advisor.render.markdown.ROW_CHARS` characters (~860 px at ~7 px a character), and the
columns' widest cells together within the same budget (a table is as wide as its widest cells).
The rendered HTML has no link and no element the comment does not write itself.

Inputs: every sample profile, hand-built reports with long, hostile and look-alike names, and the
real profiles (a Nsight Compute report, an nvvp timeline of cuDNN kernels with mangled names, an
nsys summary of 113 kernels).
"""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import parsers
from advisor import pipeline
from advisor.render import markdown as md
from advisor.report import build as report
from tests.render.test_markdown import hostile_analysis, long_names_analysis

REPO = Path(__file__).resolve().parents[2]
SAMPLES = sorted((REPO / "sample_profiles").glob("synthetic_*"))

#: the elements a rendered comment may hold: Markdown's own and the comment's <details>
ALLOWED_TAGS = {
    "p", "strong", "em", "code", "pre", "ul", "ol", "li", "h4", "br",
    "table", "thead", "tbody", "tr", "th", "td", "details", "summary",
}  # fmt: skip


def _renderer() -> Any:
    """markdown-it-py with the GitHub-like preset; required under CI=true (the ``test`` extra
    installs ``markdown-it-py[linkify]``), skipped without it elsewhere."""
    try:
        from markdown_it import MarkdownIt

        renderer = MarkdownIt("gfm-like")
        renderer.render("www.example.com")  # linkify needs linkify-it-py
    except (ImportError, ModuleNotFoundError) as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but markdown-it-py[linkify] is not installed: {exc}")
        pytest.skip(f"markdown-it-py[linkify] not installed: {exc}")
    return renderer


def _tables(text: str) -> list[list[list[str]]]:
    """Every table of the rendered comment: rows of cells' visible text."""
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    for token in _renderer().parse(text):
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            row = []
            tables[-1].append(row)
        elif token.type == "inline" and row is not None:
            row.append("".join(child.content for child in token.children or ()))
        elif token.type == "tr_close":
            row = None
    return tables


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def check_fits(text: str) -> int:
    """Assert the comment's tables fit and its HTML holds no link or foreign element; returns
    the number of tables."""
    tables = _tables(text)
    for table in tables:
        widths = [0] * max(len(r) for r in table)
        for cells in table:
            assert len(cells) <= 6, cells
            line = " | ".join(cells)
            assert len(line) <= md.ROW_CHARS, (len(line), line)
            widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=False)]
        assert sum(widths) + 3 * (len(widths) - 1) <= md.ROW_CHARS, widths
    parser = _Tags()
    parser.feed(_renderer().render(text))
    assert set(parser.tags) <= ALLOWED_TAGS, set(parser.tags) - ALLOWED_TAGS
    return len(tables)


def _comment(*paths: Path | str) -> str:
    run = pipeline.analyse([str(p) for p in paths], None, "amdahl")
    return md.markdown(pipeline.build(run))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_comments_fit(path: Path) -> None:
    check_fits(_comment(path))


def test_merged_sample_comment_fits(samples: Path) -> None:
    text = _comment(
        samples / "synthetic_nvprof_gputrace.csv", samples / "synthetic_nvprof_metrics.csv"
    )
    assert check_fits(text) == 1  # the top kernels; no folded table for three kernels


def test_long_and_hostile_names_fit(samples: Path) -> None:
    profile = parsers.read(samples / "synthetic_ncu_details.csv")
    for analysis in (long_names_analysis(), hostile_analysis()):
        text = md.markdown(report.build(analysis, profile))
        assert check_fits(text) >= 1


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    "relative",
    [
        "reports/GPU_ML/timeline.nvvp",
        "csv/llmperfopt_rtx5090/nsys/all-stage_summary_cuda_gpu_kern_sum.csv",
        "reports/CUDA_Learning/shared_report.ncu-rep",
    ],
)
def test_real_comments_fit(real_profiles: Path, relative: str) -> None:
    if relative.endswith(".ncu-rep"):
        pytest.importorskip("ncu_report")
    text = _comment(real_profiles / relative)
    assert check_fits(text) >= 1
    assert len(text) <= md.MARKDOWN_MAX_CHARS
