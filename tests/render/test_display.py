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


def test_a_tiny_share_is_written_out_never_as_an_exponent() -> None:
    """A kernel of 7e-7 of the GPU time read "7e-05%" in the Markdown table (``:.2g``)."""
    from advisor.render.display import share

    assert share(7e-7) == "0.00007%"
    assert share(0.000071) == "0.0071%"
    assert share(0.4837) == "48.4%"
    assert share(0.0) == "0.0%"
    assert share(None) == "n/a"
    assert "e" not in share(1.234e-9)
