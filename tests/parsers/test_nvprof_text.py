"""nvprof plain-text output (format ``nvprof-text``, parsers/nvprof/text.py).

Real files are read in place through the ``real_profiles`` fixture; every expected value below was
read off the raw file by hand (the line is named in the comment).  Synthetic snippets are written
here for the layouts and the error paths.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.errors import MalformedInput, NoKernelData
from advisor.profile import Profile
from parsers import registry
from parsers.nvprof.text import sniff_nvprof_text
from parsers.source import Source

KB, MB, GB = 1024, 1024**2, 1024**3
TEXT_MODE = "csv/nanzifan_nvprof_titanxp/text_mode"
XGC = "csv/xgc_summit_v100_text"
AMARIS = "csv/amaris_bspgpu/gt-630/times1_nvprof_raw"


def _read_format(path: Path) -> Profile:
    """Read with this format directly (no NoKernelData check), to see what a file holds."""
    return registry.text_format("nvprof-text").read(Source.from_path(path), None)


def _write(tmp_path: Path, lines: list[str], name: str = "out.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Fixed-width lines as nvprof prints them: each column right-aligned to its widest cell, two
    spaces apart, the last column (Name) left-aligned."""
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header) - 1)]

    def fmt(r: list[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1]

    return [fmt(header)] + [fmt(r) for r in rows]


def _row(frame: pd.DataFrame, column: str, value: str) -> pd.Series:
    hits = frame[frame[column] == value]
    assert len(hits) == 1, f"{value!r}: {len(hits)} rows"
    return hits.iloc[0]


# -- real files ------------------------------------------------------------------------------


@pytest.mark.real_profiles
def test_babelstream_gpu_trace(real_profiles: Path) -> None:
    path = real_profiles / TEXT_MODE / "BabelStream_print-gpu-trace.txt"
    assert parsers.detect(path) == "nvprof-text"
    prof = parsers.read(path)
    assert prof.provenance[0].modes == ("gpu-trace",)
    # 604 rows between the header (line 4) and the blank line before the legend:
    # grep -c "(1024 1 1)" -> 501 kernels, grep -c "\[CUDA memcpy" -> 103 copies
    assert len(prof.launches) == 501
    assert len(prof.transfers) == 103
    assert list(prof.launches["launch_id"]) == list(range(501))
    # line 5: 326.63ms  1.6782ms  (32768 1 1)  (1024 1 1)  14  0B  0B ... TITAN Xp (0)  1  7
    #         void init_kernel<double>(double*, double*, double*, double, double, double) [128]
    first = prof.launches.iloc[0]
    assert first["name"] == (
        "void init_kernel<double>(double*, double*, double*, double, double, double)"
    )
    assert first["correlation_id"] == 128
    assert first["start_ns"] == pytest.approx(326.63e6)
    assert first["duration_ns"] == pytest.approx(1.6782e6)
    assert (first["grid_x"], first["grid_y"], first["grid_z"]) == (32768, 1, 1)
    assert (first["block_x"], first["block_y"], first["block_z"]) == (1024, 1, 1)
    assert first["registers_per_thread"] == 14
    assert first["static_shared_bytes"] == 0.0
    assert (first["device"], first["device_id"]) == ("TITAN Xp", 0)
    assert (first["context"], first["stream"]) == (1, 7)
    # line 10: dot_kernel  (256 1 1)  13 registers  SSMem 8.0000KB = 8192 B (binary KB)  [167]
    dot = prof.launches[prof.launches["correlation_id"] == 167].iloc[0]
    assert dot["name"].startswith("void dot_kernel<double>")
    assert dot["grid_x"] == 256
    assert dot["static_shared_bytes"] == 8 * KB
    # line 11: 335.79ms  1.7600us  - ...  2.0000KB  1.0837GB/s  Device  Pageable ...
    #          [CUDA memcpy DtoH]
    copy = prof.transfers.iloc[0]
    assert copy["kind"] == "DtoH"
    assert copy["bytes"] == 2 * KB
    assert copy["duration_ns"] == pytest.approx(1760.0)
    assert (copy["src_kind"], copy["dst_kind"]) == ("Device", "Pageable")
    # last row before the legend: 1.14514s  154.63ms ... 256.00MB ... [CUDA memcpy DtoH]
    last = prof.transfers.iloc[-1]
    assert last["bytes"] == 256 * MB
    assert last["start_ns"] == pytest.approx(1.14514e9)
    assert last["duration_ns"] == pytest.approx(154.63e6)
    assert not prof.provenance[0].notes


@pytest.mark.real_profiles
def test_bfs_api_summary_with_no_kernels(real_profiles: Path) -> None:
    path = real_profiles / TEXT_MODE / "bfs_profile-api-trace.txt"
    with pytest.raises(NoKernelData, match=r"No kernels were profiled\.") as err:
        parsers.read(path)
    assert err.value.exit_code == 3
    prof = _read_format(path)
    assert prof.provenance[0].modes == ("summary", "unified-memory")
    assert len(prof.kernel_summary) == 0
    assert len(prof.api_summary) == 11  # lines 7-17 of the API calls group
    # line 7: API calls:  99.73%  972.19ms  7  138.88ms  5.2830us  971.82ms  cudaMallocManaged
    malloc = _row(prof.api_summary, "name", "cudaMallocManaged")
    assert malloc["calls"] == 7
    assert malloc["time_frac"] == pytest.approx(0.9973)
    assert malloc["total_ns"] == pytest.approx(972.19e6)
    assert malloc["avg_ns"] == pytest.approx(138.88e6)
    assert malloc["min_ns"] == pytest.approx(5283.0)
    assert _row(prof.api_summary, "name", "cudaFree")["min_ns"] == pytest.approx(438.0)
    # lines 22-27: Unified Memory table of "TITAN Xp (0)" and its two trailers
    um = prof.transfer_summary
    assert list(um["kind"]) == [
        "UM-HtoD", "UM-DtoH", "UM-gpu-page-fault-groups", "UM-memory-thrashes",
        "UM-cpu-page-faults", "UM-cpu-thrashes",
    ]  # fmt: skip
    assert set(um["device"]) == {"TITAN Xp"}
    htod = um.iloc[0]  # 29  30.897KB  4.0000KB  64.000KB  896.0000KB  113.1520us  Host To Device
    assert htod["calls"] == 29
    assert htod["avg_bytes"] == pytest.approx(30.897 * KB)
    assert htod["max_bytes"] == 64 * KB
    assert htod["total_bytes"] == 896 * KB
    assert htod["total_ns"] == pytest.approx(113152.0)
    faults = um.iloc[2]  # 12  -  -  -  -  867.2960us  Gpu page fault groups
    assert faults["calls"] == 12
    assert math.isnan(faults["total_bytes"])
    assert faults["total_ns"] == pytest.approx(867296.0)
    assert math.isnan(um.iloc[3]["total_ns"])  # Memory thrashes: Total Time "-"
    assert list(um["calls"].iloc[4:]) == [155, 32]  # Total CPU Page faults / thrashes


@pytest.mark.real_profiles
def test_xgc_summary_with_openacc_and_unified_memory(real_profiles: Path) -> None:
    path = real_profiles / XGC / "report-xgc-cab-nvprof.txt"
    prof = parsers.read(path)
    assert prof.provenance[0].modes == ("summary", "unified-memory")
    # GPU activities: lines 3-31 = 29 rows, 3 of them [CUDA memcpy/memset]; API calls: 48 rows
    assert len(prof.kernel_summary) == 26
    assert len(prof.api_summary) == 48
    assert prof.provenance[0].notes == (
        "64 summary rows of the group 'OpenACC (excl)' not imported (no table)",
    )
    # line 3: 70.77%  102.599s  42  2.44284s  2.40618s  2.46749s  __nv_static_59__...EEEEvT_
    top = prof.kernel_summary.iloc[0]
    assert top["name"].startswith("__nv_static_59__46_tmpxft_0001d062_00000000_6_cabana_code")
    assert top["name"].endswith("particle_pushEUliE_NS_11RangePolicyIJNS_4CudaEEEES5_EEEEvT_")
    assert top["calls"] == 42
    assert top["time_frac"] == pytest.approx(0.7077)
    assert top["total_ns"] == pytest.approx(102.599e9)
    assert top["avg_ns"] == pytest.approx(2.44284e9)
    assert _row(prof.kernel_summary, "name", "col_f_e_and_d_m_659_gpu")["calls"] == 24820
    # line 4: 8.91%  12.9226s  49708  259.97us  1.2480us  1.72059s  [CUDA memcpy DtoH]
    dtoh = _row(prof.transfer_summary, "kind", "DtoH")
    assert dtoh["calls"] == 49708
    assert dtoh["avg_ns"] == pytest.approx(259970.0)
    assert dtoh["min_ns"] == pytest.approx(1248.0)
    assert dtoh["max_ns"] == pytest.approx(1.72059e9)
    assert _row(prof.transfer_summary, "kind", "HtoD")["min_ns"] == pytest.approx(864.0)
    assert _row(prof.transfer_summary, "kind", "memset")["calls"] == 64474
    # line 32: API calls:  75.11%  107.810s  77  1.40013s  9.3700us  29.8201s  cudaDeviceSynchronize
    sync = _row(prof.api_summary, "name", "cudaDeviceSynchronize")
    assert sync["total_ns"] == pytest.approx(107.81e9)
    assert sync["min_ns"] == pytest.approx(9370.0)
    assert _row(prof.api_summary, "name", "cuCtxGetCurrent")["avg_ns"] == pytest.approx(525.0)
    # Unified Memory (Device "Tesla V100-SXM2-16GB (0)"): 8 x 64.000KB, 512.0000KB, 36.64000us
    um = _row(prof.transfer_summary, "kind", "UM-HtoD")
    assert um["device"] == "Tesla V100-SXM2-16GB"
    assert (um["calls"], um["avg_bytes"], um["total_bytes"]) == (8, 64 * KB, 512 * KB)
    assert um["total_ns"] == pytest.approx(36640.0)
    faults = _row(prof.transfer_summary, "kind", "UM-gpu-page-fault-groups")
    assert (faults["calls"], faults["total_ns"]) == (51383, pytest.approx(7.027726e9))
    assert _row(prof.transfer_summary, "kind", "UM-cpu-page-faults")["calls"] == 8


@pytest.mark.real_profiles
def test_xgc_headerless_metric_excerpt(real_profiles: Path) -> None:
    path = real_profiles / XGC / "cabana-main-kernel.txt"
    assert parsers.detect(path) == "nvprof-text"
    prof = parsers.read(path)
    m = prof.metrics
    assert len(m) == 121  # 123 lines: the Kernel: line, 121 rows, a final " " line
    assert m["kernel"].nunique() == 1
    assert m["kernel"].iloc[0].endswith("_NS_11RangePolicyIJNS_4CudaEEEES5_EEEEvT_")
    assert m["device"].isna().all()
    assert set(m["section"]) == {"metric"}
    assert (m["invocations"] == 1).all()
    notes = prof.provenance[0].notes
    assert notes[0].startswith("metric rows at line 1 have no column header")
    assert notes[1] == "sm_efficiency: printed per instance (80 instances); value is their mean"

    def metric(name: str) -> pd.Series:
        return _row(m, "tool_metric", name)

    # gld_throughput  Global Load Throughput  636.79GB/s (x3): binary GB
    assert metric("gld_throughput")["value"] == pytest.approx(636.79 * GB)
    assert metric("gld_throughput")["unit"] == "byte/s"
    # sysmem_write_throughput  64.0000B/s  64.0000B/s  63.0000B/s  (Min, Max, Avg)
    sysmem = metric("sysmem_write_throughput")
    assert (sysmem["minimum"], sysmem["maximum"], sysmem["value"]) == (64.0, 64.0, 63.0)
    # dram_utilization  Device Memory Utilization  High (8) (x3): a two-token level cell
    dram = metric("dram_utilization")
    assert (dram["value"], dram["unit"], dram["text"]) == (8.0, "level", "High (8)")
    assert metric("sysmem_utilization")["value"] == 1.0  # Low (1)
    assert metric("gld_efficiency")["value"] == pytest.approx(0.2453)  # 24.53%
    assert metric("achieved_occupancy")["value"] == pytest.approx(0.123716)  # bare fraction
    assert metric("achieved_occupancy")["unit"] == "frac"
    assert metric("local_load_transactions")["value"] == pytest.approx(3.3255e10)
    # sm_efficiency (80 instances)  Multiprocessor Activity  -  -  [ 31 x 100.00%, 49 x 99.99% ]
    sm = metric("sm_efficiency")
    assert sm["value"] == pytest.approx((31 * 100.0 + 49 * 99.99) / 80 / 100)
    assert math.isnan(sm["minimum"]) and math.isnan(sm["maximum"])


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    ("name", "program", "first"),
    [
        # each file: 8 runs (N = 128 .. 16384), the last one failed with an internal error;
        # first run's rows: Time(%) and Time (ms) of the kernel, Avg (ms) of the 2 HtoD copies
        ("matMul-Gm-SP.txt", "./matMul-Gm", (88.10, 0.259009, 0.017487)),
        ("matMul-Gm-Un-SP.txt", "./matMul-Gm-Un", (96.14, 1.031732, 0.020719)),
        ("matMul-Sm-SP.txt", "./matMul-Sm", (78.10, 0.125738, 0.017631)),
        ("matMul-Sm-Un-SP.txt", "./matMul-Sm-Un", (93.92, 0.539887, 0.017472)),
    ],
)
def test_amaris_matmul_runs_stay_separate(
    real_profiles: Path, name: str, program: str, first: tuple[float, float, float]
) -> None:
    prof = parsers.read(real_profiles / AMARIS / name)
    ks, ts = prof.kernel_summary, prof.transfer_summary
    assert len(ks) == 7 and len(ts) == 7  # one kernel + one HtoD row per successful run
    assert set(ks["name"]) == {"matMul(float*, float*, float*, int)"}
    assert set(ts["kind"]) == {"HtoD"} and set(ts["calls"]) == {2}
    assert ks["time_frac"].iloc[0] == pytest.approx(first[0] / 100)
    assert ks["total_ns"].iloc[0] == pytest.approx(first[1] * 1e6)  # units row says ms
    assert ts["avg_ns"].iloc[0] == pytest.approx(first[2] * 1e6)
    notes = prof.provenance[0].notes
    assert len(notes) == 8
    sizes = [128 * 2**k for k in range(8)]
    for k, (note, size) in enumerate(zip(notes, sizes, strict=True), 1):
        assert note.startswith(f"run {k} of 8 (process ")
        assert f"command: {program} {size} 1)" in note
    assert "kernel_summary rows 0-0, transfer_summary rows 0-0" in notes[0]
    assert notes[-1].endswith(
        "no rows; the profiler said: Error: Internal profiling error 1749:999."
    )


