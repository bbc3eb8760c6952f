"""Unit conversion at the parser boundary (FORMATS.md §1.3, §1.5, §2.5, §3.2)."""

from __future__ import annotations

import math

import pytest

from parsers import units


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        # nvprof prefixes are binary: 155.068995 GB/s = 155.068995 * 2**30 B/s
        ("155.068995GB/s", (155.068995 * 2**30, "byte/s")),
        ("976.562500KB/s", (976.5625 * 1024, "byte/s")),
        ("0.000000B/s", (0.0, "byte/s")),
        ("97.511450%", (0.9751145, "frac")),
        ("132.000000%", (1.32, "frac")),  # shared_efficiency may exceed 100 %: not clamped
        ("Low (1)", (1.0, "level")),
        ("Max (10)", (10.0, "level")),
        ("259.97us", (259970.0, "ns")),
        ("102.599s", (102.599e9, "ns")),
        ("409.60KB", (409.6 * 1024, "byte")),
        ("3.3255e+10", (3.3255e10, "")),
        ("965.000000", (965.0, "")),
    ],
)
def test_nvprof_cell_converts_glued_units(cell: str, expected: tuple[float, str]) -> None:
    value, unit = units.nvprof_cell(cell)
    assert unit == expected[1]
    assert value == pytest.approx(expected[0], rel=1e-12)


@pytest.mark.parametrize("token", ["<OVERFLOW>", "n/a", "-", "", "  "])
def test_special_tokens_are_missing(token: str) -> None:
    value, _ = units.nvprof_cell(token)
    assert math.isnan(value)
    assert math.isnan(units.parse_number(token))


def test_nvprof_cell_rejects_unknown_unit() -> None:
    with pytest.raises(ValueError, match="unknown nvprof unit"):
        units.nvprof_cell("12.0furlongs")


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (13.72, "Ghz", (13.72e9, "hz")),  # ncu prefixes are decimal
        (3.2, "Mbyte", (3.2e6, "byte")),
        (250.0, "Gbyte/second", (250e9, "byte/s")),
        (65.77, "%", (0.6577, "frac")),
        (1.2, "usecond", (1200.0, "ns")),
        (406240.0, "ns", (406240.0, "ns")),
        (3.0, "cycle/nsecond", (3e9, "cycle/s")),
        (8.0, "Kbyte/block", (8000.0, "byte/block")),
        (40.0, "register/thread", (40.0, "register/thread")),
        (7.0, "", (7.0, "")),
    ],
)
def test_scale_ncu(value: float, unit: str, expected: tuple[float, str]) -> None:
    got = units.scale_ncu(value, unit)
    assert got[1] == expected[1]
    assert got[0] == pytest.approx(expected[0])


@pytest.mark.parametrize(
    ("header_unit", "expected"),
    [
        ("(ns)", (1.0, "ns")),
        ("(us)", (1e3, "ns")),
        ("(MB)", (1e6, "byte")),  # nsys MB is decimal: 4.194 MB = 4,194,000 B
        ("(MB/s)", (1e6, "byte/s")),
        ("(MBps)", (1e6, "byte/s")),
        ("(KiB)", (1024.0, "byte")),
        ("(%)", (0.01, "frac")),
    ],
)
def test_scale_nsys_header(header_unit: str, expected: tuple[float, str]) -> None:
    assert units.scale_nsys_header(header_unit) == expected


def test_parse_number_handles_separators_and_scientific() -> None:
    assert units.parse_number('"1,234.56"') == 1234.56
    assert units.parse_number("14,103,936") == 14103936.0
    assert units.parse_number("1.31e+03") == 1310.0
    assert math.isnan(units.parse_number("PolicySpread"))


def test_parse_level() -> None:
    assert units.parse_level("Idle (0)") == 0.0
    assert units.parse_level("Mid (5)") == 5.0
    assert math.isnan(units.parse_level("5"))


def test_time_to_ns_rejects_unknown_unit() -> None:
    assert units.time_to_ns(1.5, "ms") == 1.5e6
    with pytest.raises(ValueError):
        units.time_to_ns(1.0, "fortnight")


def test_fits_int_accepts_only_whole_numbers_an_int64_column_holds() -> None:
    assert units.fits_int(7) and units.fits_int(7.0) and units.fits_int(2**63 - 1)
    for value in (1.5, math.nan, math.inf, -math.inf, 1e20, 2**63, float(2**63 - 1)):
        assert not units.fits_int(value), value
