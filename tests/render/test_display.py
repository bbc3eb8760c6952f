"""Display helpers shared by the HTML, the Markdown and the command line."""

from __future__ import annotations

import pytest

from advisor.render.display import duration


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0.0, "0 ns"),
        (850.0, "850 ns"),
        (999.6, "1.00 µs"),  # rounds up into the next unit
        (5_250.0, "5.25 µs"),
        (12_345.0, "12.3 µs"),
        (99_960.0, "100 µs"),
        (9_582_000.0, "9.58 ms"),
        (1.2e9, "1.20 s"),
        (3.5e10, "35.0 s"),
        (None, "—"),
        (float("nan"), "—"),
        (-1.0, "—"),
    ],
)
def test_duration_picks_the_unit_of_its_magnitude(ns: float | None, text: str) -> None:
    assert duration(ns) == text
