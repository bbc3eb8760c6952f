"""The Markdown comment's section on a PyTorch profiler trace's host side: GPU idle share, the
idle split, launch delay, the launch-bound hint, the synchronizations and the top operators
(:class:`advisor.report.host_view.HostView`).  Empty for a report without a host view."""

from __future__ import annotations

from advisor.models import host
from advisor.render.display import counted, duration, shorten, speedup_text
from advisor.render.markdown import md_code, md_escape
from advisor.report.build import Report
from advisor.report.host_view import HostView

#: operators and sync rows listed in the comment (the HTML report lists more)
ROWS = 5


#: :attr:`host.StreamPace.pace` in words
_PACE = {
    host.HOST: "host-bound (the GPU waits for the host)",
    host.GPU: "GPU-bound (the host runs ahead)",
    host.DEPENDENCIES: "waits on other streams or events (neither host- nor GPU-bound)",
}


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def hostsync_note(h: HostView) -> str:
    """What HOSTSYNC's estimate means on a PyTorch trace, for the verdict.  When the busiest
    compute stream is host-bound (or nothing says): how long the devices' idle stretches wait
    for the host and in launch delay (a union over time, at most the span) and what removing the
    synchronizations alone buys.  When the host runs ahead of it: that the GPU sets the pace,
    with the stream's own figures and the exposed communication (:class:`host.StreamPace`)."""
    pace = h.pace
    if pace is None or pace.host_bound:
        idle = h.idle_total
        stream = (
            f"the busiest compute stream (stream {pace.stream}) waits "
            f"{duration(pace.idle.host_wait_ns)} for the host in a {duration(pace.span_ns)} "
            "span; "
            if pace is not None
            else ""
        )
        return (
            f"On this trace {stream}the GPU's idle stretches wait {duration(idle.host_wait_ns)} "
            f"for the host (busy elsewhere, launching late) and "
            f"{duration(idle.launch_delay_ns)} in launch delay (a union over time); removing "
            "the host synchronizations alone buys up to "
            f"{speedup_text(h.syncs_speedup)}, the rest needs the host to launch sooner (CUDA "
            "graphs, torch.compile, asynchronous data loading)."
        )
    text = (
        f"The host runs ahead on this trace: the busiest compute stream (stream {pace.stream}, "
        f"{counted(pace.kernels, 'launch')}) waits "
        f"{duration(pace.idle.host_wait_ns)} for the host in a "
        f"{duration(pace.span_ns)} span"
    )
    if pace.launch_delay_median_ns is not None:
        text += (
            f"; its kernels start a median {duration(pace.launch_delay_median_ns)} after their "
            "launch call"
        )
    if pace.queue_median:
        text += f", behind a median {pace.queue_median:,.0f} launches still queued"
    text += (
        f": the GPU sets the pace. Its {duration(pace.idle.other_ns)} of other idle waits on "
        "other streams, events or communication"
    )
    comm = h.communication
    if comm is not None:
        text += (
            f" (communication kernels: {duration(comm.communication_ns)}, "
            f"{_pct(comm.overlap_frac or 0.0)} overlapped with computation, "
            f"{duration(comm.exposed_ns)} exposed)"
        )
    return (
        text + ". Removing the host synchronizations buys up to "
        f"{speedup_text(h.syncs_speedup)}; CUDA graphs or a faster host would not help."
    )


def _communication_lines(h: HostView) -> list[str]:
    """The communication paragraph (nothing without communication kernels)."""
    comm = h.communication
    if comm is None:
        return []
    share = comm.share_of_gpu_time
    return [
        "",
        f"**Communication** (NCCL/RCCL kernels, {counted(comm.launches, 'launch')}"
        + (f", {_pct(share)} of GPU time" if share is not None else "")
        + f"): {duration(comm.communication_ns)} on the GPU (union over time), "
        f"{_pct(comm.overlap_frac or 0.0)} overlapped with computation kernels, "
        f"**{duration(comm.exposed_ns)} exposed** (no computation alongside). Launch "
        "configuration and occupancy criteria are n/a for these kernels.",
    ]


def host_section(report: Report) -> str:
    h = report.host
    if h is None:
        return ""
    idle = h.idle_total
    lines = [
        "### Host and GPU",
        "",
        f"GPU idle **{_pct(h.idle_frac)}** of a {duration(h.span_ns)} span; the idle "
        f"stretches (no activity on any stream, a union over time) by cause: host wait "
        f"{duration(idle.host_wait_ns)}, launch delay {duration(idle.launch_delay_ns)}, other "
        f"{duration(idle.other_ns)}.",
    ]
    pace = h.pace
    if pace is not None:
        lines.append(
            f"Busiest compute stream {pace.stream} "
            f"({counted(pace.kernels, 'launch')}, "
            f"{duration(pace.busy_ns)} busy in a {duration(pace.span_ns)} span), its own gaps: "
            f"host wait {duration(pace.idle.host_wait_ns)}, launch delay "
            f"{duration(pace.idle.launch_delay_ns)}, other {duration(pace.idle.other_ns)}"
            + (
                f"; median launch delay {duration(pace.launch_delay_median_ns)}"
                if pace.launch_delay_median_ns is not None
                else ""
            )
            + (f", median queue {pace.queue_median:,.0f}" if pace.queue_median is not None else "")
            + f": **{_PACE[pace.pace]}**."
        )
    if h.launch_delay is not None:
        d = h.launch_delay
        lines.append(
            f"Launch delay (CPU launch → GPU start): median {duration(d.median_ns)}, p95 "
            f"{duration(d.p95_ns)} over {counted(d.kernels, 'launch')}."
        )
    lines += _communication_lines(h)
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
            f"Host synchronizations (removing them all: up to {speedup_text(h.syncs_speedup)}):",
            "",
            "| operator | syncs | GPU idle after | speedup if removed |",
            "| --- | --: | --: | --: |",
        ]
        lines += [
            f"| {md_code(g.operator, table=True)} | {g.calls:,} | {duration(g.idle_after_ns)} "
            f"| {speedup_text(g.potential_speedup)} |"
            for g in h.syncs[:ROWS]
        ]
    if h.operators:
        lines += [
            "",
            "#### Kernels by PyTorch operator",  # the HTML report's heading of this table
            "",
            "| operator | launches | GPU time | share |",
            "| --- | --: | --: | --: |",
        ]
        lines += [
            f"| {md_code(shorten(o.operator), table=True)} | {o.launches:,} "
            f"| {duration(o.gpu_time_ns)} | {_pct(o.share)} |"
            for o in h.operators[:ROWS]
        ]
    return "\n".join(lines) + "\n\n"
