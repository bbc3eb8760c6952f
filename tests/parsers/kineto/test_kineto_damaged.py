"""Damaged and hostile Kineto traces: every one read or refused with one message naming the file
(exit 3), never a crash of the JSON parser, an internal error or unbounded memory."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import parsers
from advisor.errors import MalformedInput
from parsers.kineto.stream import MAX_DEPTH, MAX_NUMBER_CHARS
from tests.cli_helpers import assert_one_line_error, run
from tests.parsers.kineto.trace_builder import step_events, write_trace


def _text(events: list[dict]) -> str:
    return json.dumps({"schemaVersion": 1, "traceEvents": events})


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_a_number_of_thousands_of_digits_is_refused(tmp_path: Path, compress: bool) -> None:
    # the parser's C backend crashes the interpreter on integers past Python's digit limit
    text = _text(step_events()).replace('"correlation": 1', '"correlation": ' + "9" * 5000, 1)
    path = tmp_path / "t.json"
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    with pytest.raises(MalformedInput, match=f"longer than {MAX_NUMBER_CHARS} digits at byte"):
        parsers.read(path)


def test_a_long_number_split_across_reads_is_refused(tmp_path: Path) -> None:
    # 64 KiB reads: the digits start before the end of the first read and go on after it
    pad = "x" * (65_536 - 40)
    text = '{"traceEvents": [{"name": "' + pad + '", "ts": ' + "1" * 150 + "}]}"
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(MalformedInput, match="longer than 100 digits"):
        parsers.read(path)


def test_deep_nesting_is_refused_before_the_parser_builds_it(tmp_path: Path) -> None:
    depth = 100_000
    path = tmp_path / "deep.json"
    path.write_text('{"traceEvents": ' + "[" * depth + "]" * depth + "}")
    code, _, err = run("inspect", str(path))
    assert code == 3, err
    # bytes from 0: the object's "{" is level 1, the 64th "[" (byte 16 + 63) is level 65
    assert_one_line_error(err, str(path), f"nested deeper than {MAX_DEPTH} levels at byte 79")


def test_braces_in_kernel_names_do_not_count_as_nesting(tmp_path: Path) -> None:
    events = step_events()
    for e in events:
        if e.get("cat") == "kernel":
            e["name"] = "void k<{lambda()#1}>(" + "{lambda()#2}" * 40 + ")"
    profile = parsers.read(write_trace(tmp_path / "t.json", events))
    assert len(profile.launches) == 5


def test_invalid_utf8_is_malformed_input(tmp_path: Path) -> None:
    text = _text(step_events()).encode().replace(b'"gemm_kernel"', b'"gemm_\xed\xa0\x80"', 1)
    path = tmp_path / "t.json"
    path.write_bytes(text)
    with pytest.raises(MalformedInput, match="not valid UTF-8"):
        parsers.read(path)


def test_values_no_64_bit_column_holds_are_missing_not_errors(tmp_path: Path) -> None:
    events = step_events()
    kernels = [e for e in events if e.get("cat") == "kernel"]
    kernels[0]["args"]["grid"] = [1e30, 1, 1]  # a Decimal beyond its precision for % 1
    kernels[1]["args"]["correlation"] = 2**70
    text = _text(events).replace('"ts": ', '"ts": 1e999, "_ts": ', 1)  # the first event's ts
    path = tmp_path / "t.json"
    path.write_text(text)
    profile = parsers.read(path)
    assert len(profile.launches) == 5
    assert profile.launches["grid_x"].isna().sum() == 1


def test_a_gzip_cut_short_is_malformed_input(tmp_path: Path) -> None:
    events = step_events() * 200  # enough to compress to more than the cut
    data = gzip.compress(_text(events).encode())
    path = tmp_path / "t.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(MalformedInput, match="gzip"):
        parsers.read(path)


def test_deep_nesting_in_a_later_read_is_refused_at_its_byte(tmp_path: Path) -> None:
    # the nesting is counted over the brackets of each 64 KiB read and carried to the next;
    # the byte named is the one a walk over every byte of the file finds
    pad = "x" * 70_000
    text = '{"traceEvents": [{"name": "' + pad + '", "args": ' + "[" * 80 + "]" * 80 + "}]}"
    depth, expected = 0, -1
    for at, char in enumerate(text):
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(char, 0)
        if depth > MAX_DEPTH:
            expected = at
            break
    assert expected > 65_536
    path = tmp_path / "deep.json"
    path.write_text(text)
    message = f"deeper than {MAX_DEPTH} levels at byte {expected:,}$"
    with pytest.raises(MalformedInput, match=message):
        parsers.read(path)


def test_numbers_the_parser_gives_convert_as_the_columns_need() -> None:
    from decimal import Decimal

    from parsers.kineto.events import MISSING, integer, ns, number

    assert ns(Decimal("1700000000000172.253")) == 1_700_000_000_000_172_253  # no float rounding
    assert ns(Decimal("-0.0015")) == -1  # truncated toward zero, as before
    assert ns(12) == 12_000 and ns(True) == MISSING and ns("1") == MISSING
    assert ns(Decimal("1E+999")) == MISSING and ns(10**30) == MISSING
    assert ns(0.25) == 250  # a float (not from the JSON parser) through Decimal, exactly
    assert integer(7) == 7 and integer(True) == MISSING and integer(2**63) == MISSING
    assert integer(Decimal("3.0")) == 3 and integer(Decimal("3.5")) == MISSING
    assert number(Decimal("2.5")) == 2.5 and number(10**400) != number(10**400)  # NaN
    assert number(False) != number(False)


def test_an_end_beyond_the_64_bit_range_is_a_one_line_error(tmp_path: Path) -> None:
    """An operator starting 9.2e15 µs after the epoch and lasting 9e15 µs ends past 2**63 ns:
    no column holds it, and the file is refused as malformed (exit 3), not an internal error."""
    huge = {"ph": "X", "cat": "cpu_op", "name": "aten::huge", "pid": 1, "tid": 1,
            "ts": 9_200_000_000_000_000, "dur": 9_000_000_000_000_000, "args": {}}  # fmt: skip
    path = write_trace(tmp_path / "t.json", [*step_events(), huge])
    with pytest.raises(MalformedInput, match="64-bit nanosecond range"):
        parsers.read(path)
    code, _, err = run("report", str(path), "--json", str(tmp_path / "o.json"))
    assert code == 3
    assert_one_line_error(err, str(path))
