"""Plausibility ranges (advisor/plausible.py), checked rather than trusted: values at and beyond
every bound, through every side-input schema, the raw microbenchmark samples, the device
table and every checked column of a profile, and through the command line; each ends in a clean
exit (0, or 2/3 with one ``cuda-advisor: error:`` line naming the file) or a noted drop.  Also
the malformed ``compare --version NAME=PATHS`` values (exit 2)."""

from __future__ import annotations

import functools
import json
import math
import tempfile
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parsers
from advisor import jsonfile, plausible, sideinputs, values
from advisor.errors import MalformedInput
from advisor.microbench import raw
from tests.cli_helpers import assert_one_line_error, one_line_error, run
from tests.robustness.test_side_inputs import characterization, kernel_description
from tests.robustness.test_values_text_scale import _kernel_rows, _with_durations

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_profiles"
TRACE = str(SAMPLES / "synthetic_nvprof_gputrace.csv")
APP = SAMPLES / "apps" / "matMul-Gm-SP.json"

FAST = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
CLI = settings(FAST, max_examples=12)


def probes(bounds: plausible.Range) -> list[float]:
    """Values at and just beyond both bounds, and far beyond them."""
    lo, hi = bounds.lo, bounds.hi
    return [
        lo,
        hi,
        math.nextafter(lo, -math.inf),
        math.nextafter(hi, math.inf),
        hi * 1.5,
        1e308,
        -1e308,
        -1.0,
        (lo + hi) / 2,
    ]


def numbers(bounds: plausible.Range) -> st.SearchStrategy[float]:
    """The probes and any finite float."""
    return st.one_of(
        st.sampled_from(probes(bounds)), st.floats(allow_nan=False, allow_infinity=False)
    )


# --- every number of every schema has a range --------------------------------------------------


