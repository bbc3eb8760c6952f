"""The schema's narrow integer columns (``advisor.schema.NARROW``): the narrowest of ``Int8``,
``Int16`` and ``Int32`` that holds every value, the same values as ``Int64`` either way, a value
beyond 32 bits read as it is."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import parsers
from advisor import schema
from advisor.criteria.engine import gathering
from advisor.models import timeline
from advisor.models.bsp.profile import launches_by_kernel
from advisor.profile import Profile, Provenance
from tests.parsers.test_nsys_sqlite import BASE_DDL, ENUM_DDL, GPU_DDL, KERNEL_DDL, make_export

PROV = Provenance(path="t.csv", format="test", profiler="nsys")


@pytest.mark.parametrize(
    ("values", "width"),
    [
        ([0, 1, 2**31 - 1, -(2**31)], "Int32"),
        ([2**15, 0], "Int32"),
        ([-(2**15) - 1, None], "Int32"),
        ([2**15 - 1, -(2**15), None], "Int16"),
        ([128, 1], "Int16"),
        ([127, -128, None], "Int8"),
        ([None, 5, None], "Int8"),
        ([], "Int8"),
        ([None, None], "Int8"),
    ],
)
def test_narrow_ints_takes_the_narrowest_width(values: list[int | None], width: str) -> None:
    wide = pd.Series(pd.array(values, dtype="Int64"), index=range(3, 3 + len(values)))
    narrow = schema.narrow_ints(wide)
    assert narrow.dtype == width
    assert narrow.tolist() == wide.tolist()
    assert narrow.index.equals(wide.index)
    assert narrow.isna().tolist() == wide.isna().tolist()
    assert schema.narrow_ints(narrow) is narrow  # already narrow: as it is


@pytest.mark.parametrize("beyond", [2**31, -(2**31) - 1, 2**62])
def test_narrow_ints_leaves_a_column_beyond_32_bits_wide(beyond: int) -> None:
    wide = pd.Series(pd.array([1, None, beyond], dtype="Int64"))
    assert schema.narrow_ints(wide) is wide
    floats = pd.Series([1.0, 2.0])
    assert schema.narrow_ints(floats) is floats  # not an Int64 column: not touched


def test_validate_narrows_only_the_narrow_columns() -> None:
    frame = pd.DataFrame(
        {
            "launch_id": [0, 1],
            "grid_x": [64, 128],
            "stream": [2**32 - 1, 7],  # a CUPTI stream id is 32 bits unsigned: kept wide
            "correlation_id": [1, 70000],
            "start_ns": [2**40, 1.0],
        }
    )
    out = schema.validate("launches", frame)
    assert out["grid_x"].dtype == "Int16" and out["grid_x"].tolist() == [64, 128]
    assert out["stream"].dtype == "Int64" and out["stream"].tolist() == [2**32 - 1, 7]
    assert out["correlation_id"].dtype == "Int32" and out["correlation_id"].tolist() == [1, 70000]
    assert out["launch_id"].dtype == "Int64" and out["start_ns"].dtype == "float64"
    for col in schema.NARROW["launches"] - {"grid_x", "stream", "correlation_id"}:
        assert out[col].dtype == "Int8" and out[col].isna().all()
    again = schema.validate("launches", out)  # a profile validated again: nothing changes
    for col in out.columns:
        assert again[col].dtype == out[col].dtype and again[col].equals(out[col]), col
    calls = schema.validate("api_calls", pd.DataFrame({"process_id": [1], "result": [0]}))
    assert {str(calls[c].dtype) for c in schema.NARROW["api_calls"]} == {"Int8"}
    assert calls["start_ns"].dtype == "float64"


def test_a_grid_beyond_cuda_limits_is_read_and_dropped_as_before() -> None:
    """A grid x of 2**31 does not fit 32 bits: the column stays wide, the row reaches the
    plausibility check and is dropped with its note (not a schema error)."""
    launches = pd.DataFrame(
        {
            "name": ["k", "k"],
            "start_ns": [0.0, 10.0],
            "duration_ns": [5.0, 5.0],
            "grid_x": [2**31, 4],
        }
    )
    prof = Profile(provenance=(PROV,), launches=launches)
    assert prof.launches["grid_x"].tolist() == [4]
    notes = prof.provenance[0].notes
    assert notes == (
        "t.csv: kernel launch row 1 (k): grid x 2.14748e+09 outside [0, 2.14748e+09]: dropped",
    )


def _largest_grids() -> pd.DataFrame:
    """Launches whose grid and block products overflow 32 bits (CUDA's largest grid)."""
    return schema.validate(
        "launches",
        pd.DataFrame(
            {
                "launch_id": [0, 1, 2],
                "name": ["k", "k", "k"],
                "start_ns": [0.0, 10.0, 20.0],
                "duration_ns": [5.0, 5.0, 5.0],
                "grid_x": [2**31 - 1, 3, None],
                "grid_y": [65535, 2, 1],
                "grid_z": [65535, 1, 1],
                "block_x": [1024, 32, 1],
                "block_y": [1, 2, 1],
                "block_z": [1, 1, 64],
                "registers_per_thread": [255, 32, None],
            }
        ),
    )


def test_products_of_narrow_columns_do_not_wrap() -> None:
    launches = _largest_grids()
    assert launches["grid_x"].dtype == "Int32"
    blocks = (2**31 - 1) * 65535 * 65535
    config = gathering._config_columns(launches, schema.empty("transfers"))
    assert config["launch.grid_blocks"][:2].tolist() == [float(blocks), 6.0]
    assert np.isnan(config["launch.grid_blocks"][2])
    assert config["launch.block_threads"].tolist() == [1024.0, 64.0, 64.0]
    assert config["launch.registers_per_thread"][:2].tolist() == [255.0, 32.0]
    grid = timeline._grid_blocks(launches)
    assert grid[:2].tolist() == [float(blocks), 6.0] and np.isnan(grid[2])
    prof = Profile(provenance=(PROV,), launches=launches.iloc[:2])
    threads = launches_by_kernel(prof, ["k"])["k"].threads
    assert threads.tolist() == [float(blocks) * 1024.0, 6.0 * 64.0]


def test_products_of_8_bit_columns_do_not_wrap() -> None:
    """Sizes of 100 are Int8 columns: each product (10**6 blocks, 200 threads) leaves 8 bits."""
    launches = schema.validate(
        "launches",
        pd.DataFrame(
            {
                "launch_id": [0],
                "name": ["k"],
                "start_ns": [0.0],
                "duration_ns": [5.0],
                **{c: [100] for c in ("grid_x", "grid_y", "grid_z", "block_x")},
                "block_y": [2],
                "block_z": [1],
            }
        ),
    )
    assert {str(launches[c].dtype) for c in ("grid_x", "block_x", "block_y")} == {"Int8"}
    config = gathering._config_columns(launches, schema.empty("transfers"))
    assert config["launch.grid_blocks"].tolist() == [1e6]
    assert config["launch.block_threads"].tolist() == [200.0]
    assert timeline._grid_blocks(launches).tolist() == [1e6]
    prof = Profile(provenance=(PROV,), launches=launches)
    assert launches_by_kernel(prof, ["k"])["k"].threads.tolist() == [2e8]


def test_nsys_export_reads_narrow_columns_narrow(tmp_path: Path) -> None:
    prof = parsers.read(
        make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, ENUM_DDL, GPU_DDL)
    )
    narrow = {str(d) for _, d in schema.NARROW_WIDTHS}
    for col in schema.NARROW["launches"]:
        assert str(prof.launches[col].dtype) in narrow, col
    assert prof.launches["grid_x"].dtype == "Int8"  # 40 and 80
    assert prof.launches["block_x"].dtype == "Int16"  # 128
    assert prof.launches["grid_x"].tolist() == [40, 80]
    assert prof.launches["stream"].tolist() == [7, 7]
    assert prof.launches["correlation_id"].tolist() == [4, 2]
    for col in schema.NARROW["api_calls"]:
        assert str(prof.api_calls[col].dtype) in narrow, col
    assert set(prof.api_calls["process_id"]) == {100} and set(prof.api_calls["thread_id"]) == {101}


def test_nsys_export_stream_id_beyond_32_bits_is_kept_exact(tmp_path: Path) -> None:
    path = make_export(tmp_path / "run.sqlite", BASE_DDL, KERNEL_DDL, ENUM_DDL, GPU_DDL)
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = ? WHERE correlationId = 4", (2**40 + 3,)
    )
    conn.commit()
    conn.close()
    launches = parsers.read(path).launches
    assert launches["stream"].dtype == "Int64"
    assert launches["stream"].tolist() == [2**40 + 3, 7]
    assert launches["grid_x"].dtype == "Int8"  # the other columns as narrow as before
