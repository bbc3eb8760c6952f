"""The Markdown comment's section on a PyTorch profiler trace's host side: GPU idle share, the
idle split, launch delay, the launch-bound hint, the synchronizations and the top operators
(:class:`advisor.report.host_view.HostView`).  Empty for a report without a host view."""

from __future__ import annotations

from advisor.render.display import duration, shorten
from advisor.render.markdown import md_code, md_escape
from advisor.report.build import Report

#: operators and sync rows listed in the comment (the HTML report lists more)
ROWS = 5


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def host_section(report: Report) -> str:
    h = report.host
    if h is None:
        return ""
    idle = h.idle_total
    lines = [
        "### Host and GPU",
        "",
        f"GPU idle **{_pct(h.idle_frac)}** of a {duration(h.span_ns)} span; idle between "
        f"activities (summed over streams): host wait {duration(idle.host_wait_ns)}, launch "
        f"delay {duration(idle.launch_delay_ns)}, other {duration(idle.other_ns)}.",
    ]
    if h.launch_delay is not None:
        d = h.launch_delay
        lines.append(
            f"Launch delay (CPU launch → GPU start): median {duration(d.median_ns)}, p95 "
            f"{duration(d.p95_ns)} over {d.kernels:,} kernels."
        )
    bound = h.launch_bound
    if bound is not None and bound.hint:
        lines += [
            "",
            f"**Many tiny kernels (launch-bound):** {bound.short:,} of {bound.launches:,} "
            f"launches ({_pct(bound.share)}) run shorter than their CPU launch call: "
            + "; ".join(md_escape(a) for a in h.launch_bound_actions)
            + ".",
        ]
    if h.syncs:
        lines += [
            "",
            f"Host synchronizations (removing them all: up to {h.syncs_speedup:.2f}x):",
            "",
            "| operator | syncs | GPU idle after | speedup if removed |",
            "| --- | --: | --: | --: |",
        ]
        lines += [
            f"| {md_code(g.operator, table=True)} | {g.calls:,} | {duration(g.idle_after_ns)} "
            f"| {g.potential_speedup:.2f}x |"
            for g in h.syncs[:ROWS]
        ]
    if h.operators:
        lines += ["", "| operator | launches | GPU time | share |", "| --- | --: | --: | --: |"]
        lines += [
            f"| {md_code(shorten(o.operator), table=True)} | {o.launches:,} "
            f"| {duration(o.gpu_time_ns)} | {_pct(o.share)} |"
            for o in h.operators[:ROWS]
        ]
    return "\n".join(lines) + "\n\n"
