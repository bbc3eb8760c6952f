"""The per-kernel criteria chart written as SVG (advisor/render/criteria_svg.py)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from advisor.render.criteria_svg import _BOTTOM, _TOP, Y_MAX, criteria_svg
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
    assert {"L1", "GRANULARITY", "SHMEM", "EFFICIENCY"} <= set(texts)  # names, a word a line
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
