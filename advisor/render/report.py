"""The report as one self-contained HTML file and as GitHub-flavoured Markdown.

HTML: ``templates/report.html.j2`` (and its partials) through
:func:`advisor.render.templating.html_environment` (autoescape, StrictUndefined): every string from
a profile is escaped by jinja; the only markup inserted is the charts' SVG
(:mod:`advisor.render.charts`). Inline CSS, no script, a Content-Security-Policy that forbids every
external load.

Markdown: built here with :func:`md_escape` on every string from a profile; kept under
:data:`MARKDOWN_MAX_CHARS` (GitHub's comment limit is 65,536) by dropping table rows first.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import jinja2
from markupsafe import Markup

from advisor.criteria import SPECS
from advisor.criteria.engine.hints import MIN_SHARE_OF_GPU_TIME
from advisor.render import charts
from advisor.render.display import shorten
from advisor.render.templating import html_environment
from advisor.report.build import KernelRow, Report, StreamsSequence
from advisor.report.predictions import BSP_FORMULA, MAXSUM_FORMULA

#: GitHub refuses comments over 65,536 characters; stay well below
MARKDOWN_MAX_CHARS = 60_000
#: kernels in the Markdown criteria table (before the size limit trims it further)
MARKDOWN_TABLE_KERNELS = 30
#: the Content-Security-Policy of the HTML file: nothing loaded, inline styles only
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: short column headers of the kernels table (the full name is in each header's <abbr title>),
#: so the nine criteria fit a laptop-width page without scrolling
CRITERIA_SHORT = {s.name: s.short_label for s in SPECS}

#: where a measured time falls between the MAX/SUM bounds (advisor.models.maxsum verdicts)
VERDICTS = {
    "between": "between MAX and SUM",
    "below_max": "below MAX",
    "above_sum": "above SUM",
}

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def html(report: Report) -> str:
    """The report as one HTML document (deterministic: same report, same bytes)."""
    env = environment()
    charts_by_rank = {d.row.rank: charts.criteria_chart(d) for d in report.details}
    template = env.get_template("report.html.j2")
    streams_detail, streams_table = streams_sections(report.streams)
    return template.render(
        report=report,
        csp=CSP,
        min_share=MIN_SHARE_OF_GPU_TIME,
        criteria_charts=charts_by_rank,
        short_names=CRITERIA_SHORT,
        roofline_chart=(
            charts.roofline_chart(report.roofline)
            if report.roofline and report.roofline.drawable
            else None
        ),
        bsp_formula=BSP_FORMULA,
        maxsum_formula=MAXSUM_FORMULA,
        verdicts=VERDICTS,
        timeline_chart=charts.timeline_chart(report.timeline) if report.timeline else None,
        streams_detail=streams_detail,
        streams_table=streams_table,
        streams_not_listed=len(report.streams) - len(streams_detail) - len(streams_table),
        streams_charts={s.index: charts.streams_chart(s) for s in streams_detail},
    )


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


def fmt_x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def visible_controls(text: str) -> str:
    """Control characters (C0 but tab and line breaks, DEL, C1) and bidirectional overrides
    (U+202A-U+202E, U+2066-U+2069, which could make a name read backwards) written as Python
    escapes (``\\x1b``, ``\\u202e``): a name from a profile shows what it holds."""
    return _CONTROL.sub(lambda m: ascii(m.group(0))[1:-1], text)


def _finalize(value: object) -> object:
    """Every ``{{ }}`` value of a template: a plain string gets :func:`visible_controls`
    (autoescaping follows); Markup (the charts' SVG) and numbers pass unchanged."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible_controls(value)
    return value


def md_escape(text: str) -> str:
    """Text safe in a GitHub Markdown paragraph or table cell: HTML characters become entities,
    Markdown punctuation is backslash-escaped, line breaks become spaces, control characters
    visible escapes."""
    text = visible_controls(" ".join(str(text).split()))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace('"', "&quot;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def markdown(report: Report, max_chars: int = MARKDOWN_MAX_CHARS) -> str:
    """Summary, top hints and a criteria table for a pull-request comment."""
    head = _md_summary(report)
    rows = list(report.table[:MARKDOWN_TABLE_KERNELS])
    while True:
        text = head + _md_table(report, rows) + _md_footer(report, len(rows))
        if len(text) <= max_chars or not rows:
            return text[:max_chars]
        rows = rows[: len(rows) // 2] if len(rows) > 1 else []


def _md_summary(report: Report) -> str:
    s = report.summary
    lines = [
        "## cuda-advisor report",
        "",
        f"- **Potential speedup of the application:** {fmt_x(s.potential_speedup)} "
        f"({md_escape(s.speedup_form)} form)",
        f"- **GPU time:** {fmt_ms(s.gpu_time_ns)} in {s.kernels} kernels, {s.launches} launches",
        "- **Bound:** "
        + (", ".join(f"{md_escape(b)} {fmt_pct(f)}" for b, f in s.bound_mix) or "n/a"),
        f"- **Device:** {md_escape(s.device) if s.device else 'not identified'}"
        + (f" (profile: {md_escape(', '.join(s.profile_devices))})" if s.profile_devices else ""),
        f"- **HOSTSYNC:** {fmt_num(s.hostsync.value)}",
        f"- **Predictions:** {_md_predictions(report)}",
        "",
        "### Top hints",
        "",
    ]
    if not s.top_hints:
        lines.append("No criterion below its threshold.")
    for i, h in enumerate(s.top_hints, start=1):
        where = f"**{md_escape(h.where)}**: " if h.where else ""
        lines.append(
            f"{i}. {where}{md_escape(h.title)} — {h.criterion} = {h.value_text} "
            f"(threshold {fmt_num(h.threshold)}), potential speedup {fmt_x(h.potential_speedup)}"
            f" ({md_escape(h.nvidia_text)}), on the whole GPU time {fmt_x(h.application_speedup)}"
        )
        if h.actions:
            lines.append(f"   - {md_escape(h.actions[0])}")
    if s.hints_total > len(s.top_hints):
        lines.append(f"\n{s.hints_total - len(s.top_hints)} more hints in the HTML report.")
    return "\n".join(lines) + "\n\n"


def _md_predictions(report: Report) -> str:
    """One line: the BSP λ and the kernels' predicted/measured, roofline and MAX/SUM."""
    parts = []
    p, rf = report.predictions, report.roofline
    if p is not None and p.bsp is not None and p.bsp.kernels:
        ratios = [k.ratio for k in p.bsp.kernels if k.ratio is not None]
        spread = f", predicted/measured {min(ratios):.2f}-{max(ratios):.2f}" if ratios else ""
        parts.append(f"BSP λ = {p.bsp.lam:.4g} over {len(p.bsp.kernels)} kernels{spread}")
    else:
        parts.append("BSP: per-thread counts not in the profile")
    if p is not None and p.bsp is not None and p.bsp.app is not None:
        a = p.bsp.app
        parts.append(f"{md_escape(a.kernel)}: BSP {fmt_sig(a.unscaled_ms)} ms at λ = 1")
    if p is not None and p.maxsum is not None:
        parts.append(f"MAX/SUM for {len(p.maxsum.kernels)} described kernels")
    if rf is not None and rf.points:
        parts.append(f"roofline of {len(rf.points)} kernels")
    else:
        parts.append("roofline: no FLOP and DRAM byte counts")
    return "; ".join(parts) + " (details in the HTML report)"


def _md_table(report: Report, rows: list[KernelRow]) -> str:
    names = report.criteria_names
    header = "| # | kernel | share | speedup | " + " | ".join(names) + " |"
    rule = "|---|---|---:|---:|" + "---:|" * len(names)
    body = [
        f"| {r.rank} | {md_escape(r.display_name)} | {fmt_pct(r.share_of_gpu_time)} | "
        f"{fmt_x(r.potential_speedup)} | " + " | ".join(_md_value(v) for v in r.values) + " |"
        for r in rows
    ]
    return "### Criteria (1 = best)\n\n" + "\n".join([header, rule, *body]) + "\n"


def _md_footer(report: Report, shown: int) -> str:
    rest = report.summary.kernels - shown
    more = f"\n{rest} more kernels in the HTML report.\n" if rest > 0 else ""
    return more + "\nn/c: not computable (its metrics were not collected).\n"


def _md_value(value: float | None) -> str:
    return "n/c" if value is None else f"{value:.2f}"
