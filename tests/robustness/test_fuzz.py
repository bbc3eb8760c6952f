"""Property-based fuzzing (hypothesis) of every reader and of the unit / number normaliser.

Readers: a sample profile of each reader, damaged by a random list of edits (lines deleted,
duplicated or inserted, bytes replaced, the file cut), through ``parsers.read``: the result is
a Profile or an InputError naming the file, never another exception.  Sniffers: arbitrary lines
give a bool.  Normaliser (parsers/units.py, parsers/ncu/values.py, parsers/names.py): arbitrary
text gives a number, NaN or the documented ValueError; valid values round-trip exactly.

Example counts: :data:`EXAMPLES` per reader (``derandomize=True``, so a CI run is repeatable) and
ten times that per normaliser property.  The longer run sets ``ADVISOR_FUZZ_EXAMPLES``::

    ADVISOR_FUZZ_EXAMPLES=5000 python3 -m pytest -q tests/robustness/test_fuzz.py

which also randomises the examples (a new seed each run; hypothesis prints the failing input and
its ``@reproduce_failure`` line).
"""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import parsers
from advisor.errors import InputError
from parsers import names, registry, units
from parsers.ncu import values as ncu_values
from tests.conftest import SAMPLES

_LONG = "ADVISOR_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("ADVISOR_FUZZ_EXAMPLES", "20"))
READERS = settings(
    max_examples=EXAMPLES,
    derandomize=not _LONG,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)
NORMALISER = settings(
    max_examples=EXAMPLES * 10, derandomize=not _LONG, deadline=None, database=None
)

#: one sample per reader (the file names say which)
READER_SAMPLES = (
    "synthetic_nvprof_gputrace.csv",
    "synthetic_nvprof_metrics.csv",
    "synthetic_nvprof_summary.txt",
    "synthetic_ncu_details.csv",
    "synthetic_ncu_raw.csv",
    "synthetic_nsys_cuda_gpu_trace.csv",
    "synthetic_nsys_stats_multi.csv",
)

_CELL_TEXT = st.text(
    alphabet=st.sampled_from(list(',"\t;%.-+eE0123456789 ()[]<>/KMGBsumn\u00e9\u202e\x00')),
    max_size=40,
)
_EDIT = st.tuples(
    st.sampled_from(("delete", "duplicate", "insert", "replace", "cut")),
    st.floats(0, 1),
    st.one_of(_CELL_TEXT.map(lambda t: t.encode("utf-8")), st.binary(max_size=40)),
)


def _apply(raw: bytes, edits: list[tuple[str, float, bytes]]) -> bytes:
    for kind, where, payload in edits:
        lines = raw.split(b"\n")
        i = min(int(where * len(lines)), len(lines) - 1)
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "insert":
            lines.insert(i, payload)
        elif kind == "replace":
            at = int(where * len(raw))
            raw = raw[:at] + payload + raw[at + len(payload) :]
            continue
        else:
            raw = raw[: int(where * len(raw))]
            continue
        raw = b"\n".join(lines)
    return raw


def _read_or_input_error(path: Path) -> None:
    try:
        parsers.read(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)), str(exc)


@READERS
@given(sample=st.sampled_from(READER_SAMPLES), edits=st.lists(_EDIT, min_size=1, max_size=4))
def test_readers_on_damaged_samples(
    tmp_path_factory: object, sample: str, edits: list[tuple[str, float, bytes]]
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")  # type: ignore[attr-defined]
    path = folder / sample
    path.write_bytes(_apply((SAMPLES / sample).read_bytes(), edits))
    _read_or_input_error(path)


@NORMALISER
@given(lines=st.lists(st.text(max_size=60), max_size=6))
def test_text_sniffers_answer_a_bool(lines: list[str]) -> None:
    for fmt in registry.text_formats():
        assert fmt.sniff(lines) in (True, False), fmt.name


@NORMALISER
@given(head=st.binary(max_size=64))
def test_binary_sniffers_answer_a_bool(head: bytes) -> None:
    for fmt in registry.binary_formats():
        assert fmt.sniff(head) in (True, False), fmt.name


# --- the normaliser ----------------------------------------------------------------------------

_FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)


@NORMALISER
@given(text=st.one_of(st.text(max_size=30), _CELL_TEXT))
def test_number_cells_never_raise(text: str) -> None:
    for value in (
        units.parse_number(text),
        units.parse_level(text),
        ncu_values.cell_number(text),
        ncu_values.cell_number(text, decimal_comma=True),
    ):
        assert isinstance(value, float)
    try:
        value, unit = units.nvprof_cell(text)
    except ValueError:
        return
    assert isinstance(value, float) and isinstance(unit, str)


@NORMALISER
@given(x=_FINITE)
def test_numbers_round_trip(x: float) -> None:
    assert units.parse_number(repr(x)) == x
    assert units.parse_number(f" {x!r} ") == x


@NORMALISER
@given(n=st.integers(-(10**15), 10**15))
def test_thousands_separators(n: int) -> None:
    assert units.parse_number(f"{n:,}") == n


@NORMALISER
@given(x=st.floats(0, 1e12, allow_nan=False), unit=st.sampled_from(sorted(units.BINARY)))
def test_nvprof_binary_sizes_and_rates(x: float, unit: str) -> None:
    assert units.nvprof_cell(f"{x!r}{unit}") == (x * units.BINARY[unit], "byte")
    assert units.nvprof_cell(f"{x!r}{unit}/s") == (x * units.BINARY[unit], "byte/s")


@NORMALISER
@given(x=st.floats(0, 1e12, allow_nan=False), unit=st.sampled_from(sorted(units.TIME_NS)))
def test_times_scale_to_ns(x: float, unit: str) -> None:
    assert units.time_to_ns(x, unit) == x * units.TIME_NS[unit]
    assert units.scale_ncu(x, unit) == (x * units.TIME_NS[unit], "ns")


@NORMALISER
@given(x=_FINITE, unit=st.text(max_size=20))
def test_unit_scalers_never_raise_but_valueerror(x: float, unit: str) -> None:
    value, base = units.scale_ncu(x, unit)
    assert isinstance(base, str) and (math.isnan(value) or isinstance(value, float))
    with contextlib.suppress(ValueError):
        units.scale_nvprof(x, unit)
    with contextlib.suppress(ValueError):
        units.scale_nsys_header(unit)
    try:
        units.time_to_ns(x, unit)
    except ValueError:
        assert unit.strip() not in units.TIME_NS


@NORMALISER
@given(metric=st.text(max_size=30), unit=st.text(max_size=20))
def test_ncu_canonical_names_never_raise(metric: str, unit: str) -> None:
    name, factor, base = ncu_values.canonical(metric, unit)
    assert isinstance(name, str) and isinstance(factor, float) and isinstance(base, str)


@NORMALISER
@given(name=st.text(max_size=40), corr=st.integers(0, 2**31 - 1))
@example(name="²", corr=0)  # a digit to str.isdigit, not to int()
def test_names_split_and_round_trip(name: str, corr: int) -> None:
    names.split_correlation(name)
    names.split_device(name)
    names.parse_dims(name)
    names.transfer_kind(name)
    if name and not name[-1].isspace():
        assert names.split_correlation(f"{name} [{corr}]") == (name, corr)
