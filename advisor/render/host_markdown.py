"""The Markdown comment's section on a PyTorch profiler trace's host side: GPU idle share, the
idle split, launch delay, the launch-bound hint, the synchronizations and the top operators
(:class:`advisor.report.host_view.HostView`).  Empty for a report without a host view."""

from __future__ import annotations

from advisor.render.display import duration, shorten
from advisor.render.markdown import md_code, md_escape
from advisor.report.build import Report
from advisor.report.host_view import HostView

#: operators and sync rows listed in the comment (the HTML report lists more)
ROWS = 5


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def hostsync_note(h: HostView) -> str:
    """What HOSTSYNC's estimate means on a PyTorch trace, for the verdict: how much of the idle
    the host spent elsewhere and in launch delay, and what removing the synchronizations alone
    buys (HOSTSYNC promises the whole idle back, which needs the host to launch sooner)."""
    idle = h.idle_total
    return (
        f"On this trace the streams wait {duration(idle.host_wait_ns)} for the host (busy "
        f"elsewhere, launching late) and {duration(idle.launch_delay_ns)} in launch delay, "
        f"summed over streams; removing the host synchronizations alone buys up to "
        f"{h.syncs_speedup:.2f}x, the rest needs the host to launch sooner (CUDA graphs, "
        "torch.compile, asynchronous data loading)."
    )


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
