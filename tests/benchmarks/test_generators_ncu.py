"""The synthetic ncu ``--page raw`` generator of the scale benchmarks (benchmarks/gen_ncu.py)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

import parsers
from tests.generated import ncu_page

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_ncu


@pytest.fixture(scope="module")
def raw_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ncu_page(tmp_path_factory, "raw", 40, seed=3)


def test_layout_matches_the_raw_page(raw_page: Path) -> None:
    lines = raw_page.read_text(encoding="utf-8").split("\n")
    # two ==PROF== lines, header, units row, 40 launches, and the final newline
    assert [line.startswith("==PROF==") for line in lines[:3]] == [True, True, False]
    assert len(lines) == 2 + 2 + 40 + 1 and lines[-1] == ""
    rows = list(csv.reader(lines[2:-1]))
    header, units = rows[0], rows[1]
    assert len(header) == 475 and all(len(r) == 475 for r in rows)
    assert header[:11] == list(gen_ncu.ID_COLUMNS)
    assert header[11:] == sorted(header[11:])  # metric columns in alphabetical order
    assert units[:11] == [""] * 11
    assert units[header.index("gpu__time_duration.sum")] == "ns"
    assert units[header.index("launch__registers_per_thread")] == "register/thread"
    # every cell is quoted, as ncu prints them
    assert all(line.startswith('"') and line.endswith('"') for line in lines[2:-1])


def test_parses_into_one_launch_per_row(raw_page: Path) -> None:
    profile = parsers.read(raw_page)
    assert profile.provenance[0].modes == ("raw",)
    assert len(profile.launches) == 40
    assert profile.launches["duration_ns"].gt(0).all()
    assert profile.launches["registers_per_thread"].notna().all()
    # 464 metric columns; launch__kernel_name is blank, so 463 metrics rows per launch
    assert profile.metrics.groupby("launch_id").size().eq(463).all()
    canonical = set(profile.metrics["metric"])
    assert {"gpu_time_duration", "achieved_occupancy", "dram_read_bytes"} <= canonical
    device = profile.devices.iloc[0]
    assert device["name"] == gen_ncu.DEVICE_NAME and device["sm_count"] == gen_ncu.SM_COUNT
    assert device["compute_capability"] == "9.0"
    # templated names with commas stay whole
    assert profile.launches["name"].str.contains("<.*, .*>", regex=True).any()


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    gen_ncu.write_ncu_raw(a, 25, seed=7)
    gen_ncu.write_ncu_raw(b, 25, seed=7)
    gen_ncu.write_ncu_raw(c, 25, seed=8)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_registered_for_the_benchmark() -> None:
    function, default_n, is_csv = gen_ncu.GENERATORS["ncu-raw-csv"]
    assert function is gen_ncu.write_ncu_raw and default_n == 10_000 and is_csv
