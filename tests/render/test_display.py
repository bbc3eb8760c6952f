"""Display helpers shared by the HTML, the Markdown and the command line."""

from __future__ import annotations

import pytest

from advisor.render.display import counted, duration


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


@pytest.mark.parametrize(
    ("value", "threshold", "text"),
    [
        (0.7967, 0.8, "0.797"),  # below 0.80, never printed as 0.80
        (0.79996, 0.8, "0.8000"),  # four decimals at most
        (0.8, 0.8, "0.80"),  # at the threshold: not below it
        (0.8049, 0.8, "0.80"),  # above: two decimals
        (0.8949, 0.9, "0.89"),  # already distinct from the threshold
        (0.8996, 0.9, "0.8996"),  # 0.90 and 0.900 would both read as the threshold
        (0.5, None, "0.50"),
    ],
)
def test_a_value_below_its_threshold_never_reads_as_the_threshold(
    value: float, threshold: float | None, text: str
) -> None:
    from advisor.render.display import criterion_value
    from advisor.render.templating import fmt_criterion

    assert criterion_value(value, threshold) == text
    assert fmt_criterion(value, threshold) == text
    assert fmt_criterion(0.0031, 0.8) == "0.0031"  # small values keep two significant digits
    assert fmt_criterion(None, 0.8) == "n/a"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.5, "1.50x"),
        (99.994, "99.99x"),
        (1 / (1 - 0.99), "100x"),  # 99.99999999999991: never "100.00x" beside "101x"
        (100.0, "100x"),
        (1207.93, "1,208x"),
        (None, "n/a"),
    ],
)
def test_a_speedup_of_100x_or_more_has_no_decimals(value: float | None, text: str) -> None:
    from advisor.render.display import speedup_text

    assert speedup_text(value) == text


def test_a_count_and_its_word_agree() -> None:
    assert counted(1, "kernel") == "1 kernel"
    assert counted(0, "kernel") == "0 kernels"
    assert counted(1_154, "launch", "launches") == "1,154 launches"
    assert counted(1, "launch", "launches") == "1 launch"
    assert counted(2, "launch") == "2 launches"  # + es after ch, s, sh, x
