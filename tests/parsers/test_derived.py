"""Derived tables (parsers/derived/tables.py, parsers/derived/rdata.py): timing tables, R data sets
and wall-clock tables that users of the BSP-model papers keep beside their profiler runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import parsers
from advisor.errors import EXIT_INPUT, MalformedInput, NoKernelData, UnrecognisedFormat
from parsers.derived.rdata import fold_name, read_r_dataset, sniff_r_dataset
from parsers.derived.tables import (
    WALLCLOCK_MESSAGE,
    read_timing_table,
    sniff_timing_table,
    sniff_wallclock_table,
)
from parsers.source import Source

BSP = "csv/amaris_bspgpu"
DATASETS = "csv/amaris_gpuperfpredict/datasets"
RODINIA = "csv/amaris_gpuperfpredict/rodinia_traces"

# (rows, non-empty cells), counted with
#   awk -F'\t' '{for(i=1;i<NF;i++) if($i!="") c++} END{print NR, c}' FILE
# (every line ends with a tab, so the last awk field is the empty one after it)
TIMING_COUNTS = {
    "gt-630/SubSeqMax.txt": (12, 360),
    "gt-630/matMul-Gm-SP.txt": (7, 210),
    "gt-630/matMul-Gm-Un-SP.txt": (7, 210),
    "gt-630/matMul-Sm-SP.txt": (7, 210),
    "gt-630/matMul-Sm-Un-SP.txt": (7, 210),
    "gtx-295/matMul-Gm-SP.txt": (7, 70),
    # its last cell, 1.84e+13 ms (584 years), is dropped with a note as beyond a day
    "gtx-295/matMul-Gm-Un-SP.txt": (7, 69),
    "gtx-295/matMul-Sm-SP.txt": (7, 70),
    "gtx-295/matMul-Sm-Un-SP.txt": (7, 70),
    "gtx-660/SubSeqMax.txt": (12, 120),
    "gtx-660/matMul-Gm-SP.txt": (7, 70),
    "gtx-660/matMul-Gm-Un-SP.txt": (7, 70),
    "gtx-660/matMul-Sm-SP.txt": (7, 70),
    "gtx-660/matMul-Sm-Un-SP.txt": (7, 70),
    "gtx-680/SubSeqMax.txt": (12, 120),
    "gtx-680/matMul-Gm-SP.txt": (7, 70),
    "gtx-680/matMul-Gm-Un-SP.txt": (7, 70),
    "gtx-680/matMul-Sm-SP.txt": (7, 70),
    "gtx-680/matMul-Sm-Un-SP.txt": (7, 70),
    "gtx-Titan/SubSeqMax.txt": (12, 360),
    "gtx-Titan/matMul-Gm-SP.txt": (8, 240),
    "gtx-Titan/matMul-Gm-Un-SP.txt": (8, 240),
    "gtx-Titan/matMul-Sm-SP.txt": (8, 240),
    "gtx-Titan/matMul-Sm-Un-SP.txt": (8, 240),
    "tesla-k20/SubSeqMax.txt": (12, 360),
    "tesla-k20/matMul-Gm-SP.txt": (8, 230),
    "tesla-k20/matMul-Gm-Un-SP.txt": (8, 230),
    "tesla-k20/matMul-Sm-SP.txt": (7, 210),
    "tesla-k20/matMul-Sm-Un-SP.txt": (8, 230),
}

DATASET_GPUS = [
    "GTX-680", "GTX-970", "GTX-980", "Quadro", "Tesla-K20", "Tesla-K40", "Tesla-P100", "Titan",
    "TitanX",
]  # fmt: skip


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _metric(profile: parsers.Profile, launch_id: int, metric: str) -> float:
    m = profile.metrics
    rows = m[(m["launch_id"] == launch_id) & (m["metric"] == metric)]
    assert len(rows) == 1, (launch_id, metric, len(rows))
    return float(rows["value"].iloc[0])


# ------------------------------------------------------------------------------ timing-table


@pytest.mark.parametrize("name", sorted(TIMING_COUNTS))
def test_timing_tables_read_one_launch_per_value(real_profiles: Path, name: str) -> None:
    rows, values = TIMING_COUNTS[name]
    profile = parsers.read(real_profiles / BSP / name)
    assert profile.provenance[0].format == "timing-table"
    assert profile.provenance[0].profiler == "derived"
    assert len(profile.launches) == values
    assert set(profile.launches["name"]) == {"kernel"}
    rows_seen = profile.metrics.loc[profile.metrics["metric"] == "input_row", "value"]
    assert sorted(set(rows_seen)) == list(range(rows))
    assert profile.launches["duration_ns"].notna().all()


def test_timing_table_values_ms_to_ns(real_profiles: Path) -> None:
    profile = parsers.read(real_profiles / BSP / "gt-630/matMul-Gm-SP.txt")
    launches = profile.launches
    # line 1, column 1 of the file: 0.257805 (ms) -> 257805 ns
    assert launches["duration_ns"].iloc[0] == pytest.approx(257805.0)
    # line 1 has 30 values; line 2 starts with 2.472131 ms -> launch 30
    assert launches["duration_ns"].iloc[30] == pytest.approx(2472131.0)
    assert _metric(profile, 30, "input_row") == 1
    assert _metric(profile, 30, "repeat_index") == 0
    # line 5, column 1: "1.32e+03" (ms) -> 1.32e9 ns; column 3: "1.31e+03"
    assert launches["duration_ns"].iloc[120] == pytest.approx(1.32e9)
    assert launches["duration_ns"].iloc[122] == pytest.approx(1.31e9)
    assert _metric(profile, 120, "input_row") == 4
    # line 7, column 30 (the last launch): "8.58e+04" ms
    assert launches["duration_ns"].iloc[-1] == pytest.approx(8.58e10)
    assert _metric(profile, 209, "repeat_index") == 29
    notes = " ".join(profile.provenance[0].notes)
    assert "rows are input sizes (row k = size index k), columns are repeated runs" in notes
    # lines 5-7 hold 90 values in 3-digit scientific notation
    assert "90 values are printed in scientific notation with 3 significant digits" in notes


def test_timing_table_ragged_row_with_empty_cells(real_profiles: Path) -> None:
    # tesla-k20/matMul-Gm-SP.txt: lines 1-7 hold 30 values; line 8 has 28 cells, of which
    # 1-6, 8 and 19 are empty, leaving 20 values (all "1.07e+05" ms)
    profile = parsers.read(real_profiles / BSP / "tesla-k20/matMul-Gm-SP.txt")
    m = profile.metrics
    last_row = m[(m["metric"] == "input_row") & (m["value"] == 7)]["launch_id"]
    assert len(last_row) == 20
    first = int(last_row.iloc[0])
    assert _metric(profile, first, "repeat_index") == 6  # column 7 is the first value
    assert profile.launches["duration_ns"].iloc[first] == pytest.approx(1.07e11)
    notes = profile.provenance[0].notes
    assert "ragged rows: 28 to 30 columns per row" in notes
    assert "8 empty cells (runs without a value) were skipped" in notes


def test_timing_table_identical_repeats_are_noted(real_profiles: Path) -> None:
    # gt-630/matMul-Sm-SP.txt repeats one value in every column of its 7 lines (see the manifest);
    # gtx-295's copy does not
    same = parsers.read(real_profiles / BSP / "gt-630/matMul-Sm-SP.txt")
    assert any(
        "in 7 of 7 rows every repeat has the same value" in n for n in same.provenance[0].notes
    )
    other = parsers.read(real_profiles / BSP / "gtx-295/matMul-Sm-SP.txt")
    assert not any("every repeat has the same value" in n for n in other.provenance[0].notes)


def test_timing_table_synthetic_ragged_rows(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.txt", "# a comment\n1.5\t2.0\t2.5\t\n3.0\t\t4.0\n\n5.25\t\n")
    profile = parsers.read(path)
    assert list(profile.launches["duration_ns"]) == [1.5e6, 2.0e6, 2.5e6, 3.0e6, 4.0e6, 5.25e6]
    rows = profile.metrics[profile.metrics["metric"] == "input_row"]["value"].tolist()
    cols = profile.metrics[profile.metrics["metric"] == "repeat_index"]["value"].tolist()
    assert rows == [0, 0, 0, 1, 1, 2]
    assert cols == [0, 1, 2, 0, 2, 0]
    assert "ragged rows: 1 to 3 columns per row" in profile.provenance[0].notes


@pytest.mark.parametrize(
    ("text", "line", "cell"),
    [
        ("0.25\t0.26\t\n0.30\tabc\t0.31\t\n", 2, "'abc'"),
        ("# comment\n0.25\t0.26\t\n0.30\t0.31\t\n1.2\t-4\t\n", 4, "'-4'"),
        ("0.25\t0.26\t\n0.30\t0.31ms\t\n", 2, "'0.31ms'"),
    ],
)
def test_timing_table_malformed_cell_names_the_line(
    tmp_path: Path, text: str, line: int, cell: str
) -> None:
    path = _write(tmp_path, "bad.txt", text)
    with pytest.raises(MalformedInput) as err:
        parsers.read(path)
    assert err.value.line == line
    assert cell in str(err.value)


def test_timing_table_sniffer_is_strict() -> None:
    assert sniff_timing_table(["0.25\t0.26\t", "0.3\t0.31\t"])
    assert not sniff_timing_table(["0.25,0.26", "0.3,0.31"])  # commas: not this layout
    assert not sniff_timing_table(['"Start"\t"Duration"', "1\t2"])
    assert not sniff_timing_table(["Time(%)\tTime\tCalls", "1\t2\t3"])  # header words
    assert not sniff_timing_table(["0.25 0.26", "0.3 0.31"])  # no tab
    assert not sniff_timing_table(["", "# only a comment"])


def test_timing_table_first_line_must_be_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path, "words.txt", "size\trun1\trun2\n1\t2\t3\n")
    with pytest.raises(UnrecognisedFormat):
        parsers.read(path)


def test_timing_table_read_directly_handles_only_comments() -> None:
    profile = read_timing_table(Source("x.txt", ["# nothing measured", ""]), None)
    assert len(profile.launches) == 0
    assert len(profile.metrics) == 0


# ------------------------------------------------------------------------------ r-dataset


@pytest.mark.parametrize("gpu", DATASET_GPUS)
def test_r_datasets_read_launches_metrics_device(real_profiles: Path, gpu: str) -> None:
    profile = parsers.read(real_profiles / DATASETS / f"bpnn_layerforward_CUDA-{gpu}.csv")
    assert profile.provenance[0].format == "r-dataset"
    # 58 lines = header + 57 rows (wc -l); 80 columns, of which 10 are read into launches /
    # devices ("", name, duration, grid.x/y, block.x/y, registers.per.thread, static.smem,
    # gpu_name) and 70 become metrics
    assert len(profile.launches) == 57
    assert len(profile.metrics) == 57 * 70
    assert profile.devices["name"].tolist() == [gpu]
    assert set(profile.launches["name"]) == {"bpnn_layerforward_CUDA"}
    # static.smem is 1088 (bytes) in 7 files and 1.0625 (KB) in GTX-980 / Tesla-P100
    assert set(profile.launches["static_shared_bytes"]) == {1088.0}


def test_r_dataset_first_and_last_row_values(real_profiles: Path) -> None:
    profile = parsers.read(real_profiles / DATASETS / "bpnn_layerforward_CUDA-GTX-680.csv")
    first = profile.launches.iloc[0]
    # line 2: "3",8192,0,2.7648e-05,1,512,16,16,11,1088,1,"bpnn_layerforward_CUDA",...
    assert first["duration_ns"] == pytest.approx(27648.0)
    assert (first["grid_x"], first["grid_y"], first["grid_z"]) == (1, 512, 1)
    assert (first["block_x"], first["block_y"], first["block_z"]) == (16, 16, 1)
    assert first["registers_per_thread"] == 11
    assert first["static_shared_bytes"] == 1088.0
    assert first["device"] == "GTX-680"
    # line 58: "563",65536,0,0.000201153,1,4096,...
    last = profile.launches.iloc[-1]
    assert last["duration_ns"] == pytest.approx(201153.0)
    assert last["grid_y"] == 4096
    assert _metric(profile, 56, "input.size.1") == 65536
    # line 2 metric cells: global_memory_load_efficiency 68 (%), achieved_occupancy 0.920969
    # (a 0..1 ratio), device_memory_utilization 3 (a level), executed_ipc 2.532026,
    # requested_global_load_throughput 18.874334 (units dropped by the data set: kept raw)
    assert _metric(profile, 0, "gld_efficiency") == pytest.approx(0.68)
    assert _metric(profile, 0, "achieved_occupancy") == pytest.approx(0.920969)
    assert _metric(profile, 0, "dram_utilization") == 3
    assert _metric(profile, 0, "ipc") == pytest.approx(2.532026)
    assert _metric(profile, 0, "requested_global_load_throughput") == pytest.approx(18.874334)
    assert _metric(profile, 0, "l2_throughput_.reads.") == pytest.approx(27.830102)
    assert _metric(profile, 0, "flop_count_sp") == 253952
    m = profile.metrics
    units = dict(zip(m["metric"], m["unit"], strict=True))
    assert units["gld_efficiency"] == "frac"
    assert units["dram_utilization"] == "level"
    assert units["requested_global_load_throughput"] == ""
    tool = dict(zip(m["metric"], m["tool_metric"], strict=True))
    assert tool["flop_count_sp"] == "floating_point_operations.single_precision."
    assert tool["inst_control"] == "control.flow_instructions"


def test_r_dataset_fractional_smem_is_kb(real_profiles: Path) -> None:
    # bpnn_layerforward_CUDA-GTX-980.csv: static.smem is 1.0625 on every row -> 1.0625 KB = 1088 B
    profile = parsers.read(real_profiles / DATASETS / "bpnn_layerforward_CUDA-GTX-980.csv")
    assert profile.launches["static_shared_bytes"].iloc[0] == 1088.0
    assert "'static.smem' read as KB (it has fractional values; no units row)" in (
        profile.provenance[0].notes
    )


@pytest.mark.parametrize(
    ("r_name", "folded"),
    [
        ("l2_throughput_.reads.", "l2_throughput_reads"),
        ("L2 Throughput (Reads)", "l2_throughput_reads"),
        ("issued_control.flow_instructions", "issued_control_flow_instructions"),
        ("l1.shared_memory_utilization", "l1_shared_memory_utilization"),
        ("FLOP Efficiency(Peak Single)", "flop_efficiency_peak_single"),
    ],
)
def test_fold_name_undoes_r_mangling(r_name: str, folded: str) -> None:
    assert fold_name(r_name) == folded


R_HEADER = '"","input.size.1","duration","grid.x","grid.y","grid.z","block.x","block.y",'
R_HEADER += '"block.z","registers.per.thread","static.smem","name","sm_efficiency","device"\n'


def test_r_dataset_synthetic_rows(tmp_path: Path) -> None:
    text = R_HEADER
    text += '"1",1024,1.5e-06,4,1,1,256,1,1,32,0,"scale",87.5,"Tesla K40c (0)"\n'
    text += '"2",2048,NA,8,1,1,256,1,1,32,0,"scale",NA,"Tesla K40c (0)"\n'
    profile = parsers.read(_write(tmp_path, "r.csv", text))
    launches = profile.launches
    assert launches["duration_ns"].iloc[0] == pytest.approx(1500.0)
    assert launches["duration_ns"].isna().iloc[1]  # R's NA is a missing value
    assert launches["grid_x"].tolist() == [4, 8]
    assert launches["device"].tolist() == ["Tesla K40c", "Tesla K40c"]
    assert launches["device_id"].tolist() == [0, 0]
    assert profile.devices[["device_id", "name"]].values.tolist() == [[0, "Tesla K40c"]]
    # sm_efficiency 87.5 (%) -> 0.875; the NA cell gives no metric row
    eff = profile.metrics[profile.metrics["metric"] == "sm_efficiency"]
    assert eff["value"].tolist() == [0.875]
    assert eff["unit"].tolist() == ["frac"]
    assert not any("taken as 1" in n for n in profile.provenance[0].notes)


@pytest.mark.parametrize("grid", ["inf", "1e20", "2.5"])
def test_r_dataset_grid_that_is_no_whole_number_is_malformed(tmp_path: Path, grid: str) -> None:
    text = R_HEADER + f'"1",1024,1.5e-06,{grid},1,1,256,1,1,32,0,"scale",87.5,"Tesla K40c (0)"\n'
    with pytest.raises(MalformedInput, match=r"'grid\.x'") as err:
        parsers.read(_write(tmp_path, "r.csv", text))
    assert err.value.line == 2


def test_r_dataset_header_only_is_empty_not_a_crash(tmp_path: Path) -> None:
    src = Source("r.csv", [R_HEADER.rstrip("\n"), ""])
    profile = read_r_dataset(src, None)
    assert len(profile.launches) == 0
    with pytest.raises(NoKernelData):
        parsers.read(_write(tmp_path, "r.csv", R_HEADER))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('"1",1024,1.5e-06,4,1,1,256,1,1,32,0,"scale",87.5\n', "13 fields; expected 14"),
        ('"1",1024,fast,4,1,1,256,1,1,32,0,"scale",87.5,"K40"\n', "column 'duration' is 'fast'"),
        ('"1",1024,1e-06,4.5,1,1,256,1,1,32,0,"scale",87.5,"K40"\n', "expected a whole number"),
        ('"1",1024,1e-06,4,1,1,256,1,1,32,0,NA,87.5,"K40"\n', "empty kernel name"),
    ],
)
def test_r_dataset_malformed_row_names_the_line(tmp_path: Path, row: str, message: str) -> None:
    good = '"0",512,1e-06,2,1,1,256,1,1,32,0,"scale",80,"K40"\n'
    path = _write(tmp_path, "r.csv", R_HEADER + good + row)
    with pytest.raises(MalformedInput) as err:
        parsers.read(path)
    assert err.value.line == 3
    assert message in str(err.value)


def test_r_dataset_sniffer_is_strict() -> None:
    assert sniff_r_dataset(['"","duration","name"', '"1",0.1,"k"'])
    assert not sniff_r_dataset(['"ID","Process ID","Kernel Name"'])  # ncu raw
    assert not sniff_r_dataset(['"","Count","Avg Size"'])  # no duration / name
    assert not sniff_r_dataset(['"Start","Duration","Name"'])  # nvprof trace


# ------------------------------------------------------------------------------ wallclock-table


@pytest.mark.parametrize("name", ["backprop-time-1.csv", "hotspot-time-1.csv", "lud-time-1.csv"])
def test_wallclock_tables_have_no_kernel_data(real_profiles: Path, name: str) -> None:
    # backprop / lud: "8192, 0:0.344 , 0:0.044 , 0:0.199" (/usr/bin/time reshaped);
    # hotspot: "64,256," then "64,256,real<TAB>0m0.441s" ... (bash time keyword reshaped)
    path = real_profiles / RODINIA / name
    assert parsers.detect(path) == "wallclock-table"
    with pytest.raises(NoKernelData) as err:
        parsers.read(path)
    assert WALLCLOCK_MESSAGE in str(err.value)
    assert err.value.exit_code == EXIT_INPUT


def test_wallclock_table_cli_exit_code(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "w.csv", "256, 0:0.350 , 0:0.056 , 0:0.174\n512, 1:5.211 , 0:1 , 0:0.2\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "inspect", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 3
    assert WALLCLOCK_MESSAGE in done.stderr


def test_wallclock_sniffer_is_strict() -> None:
    assert sniff_wallclock_table(["8192, 0:0.344 , 0:0.044 , 0:0.199"])
    assert sniff_wallclock_table(["64,256,", "64,256,real\t0m0.441s", "64,256,user\t0m0.067s"])
    assert not sniff_wallclock_table(["64,256,", "128,256,"])  # no time at all
    assert not sniff_wallclock_table(["8192,249512519.000000,6592.000000,,,,"])  # a trace row
    assert not sniff_wallclock_table(["8192, 0:0.344 , 0:0.044 , 0:0.199", "1,2,3"])
    assert not sniff_wallclock_table([])
