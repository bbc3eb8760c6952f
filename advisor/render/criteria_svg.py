"""The per-kernel criteria chart as SVG written directly (no plotting library).

A report shows this chart for each of up to twenty kernels, and drawing it with matplotlib cost
about a quarter of a second per chart plus half a second to import matplotlib: a
``report --per-file`` run over a folder of small profiles spent most of its time there.  The
chart is nine bars on a fixed [0, 1.3] scale (seed 002's case-study figures), so it is written
here as plain SVG elements: the same layout as before (7 × 2.6 in at 72 dpi), deterministic
(coordinates rounded to 0.1 px), every text escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

from advisor.criteria import SPECS
from advisor.render.display import speedup_text
from advisor.report.build import CriterionView

#: the chart's size in px and the plot area inside it (matplotlib's subplots_adjust of the
#: earlier chart: left 0.08, right 0.99, top 0.92, bottom 0.2)
WIDTH, HEIGHT = 504.0, 187.2
_LEFT, _RIGHT, _TOP, _BOTTOM = 0.08 * WIDTH, 0.99 * WIDTH, 0.08 * HEIGHT, 0.8 * HEIGHT
#: the value axis runs from 0 to this (room above the bars for the speedup labels)
Y_MAX = 1.3
#: colours: criterion bar, below-threshold bar, potential speedup, muted text and frames
OK, LOW, SPEEDUP, MUTED = "#4c72b0", "#dd8452", "#c44e52", "#666666"
_FONT = 'font-family="DejaVu Sans, Verdana, sans-serif"'
#: the font size of the criterion names under the bars, and their line height (px)
LABEL_SIZE, LABEL_LINE = 6.5, 7.5
#: each criterion's name under its bar: the kernels table's short column label (``L1 gran.``);
#: the full names (``L1_GRANULARITY``, ``L2_GRANULARITY``) are wider than a bar's slot and ran
#: into each other
_SHORT = {s.name: s.short_label for s in SPECS}


def text_width(text: str, size: float) -> float:
    """An upper estimate of ``text``'s width in px at ``size`` in DejaVu Sans / Verdana: 0.75 em
    for a capital (``M``, ``W`` are the widest), 0.62 em for any other character."""
    return sum((0.75 if c.isupper() else 0.62) * size for c in text)


def chart_label(name: str, slot: float, size: float = LABEL_SIZE) -> list[str]:
    """The lines of ``name``'s label under a bar ``slot`` px wide: its short label (the name
    itself when it has none), words wrapped so each line is at most 90 % of the slot wide, a
    word wider than that cut with an ellipsis; labels of neighbouring bars then never touch."""
    room = 0.9 * slot
    lines: list[str] = []
    for word in _SHORT.get(name, name).replace("_", " ").split():
        while text_width(word, size) > room and len(word) > 1:
            word = word[:-2] + "…" if word.endswith("…") else word[:-1] + "…"
        if lines and text_width(f"{lines[-1]} {word}", size) <= room:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def criteria_svg(criteria: Sequence[CriterionView], ident: str) -> Markup:
    """The criteria in [0, 1] as bars, the threshold as a dashed line across each bar, each
    computed criterion's potential speedup in red above it; a criterion without a value is a
    hatched frame saying why.  ``ident`` makes the chart's pattern id unique in the page."""
    hatch = f"criteria-hatch-{escape(ident)}"
    slot = (_RIGHT - _LEFT) / max(len(criteria), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH:.1f}pt" height="{HEIGHT:.1f}pt" '
        f'viewBox="0 0 {WIDTH:.1f} {HEIGHT:.1f}" role="img" '
        f'aria-label="criteria values, thresholds and potential speedups" {_FONT} font-size="8">',
        f'<defs><pattern id="{hatch}" width="6" height="6" patternUnits="userSpaceOnUse">'
        f'<path d="M0,6 L6,0" stroke="#999999" stroke-width="0.5"/></pattern></defs>',
    ]
    parts += _axes()
    for i, c in enumerate(criteria):
        parts += _bar(c, _LEFT + (i + 0.5) * slot, slot, hatch)
    parts.append(
        _text(_RIGHT, _TOP - 3, "red: potential speedup; dashed: threshold", "end", SPEEDUP, 7)
    )
    parts.append("</svg>")
    return Markup("\n".join(parts))  # every text below went through escape()