def _bounded_fields(tp: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """(key path, type) of every number a schema declares, through structs, lists and maps."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base = typing.get_args(tp)[0]
        if base in (int, float):
            yield where, tp
            return
        yield from _bounded_fields(base, where)
    elif origin in (typing.Union, __import__("types").UnionType):
        for arg in typing.get_args(tp):
            yield from _bounded_fields(arg, where)
    elif origin is list:
        yield from _bounded_fields(typing.get_args(tp)[0], f"{where}[0]")
    elif origin is dict:
        yield from _bounded_fields(typing.get_args(tp)[1], f"{where}['k']")
    elif isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        for field in msgspec.structs.fields(tp):
            yield from _bounded_fields(field.type, f"{where}.{field.encode_name}")
    elif tp in (int, float) and not where.endswith((".version", "]")):
        yield where, tp  # a number without a range: the test below fails on it


SCHEMAS = {
    "APP": sideinputs.APP,
    "KernelFile": sideinputs.KernelFile,
    "SingleKernelFile": sideinputs.SingleKernelFile,
    "DEVICE": sideinputs.DEVICE,
    "ANALYSIS": sideinputs.ANALYSIS,
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_number_of_a_schema_has_both_bounds(name: str) -> None:
    unbounded = []
    for where, tp in _bounded_fields(SCHEMAS[name]):
        metas = [m for m in typing.get_args(tp)[1:] if isinstance(m, msgspec.Meta)]
        lows = [m for m in metas if m.ge is not None or m.gt is not None]
        highs = [m for m in metas if m.le is not None or m.lt is not None]
        if not (lows and highs):
            unbounded.append(where)
    assert unbounded == [] or all(w.endswith("constants['k']") for w in unbounded), unbounded


# --- the schemas: values at and beyond every bound ---------------------------------------------


def _app() -> dict[str, Any]:
    return {**json.loads(APP.read_text("utf-8")), "latency_cycles": {"g_gm": 400}}


def _device() -> dict[str, Any]:
    doc = characterization()
    doc["device"].update(sm_count=128, boost_clock_hz=2.52e9, l2_bytes=7.2e7)
    doc["latencies_cycles"] = {"l2": 200.0}
    doc["functions"] = {"F_SHMEM": {"x": [0.0, 1.0], "y": [1.0, 2.0]}}
    return doc


def _analysis() -> dict[str, Any]:
    crit = {"value": 0.5, "potential_speedup": 2.0, "potential_speedup_amdahl": 1.5}
    return {
        "schema": "cuda-advisor/analysis@1",
        "application": {"gpu_time_ns": 1000.0, "potential_speedup": 1.2},
        "kernels": [
            {
                "name": "k",
                "duration_ns": 1000.0,
                "criteria": {"C": crit},
                "launches": 3,
                "potential_speedup": 2.0,
            }
        ],
    }


#: (schema, base document, key path, where to set it)
CASES: list[tuple[str, Any, Any, tuple[Any, ...], plausible.Range]] = [
    ("app threads", sideinputs.APP, _app, ("threads",), plausible.COUNT),
    ("app latency", sideinputs.APP, _app, ("latency_cycles", "g_gm"), plausible.CYCLES_PER_OP),
    (
        "access count",
        None,
        kernel_description,
        ("kernels", 0, "global", 0, "count"),
        plausible.COUNT,
    ),
    ("kernel blocks", None, kernel_description, ("kernels", 0, "blocks"), plausible.COUNT),
    ("gpu clock", None, kernel_description, ("gpu", "clock_hz"), plausible.CLOCK_HZ),
    ("op cycles", None, kernel_description, ("gpu", "op_cycles", "my op"), plausible.CYCLES_PER_OP),
    ("device SMs", sideinputs.DEVICE, _device, ("device", "sm_count"), plausible.UNITS),
    ("device clock", sideinputs.DEVICE, _device, ("device", "boost_clock_hz"), plausible.CLOCK_HZ),
    (
        "device bandwidth",
        sideinputs.DEVICE,
        _device,
        ("device", "memory_bandwidth_bytes_per_s"),
        plausible.BANDWIDTH,
    ),
    ("device latency", sideinputs.DEVICE, _device, ("latencies_cycles", "l2"), plausible.LATENCY),
    (
        "kernel time",
        sideinputs.ANALYSIS,
        _analysis,
        ("kernels", 0, "duration_ns"),
        plausible.TIME_NS,
    ),
    ("gpu time", sideinputs.ANALYSIS, _analysis, ("application", "gpu_time_ns"), plausible.TIME_NS),
    (
        "speedup",
        sideinputs.ANALYSIS,
        _analysis,
        ("kernels", 0, "potential_speedup"),
        plausible.AMDAHL_SPEEDUP,
    ),
    (
        "criterion",
        sideinputs.ANALYSIS,
        _analysis,
        ("kernels", 0, "criteria", "C", "value"),
        plausible.FRACTION,
    ),
    (
        "level speedup",
        sideinputs.ANALYSIS,
        _analysis,
        ("kernels", 0, "criteria", "C", "potential_speedup"),
        plausible.SPEEDUP,
    ),
]


def _set(doc: Any, keys: tuple[Any, ...], value: Any) -> None:
    for key in keys[:-1]:
        doc = doc.setdefault(key, {}) if isinstance(doc, dict) else doc[key]
    doc[keys[-1]] = value


def _path(keys: tuple[Any, ...]) -> str:
    out = ""
    for key in keys:
        if isinstance(key, int):
            out += f"[{key}]"
        elif key.isidentifier():
            out += f".{key}"
        else:
            out += f"[{key!r}]"
    return out.lstrip(".")


@pytest.mark.parametrize(
    ("label", "schema", "base", "keys", "bounds"), CASES, ids=[c[0] for c in CASES]
)
def test_schema_values_at_and_beyond_the_bounds(
    label: str, schema: Any, base: Any, keys: tuple[Any, ...], bounds: plausible.Range
) -> None:
    @given(value=numbers(bounds))
    @FAST
    def check(value: float) -> None:
        doc = base()
        _set(doc, keys, value)
        tp = schema if schema is not None else sideinputs.kernels_schema(doc)
        if bounds.holds(value):
            jsonfile.validate(doc, tp, "in.json")
        else:
            with pytest.raises(MalformedInput) as err:
                jsonfile.validate(doc, tp, "in.json")
            assert str(err.value) == f"in.json: {_path(keys)}: {bounds.outside(value)}"

    check()


def test_the_low_end_of_an_open_range_is_outside() -> None:
    doc = _device()
    doc["device"]["boost_clock_hz"] = 0
    with pytest.raises(MalformedInput, match=r"boost_clock_hz: value outside \(0, 1e\+10\], got 0"):
        jsonfile.validate(doc, sideinputs.DEVICE, "d.json")


def test_an_integer_key_out_of_range_names_its_bounds() -> None:
    doc = _analysis()
    doc["kernels"][0]["launches"] = 10**16
    with pytest.raises(MalformedInput, match=r"launches: value outside \[0, 1e\+15\], got 1e\+16"):
        jsonfile.validate(doc, sideinputs.ANALYSIS, "a.json")


# --- the command line: clean exits only ----------------------------------------------------------


@functools.cache
def _saved_text() -> str:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "saved.json"
        code, _, err = run("report", TRACE, "--json", str(out), "-q")
        assert code == 0, err
        return out.read_text("utf-8")


def _saved() -> dict[str, Any]:
    """A saved analysis of the sample trace (``report --json``)."""
    return typing.cast(dict[str, Any], json.loads(_saved_text()))


def _report_with(option: str, extra: tuple[str, ...] = ()) -> Any:
    def command(path: str, tmp: Path) -> list[str]:
        return ["report", TRACE, "--json", str(tmp / "o.json"), *extra, option, path]

    return command


def _compare(path: str, tmp: Path) -> list[str]:
    return ["compare", path, TRACE, "--json", str(tmp / "c.json")]


def _devices(path: str, tmp: Path) -> list[str]:
    return ["devices", path]


def _maxsum(path: str, tmp: Path) -> list[str]:
    return ["predict", "maxsum", "--kernel", path]


COMMANDS = [
    ("kernel time", _saved, ("kernels", 0, "duration_ns"), plausible.TIME_NS, _compare),
    ("gpu time", _saved, ("application", "gpu_time_ns"), plausible.TIME_NS, _compare),
    ("speedup", _saved, ("kernels", 0, "potential_speedup"), plausible.AMDAHL_SPEEDUP, _compare),
    (
        "device clock",
        _device,
        ("device", "boost_clock_hz"),
        plausible.CLOCK_HZ,
        _report_with("--device"),
    ),
    (
        "device list",
        _device,
        ("device", "memory_bandwidth_bytes_per_s"),
        plausible.BANDWIDTH,
        _devices,
    ),
    (
        "access count",
        kernel_description,
        ("kernels", 0, "global", 0, "count"),
        plausible.COUNT,
        _maxsum,
    ),
    (
        "gpu clock",
        kernel_description,
        ("gpu", "clock_hz"),
        plausible.CLOCK_HZ,
        _report_with("--kernels"),
    ),
    (
        "app threads",
        _app,
        ("threads",),
        plausible.COUNT,
        _report_with("--app", ("--app-size", "64")),
    ),
]


@pytest.mark.parametrize(
    ("label", "base", "keys", "bounds", "command"), COMMANDS, ids=[c[0] for c in COMMANDS]
)
def test_side_inputs_at_and_beyond_the_bounds_exit_cleanly(
    tmp_path: Path,
    label: str,
    base: Any,
    keys: tuple[Any, ...],
    bounds: plausible.Range,
    command: Any,
) -> None:
    @given(value=numbers(bounds))
    @CLI
    def check(value: float) -> None:
        doc = base()
        _set(doc, keys, value)
        path = tmp_path / "side.json"
        path.write_text(json.dumps(doc), "utf-8")
        code, _, err = run(*command(str(path), tmp_path))
        assert code in (0, 2, 3), err
        if code:
            line = one_line_error(err)
            assert str(path) in line or "--" in line, line
        if not bounds.holds(value):
            assert code == 3, err
            assert_one_line_error(err, str(path), f"{_path(keys)}: {bounds.outside(value)}")

    check()


# --- raw microbenchmark samples -------------------------------------------------------------------


def _raw(sample: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": raw.RAW_SCHEMA,
        "version": raw.RAW_VERSION,
        "device": {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"},
        "samples": [sample],
    }


RAW_FIELDS = [
    ("mem_throughput", "ns", {"level": "dram", "op": "ld", "ns": 10.0, "bytes": 1e6}),
    ("mem_throughput", "bytes", {"level": "dram", "op": "ld", "ns": 10.0, "bytes": 1e6}),
    ("arith_latency", "cycles", {"class": "fp32", "cycles": 100.0, "ops": 10.0}),
    (
        "divergence",
        "efficiency",
        {"ways": 2, "uniform_fma": 1, "divergent_fma": 1, "ns": 5.0, "efficiency": 0.5},
    ),
    ("shmem_conflicts", "ways", {"ways": 2, "ns": 5.0}),
]


@pytest.mark.parametrize(
    ("bench", "field", "sample"), RAW_FIELDS, ids=[f"{b}.{f}" for b, f, _ in RAW_FIELDS]
)
def test_raw_samples_at_and_beyond_the_bounds(
    tmp_path: Path, bench: str, field: str, sample: dict[str, Any]
) -> None:
    bounds = raw.FIELD_RANGES.get(field, plausible.COUNT)

    @given(value=numbers(bounds))
    @FAST
    def check(value: float) -> None:
        path = tmp_path / "raw.json"
        path.write_text(json.dumps(_raw({"bench": bench, **sample, field: value})), "utf-8")
        if bounds.holds(value):
            raw.read_raw(str(path))
            return
        with pytest.raises(MalformedInput) as err:
            raw.read_raw(str(path))
        if value >= 0:  # a negative value is refused as invalid before its range is looked at
            assert f"samples[0].{field}: {bounds.outside(value)}" in str(err.value)

    check()


def test_raw_samples_out_of_range_are_exit_3(tmp_path: Path) -> None:
    sample = {"bench": "mem_throughput", "level": "dram", "op": "ld", "ns": 1e20, "bytes": 1e6}
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(_raw(sample)), "utf-8")
    code, _, err = run("microbench", "fit", str(path), "-o", str(tmp_path / "d.json"))
    assert code == 3, err
    assert_one_line_error(err, str(path), "samples[0].ns: value outside [0, 8.64e+13], got 1e+20")


def test_a_device_record_clock_out_of_range_is_refused(tmp_path: Path) -> None:
    doc = _raw({"bench": "shmem_conflicts", "ways": 2, "ns": 5.0})
    doc["device"]["clock_khz"] = 1e12
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(MalformedInput, match=r"device\.clock_khz: value outside \(0, 1e\+07\]"):
        raw.read_raw(str(path))


# --- profiles: a row beyond its range is dropped with a note -------------------------------------


#: the sample that holds rows of each table (the GPU trace has no API calls)
_SAMPLE_OF = {"api_calls": "synthetic_nvprof_apitrace.csv"}


def _profile_frames(table: str) -> dict[str, pd.DataFrame]:
    profile = parsers.read(SAMPLES / _SAMPLE_OF.get(table, "synthetic_nvprof_gputrace.csv"))
    return dict(profile.frames)


PROFILE_COLUMNS = [("launches", column) for column in values.CHECKED["launches"][1]] + [
    ("transfers", "bytes"),
    ("transfers", "duration_ns"),
    ("api_calls", "duration_ns"),
]


@pytest.mark.parametrize(
    ("table", "column"), PROFILE_COLUMNS, ids=[f"{t}.{c}" for t, c in PROFILE_COLUMNS]
)
def test_a_profile_row_beyond_its_range_is_dropped_with_a_note(table: str, column: str) -> None:
    frames = _profile_frames(table)
    assert len(frames[table]), f"the sample has no {table}"
    bounds = values.column_range(column)

    @given(value=numbers(bounds))
    @FAST
    def check(value: float) -> None:
        changed = dict(frames)
        frame = changed[table].copy()
        if str(frame[column].dtype) in ("Int8", "Int16", "Int32"):  # schema.NARROW: a reader's
            frame[column] = frame[column].astype("Int64")  # frame holds them as Int64
        kind = frame[column].dtype
        if (str(kind) == "Int64" and value != int(value)) or abs(value) > 2**62:
            return  # an integer column holds no such value
        frame.loc[0, column] = int(value) if str(kind) == "Int64" else value
        changed[table] = frame
        out, notes = values.checked_frames(changed, "p.csv")
        if bounds.holds(value):
            assert len(out[table]) == len(frame)
            assert not any(values.is_drop_note(n) and " row 1 " in n for n in notes)
        else:
            assert len(out[table]) == len(frame) - 1
            what = values.CHECKED[table][0]
            assert any(
                n.startswith(f"p.csv: {what} row 1") and n.endswith(": dropped") for n in notes
            ), notes

    check()


def test_a_kernel_longer_than_a_day_is_dropped_in_a_report(tmp_path: Path) -> None:
    sample = "synthetic_nvprof_gputrace.csv"
    kernels = _kernel_rows(sample)
    path = _with_durations(sample, {kernels[0]: "1e20"}, tmp_path / "long.csv")  # us
    out = tmp_path / "r.json"
    code, _, err = run("report", str(path), "--json", str(out))
    assert code == 0, err
    notes = json.loads(out.read_text("utf-8"))["notes"]
    assert any(
        "kernel launch row 1" in n and "outside [0, 8.64e+13]: dropped" in n for n in notes
    ), notes


def test_every_kernel_longer_than_a_day_is_exit_3(tmp_path: Path) -> None:
    sample = "synthetic_nvprof_gputrace.csv"
    path = _with_durations(
        sample, dict.fromkeys(_kernel_rows(sample), "1e12"), tmp_path / "all.csv"
    )
    code, _, err = run("report", str(path), "--json", str(tmp_path / "r.json"))
    assert code == 3, err
    assert_one_line_error(err, str(path), "no usable kernel data", "outside [0, 8.64e+13]")


def test_an_impossible_device_clock_is_left_unknown_with_a_note() -> None:
    frames = dict(parsers.read(SAMPLES / "synthetic_ncu_raw.csv").frames)
    devices = frames["devices"].copy()
    devices.loc[0, "sm_clock_hz"] = 1e20
    devices.loc[0, "sm_count"] = 0
    frames["devices"] = devices
    out, notes = values.checked_frames(frames, "r.csv")
    assert out["devices"]["sm_clock_hz"].isna().iloc[0]
    assert out["devices"]["sm_count"].isna().iloc[0]
    assert out["devices"].loc[0, "name"] == devices.loc[0, "name"]
    assert any("sm_clock_hz 1e+20 outside (0, 1e+10]: left unknown" in n for n in notes), notes
    assert any("sm_count 0 outside (0, 1000000]: left unknown" in n for n in notes), notes


# --- compare --version NAME=PATHS ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["a=,", "a=,,,", "a= , ", "a=", "=x", "a", " = "])
def test_a_malformed_version_is_a_usage_error(tmp_path: Path, value: str) -> None:
    code, _, err = run(
        "compare", "--version", value, "--version", f"b={TRACE}", "--json", str(tmp_path / "c.json")
    )
    assert code == 2, err
    assert_one_line_error(err, f"--version {value!r}")


def test_separators_only_as_a_positional_version_are_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("compare", " , ", TRACE, "--json", str(tmp_path / "c.json"))
    assert code == 2, err
    assert_one_line_error(err, "no file given")


def test_a_version_name_given_twice_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run(
        "compare",
        "--version",
        f"a={TRACE}",
        "--version",
        f"a={TRACE}",
        "--json",
        str(tmp_path / "c.json"),
    )
    assert code == 2, err
    assert_one_line_error(err, "must differ")
