"""The report's charts as inline SVG, drawn with matplotlib (no pyplot, no global state).

Output is byte-identical for the same input: the SVG id salt is fixed, the date and creator
metadata are left out, text stays text (``svg.fonttype = none``).  matplotlib's SVG writer
escapes every text it writes (``&``, ``<``, ``>``, quotes), so labels taken from a profile
(stream names, transfer kinds) cannot inject markup; :func:`svg_markup` still refuses an SVG that
holds a ``<script`` element or a ``foreignObject`` before it is marked safe for the template.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from advisor.render.criteria_svg import chart_label, criteria_svg
from advisor.render.display import duration
from advisor.report.build import KernelDetail, StreamsSequence
from advisor.report.roofline import Roofline
from advisor.report.timeline import Setup, Timeline

if TYPE_CHECKING:  # matplotlib is imported when the first chart is drawn
    from matplotlib.figure import Figure

#: rcParams that make the SVG small and reproducible
_RC: Any = {  # matplotlib types rcParams keys as literals
    "svg.hashsalt": "cuda-advisor",
    "svg.fonttype": "none",
    "font.size": 8,
    "font.family": "DejaVu Sans",
    "axes.spines.top": False,
    "axes.spines.right": False,
}
#: colours: bar or point, potential speedup marker, idle gap
_OK, _SPEEDUP, _GAP = "#4c72b0", "#c44e52", "#d62728"
_KIND_COLOURS = {"kernel": "#4c72b0", "HtoD": "#55a868", "DtoH": "#8172b2"}
_OTHER_KIND = "#937860"
_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_FORBIDDEN = re.compile(
    r"<\s*(script|foreignObject)\b|<[^>]*\son\w+\s*=|<[^>]*javascript:", re.IGNORECASE
)


@contextmanager
def _rc() -> Iterator[None]:
    """matplotlib's ``rc_context`` with the report's settings (matplotlib loads on first use),
    and its warnings silenced: every chart is drawn inside, and no Python warning of a library
    (a non-finite axis limit, a missing glyph) may reach the user's stderr."""
    import matplotlib

    with warnings.catch_warnings(), matplotlib.rc_context(_RC):
        warnings.simplefilter("ignore")
        yield


