"""The per-kernel criteria chart written as SVG (advisor/render/criteria_svg.py)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from advisor.criteria import CRITERIA, KERNEL_CRITERIA
from advisor.render.criteria_svg import (
    _BOTTOM,
    _TOP,
    HEIGHT,
    LABEL_SIZE,
    WIDTH,
    Y_MAX,
    chart_label,
    criteria_svg,
    text_width,
)
from advisor.report.build import CriterionView

_NS = "{http://www.w3.org/2000/svg}"


def _view(name: str, value: float | None, **kw: object) -> CriterionView:
    fields: dict[str, object] = {
        "status": "computed" if value is not None else "not_computable",
        "potential_speedup": None,
        "threshold": None,
        "below_threshold": False,
        "method": "",
        "inputs": (),
        "missing": (),
        "collect": (),
        "notes": (),
    }
    fields.update(kw)
    return CriterionView(name=name, value=value, **fields)  # type: ignore[arg-type]


def _tree(criteria: list[CriterionView], ident: str = "1") -> ET.Element:
    return ET.fromstring(str(criteria_svg(criteria, ident)))


def test_bar_heights_follow_the_values_on_the_fixed_scale() -> None:
    root = _tree([_view("A", 1.0), _view("B", 0.5), _view("C", 0.0)])
    bars = [r for r in root.iter(f"{_NS}rect") if not r.get("fill", "").startswith("url(")]
    heights = [float(r.get("height", "nan")) for r in bars]
    full = (_BOTTOM - _TOP) / Y_MAX  # px for a value of 1
    assert heights == pytest.approx([full, full / 2, 0.0], abs=0.1)
    labels = [t.text for t in root.iter(f"{_NS}text")]
    assert {"1.00", "0.50", "0.00"} <= set(labels)


def test_colours_thresholds_speedups_and_missing_values() -> None:
    criteria = [
        _view("L1_GRANULARITY", 0.12, threshold=0.9, below_threshold=True, potential_speedup=1.5),
        _view("HOSTSYNC", None, threshold=0.8),
        _view("SHMEM_EFFICIENCY", None, status="not_applicable"),
    ]
    root = _tree(criteria, ident="7")
    fills = [r.get("fill") for r in root.iter(f"{_NS}rect")]
    assert fills == ["#dd8452", "url(#criteria-hatch-7)", "url(#criteria-hatch-7)"]
    texts = [t.text for t in root.iter(f"{_NS}text")]
    assert "1.50x" in texts and "not computable" in texts and "not applicable" in texts
    assert {"L1 gran.", "shmem eff.", "host sync"} <= set(texts)  # short labels under the bars
    dashed = [ln for ln in root.iter(f"{_NS}line") if ln.get("stroke-dasharray")]
    assert len(dashed) == 2  # one threshold per criterion that has one
    assert [p.get("id") for p in root.iter(f"{_NS}pattern")] == ["criteria-hatch-7"]


def test_text_is_escaped_and_output_is_deterministic() -> None:
    hostile = [_view('<script>alert("x")</script>', 0.5)]
    svg = str(criteria_svg(hostile, '"><b'))
    assert "<script" not in svg and "<b" not in svg
    assert "&lt;script&gt;" in svg
    ET.fromstring(svg)  # still well-formed
    assert svg == str(criteria_svg(hostile, '"><b'))
    assert re.search(r'\d\.\d{2,}"', svg) is None  # coordinates rounded to 0.1 px


def _label_boxes(root: ET.Element) -> list[tuple[float, float, float, float]]:
    """(left, top, right, bottom) of every criterion label (the texts under the plot area),
    from the per-character width estimate at the label's font size."""
    boxes = []
    for t in root.iter(f"{_NS}text"):
        x, y = float(t.get("x", "nan")), float(t.get("y", "nan"))
        size = float(t.get("font-size", "nan"))
        if y <= _BOTTOM + 5 or t.get("transform"):  # bars, values, the axis' "0.0" tick
            continue
        assert size == LABEL_SIZE and t.get("text-anchor") == "middle"
        half = text_width(t.text or "", size) / 2
        boxes.append((x - half, y - size, x + half, y + 0.25 * size))  # ascent and descent
    return boxes


@pytest.mark.parametrize("names", [CRITERIA, tuple(KERNEL_CRITERIA)], ids=["all", "kernel"])
def test_criterion_labels_never_overlap(names: tuple[str, ...]) -> None:
    """Every criterion's label under its bar, for the full set of criteria: no two labels'
    boxes intersect and each lies inside the chart (the full names, ``L1_GRANULARITY`` beside
    ``L2_GRANULARITY``, ran into each other)."""
    boxes = _label_boxes(_tree([_view(n, 0.5) for n in names]))
    assert len(boxes) >= len(names)
    for i, (l1, t1, r1, b1) in enumerate(boxes):
        assert l1 >= 0 and r1 <= WIDTH and b1 <= HEIGHT
        for l2, t2, r2, b2 in boxes[i + 1 :]:
            assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1, (boxes[i], (l2, t2, r2, b2))


def test_a_label_wider_than_its_slot_is_wrapped_then_cut() -> None:
    slot = 30.0
    lines = chart_label("AVERY_LONGCRITERIONNAME_X", slot)
    assert lines[0] == "AVERY" and lines[1].endswith("…")
    assert all(text_width(line, LABEL_SIZE) <= 0.9 * slot for line in lines)
    assert chart_label("L2_GRANULARITY", 60.0) == ["L2 gran."]  # the short column label
