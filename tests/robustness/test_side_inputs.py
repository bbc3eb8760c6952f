"""Side-input JSON files (``--app``, ``--kernels``, ``--device FILE``, ``devices FILE``, ``predict``
inputs, ``maxsum --kernel``, saved analyses for ``compare``, raw microbenchmark samples): bounded
decoding and schema validation, each bad file one line on stderr naming the file and the key,
exit code 3.  Also the CI gates' and ``--active``'s bounds (exit code 2)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest

from advisor import jsonfile, sideinputs
from advisor.errors import MalformedInput, UnreadableInput, UsageError
from advisor.models.access.pattern import parse_active
from advisor.models.maxsum import terms
from advisor.report import gates
from tests.cli_helpers import assert_one_line_error, run

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_profiles"
TRACE = str(SAMPLES / "synthetic_nvprof_gputrace.csv")
APP = SAMPLES / "apps" / "matMul-Gm-SP.json"
KERNELS = SAMPLES / "kernels" / "listRank-gtx280.json"


def write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return str(path)


def characterization() -> dict[str, Any]:
    return {
        "schema": "cuda-advisor/device-characterization",
        "version": 1,
        "device": {"name": "NVIDIA GeForce RTX 4090"},
        "measured": False,
    }


def kernel_description() -> dict[str, Any]:
    return json.loads(KERNELS.read_text("utf-8"))


def saved_analysis(tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "saved.json"
    code, _, err = run("report", TRACE, "--json", str(out), "-q")
    assert code == 0, err
    return json.loads(out.read_text("utf-8"))


# --- the decoder's limits -------------------------------------------------------------------


def test_deep_nesting_is_refused_before_decoding(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(MalformedInput, match=f"nested deeper than {jsonfile.MAX_DEPTH} levels"):
        jsonfile.load(path, "application file")


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    text = json.dumps({"name": "[" * 1000 + '{"\\"' * 100, "v": [[1]]})
    assert jsonfile.load(write(tmp_path, "s.json", text), "x")["v"] == [[1]]


def test_a_5000_digit_integer_is_refused_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "big.json", '{\n  "threads": ' + "9" * 5000 + "\n}")
    with pytest.raises(MalformedInput) as err:
        jsonfile.load(path, "application file")
    assert str(err.value) == (
        f"{path}:2: a number longer than {jsonfile.MAX_NUMBER_CHARS} characters"
    )


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "NaN", "Infinity", "-Infinity"])
def test_numbers_that_are_not_finite_are_refused(tmp_path: Path, literal: str) -> None:
    path = write(tmp_path, "inf.json", '{"x": ' + literal + "}")
    with pytest.raises(MalformedInput, match=r"finite|outside the range of a float"):
        jsonfile.load(path, "x")


def test_too_many_values_are_refused_before_decoding(tmp_path: Path) -> None:
    path = write(tmp_path, "many.json", "[" + "0," * jsonfile.MAX_VALUES + "0]")
    with pytest.raises(MalformedInput, match="more than 8,000,000 values"):
        jsonfile.load(path, "x")


def test_a_file_over_the_size_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonfile, "MAX_FILE_BYTES", 100)
    path = write(tmp_path, "large.json", json.dumps({"x": "y" * 200}))
    with pytest.raises(UnreadableInput, match="larger than"):
        jsonfile.load(path, "x")


# --- schema messages --------------------------------------------------------------------------


def test_a_wrong_type_at_a_nested_key_names_the_key_path(tmp_path: Path) -> None:
    doc = kernel_description()
    doc["kernels"][0]["global"][0]["count"] = "264"
    path = write(tmp_path, "k.json", doc)
    with pytest.raises(MalformedInput) as err:
        jsonfile.validate(doc, sideinputs.kernels_schema(doc), path)
    assert str(err.value) == f"{path}: kernels[0].global[0].count: expected a number, got a string"


def test_a_bad_value_in_a_mapping_names_its_key(tmp_path: Path) -> None:
    doc = kernel_description()
    doc["gpu"]["op_cycles"] = {"int_add": 4, "my op": [1]}
    with pytest.raises(MalformedInput, match=r"gpu\.op_cycles\['my op'\]: expected a number"):
        jsonfile.validate(doc, sideinputs.kernels_schema(doc), "k.json")


def test_the_schema_knows_every_key_the_access_reader_allows() -> None:
    declared = {f.encode_name for f in msgspec.structs.fields(sideinputs.Access)}
    assert declared == set(terms.GLOBAL_KEYS | terms.SHARED_KEYS)


def test_the_bundled_samples_are_valid() -> None:
    for path in sorted((SAMPLES / "apps").glob("*.json")):
        jsonfile.load(path, "application file", sideinputs.APP)
    for path in sorted((SAMPLES / "kernels").glob("*.json")):
        doc = jsonfile.load(path, "kernel description")
        jsonfile.validate(doc, sideinputs.kernels_schema(doc), path)


# --- every side-input option: a bad file is exit 3, one line naming file and key -------------


def _bad_app(tmp_path: Path) -> str:
    return write(tmp_path, "app.json", {"threads": 1, "comp": 1, "ld1": [1], "st1": 1})


def _bad_kernels(tmp_path: Path) -> str:
    doc = kernel_description()
    doc["kernels"][0]["blocks"] = {"n": 1}
    return write(tmp_path, "kernels.json", doc)


def _bad_device(tmp_path: Path) -> str:
    doc = characterization()
    doc["latencies_cycles"] = {"l2": "fast"}
    return write(tmp_path, "device.json", doc)


@pytest.mark.parametrize(
    ("make", "args", "key"),
    [
        (_bad_app, ["report", TRACE, "--json", "{out}", "--app-size", "64", "--app"], "ld1"),
        (_bad_app, ["predict", "bsp", "--calibrate", "GTX 680:64:1.0", "--app"], "ld1"),
        (_bad_kernels, ["report", TRACE, "--json", "{out}", "--kernels"], "kernels[0].blocks"),
        (_bad_kernels, ["predict", "maxsum", "--kernel"], "kernels[0].blocks"),
        (_bad_device, ["report", TRACE, "--json", "{out}", "--device"], "latencies_cycles.l2"),
        (_bad_device, ["compare", TRACE, TRACE, "--json", "{out}", "--device"], "l2"),
        (_bad_device, ["devices"], "latencies_cycles.l2"),
    ],
)
def test_each_side_input_option_refuses_a_bad_file(
    tmp_path: Path, make: Any, args: list[str], key: str
) -> None:
    path = make(tmp_path)
    out = str(tmp_path / "out.json")
    code, _, err = run(*[a.replace("{out}", out) for a in args], path)
    assert code == 3, err
    assert_one_line_error(err, path, key)


@pytest.mark.parametrize("option", ["--app", "--kernels", "--device"])
def test_deep_nesting_in_a_report_side_input_is_exit_3(tmp_path: Path, option: str) -> None:
    path = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    extra = ["--app-size", "64"] if option == "--app" else []
    code, _, err = run("report", TRACE, "--json", str(tmp_path / "o.json"), *extra, option, path)
    assert code == 3, err
    assert_one_line_error(err, path, "nested deeper than")


def test_a_5000_digit_integer_in_a_device_file_is_exit_3(tmp_path: Path) -> None:
    text = json.dumps(characterization()).replace('"version": 1', '"version": ' + "1" * 5000)
    path = write(tmp_path, "device.json", text)
    code, _, err = run("devices", path)
    assert code == 3, err
    assert_one_line_error(err, path, "a number longer than")


def test_raw_samples_with_a_wrong_type_are_exit_3(tmp_path: Path) -> None:
    doc = {
        "schema": "cuda-advisor/microbench-raw",
        "version": 1,
        "device": {"name": "x", "compute_capability": "8.6"},
        "samples": [],
        "command": ["a", 2],
    }
    path = write(tmp_path, "raw.json", doc)
    code, _, err = run("microbench", "fit", path, "-o", str(tmp_path / "d.json"))
    assert code == 3, err
    assert_one_line_error(err, path, "command[1]: expected a string")


def test_deep_raw_samples_are_exit_3(tmp_path: Path) -> None:
    path = write(tmp_path, "raw.json", "[" * 50_000 + "]" * 50_000)
    code, _, err = run("microbench", "fit", path, "-o", str(tmp_path / "d.json"))
    assert code == 3, err
    assert_one_line_error(err, path, "nested deeper than")


# --- saved analyses -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        ("value", 1e300, "value outside [0, 1], got 1e+300"),
        ("potential_speedup", -1405, "value outside [0, 1e+09], got -1405"),
        ("potential_speedup", "3x", "expected a number or null, got a string"),
    ],
)
def test_compare_refuses_a_tampered_saved_analysis(
    tmp_path: Path, where: str, value: Any, expected: str
) -> None:
    data = saved_analysis(tmp_path)
    name = next(iter(data["kernels"][0]["criteria"]))
    data["kernels"][0]["criteria"][name][where] = value
    path = write(tmp_path, "tampered.json", data)
    good = write(tmp_path, "good.json", saved_analysis(tmp_path))
    code, _, err = run("compare", good, path, "--json", str(tmp_path / "c.json"))
    assert code == 3, err
    assert_one_line_error(err, path, f"kernels[0].criteria.{name}.{where}: {expected}")


@pytest.mark.parametrize(
    ("key", "value"),
    [("gpu_time_ns", -5.0), ("potential_speedup", -1405.0)],
)
def test_compare_refuses_negative_application_figures(
    tmp_path: Path, key: str, value: float
) -> None:
    data = saved_analysis(tmp_path)
    data["application"][key] = value
    path = write(tmp_path, "tampered.json", data)
    code, _, err = run("compare", path, TRACE, "--json", str(tmp_path / "c.json"))
    assert code == 3, err
    assert_one_line_error(err, path, f"application.{key}: value outside [0, ")


def test_an_untouched_saved_analysis_still_compares(tmp_path: Path) -> None:
    path = write(tmp_path, "saved.json", saved_analysis(tmp_path))
    code, _, err = run("compare", path, TRACE, "--json", str(tmp_path / "c.json"), "-q")
    assert code == 0, err


# --- gates ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["nan", "inf", "-inf", "-5"])
def test_max_regression_must_be_finite_and_not_negative(tmp_path: Path, limit: str) -> None:
    code, _, err = run(
        "compare", TRACE, TRACE, "--json", str(tmp_path / "c.json"), "--max-regression", limit
    )
    assert code == 2, err
    assert_one_line_error(err, "--max-regression", "finite number >= 0")


@pytest.mark.parametrize("threshold", ["nan", "inf", "-Infinity", "1e999"])
def test_a_fail_if_threshold_must_be_finite(threshold: str) -> None:
    with pytest.raises(UsageError, match="finite"):
        gates.parse(f"potential_speedup>{threshold}")


def test_a_120k_character_fail_if_is_refused(tmp_path: Path) -> None:
    expression = "potential_speedup>" + "1" * 120_000 + "x"
    code, _, err = run("report", TRACE, "--json", str(tmp_path / "o.json"), "--fail-if", expression)
    assert code == 2, err
    assert_one_line_error(err, "--fail-if", f"at most {gates.MAX_EXPRESSION_CHARS:,}")


def test_a_long_expression_under_the_limit_evaluates() -> None:
    # 4,000 zeros then 2.5: the threshold is 2.5
    text = "  potential_speedup  >=  " + "0" * 4000 + "2.5" + " " * 20
    assert len(text) <= gates.MAX_EXPRESSION_CHARS
    cond = gates.parse(text)
    assert (cond.name, cond.op, cond.limit) == ("potential_speedup", ">=", 2.5)
    assert cond.holds(2.5) and not cond.holds(2.4)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("SHMEM_EFFICIENCY<0.5", ("SHMEM_EFFICIENCY", "<", 0.5)),
        ("hints != 3", ("hints", "!=", 3.0)),
        ("gpu_time_ms<=1e3", ("gpu_time_ms", "<=", 1000.0)),
        ("potential_speedup>.5", ("potential_speedup", ">", 0.5)),
        ("HOSTSYNC==-1E-2", ("HOSTSYNC", "==", -0.01)),
    ],
)
def test_fail_if_grammar(text: str, parsed: tuple[str, str, float]) -> None:
    cond = gates.parse(text)
    assert (cond.name, cond.op) == parsed[:2] and math.isclose(cond.limit, parsed[2])


@pytest.mark.parametrize("text", ["potential_speedup", "potential_speedup>", "p>2 3", ">2", "a>b"])
def test_fail_if_off_the_grammar_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="expected NAME OP NUMBER"):
        gates.parse(text)


# --- ranges ---------------------------------------------------------------------------------------


def test_a_huge_active_range_is_refused_without_building_it() -> None:
    with pytest.raises(UsageError, match=r"outside 0\.\.31"):
        parse_active("0-99999999999")
    with pytest.raises(UsageError, match=r"outside 0\.\.31"):
        parse_active("0-" + "9" * 5000)
    with pytest.raises(UsageError, match=r"thread 399999 outside 0\.\.31"):
        parse_active("0x" + "f" * 100_000)


def test_active_on_the_command_line_is_exit_2() -> None:
    code, _, err = run("access", "global", "--cc", "7.0", "--active", "0-99999999999")
    assert code == 2, err
    assert_one_line_error(err, "--active", "outside 0..31")


def test_valid_active_ranges_still_parse() -> None:
    assert parse_active("0-3,8") == frozenset({0, 1, 2, 3, 8})
    assert parse_active("0x0000000f") == frozenset(range(4))
    assert len(parse_active("0-31")) == 32


# --- a large --kernels file ----------------------------------------------------------------------


def test_a_large_kernel_description_is_processed(tmp_path: Path) -> None:
    doc = kernel_description()
    kernel = doc["kernels"][0]
    doc["kernels"] = [
        dict(kernel, name=f"k{i}", profile_name=f"kernel_{i % 7}_{i}") for i in range(3000)
    ]
    path = write(tmp_path, "many.json", doc)
    out = tmp_path / "o.html"
    code, _, err = run("report", TRACE, "-o", str(out), "--kernels", path, "-q")
    assert code == 0, err
    assert "maxsum-row" in out.read_text("utf-8")
