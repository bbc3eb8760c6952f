"""The report as one self-contained HTML file and as GitHub-flavoured Markdown.

HTML: ``templates/report.html.j2`` (and its partials) through
:func:`advisor.templating.html_environment` (autoescape, StrictUndefined): every string from a
profile is escaped by jinja; the only markup inserted is the charts' SVG (:mod:`advisor.charts`).
Inline CSS, no script, a Content-Security-Policy that forbids every external load.

Markdown: built here with :func:`md_escape` on every string from a profile; kept under
:data:`MARKDOWN_MAX_CHARS` (GitHub's comment limit is 65,536) by dropping table rows first.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import jinja2

from advisor import charts
from advisor.report import KernelRow, Report
from advisor.templating import html_environment

#: GitHub refuses comments over 65,536 characters; stay well below
MARKDOWN_MAX_CHARS = 60_000
#: kernels in the Markdown criteria table (before the size limit trims it further)
MARKDOWN_TABLE_KERNELS = 30
#: the Content-Security-Policy of the HTML file: nothing loaded, inline styles only
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def html(report: Report) -> str:
    """The report as one HTML document (deterministic: same report, same bytes)."""
    env = environment()
    charts_by_rank = {d.row.rank: charts.criteria_chart(d) for d in report.details}
    template = env.get_template("report.html.j2")
    return template.render(
        report=report,
        csp=CSP,
        criteria_charts=charts_by_rank,
        timeline_chart=charts.timeline_chart(report.timeline) if report.timeline else None,
        streams_charts={s.index: charts.streams_chart(s) for s in report.streams},
    )


def environment() -> jinja2.Environment:
    env = html_environment().overlay()
    filters: dict[str, Callable[..., str]] = {
        "num": fmt_num,
        "pct": fmt_pct,
        "ms": fmt_ms,
        "x": fmt_x,
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


def fmt_x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def md_escape(text: str) -> str:
    """Text safe in a GitHub Markdown paragraph or table cell: HTML characters become entities,
    Markdown punctuation is backslash-escaped, line breaks become spaces."""
    text = " ".join(str(text).split())
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
        "",
        "### Top hints",
        "",
    ]
    if not s.top_hints:
        lines.append("No criterion below its threshold.")
    for i, h in enumerate(s.top_hints, start=1):
        where = f"**{md_escape(h.kernel_display)}**: " if h.kernel_display else ""
        lines.append(
            f"{i}. {where}{md_escape(h.title)} — {h.criterion} = {fmt_num(h.value)} "
            f"(threshold {fmt_num(h.threshold)}), potential speedup {fmt_x(h.potential_speedup)}"
            f", on the whole GPU time {fmt_x(h.application_speedup)}"
        )
        if h.actions:
            lines.append(f"   - {md_escape(h.actions[0])}")
    if s.hints_total > len(s.top_hints):
        lines.append(f"\n{s.hints_total - len(s.top_hints)} more hints in the HTML report.")
    return "\n".join(lines) + "\n\n"


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
