"""The large-input generators of benchmarks/ at small n: each writes a file the reader of its
format reads back with the expected number of rows, the real header, and the same bytes for
the same seed."""

from __future__ import annotations

import csv
import sqlite3
import sys
from pathlib import Path

import pytest

import parsers

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import gen_common, gen_nsys, gen_nvprof

N = 300


def test_nvprof_gputrace_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    gen_nvprof.write_nvprof_gputrace(path, N, seed=1)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("==308065== NVPROF is profiling process 308065")
    assert lines[3] == ",".join(f'"{h}"' for h in gen_nvprof.HEADER)
    assert lines[4] == "s,ms,,,,,,,,B,B,MB,GB/s,,,,,,B,,,"
    assert len(lines) == 5 + N
    # every data row has the 22 fields of the header (names with commas are quoted)
    assert all(len(row) == 22 for row in csv.reader(lines[5:]))
    prof = parsers.read(path)
    assert prof.provenance[0].format == "nvprof-csv"
    assert prof.provenance[0].modes == ("gpu-trace",)
    assert len(prof.launches) + len(prof.transfers) == N
    assert 0 < len(prof.transfers) < N // 4  # about one row in ten is a copy or memset
    assert set(prof.launches["name"]) <= set(gen_common.KERNEL_NAMES)
    assert set(prof.transfers["kind"]) <= {"HtoD", "DtoH", "DtoD", "memset"}
    assert set(prof.launches["device"]) == {"TITAN Xp"}
    assert prof.launches["start_ns"].is_monotonic_increasing


def test_nsys_gputrace_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    gen_nsys.write_nsys_gputrace(path, N, seed=1)
    lines = path.read_text().splitlines()
    assert lines[0] == gen_nsys.HEADER
    assert len(lines) == 1 + N
    prof = parsers.read(path)
    assert prof.provenance[0].format == "nsys-csv"
    assert prof.provenance[0].modes == ("cuda_gpu_trace",)
    assert len(prof.launches) + len(prof.transfers) == N
    assert set(prof.launches["name"]) <= set(gen_common.KERNEL_NAMES)
    # a plain name is written unquoted, a name with a comma quoted (nsys quotes only when needed)
    assert any(ln.endswith(",[CUDA memcpy Host-to-Device]") for ln in lines)
    assert all(ln.endswith('"') for ln in lines[1:] if ln.endswith(")") and ", " in ln)
    assert all(len(row) == 21 for row in csv.reader(lines[1:]))


def test_nsys_sqlite_has_n_kernel_rows(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    gen_nsys.write_nsys_sqlite(path, N, seed=1)
    with sqlite3.connect(path) as con:
        (kernels,) = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
        (copies,) = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchone()
        (calls,) = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    assert kernels == N
    prof = parsers.read(path)
    assert prof.provenance[0].format == "nsys-sqlite"
    assert prof.provenance[0].profiler_version == "2023.3.1.92"
    assert len(prof.launches) == N
    assert len(prof.transfers) >= copies > 0
    assert len(prof.api_calls) == calls == N + len(prof.transfers)  # one call per activity
    assert set(prof.launches["name"]) <= set(gen_common.KERNEL_NAMES)
    assert set(prof.transfers["kind"]) <= {"HtoD", "DtoH", "DtoD", "memset"}
    assert list(prof.devices["name"]) == [gen_nsys.DEVICE]


@pytest.mark.parametrize(
    "write",
    [gen_nvprof.write_nvprof_gputrace, gen_nsys.write_nsys_gputrace, gen_nsys.write_nsys_sqlite],
)
def test_same_seed_same_bytes(tmp_path: Path, write: object) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    write(a, 50, 7)  # type: ignore[operator]
    write(b, 50, 7)  # type: ignore[operator]
    write(c, 50, 8)  # type: ignore[operator]
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_fixed_decimals_and_nulls() -> None:
    # 1.5 -> "1.500000"; 0.0000004 rounds to "0.000000"; 12.3456789 -> "12.346" at 3 decimals
    cells = gen_common.fixed([1.5, 4e-7, 2.0], 6, [True, True, False]).to_pylist()
    assert cells == ["1.500000", "0.000000", None]
    assert gen_common.fixed([12.3456789], 3).to_pylist() == ["12.346"]
    ints = gen_common.integers([1, 2])
    line = gen_common.join_lines([ints, gen_common.fixed([0.5, 1], 1, [False, True])])
    assert line == b"1,\n2,1.0\n"


def test_generator_registry() -> None:
    keys = {**gen_nvprof.GENERATORS, **gen_nsys.GENERATORS}
    assert keys["nvprof-gputrace-csv"][1:] == (1_000_000, True)
    assert keys["nsys-gputrace-csv"][1:] == (1_000_000, True)
    assert keys["nsys-sqlite"][1:] == (1_000_000, False)
