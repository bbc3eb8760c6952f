"""The report as one self-contained HTML file and as GitHub-flavoured Markdown.

HTML: ``templates/report.html.j2`` (and its partials) through
:func:`advisor.render.templating.html_environment` (autoescape, StrictUndefined): every string from
a profile is escaped by jinja; the only markup inserted is the charts' SVG
(:mod:`advisor.render.charts`). Inline CSS, no script, a Content-Security-Policy that forbids every
external load.

Markdown: :mod:`advisor.render.markdown` (``markdown``, ``md_escape`` and ``MARKDOWN_MAX_CHARS``
are re-exported here for the callers that import them from this module).
"""

from __future__ import annotations

from collections.abc import Callable

import jinja2
from markupsafe import Markup

from advisor.criteria import SPECS
from advisor.criteria.engine.hints import MIN_SHARE_OF_GPU_TIME, THRESHOLDS
from advisor.render import charts
from advisor.render.display import shorten, speedup_text, visible_text
from advisor.render.host_markdown import hostsync_note
from advisor.render.markdown import LAUNCH_FLOOR
from advisor.render.markdown import MARKDOWN_MAX_CHARS as MARKDOWN_MAX_CHARS
from advisor.render.markdown import markdown as markdown
from advisor.render.markdown import md_escape as md_escape
from advisor.render.templating import html_environment
from advisor.report.build import FEW_COMPUTED, Report, StreamsSequence
from advisor.report.predictions import BSP_FORMULA, MAXSUM_FORMULA

#: the Content-Security-Policy of the HTML file: nothing loaded, inline styles only
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: short column headers of the kernels table (the full name is in each header's <abbr title>),
#: so the criteria fit a laptop-width page without scrolling
CRITERIA_SHORT = {s.name: s.short_label for s in SPECS}

#: column headers of the spread of launch times (:class:`advisor.report.spread.Spread`)
SPREAD_NAMES = {
    "avg_ns": "mean",
    "median_ns": "median",
    "min_ns": "min",
    "max_ns": "max",
    "stddev_ns": "std. dev.",
}

#: where a measured time falls between the MAX/SUM bounds (advisor.models.maxsum verdicts)
VERDICTS = {
    "between": "between MAX and SUM",
    "below_max": "below MAX",
    "above_sum": "above SUM",
}


def html(report: Report) -> str:
    """The report as one HTML document (deterministic: same report, same bytes).

    It scales with what the input holds: the verdict first (what to fix first, what it buys;
    or why there is no estimate and what to collect), a criteria table and detail sections only
    for kernels with a criterion computed, one compact table of times (with the spread of the
    launch times) for the others, and the commands that collect what is missing, once."""
    env = environment()
    charts_by_rank = {d.row.rank: charts.criteria_chart(d) for d in report.details}
    template = env.get_template("report.html.j2")
    streams_detail, streams_table = streams_sections(report.streams)
    return template.render(
        report=report,
        host_note=hostsync_note(report.host) if report.host is not None else None,
        csp=CSP,
        min_share=MIN_SHARE_OF_GPU_TIME,
        few_computed=FEW_COMPUTED,
        thresholds=dict(THRESHOLDS),
        criteria_charts=charts_by_rank,
        detail_ranks=set(charts_by_rank),
        short_names=CRITERIA_SHORT,
        launch_floor=LAUNCH_FLOOR,
        spread_names=SPREAD_NAMES,
        roofline_chart=(
            charts.roofline_chart(report.roofline)
            if report.roofline and report.roofline.drawable
            else None
        ),
        bsp_formula=BSP_FORMULA,
        maxsum_formula=MAXSUM_FORMULA,
        maxsum_rows=MAXSUM_ROWS,
        verdicts=VERDICTS,
        timeline_chart=charts.timeline_chart(report.timeline) if report.timeline else None,
        streams_detail=streams_detail,
        streams_table=streams_table,
        streams_not_listed=len(report.streams) - len(streams_detail) - len(streams_table),
        streams_charts={s.index: charts.streams_chart(s) for s in streams_detail},
    )


#: described kernels (``report --kernels``) listed in the MAX/SUM table, and notes on them
#: shown; the rest are counted (a description of tens of thousands of kernels stays a report
#: of a few hundred kB)
MAXSUM_ROWS = 200

#: streams sequences drawn with their predicted-time curve (the largest predicted savings)
STREAMS_DETAIL = 5
#: further sequences listed in one table; the rest are only counted (a long trace can hold
#: thousands of transfer-kernel-transfer sequences)
STREAMS_TABLE = 100


def streams_sections(
    sequences: tuple[StreamsSequence, ...],
) -> tuple[tuple[StreamsSequence, ...], tuple[StreamsSequence, ...]]:
    """The sequences to draw and the sequences to tabulate, each in sequence order: ranked by
    the time the optimal stream count would save (measured − predicted at optimal n), ties and
    unknown savings by sequence index."""

    def saved(s: StreamsSequence) -> float:
        if s.measured_ms is None or s.predicted_optimal_ms is None:
            return float("-inf")
        return s.measured_ms - s.predicted_optimal_ms

    ranked = sorted(sequences, key=lambda s: (-saved(s), s.index))
    detail = ranked[:STREAMS_DETAIL]
    table = ranked[STREAMS_DETAIL : STREAMS_DETAIL + STREAMS_TABLE]
    return (
        tuple(sorted(detail, key=lambda s: s.index)),
        tuple(sorted(table, key=lambda s: s.index)),
    )


def environment() -> jinja2.Environment:
    env = html_environment().overlay(finalize=_finalize)
    filters: dict[str, Callable[..., str]] = {
        "num": fmt_num,
        "pct": fmt_pct,
        "ms": fmt_ms,
        "msval": fmt_ms_value,
        "x": fmt_x,
        "sig": fmt_sig,
        "short": shorten,
    }
    env.filters.update(filters)
    return env


def fmt_num(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if float(value).is_integer() and abs(value) >= 1000:
        return f"{int(value):,}"
    if value != 0 and abs(value) < 10 ** (-digits):
        return f"{value:.{digits}e}"
    return f"{value:,.{digits}f}" if abs(value) >= 1000 else f"{value:.{digits}f}"


def fmt_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def fmt_ms(value_ns: float | None) -> str:
    return "n/a" if value_ns is None else f"{value_ns / 1e6:,.3f} ms"


def fmt_ms_value(value_ns: float | None) -> str:
    """Milliseconds without the unit, three significant decimals at most (table cells)."""
    if value_ns is None:
        return "n/a"
    ms = value_ns / 1e6
    return f"{ms:,.0f}" if ms >= 1000 else f"{ms:.3g}" if ms < 1 else f"{ms:.4g}"


def fmt_sig(value: float | None, digits: int = 4) -> str:
    """Four significant digits (``1.713e+12``, ``0.08162``, ``108``)."""
    return "n/a" if value is None else f"{value:.{digits}g}"


fmt_x = speedup_text


def visible_controls(text: str) -> str:
    """Every character that shows nothing or changes how the text around it reads (controls,
    zero-width characters, direction marks, overrides and isolates, the byte-order mark, lone
    surrogates) written as its Python escape (``\\x1b``, ``\\u200b``, ``\\u202e``):
    :func:`advisor.render.display.visible_text`, as in the Markdown; a name from a profile
    shows what it holds."""
    return visible_text(text)


def _finalize(value: object) -> object:
    """Every ``{{ }}`` value of a template: a plain string gets :func:`visible_controls`
    (autoescaping follows); Markup (the charts' SVG) and numbers pass unchanged."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible_controls(value)
    return value
