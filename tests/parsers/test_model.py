"""The normalised model: schema validation, Profile construction, merge, metric map, names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from advisor import metric_map, schema
from advisor.errors import SchemaError
from advisor.profile import Profile, Provenance, merge
from parsers import frames, names

PROV = Provenance(path="a.csv", format="test", profiler="nvprof")


def test_validate_adds_missing_columns_and_coerces_types() -> None:
    df = schema.validate("launches", pd.DataFrame({"name": ["k"], "duration_ns": [1500]}))
    assert list(df.columns) == list(schema.TABLES["launches"])
    assert df["duration_ns"].dtype == "float64"
    assert df["grid_x"].dtype == "Int8"  # schema.NARROW: a missing column is narrow too
    assert df["launch_id"].dtype == "Int64"
    assert df["grid_x"].isna().all()


@pytest.mark.parametrize("rows", [0, 1, 65536, 65537, 300_001])
def test_missing_text_columns_share_one_chunk_and_act_as_one(rows: int) -> None:
    """A text column the input lacks is one all-missing chunk repeated: the same values, dtype
    and index as a column of one chunk, a few hundred kB whatever the rows, and a write to one
    such column leaves the others missing."""
    import pyarrow as pa  # type: ignore[import-untyped]

    before = pa.total_allocated_bytes()
    calls = schema.validate("api_calls", pd.DataFrame({"start_ns": np.arange(rows, dtype=float)}))
    assert pa.total_allocated_bytes() - before < 2**20  # 8 bytes a row would be 2.4 MB at 300,001
    one_chunk = pd.Series(pd.NA, index=pd.RangeIndex(rows), dtype="string")
    for col in ("operator", "sync_kind"):
        assert calls[col].dtype == one_chunk.dtype
        assert calls[col].equals(one_chunk)
        assert calls[col].index.equals(one_chunk.index)
    if rows:
        calls.loc[rows - 1, "operator"] = "aten::item"
        assert calls["operator"].notna().sum() == 1
        assert calls["sync_kind"].isna().all()
        taken = calls["sync_kind"].take(np.arange(rows)[::-1])
        assert taken.isna().all() and len(taken) == rows


def test_validate_rejects_unknown_columns() -> None:
    with pytest.raises(SchemaError, match="unknown columns"):
        schema.validate("launches", pd.DataFrame({"Duration": [1.0]}))


def test_validate_rejects_fractional_integers() -> None:
    with pytest.raises(SchemaError, match="grid_x"):
        schema.validate("launches", pd.DataFrame({"grid_x": [1.5]}))


@pytest.mark.parametrize("value", [1e20, float("inf"), 10**20])
def test_validate_rejects_integers_out_of_range_instead_of_wrapping(value: float) -> None:
    # pandas would turn these into -9223372036854775808 without a word
    with pytest.raises(SchemaError, match="grid_x"):
        schema.validate("launches", pd.DataFrame({"grid_x": pd.Series([value], dtype=object)}))


def test_names_too_large_for_ids_are_not_ids() -> None:
    big = "99999999999999999999"
    assert names.split_correlation(f"k(int) [{big}]") == (f"k(int) [{big}]", None)
    assert names.split_device(f"Tesla K40c ({big})") == (f"Tesla K40c ({big})", None)
    assert names.split_device(big) == (big, None)
    assert names.parse_dims(f"({big}, 1, 1)") is None
    assert names.compute_capability(8, 0) == "8.0"
    assert names.compute_capability(float("inf"), 0) is None
    assert names.compute_capability(None, 0) is None


def test_profile_assigns_launch_ids_and_rejects_duplicates() -> None:
    prof = Profile(provenance=(PROV,), launches=pd.DataFrame({"name": ["a", "b"]}))
    assert list(prof.launches["launch_id"]) == [0, 1]
    with pytest.raises(SchemaError, match="unique"):
        Profile(
            provenance=(PROV,), launches=pd.DataFrame({"launch_id": [3, 3], "name": ["a", "b"]})
        )


def test_empty_profile_has_every_table_and_no_kernel_data() -> None:
    prof = Profile(provenance=(PROV,))
    assert set(prof.frames) == set(schema.TABLES)
    assert not prof.has_kernel_data()
    assert prof.kernel_names() == []


def test_merge_renumbers_launch_ids_and_keeps_metric_links() -> None:
    a = Profile(
        provenance=(PROV,),
        launches=pd.DataFrame({"launch_id": [0, 1], "name": ["k1", "k2"]}),
        metrics=pd.DataFrame({"launch_id": [1], "kernel": ["k2"], "metric": ["m"], "value": [5.0]}),
    )
    b = Profile(
        provenance=(Provenance(path="b.csv", format="test", profiler="nvprof"),),
        launches=pd.DataFrame({"launch_id": [0], "name": ["k3"]}),
        metrics=pd.DataFrame({"launch_id": [0], "kernel": ["k3"], "metric": ["m"], "value": [7.0]}),
        devices=pd.DataFrame({"device_id": [0], "name": ["GPU"]}),
    )
    m = merge([a, b])
    assert list(m.launches["launch_id"]) == [0, 1, 2]
    # metric of k3 (launch 0 in b) now points at launch 2, whose name is k3
    row = m.metrics[m.metrics["kernel"] == "k3"].iloc[0]
    assert m.launches.set_index("launch_id").loc[row["launch_id"], "name"] == "k3"
    assert m.path == "a.csv + b.csv"
    assert len(m.devices) == 1


def test_metric_map_maps_ncu_label_and_nvprof_name_to_one_canonical() -> None:
    # ncu prints "Achieved Occupancy" in %, nvprof achieved_occupancy as a bare fraction
    assert metric_map.canonicalize("Achieved Occupancy", 0.7553, "frac", "ncu") == (
        "achieved_occupancy",
        0.7553,
        "frac",
    )
    assert metric_map.canonicalize("achieved_occupancy", 0.75, "", "nvprof") == (
        "achieved_occupancy",
        0.75,
        "frac",
    )


def test_metric_map_applies_ncu_scale() -> None:
    # threads per warp instruction 16 of 32 -> warp execution efficiency 0.5
    name, value, unit = metric_map.canonicalize(
        "smsp__thread_inst_executed_per_inst_executed.ratio", 16.0, "", "ncu"
    )
    assert (name, value, unit) == ("warp_execution_efficiency", 0.5, "frac")


def test_metric_map_keeps_name_when_units_disagree() -> None:
    # "Memory Throughput" is also printed in Gbyte/s (Memory Workload Analysis): not a percentage
    assert metric_map.canonicalize("Memory Throughput", 1e9, "byte/s", "ncu")[0] == (
        "Memory Throughput"
    )
    assert metric_map.canonicalize("unknown_metric", 1.0, "", "ncu") == (
        "unknown_metric",
        1.0,
        "",
    )


def test_metric_map_entries_are_unique() -> None:
    canon = [e.canonical for e in metric_map.entries()]
    assert len(canon) == len(set(canon))
    tool_names = [n for e in metric_map.entries() for n in (e.nvprof, e.ncu) if n]
    assert len(tool_names) == len(set(tool_names))


def test_metric_record_converts_min_max_with_the_same_mapping() -> None:
    rec = frames.metric_record(
        tool="ncu",
        tool_metric="smsp__thread_inst_executed_per_inst_executed.ratio",
        value=16.0,
        unit="",
        kernel="k",
        minimum=8.0,
        maximum=32.0,
    )
    assert (rec["metric"], rec["value"], rec["minimum"], rec["maximum"]) == (
        "warp_execution_efficiency",
        0.5,
        0.25,
        1.0,
    )


def test_gpu_activity_frames_splits_kernels_and_transfers() -> None:
    rows = pd.DataFrame(
        {
            "name": ["[CUDA memcpy HtoD]", "matMul(float*, int) [110]", "[CUDA memset]"],
            "duration_ns": [10.0, 20.0, 5.0],
            "bytes": [4096.0, None, 8.0],
        }
    )
    launches, transfers = frames.gpu_activity_frames(rows)
    assert list(launches["name"]) == ["matMul(float*, int)"]
    assert list(launches["correlation_id"]) == [110]
    assert list(transfers["kind"]) == ["HtoD", "memset"]
    assert list(transfers["bytes"]) == [4096.0, 8.0]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("[CUDA memcpy HtoD]", "HtoD"),
        ("[CUDA memcpy Host-to-Device]", "HtoD"),
        ("[CUDA memcpy Device-to-Host]", "DtoH"),
        ("[CUDA memcpy PtoP]", "PtoP"),
        ("[CUDA memset]", "memset"),
        ("[CUDA Unified Memory memcpy DtoH]", "UM-DtoH"),
        ("void kernel<int=32>(float*)", None),
        ("  [CUDA memcpy DtoD]\n", "DtoD"),  # stripped first: a cell read with its spaces
        ("kernel [CUDA memset]", None),  # the pattern is anchored at the start
    ],
)
def test_transfer_kind(text: str, kind: str | None) -> None:
    assert names.transfer_kind(text) == kind


@pytest.mark.parametrize(
    ("name", "split"),
    [
        ("matMul(float*, int) [110]", ("matMul(float*, int)", 110)),
        ("matMul(float*, int) [110]\n", ("matMul(float*, int)", 110)),  # ``$``: before a newline
        ("matMul(float*, int) [110] ", ("matMul(float*, int) [110] ", None)),
        ("k<[3]>(int)", ("k<[3]>(int)", None)),
        ("k[3]", ("k[3]", None)),  # no space before the bracket
        ("k [x]", ("k [x]", None)),
    ],
)
def test_split_correlation(name: str, split: tuple[str, int | None]) -> None:
    assert names.split_correlation(name) == split


def test_kernel_names_are_the_used_names_sorted_from_any_table() -> None:
    launches = pd.DataFrame({"name": ["b", "c", "a", "c"], "duration_ns": [1.0, 2.0, 3.0, 4.0]})
    prof = Profile(provenance=(PROV,), launches=launches)
    assert prof.kernel_names() == ["a", "b", "c"]
    # rows taken away keep their categories: the names no row uses are not kernel names
    fewer = prof.launches[prof.launches["name"] != "b"]
    assert len(fewer["name"].cat.categories) == 3
    one_table = Profile(provenance=(PROV,), launches=schema.empty("launches"))
    one_table.launches = fewer
    assert one_table.kernel_names() == ["a", "c"]
    # unsorted categories, or names in two tables: the same answer, found by sorting them
    words = pd.Index(["z", "x", "y"], dtype=object)
    unsorted = pd.Series(pd.Categorical(["z", "y"], categories=words))
    one_table.launches = pd.DataFrame({"name": unsorted})
    assert one_table.kernel_names() == ["y", "z"]
    two = Profile(
        provenance=(PROV,),
        launches=pd.DataFrame({"name": ["b", "a"]}),
        kernel_summary=pd.DataFrame({"name": ["d", "a"]}),
    )
    assert two.kernel_names() == ["a", "b", "d"]


def test_device_and_dims_parsing() -> None:
    assert names.split_device("GeForce GTX 1080 Ti (0)") == ("GeForce GTX 1080 Ti", 0)
    assert names.split_device("1") == ("", 1)
    assert names.parse_dims("(384, 1, 1)") == (384, 1, 1)
    assert names.parse_dims("(32768 1 1)") == (32768, 1, 1)
    assert names.parse_dims("n/a") is None


def test_launch_names_are_sorted_categoricals_whatever_the_reader_gave() -> None:
    from_text = schema.validate("launches", pd.DataFrame({"name": ["k2", None, "k1", "k2"]}))
    names = from_text["name"]
    assert isinstance(names.dtype, pd.CategoricalDtype)
    assert list(names.cat.categories) == ["k1", "k2"]
    assert names.cat.categories.dtype == object
    assert names.cat.codes.tolist() == [1, -1, 0, 1]
    unsorted = pd.Categorical(["b", "a", "b"], categories=["unused", "b", "a"])
    again = schema.validate("launches", pd.DataFrame({"name": unsorted}))["name"]
    assert list(again.cat.categories) == ["a", "b"]  # sorted, the unused one dropped
    assert again.tolist() == ["b", "a", "b"]
    assert schema.validate("launches", from_text)["name"].equals(names)  # idempotent
    empty = schema.empty("launches")
    assert isinstance(empty["name"].dtype, pd.CategoricalDtype) and len(empty) == 0


def test_merge_keeps_launch_names_categorical() -> None:
    def one(names: list[str]) -> Profile:
        return Profile(provenance=(PROV,), launches=pd.DataFrame({"name": names}))

    merged = merge([one(["b", "a"]), one(["c", "a"])])
    assert merged.launches["name"].tolist() == ["b", "a", "c", "a"]
    assert list(merged.launches["name"].cat.categories) == ["a", "b", "c"]
    assert merged.kernel_names() == ["a", "b", "c"]


def test_gpu_activity_frames_consumes_the_rows_and_gives_schema_columns() -> None:
    rows = pd.DataFrame(
        {
            "name": pd.Categorical(["[CUDA memcpy HtoD]", "k [7]", "k", "[CUDA memcpy DtoH]"]),
            "start_ns": [0.0, 1.0, 2.0, 3.0],
            "stream": pd.array([1, 2, None, 4], dtype="Int64"),
            "correlation_id": pd.array([None, None, 9, 11], dtype="Int64"),
        }
    )
    launches, transfers = frames.gpu_activity_frames(rows)
    assert len(rows.columns) == 0  # each column let go once split
    assert launches["launch_id"].dtype == "Int64" and launches["launch_id"].tolist() == [0, 1]
    assert launches["correlation_id"].tolist() == [7, 9]  # the name's suffix fills the gap
    assert launches["stream"].tolist() == [2, pd.NA]
    assert launches.index.equals(pd.RangeIndex(2)) and transfers.index.equals(pd.RangeIndex(2))
    assert transfers["kind"].tolist() == ["HtoD", "DtoH"]
    assert transfers["start_ns"].tolist() == [0.0, 3.0]
    valid = schema.validate("launches", launches)
    for col in launches.columns:  # already in the schema's form: validating changes nothing
        given = launches[col].reset_index(drop=True)
        if col in schema.NARROW["launches"]:  # but the narrow columns' width
            given = schema.narrow_ints(given)
            assert given.dtype != "Int64", col
        assert valid[col].equals(given), col


def test_whole_ints_match_the_schema_conversion() -> None:
    values = np.array([0.0, -3.0, np.nan, 2.0**62, 7.0])
    got = frames.whole_ints(values)
    want = schema._float_to_int(values).array
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist() == [0, -3, pd.NA, 2**62, 7]
    assert (got._data == want._data).all() and (got._mask == want._mask).all()