@pytest.mark.real_profiles
def test_amaris_subseqmax_scientific_times(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / AMARIS / "SubSeqMax.txt")
    assert len(prof.kernel_summary) == 12 and len(prof.transfer_summary) == 12  # 12 runs
    assert len(prof.provenance[0].notes) == 12
    assert "command: ./SubSeqMax 268435456 1)" in prof.provenance[0].notes[-1]
    # last run: 71.25  827.2085 ms  subSeqMax(int*, int*, int, int); 28.75  333.7428 ms HtoD
    last = prof.kernel_summary.iloc[-1]
    assert last["name"] == "subSeqMax(int*, int*, int, int)"
    assert last["total_ns"] == pytest.approx(827.2085e6)
    assert prof.transfer_summary["total_ns"].iloc[-1] == pytest.approx(333.7428e6)


@pytest.mark.real_profiles
def test_amaris_scientific_notation_in_ms(real_profiles: Path) -> None:
    prof = parsers.read(real_profiles / AMARIS / "matMul-Gm-SP.txt")
    # run 5 (./matMul-Gm 2048 1): 99.22  1.32e+03 ms ... matMul(float*, float*, float*, int)
    assert prof.kernel_summary["total_ns"].iloc[4] == pytest.approx(1.32e9)


# -- synthetic: layouts --------------------------------------------------------------------


