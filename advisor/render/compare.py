"""The version comparison (:mod:`advisor.report.compare`) as self-contained HTML and as Markdown,
with the same escaping and CSP as the report (:mod:`advisor.render.report`)."""

from __future__ import annotations

from advisor.render import charts
from advisor.render.report import (
    CSP,
    MARKDOWN_MAX_CHARS,
    environment,
    fmt_ms,
    fmt_num,
    fmt_x,
    md_escape,
)
from advisor.report.compare import IMPROVED_MIN_DELTA, Comparison

#: kernels given a grouped criteria chart
CHART_KERNELS = 10


def html(comparison: Comparison) -> str:
    names = [v.name for v in comparison.versions]
    shown = comparison.kernels[:CHART_KERNELS]
    return (
        environment()
        .get_template("compare.html.j2")
        .render(
            c=comparison,
            csp=CSP,
            improved_min=IMPROVED_MIN_DELTA,
            charts_shown=len(shown),
            charts=[charts.grouped_criteria_chart(t.criteria, names) for t in shown],
        )
    )


def markdown(comparison: Comparison) -> str:
    lines = [
        "## cuda-advisor comparison",
        "",
        "| version | GPU time | predicted potential speedup |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {md_escape(v.name)} | {fmt_ms(v.gpu_time_ns)} | {fmt_x(v.potential_speedup)} |"
        for v in comparison.versions
    ]
    names = [md_escape(v.name) for v in comparison.versions]
    lines += [
        "",
        "### Kernels (speedup vs previous version)",
        "",
        "| kernel | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for t in comparison.kernels:
        cells = [
            f"{fmt_ms(d)} ({fmt_x(s)})" if s is not None else fmt_ms(d)
            for d, s in zip(t.durations_ns, t.speedup_vs_previous, strict=True)
        ]
        lines.append(f"| {md_escape(t.display_name)} | " + " | ".join(cells) + " |")
    if comparison.ledger:
        lines += [
            "",
            "### Prediction ledger",
            "",
            "| kernel | criterion | from → to | value | predicted | measured |",
            "|---|---|---|---:|---:|---:|",
        ]
        lines += [
            f"| {md_escape(e.display_name)} | {e.criterion} | {md_escape(e.from_version)} → "
            f"{md_escape(e.to_version)} | {fmt_num(e.value_before)} → {fmt_num(e.value_after)} | "
            f"{fmt_x(e.predicted_speedup)} | {fmt_x(e.measured_speedup)} |"
            for e in comparison.ledger
        ]
    return ("\n".join(lines) + "\n")[:MARKDOWN_MAX_CHARS]