def _y(value: float) -> float:
    """The SVG y of a value on the criterion axis."""
    return _BOTTOM - (_BOTTOM - _TOP) * min(max(value, 0.0), Y_MAX) / Y_MAX


def _axes() -> list[str]:
    parts = [
        _line(_LEFT, _TOP, _LEFT, _BOTTOM, "#000000", 0.8),
        _line(_LEFT, _BOTTOM, _RIGHT, _BOTTOM, "#000000", 0.8),
    ]
    for k in range(6):
        tick = k / 5
        y = _y(tick)
        parts.append(_line(_LEFT - 3.5, y, _LEFT, y, "#000000", 0.8))
        parts.append(_text(_LEFT - 5, y + 3, f"{tick:.1f}", "end", "#000000", 8))
    middle = (_TOP + _BOTTOM) / 2
    parts.append(
        f'<text x="0" y="0" transform="translate({12:.1f} {middle:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="#000000">criterion (1 = best)</text>'
    )
    return parts


def _bar(c: CriterionView, x: float, slot: float, hatch: str) -> list[str]:
    width = 0.8 * slot
    parts = []
    if c.value is None:
        why = "not computable" if c.status == "not_computable" else "not applicable"
        parts.append(_rect(x - width / 2, _y(1.0), width, _y(0.0) - _y(1.0), f"url(#{hatch})"))
        mid = _y(0.5)
        parts.append(
            f'<text x="0" y="0" transform="translate({x:.1f} {mid:.1f}) rotate(-90)" '
            f'text-anchor="middle" dominant-baseline="middle" fill="{MUTED}">{escape(why)}</text>'
        )
    else:
        colour = LOW if c.below_threshold else OK
        top = _y(c.value)
        parts.append(_rect(x - width / 2, top, width, _BOTTOM - top, colour, stroke=False))
        parts.append(_text(x, _y(c.value + 0.02) - 1, f"{c.value:.2f}", "middle", "#000000", 8))
        if c.potential_speedup is not None:
            label = speedup_text(c.potential_speedup)
            parts.append(_text(x, _y(1.12), label, "middle", SPEEDUP, 8, bold=True))
    if c.threshold is not None:
        y = _y(c.threshold)
        parts.append(
            f'<line x1="{x - 0.45 * slot:.1f}" y1="{y:.1f}" x2="{x + 0.45 * slot:.1f}" '
            f'y2="{y:.1f}" stroke="#333333" stroke-width="0.7" stroke-dasharray="3,2"/>'
        )
    for k, line in enumerate(chart_label(c.name, slot)):  # the name under its bar
        y = _BOTTOM + 10 + LABEL_LINE * k
        parts.append(_text(x, y, line, "middle", "#000000", LABEL_SIZE))
    return parts


def _line(x1: float, y1: float, x2: float, y2: float, colour: str, width: float) -> str:
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
        f'stroke="{colour}" stroke-width="{width}"/>'
    )


def _rect(x: float, y: float, w: float, h: float, fill: str, stroke: bool = True) -> str:
    frame = ' stroke="#999999" stroke-width="0.5"' if stroke else ""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}"{frame}/>'


def _text(
    x: float, y: float, text: str, anchor: str, colour: str, size: float, bold: bool = False
) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{colour}" '
        f'font-size="{size}"{weight}>{escape(text)}</text>'
    )


__all__ = ["chart_label", "criteria_svg", "text_width"]