def test_summary_with_type_column_routes_groups(tmp_path: Path) -> None:
    rows = [
        ["GPU activities:", "61.50%", "1.2500ms", "10", "125.00us", "120.10us", "140.00us",
         "void scale<float, 4>(float*, int, float)"],
        ["", "38.50%", "782.50us", "3", "260.83us", "864ns", "700.00us", "[CUDA memcpy HtoD]"],
        ["API calls:", "90.00%", "2.5000s", "2", "1.2500s", "1.0000s", "1.5000s", "cudaMalloc"],
        ["", "10.00%", "277.78ms", "1", "277.78ms", "277.78ms", "277.78ms", "cudaFree"],
        ["OpenACC (excl):", "100.00%", "1.0000ms", "1", "1.0000ms", "1.0000ms", "1.0000ms",
         "acc_wait@a.F90:1"],
    ]  # fmt: skip
    header = ["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
    path = _write(tmp_path, ["==7== Profiling result:", *_table(header, rows)])
    prof = parsers.read(path)
    k = prof.kernel_summary.iloc[0]
    assert k["name"] == "void scale<float, 4>(float*, int, float)"  # spaces and commas kept
    assert (k["calls"], k["time_frac"]) == (10, pytest.approx(0.615))
    assert (k["total_ns"], k["avg_ns"], k["min_ns"]) == (1.25e6, 125000.0, 120100.0)
    copy = prof.transfer_summary.iloc[0]
    assert (copy["kind"], copy["min_ns"], copy["max_ns"]) == ("HtoD", 864.0, 700000.0)
    assert list(prof.api_summary["name"]) == ["cudaMalloc", "cudaFree"]
    assert prof.api_summary["total_ns"].iloc[0] == pytest.approx(2.5e9)
    assert prof.provenance[0].notes == (
        "1 summary rows of the group 'OpenACC (excl)' not imported (no table)",
    )


def test_old_summary_without_type_column(tmp_path: Path) -> None:
    header = ["Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
    gpu = [
        ["97.00%", "9.7000ms", "1", "9.7000ms", "9.7000ms", "9.7000ms", "stencil(float*)"],
        ["3.00%", "300.00us", "2", "150.00us", "100.00us", "200.00us", "[CUDA memcpy DtoH]"],
    ]
    api = [["100.00%", "50.000ms", "4", "12.500ms", "1.0000us", "49.000ms", "cudaMalloc"]]
    lines = ["==9== Profiling result:", *_table(header, gpu), "", "==9== API calls:",
             *_table(header, api)]  # fmt: skip
    prof = parsers.read(_write(tmp_path, lines))
    assert list(prof.kernel_summary["name"]) == ["stencil(float*)"]
    assert list(prof.transfer_summary["kind"]) == ["DtoH"]
    assert prof.api_summary["min_ns"].iloc[0] == 1000.0


def test_units_row_scales_plain_numbers(tmp_path: Path) -> None:
    lines = [
        "==5== Profiling result:",
        "Time(%)      Time     Calls       Avg       Min       Max  Name",
        "      %        us                  us        us        ms  ",
        "  75.00  1500.000         3  500.0000  400.0000      0.75  k(int)",
    ]
    k = parsers.read(_write(tmp_path, lines)).kernel_summary.iloc[0]
    assert (k["time_frac"], k["total_ns"], k["avg_ns"]) == (0.75, 1.5e6, 5e5)
    assert k["max_ns"] == pytest.approx(0.75e6)  # the Max column is in ms


def test_appended_runs_keep_rows_of_the_same_kernel_apart(tmp_path: Path) -> None:
    header = ["Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
    lines: list[str] = []
    for pid, size, t in (("11", 64, "1.0000ms"), ("12", 128, "4.0000ms")):
        lines += [f"=={pid}== NVPROF is profiling process {pid}, command: ./app {size}",
                  f"=={pid}== Profiling result:",
                  *_table(header, [["100.00%", t, "1", t, t, t, "k(float*)"]])]  # fmt: skip
    prof = parsers.read(_write(tmp_path, lines))
    assert list(prof.kernel_summary["total_ns"]) == [1e6, 4e6]  # not merged
    assert prof.provenance[0].notes == (
        "run 1 of 2 (process 11, command: ./app 64): kernel_summary rows 0-0",
        "run 2 of 2 (process 12, command: ./app 128): kernel_summary rows 1-1",
    )


def test_gpu_trace_with_peer_columns_memset_and_legend(tmp_path: Path) -> None:
    header = ["Start", "Duration", "Grid Size", "Block Size", "Regs*", "SSMem*", "DSMem*", "Size",
              "Throughput", "SrcMemType", "DstMemType", "Device", "Context", "Stream", "Src Dev",
              "Src Ctx", "Dst Dev", "Dst Ctx", "Name"]  # fmt: skip
    rows = [
        ["1.5000ms", "2.0000us", "-", "-", "-", "-", "-", "4.0000KB", "1.9073GB/s", "Device",
         "-", "Tesla K80 (1)", "2", "14", "-", "-", "-", "-", "[CUDA memset]"],
        ["1.6000ms", "10.000us", "(64 2 1)", "(128 1 1)", "32", "1.5000KB", "256B", "-", "-",
         "-", "-", "Tesla K80 (1)", "2", "14", "-", "-", "-", "-",
         "reduce(float const *, int) [77]"],
        ["1.7000ms", "6.0000ms", "-", "-", "-", "-", "-", "64.000MB", "10.417GB/s", "Device",
         "Device", "Tesla K80 (0)", "1", "7", "Tesla K80 (0)", "1", "Tesla K80 (1)", "2",
         "[CUDA memcpy PtoP]"],
    ]  # fmt: skip
    legend = ["", "Regs: Number of registers used per CUDA thread.", "SSMem: Static shared memory."]
    prof = parsers.read(
        _write(tmp_path, ["==3== Profiling result:", *_table(header, rows), *legend])
    )
    assert prof.provenance[0].modes == ("gpu-trace",)
    k = prof.launches.iloc[0]
    assert (k["name"], k["correlation_id"]) == ("reduce(float const *, int)", 77)
    assert (k["grid_x"], k["grid_y"], k["block_x"]) == (64, 2, 128)
    assert (k["static_shared_bytes"], k["dynamic_shared_bytes"]) == (1.5 * KB, 256.0)
    assert (k["device"], k["device_id"], k["stream"]) == ("Tesla K80", 1, 14)
    memset, peer = prof.transfers.iloc[0], prof.transfers.iloc[1]
    assert (memset["kind"], memset["bytes"], memset["src_kind"]) == ("memset", 4 * KB, "Device")
    assert pd.isna(memset["dst_kind"])
    assert (peer["kind"], peer["bytes"], peer["duration_ns"]) == ("PtoP", 64 * MB, 6e6)


def test_api_trace_reads_correlation_of_launches(tmp_path: Path) -> None:
    rows = [
        ["0ns", "2.4150us", "cuDeviceGetCount"],
        ["38.829ms", "40.939us", "cudaLaunchKernel (vadd(float*, float*, int) [112])"],
    ]
    lines = ["==4== Profiling result:", *_table(["Start", "Duration", "Name"], rows)]
    path = _write(tmp_path, lines)
    assert parsers.detect(path) == "nvprof-text"
    prof = _read_format(path)
    assert prof.provenance[0].modes == ("api-trace",)
    calls = prof.api_calls
    assert list(calls["name"]) == ["cuDeviceGetCount", "cudaLaunchKernel"]
    assert pd.isna(calls["correlation_id"].iloc[0]) and calls["correlation_id"].iloc[1] == 112
    assert list(calls["start_ns"]) == [0.0, 38.829e6]
    assert calls["duration_ns"].iloc[1] == pytest.approx(40939.0)
    with pytest.raises(NoKernelData):  # an API trace alone holds no kernel data
        parsers.read(_write(tmp_path, ["No kernels were profiled.", *lines], "none.txt"))


METRICS = [
    "==77== Profiling result:",
    "==77== Metric result:",
    "Invocations                               Metric Name                        Metric Description         Min         Max         Avg",  # noqa: E501
    'Device "Tesla P100-PCIE-16GB (0)"',
    "    Kernel: transpose(float*, float const *, int)",
    "         20                            gld_throughput                    Global Load Throughput  100.00GB/s  120.00GB/s  110.00GB/s",  # noqa: E501
    "         20                        shared_utilization                 Shared Memory Utilization     Low (1)     Mid (4)     Low (2)",  # noqa: E501
    "         20                         branch_efficiency                         Branch Efficiency     100.00%     100.00%     100.00%",  # noqa: E501
    "    Kernel: fill(int*)",
    "          1                      dram_write_throughput            Device Memory Write Throughput  1.5000MB/s  2.0000MB/s  976.56KB/s",  # noqa: E501
    "          1                             inst_executed                     Instructions Executed  <OVERFLOW>  <OVERFLOW>  <OVERFLOW>",  # noqa: E501
]


def test_metric_table_with_device_and_kernels(tmp_path: Path) -> None:
    prof = parsers.read(_write(tmp_path, METRICS))
    m = prof.metrics
    assert prof.provenance[0].modes == ("metrics",)
    assert list(m["kernel"]) == ["transpose(float*, float const *, int)"] * 3 + ["fill(int*)"] * 2
    assert set(m["device"]) == {"Tesla P100-PCIE-16GB"} and set(m["device_id"]) == {0}
    gld = m.iloc[0]
    assert (gld["invocations"], gld["unit"]) == (20, "byte/s")
    assert (gld["minimum"], gld["maximum"], gld["value"]) == (100 * GB, 120 * GB, 110 * GB)
    util = m.iloc[1]  # levels: Min Low (1), Max Mid (4), Avg Low (2)
    assert (util["minimum"], util["maximum"], util["value"]) == (1.0, 4.0, 2.0)
    assert util["text"] == "Low (2)"
    assert m.iloc[2]["value"] == 1.0  # 100.00% -> 1.0
    dram = m.iloc[3]  # each cell has its own prefix: 1.5 MB/s, 2 MB/s, 976.56 KB/s
    assert dram["minimum"] == 1.5 * MB and dram["value"] == pytest.approx(976.56 * KB)
    over = m.iloc[4]
    assert math.isnan(over["value"]) and over["text"] == "<OVERFLOW>"


def test_event_table_has_totals(tmp_path: Path) -> None:
    lines = [
        "==8== Event result:",
        "Invocations                                Event Name         Min         Max         Avg       Total",  # noqa: E501
        'Device "GeForce GTX 1080 (0)"',
        "    Kernel: vadd(float const *, float const *, float*, int)",
        "          2                            warps_launched        1024        2048        1536        3072",  # noqa: E501
    ]
    prof = parsers.read(_write(tmp_path, lines))
    ev = prof.metrics.iloc[0]
    assert (ev["tool_metric"], ev["section"], ev["invocations"]) == ("warps_launched", "event", 2)
    assert (ev["minimum"], ev["maximum"], ev["value"], ev["total"]) == (1024, 2048, 1536, 3072)


# -- synthetic: errors and empty tables ------------------------------------------------------

TRACE = [
    "   Start  Duration             Grid Size       Block Size     Regs*    SSMem*    DSMem*"
    "      Size  Throughput              Device   Context    Stream  Name",
    "1.0000ms  2.0000us               (8 1 1)         (32 1 1)        16        0B        0B"
    "         -           -  GeForce GT 630 (0)         1         7  k(int) [5]",
    "1.1000ms  3.0000us                     -                -         -        0B        0B"
    "         -           -  GeForce GT 630 (0)         1         7  k(int) [6]",
]


def test_misaligned_trace_row_is_malformed_with_line(tmp_path: Path) -> None:
    header = ["Start", "Duration", "Grid Size", "Name"]
    good = _table(header, [["1.0000ms", "2.0000us", "(8 1 1)", "k(int)"]])
    shifted = "1.2000ms 3.0000us    (8 1 1)  k(int)"  # Duration ends one character early
    path = _write(tmp_path, ["==1== Profiling result:", *good, shifted])
    with pytest.raises(MalformedInput, match="does not line up") as err:
        parsers.read(path)
    assert err.value.line == 4


def test_bad_unit_and_bad_grid_are_malformed(tmp_path: Path) -> None:
    header = ["Start", "Duration", "Grid Size", "Name"]
    bad_unit = _table(header, [["1.0000ms", "2.0000xs", "(8 1 1)", "k(int)"]])
    with pytest.raises(MalformedInput, match="Duration") as err:
        parsers.read(_write(tmp_path, bad_unit, "unit.txt"))
    assert err.value.line == 2
    bad_grid = _table(header, [["1.0000ms", "2.0000us", "(8 1)", "k(int)"]])
    with pytest.raises(MalformedInput, match="Grid Size"):
        parsers.read(_write(tmp_path, bad_grid, "grid.txt"))
    size_as_time = _table(["Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"],
                          [["1.00%", "4.0000KB", "1", "1us", "1us", "1us", "k"]])  # fmt: skip
    with pytest.raises(MalformedInput, match="time units"):
        parsers.read(_write(tmp_path, size_as_time, "size.txt"))


def test_bare_time_without_units_row_is_malformed(tmp_path: Path) -> None:
    lines = _table(["Start", "Duration", "Name"], [["12.5", "3.0", "cudaFree"]])
    with pytest.raises(MalformedInput, match="no unit"):
        _read_format(_write(tmp_path, lines))


def test_metric_row_errors(tmp_path: Path) -> None:
    short = [*METRICS[:5], "         20                            gld_throughput  1.0GB/s"]
    with pytest.raises(MalformedInput, match="Min, Max, Avg") as err:
        parsers.read(_write(tmp_path, short, "short.txt"))
    assert err.value.line == 6
    orphan = [*METRICS[:4], METRICS[5]]  # a row before any Kernel: line
    with pytest.raises(MalformedInput, match="Kernel") as err:
        parsers.read(_write(tmp_path, orphan, "orphan.txt"))
    assert err.value.line == 5
    unit = [*METRICS[:5], METRICS[5].replace("110.00GB/s", "110.00GB/h")]
    with pytest.raises(MalformedInput, match="GB/h"):
        parsers.read(_write(tmp_path, unit, "unit.txt"))


@pytest.mark.parametrize(
    "header",
    [
        "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name",
        TRACE[0],
        METRICS[2],
        "   Count  Avg Size  Min Size  Max Size  Total Size  Total Time  Name",
    ],
)
def test_empty_tables_read_without_crashing(tmp_path: Path, header: str) -> None:
    path = _write(tmp_path, ["==2== Profiling result:", header, ""])
    prof = _read_format(path)
    assert not prof.has_kernel_data()
    assert all(len(frame) == 0 for frame in prof.frames.values())
    with pytest.raises(NoKernelData):
        parsers.read(path)


def test_trace_row_with_placeholders(tmp_path: Path) -> None:
    prof = parsers.read(_write(tmp_path, ["==1== Profiling result:", *TRACE]))
    launches = prof.launches
    assert list(launches["correlation_id"]) == [5, 6]
    assert (launches["grid_x"].iloc[0], launches["block_x"].iloc[0]) == (8, 32)
    assert launches[["grid_x", "block_x", "registers_per_thread"]].iloc[1].isna().all()
    assert set(launches["device"]) == {"GeForce GT 630"}
    assert list(launches["start_ns"]) == [1e6, 1.1e6]


# -- sniffing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines",
    [
        ["==1== Profiling result:", '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"'],
        ['"Start","Duration","Grid X","Grid Y","Grid Z","Name"', "ms,ms,,,,"],
        ['"ID","Process ID","Process Name","Host Name","Kernel Name","Metric Name"'],
        [" Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  Name"],
        ["0.259009\t0.258913\t0.259105\t", "2.469829\t2.470101\t2.469500\t"],
        ["    Kernel: k(int)", "just some application output"],
    ],
)
def test_sniff_rejects_other_formats(lines: list[str]) -> None:
    assert not sniff_nvprof_text(lines)


def test_sniff_accepts_headerless_metric_excerpt() -> None:
    excerpt = [
        "    Kernel: k(int)",
        "          3                  achieved_occupancy                 Achieved Occupancy"
        "    0.500000    0.600000    0.550000",
    ]
    assert sniff_nvprof_text(excerpt)


def test_numbers_too_large_for_ids_and_counts(tmp_path: Path) -> None:
    """A count or register number too large for a whole-number column is malformed; a "[N]"
    correlation suffix too large for an id stays part of the kernel name."""
    big = "99999999999999999999"
    header = ["Start", "Duration", "Grid Size", "Regs*", "Name"]
    rows = [["1.0000ms", "2.0000us", "(8 1 1)", big, "k(int) [5]"]]
    with pytest.raises(MalformedInput, match="Regs") as err:
        parsers.read(_write(tmp_path, ["==1== Profiling result:", *_table(header, rows)], "r.txt"))
    assert err.value.line == 3
    rows = [["1.0000ms", "2.0000us", "(8 1 1)", "16", f"k(int) [{big}]"]]
    lines = ["==1== Profiling result:", *_table(header, rows)]
    launch = parsers.read(_write(tmp_path, lines, "c.txt")).launches.iloc[0]
    assert launch["name"] == f"k(int) [{big}]" and pd.isna(launch["correlation_id"])
    trailer = ["==1== Unified Memory profiling result:", 'Device "G (0)"',
               *_table(["Count", "Avg Size", "Min Size", "Max Size", "Total Size", "Total Time",
                        "Name"], [["2", "4.0000KB", "4.0000KB", "4.0000KB", "8.0000KB",
                                   "1.0000us", "Host To Device"]]),
               f"Total CPU Page faults: {big}"]  # fmt: skip
    with pytest.raises(MalformedInput, match="CPU Page faults") as err:
        parsers.read(_write(tmp_path, ["==1== Profiling result:", *_table(header, rows[:1]),
                                       "", *trailer], "u.txt"))  # fmt: skip
    assert err.value.line == 9


UM_TRACE = [
    "==77== Profiling result:",
    "   Start  Duration       Grid Size   Block Size  Regs*  SSMem*  DSMem*        Device"
    "  Context  Stream  Unified Memory  Virtual Address  Name",
    "100.00ms         -               -            -      -       -       -             -"
    "        -       -   PC 0x11112222   0x7f0000000000  [Unified Memory CPU page faults]",
    "101.50ms  20.000us               -            -      -       -       -  Tesla T4 (0)"
    "        -       -    128.000000KB   0x7f0000000000  [Unified Memory Memcpy HtoD]",
    "102.00ms  300.00us        (32 1 1)    (256 1 1)     16      0B      0B  Tesla T4 (0)"
    "        1       7               -                -  saxpy(int, float*) [120]",
    "102.01ms  250.00us               -            -      -       -       -  Tesla T4 (0)"
    "        -       -               3   0x7f0000020000  [Unified Memory GPU page faults]",
    "102.40ms  10.000us               -            -      -       -       -  Tesla T4 (0)"
    "        -       -     64.000000KB   0x7f0000020000  [Unified Memory Memcpy DtoH]",
]


def test_gpu_trace_unified_memory_rows_are_transfers_or_skipped(tmp_path: Path) -> None:
    """nvprof --print-gpu-trace with unified memory (text twin of the CSV trace): the UM copies
    are UM-HtoD / UM-DtoH transfers sized by the "Unified Memory" column (128 KB = 131072 B,
    binary), the page-fault rows are no launches."""
    prof = parsers.read(_write(tmp_path, UM_TRACE))
    assert list(prof.launches["name"]) == ["saxpy(int, float*)"]
    t = prof.transfers
    assert list(t["kind"]) == ["UM-HtoD", "UM-DtoH"]
    assert list(t["bytes"]) == [128 * 1024, 64 * 1024]
    assert list(t["duration_ns"]) == [20000, 10000]
    assert any("1 [Unified Memory CPU page faults]" in n for n in prof.provenance[0].notes)


def test_header_with_names_run_together_is_malformed(tmp_path: Path) -> None:
    """Column names one space apart read as one column: the header lacks "Time(%)" and "Time"
    (was a KeyError)."""
    lines = [
        "==1== Profiling result:",
        "            Type  Time(%) Time     Calls       Avg       Min       Max  Name",
        " GPU activities:  100.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  k(int)",
    ]
    with pytest.raises(MalformedInput, match="'Time\\(%\\)', 'Time'") as err:
        parsers.read(_write(tmp_path, lines))
    assert err.value.line == 2