def svg_markup(fig: Figure) -> Markup:
    """The figure as an ``<svg>`` element ready to inline in HTML (prologue and metadata cut)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.StringIO()
    with _rc():
        FigureCanvasSVG(fig).print_svg(buffer, metadata={"Date": None, "Creator": None})
    text = _METADATA.sub("", _PROLOGUE.sub("", buffer.getvalue(), count=1))
    if _FORBIDDEN.search(text):
        raise ValueError("chart SVG holds active content; refusing to inline it")
    return Markup(text.strip())  # matplotlib escaped every text; checked above


def _figure(width_in: float, height_in: float) -> Figure:
    from matplotlib.figure import Figure

    with _rc():
        return Figure(figsize=(width_in, height_in), dpi=72)


def criteria_chart(detail: KernelDetail) -> Markup:
    """The criteria in [0, 1] as bars (the criteria paper's case-study figures), the
    threshold as a dashed line, each computed criterion's potential speedup marked above its
    bar; written as SVG directly (:mod:`advisor.render.criteria_svg`), up to twenty per report."""
    return criteria_svg(detail.criteria, str(detail.row.rank))


def timeline_chart(timeline: Timeline) -> Markup:
    """Kernels and transfers by stream from the first kernel on, one row per stream with an
    activity drawn; shaded: the stretches inside HOSTSYNC's span where no kernel runs.  The
    set-up before the first kernel is a separate band at the left with its length written in it
    (:class:`~advisor.report.timeline.Setup`), neither to scale nor shaded.  An activity shorter
    than :data:`_MIN_BAR_FRAC` of the axis is drawn that wide, so that none is invisible."""
    with _rc():
        streams = sorted({i.stream for i in timeline.intervals}, key=_stream_key)
        setup = timeline.setup
        height_in = 1.3 + 0.3 * len(streams)
        if setup is not None:
            height_in = max(height_in, _SETUP_MIN_HEIGHT_IN)  # room for the band's text
        fig = _figure(7.0, height_in)
        if setup is None:
            ax = labels = fig.add_subplot(1, 1, 1)
        else:
            labels, ax = fig.subplots(
                1, 2, sharey=True, gridspec_kw={"width_ratios": [1, 9], "wspace": 0.03}
            )
            _setup_band(labels, setup)
            ax.tick_params(labelleft=False)
        t0 = timeline.span_ns[0]
        axis_ms = max((timeline.span_ns[1] - t0) / 1e6, 1e-6)
        narrowest = _MIN_BAR_FRAC * axis_ms
        kinds = sorted({i.kind for i in timeline.intervals})
        bars_of: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for i in timeline.intervals:  # one pass, each (kind, stream) in interval order
            bars_of.setdefault((i.kind, i.stream), []).append(
                ((i.start_ns - t0) / 1e6, max((i.end_ns - i.start_ns) / 1e6, narrowest))
            )
        for kind in kinds:
            labelled = False  # the first stream row holding ``kind`` carries the legend label
            for row, stream in enumerate(streams):
                bars = bars_of.get((kind, stream))
                if bars:
                    ax.broken_barh(
                        bars,
                        (row - 0.35, 0.7),
                        facecolors=_KIND_COLOURS.get(kind, _OTHER_KIND),
                        label=None if labelled else kind,
                    )
                    labelled = True
        for a, b in timeline.gaps:
            ax.axvspan((a - t0) / 1e6, (b - t0) / 1e6, color=_GAP, alpha=0.15, linewidth=0)
        labels.set_yticks(range(len(streams)))
        labels.set_yticklabels([f"stream {s}" for s in streams])
        labels.set_ylim(-0.6, len(streams) - 0.4)
        if timeline.kernel_span_ns is None:
            ax.set_xlabel("time since the first activity (ms)")
        else:
            ax.set_xlabel("time since the first kernel (ms); shaded: no kernel running (HOSTSYNC)")
        ax.set_xlim(0, axis_ms)
        ax.legend(
            loc="lower right",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=7,
            frameon=False,
            ncol=max(1, len(kinds)),
        )
        fig.subplots_adjust(left=0.14, right=0.99, top=1 - 0.3 / height_in, bottom=0.45 / height_in)
        return svg_markup(fig)


#: the chart's height (inches) when it has a set-up band, whose text runs up the band
_SETUP_MIN_HEIGHT_IN = 2.2
#: the narrowest bar on the timeline, as a share of its time axis (about one pixel)
_MIN_BAR_FRAC = 0.002
_SETUP_COLOUR = "#bbbbbb"


def _setup_band(ax: Any, setup: Setup) -> None:
    """The set-up before the first kernel: a grey band, its length and content written up it."""
    ax.axvspan(0, 1, color=_SETUP_COLOUR, alpha=0.35, linewidth=0)
    ax.set_xlim(0, 1)
    ax.set_xticks([])
    lines = [f"set-up: {duration(setup.duration_ns)} before", "the first kernel"]
    if setup.activities:  # copies and memsets: the report's transfers
        noun = "transfer" if setup.activities == 1 else "transfers"
        on = f" on {setup.streams} streams" if setup.streams > 1 else ""
        lines += [f"({setup.activities} {noun}{on},", "not drawn)"]
    ax.text(
        0.5,
        0.5,
        "\n".join(lines),
        rotation=90,
        ha="center",
        va="center",
        fontsize=6.5,
        transform=ax.transAxes,
    )


#: ns per unit of the units :func:`advisor.render.display.duration` writes
_NS_PER_UNIT = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9}


def time_unit(largest_ns: float) -> tuple[str, float]:
    """(unit, ns per unit) of an axis whose largest time is ``largest_ns``: the unit
    :func:`advisor.render.display.duration` writes it in."""
    unit = duration(max(largest_ns, 0.0)).rsplit(" ", 1)[-1]
    return (unit, _NS_PER_UNIT[unit]) if unit in _NS_PER_UNIT else ("ms", 1e6)


def streams_chart(seq: StreamsSequence) -> Markup:
    """Predicted time of one sequence versus the number of streams (the CUDA streams model), in
    the time unit the curve's magnitude calls for."""
    points = [(n, v) for n, v in enumerate(seq.curve_ms, start=1) if v is not None]
    known = [v for _, v in points] + [
        v for v in (seq.measured_ms, seq.predicted_optimal_ms) if v is not None
    ]
    unit, scale = time_unit(max(known, default=0.0) * 1e6)
    per_ms = 1e6 / scale  # axis units per millisecond
    with _rc():
        fig = _figure(5.0, 2.2)
        ax = fig.add_subplot(1, 1, 1)
        ax.plot([p[0] for p in points], [p[1] * per_ms for p in points], color=_OK, linewidth=1.2)
        if seq.predicted_optimal_ms is not None:
            optimal = seq.predicted_optimal_ms * per_ms
            ax.plot([seq.optimal_n], [optimal], "o", color=_SPEEDUP)
            ax.annotate(
                f"optimal n = {seq.optimal_n}",
                (seq.optimal_n, optimal),
                textcoords="offset points",
                xytext=(4, 8),
                color=_SPEEDUP,
            )
        if seq.measured_ms is not None:
            ax.plot(
                [seq.measured_streams],
                [seq.measured_ms * per_ms],
                "s",
                color="#333333",
                label="measured",
            )
            ax.legend(loc="upper right", fontsize=7, frameon=False)
        ax.set_xlabel("number of streams n")
        ax.set_ylabel(f"predicted time ({unit})")
        fig.subplots_adjust(left=0.13, right=0.98, top=0.95, bottom=0.2)
        return svg_markup(fig)


def _stream_key(stream: str) -> tuple[int, float, str]:
    try:
        return (0, float(stream), stream)
    except ValueError:
        return (1, 0.0, stream)


def grouped_criteria_chart(
    criteria: Sequence[tuple[str, Sequence[float | None]]], versions: Sequence[str]
) -> Markup:
    """Every criterion across versions as grouped bars (seed 002 Fig. 5-7 style); a version
    where the criterion is not computable leaves its slot empty."""
    with _rc():
        fig = _figure(7.0, 2.6)
        ax = fig.add_subplot(1, 1, 1)
        width = 0.8 / max(1, len(versions))
        for j, version in enumerate(versions):
            xs = [i + (j - (len(versions) - 1) / 2) * width for i in range(len(criteria))]
            values = [_or_zero(v[j]) for _, v in criteria]
            ax.bar(xs, values, width=width, label=version)
        ax.set_ylim(0, 1.05)
        ax.set_xticks(range(len(criteria)))
        slot = ax.get_position().width * 7.0 * 72 / max(1, len(criteria))  # px per criterion
        ax.set_xticklabels(["\n".join(chart_label(c, slot)) for c, _ in criteria], fontsize=6.5)
        ax.set_ylabel("criterion (1 = best)")
        ax.legend(
            loc="lower right",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=7,
            frameon=False,
            ncol=max(1, len(versions)),
        )
        fig.subplots_adjust(left=0.08, right=0.99, top=0.88, bottom=0.2)
        return svg_markup(fig)


def _or_zero(value: float | None) -> float:
    return 0.0 if value is None else float(value)


def roofline_chart(roofline: Roofline) -> Markup:
    """Achieved FLOP/s over arithmetic intensity (log-log), one numbered point per kernel (its
    rank in the kernel table), under the roof min(peak, bandwidth × intensity); the FP64
    (dashed) and FP16 (dotted) ceilings when a kernel of that precision is drawn."""
    peak32 = roofline.peak_fp32_flops or 1.0
    bandwidth = roofline.peak_dram_bytes_per_s or 1.0
    points = [p for p in roofline.points if p.drawn]
    xs = [float(p.intensity or 1.0) for p in points]
    ys = [float(p.achieved_flops or 1.0) for p in points]
    ridge = peak32 / bandwidth
    lo = min([*xs, ridge]) / 10
    hi = max([*xs, ridge]) * 10
    with _rc():
        fig = _figure(7.0, 3.2)
        ax = fig.add_subplot(1, 1, 1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.plot([lo, ridge, hi], [bandwidth * lo, peak32, peak32], color="#333333", linewidth=1.2)
        ax.text(hi, peak32 * 1.1, f"FP32 peak {peak32 / 1e12:.3g} TFLOP/s", ha="right", va="bottom")
        ax.text(
            lo * 1.2,
            bandwidth * lo * 1.5,
            f"DRAM {bandwidth / 1e9:.4g} GB/s",
            ha="left",
            va="bottom",
            rotation=20,
        )
        top = peak32
        for label, peak, style in (
            ("FP64", roofline.peak_fp64_flops, "--"),
            ("FP16", roofline.peak_fp16_flops, ":"),
        ):
            if peak and any(p.precision == label.lower() for p in points):
                ax.plot([peak / bandwidth, hi], [peak, peak], color="#333333", lw=0.8, ls=style)
                ax.text(hi, peak * 1.1, f"{label} peak {peak / 1e12:.3g} TFLOP/s", ha="right")
                top = max(top, peak)
        ax.scatter(xs, ys, color=_OK, zorder=3, s=18)
        for p, x, y in zip(points, xs, ys, strict=True):
            ax.annotate(str(p.rank), (x, y), textcoords="offset points", xytext=(4, 3))
        ax.set_xlim(lo, hi)
        ax.set_ylim(min([*ys, bandwidth * lo]) / 2, top * 3)
        ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
        ax.set_ylabel("achieved FLOP/s")
        fig.subplots_adjust(left=0.11, right=0.98, top=0.96, bottom=0.15)
        return svg_markup(fig)
