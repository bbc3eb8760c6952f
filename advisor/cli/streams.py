"""``cuda-advisor streams TRACE``: seed 004's CUDA-streams models on a GPU timeline.

The help text speaks of copy engines and compute capabilities; the sources (seed 004 for cc 1.x
and 2.x, the project's three-stage pipeline of MODELS.md §6 Decision 6 for cc >= 3.0, seed 004
Table 3 for t_sc) are in the docstrings below the help (after click's ``\\f``) and in
docs/streams.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from advisor.cli import loading, options
from advisor.models import streams

if TYPE_CHECKING:  # pandas loads when the command runs, not for --help
    from advisor.models.streams.analysis import SequenceStreams, StreamsAnalysis

#: the n shown in the text curve (every n is in --json)
CURVE_POINTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: kernel names are long C++ signatures; the text view shows a prefix
NAME_CHARS = 60


@click.command(name="streams")
@click.argument("trace", type=options.INPUT_PATH)
@click.option("--cc", default=None, metavar="X.Y", help="Compute capability (picks the model).")
@click.option(
    "--tsc",
    "tsc_ms",
    type=float,
    default=None,
    metavar="MS",
    help="Overhead per stream t_sc in ms (default: a built-in value for the GeForce 8800 GTS 512"
    f" to GTX 580, else {streams.DEFAULT_TSC_MS} ms).",
)
@click.option(
    "--max-streams",
    type=click.IntRange(min=1, max=1024),
    default=streams.DEFAULT_MAX_STREAMS,
    show_default=True,
    help="Evaluate n = 1 .. this many streams.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON with the full predicted curve.")
def streams_cmd(
    trace: str, cc: str | None, tsc_ms: float | None, max_streams: int, as_json: bool
) -> None:
    """Predict each HtoD copy -> kernels -> DtoH copy sequence of TRACE split over n streams.

    TRACE is a GPU timeline: nvprof --print-gpu-trace, nsys cuda_gpu_trace, or an nvprof / nsys
    SQLite export.  For every sequence: the time on 1 .. --max-streams streams and the best
    number.  The model follows the compute capability: before cc 3.0 one copy engine (on cc 2.x
    only the HtoD copy overlaps the kernels), from cc 3.0 on two copy engines (HtoD copy, kernel
    and DtoH copy of different chunks overlap as a three-stage pipeline).  Sequences whose kernels
    run many launches back to back between a few copies get no advice: streams have nothing to
    overlap there.

    \f
    Models: seed 004 §3.2.1 (cc 1.x) and §3.2.2 (cc 2.x); for cc >= 3.0 the project's extension,
    MODELS.md §6 Decision 6.  t_sc default: seed 004 Table 3.
    """
    with loading.modules():
        import parsers
        from advisor.models.streams.analysis import analyze_streams, to_dict

    analysis = analyze_streams(parsers.read(trace), cc=cc, tsc_ms=tsc_ms, max_streams=max_streams)
    if as_json:
        text = json.dumps(to_dict(analysis), indent=2, sort_keys=True, allow_nan=False)
        click.echo(text)
    else:
        click.echo(render_text(analysis), nl=False)


def render_text(analysis: StreamsAnalysis) -> str:
    """The human-readable view: one block per sequence."""
    tl = analysis.timeline
    count = len(tl.sequences)
    without = len(analysis.without_advice)
    lines = [
        f"streams: {analysis.path}",
        f"{count} HtoD -> kernel -> DtoH sequence{'s' if count != 1 else ''}"
        + (f" ({without} without streams advice)" if without else "")
        + _unmatched(tl.unmatched_htod, tl.unmatched_kernels, tl.unmatched_dtoh),
    ]
    lines += [f"note: {note}" for note in tl.notes]
    for result in analysis.results:
        lines.append("")
        lines += _sequence_lines(result)
    return "\n".join(lines) + "\n"


def _unmatched(htod: int, kernels: int, dtoh: int) -> str:
    parts = [
        f"{n} {what}" for n, what in ((htod, "HtoD"), (kernels, "kernels"), (dtoh, "DtoH")) if n
    ]
    return f"; not in a sequence: {', '.join(parts)}" if parts else ""


def _sequence_lines(r: SequenceStreams) -> list[str]:
    seq, p, dev = r.sequence, r.prediction, r.device
    stream_ids = ",".join("-" if s is None else str(s) for s in seq.streams)
    label = "streams" if len(seq.streams) > 1 else "stream"
    origin = "paper" if p.model.from_paper else "project extension, not the paper's"
    saving = "" if p.saving_frac is None else f" ({100 * p.saving_frac:.1f} %)"
    measured = f"measured {r.measured_ms:.3f} ms on {r.measured_streams} {label}"
    if r.measured_streams > 1 and r.predicted_at_measured_ms is not None:
        measured += f" (model at n={r.measured_streams}: {r.predicted_at_measured_ms:.3f} ms)"
    return [
        f"sequence {r.index}: {dev.name or '(unnamed device)'} (cc {dev.cc[0]}.{dev.cc[1]} from "
        f"{dev.cc_source}), {label} {stream_ids}, "
        f"{seq.start_ns / 1e6:.3f}-{seq.end_ns / 1e6:.3f} ms",
        f"  operations  {seq.htod_count} HtoD, {seq.kernel_count} kernels "
        f"({_names(seq.kernels)}), {seq.dtoh_count} DtoH",
        f"  times       t_Thd {p.t_thd_ms:.3f} ms, t_E {p.t_e_ms:.3f} ms, "
        f"t_Tdh {p.t_tdh_ms:.3f} ms; {measured}",
        f"  model       {p.model.title} [{origin}: {p.model.source}]",
        f"  t_sc        {p.t_sc_ms:g} ms ({dev.tsc_source})",
        f"  optimum     n = {p.optimal_n} ({p.regime}); closed form "
        f"{p.closed_form.n:.1f} from {p.closed_form.equation}",
        f"  predicted   n=1: {p.predicted_1_ms:.3f} ms, n={p.optimal_n}: "
        f"{p.predicted_optimal_ms:.3f} ms; saving {p.saving_ms:.3f} ms{saving} vs n=1, "
        f"{r.saving_vs_measured_ms:.3f} ms vs measured",
        f"  curve (ms)  {_curve(p)}",
    ] + [f"  note: {note}" for note in r.notes]


def _names(kernels: tuple[str, ...]) -> str:
    first = kernels[0] if kernels else ""
    if len(first) > NAME_CHARS:
        first = first[: NAME_CHARS - 3] + "..."
    more = f" + {len(kernels) - 1} more" if len(kernels) > 1 else ""
    return first + more


def _curve(p: streams.StreamPrediction) -> str:
    last = len(p.curve_ms)
    points = sorted({n for n in CURVE_POINTS if n <= last} | {p.optimal_n, last})
    return "  ".join(f"{n}: {p.curve_ms[n - 1]:.3f}" for n in points)


COMMANDS: list[click.Command] = [streams_cmd]
