"""nvprof ``--csv`` reader (format ``nvprof-csv``): real dumps read in place, synthetic snippets.

Expected counts of the real files were checked with grep on the raw files, e.g. kernel rows =
``grep -c '(0)","[0-9]*","[0-9]*","[^[][^"]*"$'`` and copies = ``grep -c '"\\[CUDA mem'``.
Every hand-checked value names the line it comes from.
"""

from __future__ import annotations

import functools
import math
import time
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.errors import MalformedInput, NoKernelData
from advisor.profile import Profile
from parsers.nvprof.csv import read_nvprof_csv, sniff_nvprof_csv
from parsers.source import Source

KB, MB, GB = 1024, 1024**2, 1024**3
CSV = "csv"


@functools.cache
def _read(root: Path, rel: str) -> Profile:
    """``parsers.read`` of a real file, once per session (tests only read the frames)."""
    profile = parsers.read(root / CSV / rel)
    assert profile.provenance[0].format == "nvprof-csv"
    assert profile.provenance[0].profiler == "nvprof"
    return profile


def _write(tmp_path: Path, text: str, name: str = "x.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- real files

MAGUS = "magus_nvprof/"
CFD = "nanzifan_nvprof_titanxp/cfd_csv/"
LOGS = "amaris_gpuperfpredict/logs_run_0/"
RODINIA = "amaris_gpuperfpredict/rodinia_traces/"
TRACE = ("gpu-trace",)
SUMMARY = ("summary", "unified-memory")

# (path, modes, launches, transfers, kernel_summary, transfer_summary, api_summary, metrics)
REAL = [
    (MAGUS + "gtx1080ti/gputrace_reduction.csv", TRACE, 201, 203, 0, 0, 0, 0),
    (MAGUS + "gtx1080ti/matrixMul_trace.csv", TRACE, 301, 3, 0, 0, 0, 0),
    (MAGUS + "gtx1080ti/radixSortThrust_trace.csv", TRACE, 2100, 402, 0, 0, 0, 0),
    # 13715 whole kernel rows + 83 copies; the last line is cut short and dropped
    (MAGUS + "gtx1080ti/traces_shoc_lev1stencil2d.csv", TRACE, 13715, 83, 0, 0, 0, 0),
    (MAGUS + "gtx1080ti/matrixMul_metrics.csv", ("metrics",), 0, 0, 0, 0, 0, 120),
    (MAGUS + "gtx950/matrixMul_metrics.csv", ("metrics",), 0, 0, 0, 0, 0, 113),
    (MAGUS + "gtx950/s3d_metrics.csv", ("metrics",), 0, 0, 0, 0, 0, 6102),
    (MAGUS + "gtx950_multistream/trace_2cke_23000.csv", TRACE, 2, 6, 0, 0, 0, 0),
    (MAGUS + "gtx950_multistream/trace_s3_5m.csv", TRACE, 3, 9, 0, 0, 0, 0),
    # names lie: all three are the default summary + the Unified Memory table.  7 GPU activity
    # rows = 4 kernels + 3 copies, + 1 UM direction row; 19 API rows
    (CFD + "print-gpu-summary.csv", SUMMARY, 0, 0, 4, 4, 0, 0),
    (CFD + "profile-api-trace.csv", SUMMARY, 0, 0, 4, 4, 19, 0),
    (CFD + "unified-memory-profiling.csv", SUMMARY, 0, 0, 4, 4, 19, 0),
    # 16238 data rows = 14003 kernels + 2006 copies + 160 UM copies + 49 + 20 page-fault rows
    (CFD + "print-gpu-trace.csv", TRACE, 14003, 2166, 0, 0, 0, 0),
    # 2 launches x (141 events + 124 metrics - 2 repeated columns)
    ("amaris_bspgpusync_k40/backprop-11264.csv", ("metric-trace",), 2, 0, 0, 0, 0, 526),
    (LOGS + "dotProd-traces.csv", TRACE, 69, 207, 0, 0, 0, 0),
    (LOGS + "matMul_gpu_sharedmem-kernel-traces.csv", TRACE, 32, 0, 0, 0, 0, 0),
    (LOGS + "matMul_gpu_sharedmem-traces.csv", TRACE, 32, 64, 0, 0, 0, 0),
    (LOGS + "matMul_gpu_sharedmem_uncoalesced-traces.csv", TRACE, 32, 64, 0, 0, 0, 0),
    (LOGS + "matMul_gpu_uncoalesced-traces.csv", TRACE, 64, 128, 0, 0, 0, 0),
    (LOGS + "matrix_sum_coalesced-traces.csv", TRACE, 32, 96, 0, 0, 0, 0),
    (LOGS + "matrix_sum_normal-traces.csv", TRACE, 32, 96, 0, 0, 0, 0),
    (LOGS + "vectorAdd-traces.csv", TRACE, 69, 207, 0, 0, 0, 0),
    (RODINIA + "backprop-traces-1.csv", TRACE, 114, 456, 0, 0, 0, 0),
    (RODINIA + "hotspot-traces-1.csv", TRACE, 6400, 60, 0, 0, 0, 0),
    (RODINIA + "lud-traces-1.csv", TRACE, 25280, 64, 0, 0, 0, 0),
]


@pytest.mark.real_profiles
@pytest.mark.parametrize("case", REAL, ids=[c[0].rsplit("/", 1)[-1] for c in REAL])
def test_real_file_counts(real_profiles: Path, case: tuple) -> None:
    rel, modes, launches, transfers, ksum, tsum, asum, metrics = case
    p = _read(real_profiles, rel)
    assert p.provenance[0].modes == modes
    assert p.provenance[0].profiler_version is None
    counts = (
        len(p.launches),
        len(p.transfers),
        len(p.kernel_summary),
        len(p.transfer_summary),
        len(p.api_summary),
        len(p.metrics),
    )
    assert counts == (launches, transfers, ksum, tsum, asum, metrics)
    assert len(p.devices) == 1
    assert list(p.launches["launch_id"]) == list(range(launches))


@pytest.mark.real_profiles
def test_gpu_trace_cuda8_units_row(real_profiles: Path) -> None:
    p = _read(real_profiles, "magus_nvprof/gtx1080ti/matrixMul_trace.csv")
    # units row (line 5): ms,ms,,,,,,,,KB,B,KB,MB/s
    # line 6: 584.620743,1.028854,...,400.000000,379.670001,...,"[CUDA memcpy HtoD]"
    t = p.transfers.iloc[0]
    assert (t["kind"], t["bytes"]) == ("HtoD", 400 * KB)
    assert t["start_ns"] == pytest.approx(584_620_743)
    assert t["duration_ns"] == pytest.approx(1_028_854)
    # line 8: 587.796940,0.077602,20,10,1,32,32,1,27,8.000000,0,...,
    #         "void matrixMulCUDA<int=32>(...) [1073]"
    k = p.launches.iloc[0]
    assert k["name"] == "void matrixMulCUDA<int=32>(float*, float*, float*, int, int)"
    assert k["correlation_id"] == 1073
    assert k["duration_ns"] == pytest.approx(77_602)
    assert (k["grid_x"], k["grid_y"], k["grid_z"]) == (20, 10, 1)
    assert (k["block_x"], k["block_y"], k["block_z"]) == (32, 32, 1)
    assert k["registers_per_thread"] == 27
    assert k["static_shared_bytes"] == 8 * KB and k["dynamic_shared_bytes"] == 0
    assert (k["device"], k["device_id"], k["context"], k["stream"]) == (
        "GeForce GTX 1080 Ti",
        0,
        1,
        7,
    )
    assert p.devices.iloc[0][["device_id", "name"]].tolist() == [0, "GeForce GTX 1080 Ti"]


@pytest.mark.real_profiles
def test_gpu_trace_scientific_notation_and_seconds(real_profiles: Path) -> None:
    p = _read(real_profiles, "magus_nvprof/gtx1080ti/gputrace_reduction.csv")
    # units s,ms,,,,,,,,B,KB,MB,GB/s; line 7: 1.131685,1.024000e-03,...,2.441406e-04,0.232831
    t = p.transfers.iloc[1]
    assert t["start_ns"] == pytest.approx(1_131_685_000)
    assert t["duration_ns"] == pytest.approx(1024)
    assert t["bytes"] == pytest.approx(256, abs=0.01)  # 2.441406e-04 MB
    # line 8: 1.131718,0.204803,64,1,1,256,1,1,10,0,1.000000 (Dynamic SMem in KB)
    k = p.launches.iloc[0]
    assert k["duration_ns"] == pytest.approx(204_803)
    assert (k["static_shared_bytes"], k["dynamic_shared_bytes"]) == (0, 1 * KB)
    assert k["correlation_id"] == 1098


@pytest.mark.real_profiles
def test_gpu_trace_start_ms_duration_us(real_profiles: Path) -> None:
    p = _read(real_profiles, "magus_nvprof/gtx950_multistream/trace_2cke_23000.csv")
    # units ms,us,...,B,B,KB,GB/s; kernel line "529.003769,79.040000,90,1,1,256,...[241]"
    k = p.launches[p.launches["correlation_id"] == 241].iloc[0]
    assert k["start_ns"] == pytest.approx(529_003_769)
    assert k["duration_ns"] == pytest.approx(79_040)
    assert k["stream"] == 14
    # line 6: 89.843750 KB copies on stream 13
    assert p.transfers.iloc[0]["bytes"] == pytest.approx(89.84375 * KB)
    assert sorted(p.transfers["stream"].unique()) == [13, 14]


@pytest.mark.real_profiles
def test_gpu_trace_cuda9_unified_memory_rows(real_profiles: Path) -> None:
    p = _read(real_profiles, "nanzifan_nvprof_titanxp/cfd_csv/print-gpu-trace.csv")
    notes = " ".join(p.provenance[0].notes)
    assert "49 [Unified Memory CPU page faults]" in notes
    assert "20 [Unified Memory GPU page faults]" in notes
    kinds = p.transfers["kind"].value_counts().to_dict()
    assert kinds == {"DtoD": 2000, "UM-HtoD": 160, "HtoD": 5, "memset": 1}
    # line 6 (units s,ms,...,B,B,MB,GB/s,...,B): 1.183779,0.000992,...,0.000019,0.018777,
    # "Pageable","Device","TITAN Xp (0)","1","7",,,"[CUDA memcpy HtoD]",105
    first = p.transfers.iloc[0]
    assert (first["src_kind"], first["dst_kind"], first["correlation_id"]) == (
        "Pageable",
        "Device",
        105,
    )
    assert first["duration_ns"] == pytest.approx(992)
    assert first["bytes"] == pytest.approx(0.000019 * MB)
    # line 71: 1.802441,0.007360,...,65536.000000,"0x7f54d8000000","[Unified Memory Memcpy HtoD]"
    um = p.transfers[p.transfers["kind"] == "UM-HtoD"].iloc[0]
    assert um["bytes"] == 65536
    assert um["start_ns"] == pytest.approx(1_802_441_000)
    assert um["duration_ns"] == pytest.approx(7360)
    # next to last line: 2.267012,0.045570,506,1,1,192,1,1,58,0,0,...,
    #                    "cuda_compute_flux(...)",132128
    last = p.launches.iloc[-2]
    assert last["name"] == "cuda_compute_flux(int, int*, float*, float*, float*)"
    assert (last["duration_ns"], last["grid_x"], last["block_x"]) == (
        pytest.approx(45_570),
        506,
        192,
    )
    assert (last["registers_per_thread"], last["correlation_id"]) == (58, 132128)


@pytest.mark.real_profiles
def test_summary_units_per_column_and_unified_memory(real_profiles: Path) -> None:
    p = _read(real_profiles, "nanzifan_nvprof_titanxp/cfd_csv/profile-api-trace.csv")
    # units row ,%,ms,,us,us,ms,  and line 6:
    # "GPU activities",70.736966,302.355298,6000,50.392000,43.490000,1.989134,
    # "cuda_compute_flux(...)"
    k = p.kernel_summary.iloc[0]
    assert k["name"] == "cuda_compute_flux(int, int*, float*, float*, float*)"
    assert k["calls"] == 6000
    assert k["time_frac"] == pytest.approx(0.70736966)
    assert k["total_ns"] == pytest.approx(302_355_298)
    assert k["avg_ns"] == pytest.approx(50_392)  # us
    assert k["min_ns"] == pytest.approx(43_490)  # us
    assert k["max_ns"] == pytest.approx(1_989_134)  # ms
    # UM table: "TITAN Xp (0)",166,38.890625KB,4.000000KB,600.000000KB,6.304688MB,0.000000,
    #           "Host To Device"
    um = p.transfer_summary[p.transfer_summary["kind"] == "UM-HtoD"].iloc[0]
    assert (um["device"], um["calls"]) == ("TITAN Xp", 166)
    assert um["avg_bytes"] == pytest.approx(38.890625 * KB)
    assert (um["min_bytes"], um["max_bytes"]) == (4 * KB, 600 * KB)
    assert um["total_bytes"] == pytest.approx(6.304688 * MB)
    assert um["total_ns"] == 0
    copies = p.transfer_summary.set_index("kind")
    assert copies.loc["DtoD", "calls"] == 2000
    assert copies.loc["DtoD", "max_ns"] == pytest.approx(31_073)  # 0.031073 ms
    api = p.api_summary.set_index("name")
    # "API calls",0.009277,0.143523,2,71.761000,4.414000,0.139109,"cudaThreadSynchronize"
    assert api.loc["cudaThreadSynchronize", "avg_ns"] == pytest.approx(71_761)
    assert api.loc["cudaThreadSynchronize", "max_ns"] == pytest.approx(139_109)
    assert "trailer: Total CPU Page faults: 49" in p.provenance[0].notes
    assert p.devices.iloc[0][["device_id", "name"]].tolist() == [0, "TITAN Xp"]


@pytest.mark.real_profiles
def test_metrics_summary_glued_units(real_profiles: Path) -> None:
    p = _read(real_profiles, "magus_nvprof/gtx1080ti/matrixMul_metrics.csv")
    m = p.metrics.set_index("tool_metric")
    assert set(p.metrics["invocations"]) == {301}
    assert set(p.metrics["section"]) == {"metric"}
    # ...,"gld_requested_throughput",...,155.068995GB/s,195.645567GB/s,190.706924GB/s
    row = m.loc["gld_requested_throughput"]
    assert row["unit"] == "byte/s"
    assert row["value"] == pytest.approx(190.706924 * GB)
    assert row["minimum"] == pytest.approx(155.068995 * GB)
    # ...,"sysmem_write_throughput",...,1.550690MB/s,1.956455MB/s,976.562500KB/s (mixed prefixes)
    row = m.loc["sysmem_write_throughput"]
    assert row["minimum"] == pytest.approx(1.550690 * MB)
    assert row["value"] == pytest.approx(1_000_000)  # 976.5625 KB/s
    # "stall_sync",...,13.963045%,15.080145%,14.454610%
    assert m.loc["stall_sync", "value"] == pytest.approx(0.14454610)
    assert m.loc["stall_sync", "unit"] == "frac"
    # "sysmem_utilization",...,"Low (1)","Low (1)","Low (1)"
    assert (m.loc["sysmem_utilization", "unit"], m.loc["sysmem_utilization", "value"]) == (
        "level",
        1,
    )
    # "achieved_occupancy",...,0.927360,0.943526,0.935178 (a bare fraction)
    assert m.loc["achieved_occupancy", "value"] == pytest.approx(0.935178)
    assert m.loc["achieved_occupancy", "unit"] == "frac"
    assert m.loc["achieved_occupancy", "device"] == "GeForce GTX 1080 Ti"


@pytest.mark.real_profiles
def test_metric_trace_descriptions_mapped_to_names(real_profiles: Path) -> None:
    p = _read(real_profiles, "amaris_bspgpusync_k40/backprop-11264.csv")
    assert p.launches["name"].tolist() == [
        "bpnn_layerforward_CUDA(float*, float*, float*, float*, int, int)",
        "bpnn_adjust_weights_cuda(float*, int, float*, int, float*, float*)",
    ]
    assert p.launches[["device", "device_id", "context", "stream"]].iloc[0].tolist() == [
        "Tesla K40c",
        0,
        1,
        7,
    ]
    m = p.metrics
    assert m.groupby("section").size().to_dict() == {"event": 282, "metric": 244}
    first = m[m["launch_id"] == 0].set_index("metric")
    second = m[m["launch_id"] == 1].set_index("metric")
    # events use raw names: fb_subp0_read_sectors 1849 / 28101 (lines 7 and 8)
    assert first.loc["fb_subp0_read_sectors", "value"] == 1849
    assert second.loc["fb_subp0_read_sectors", "value"] == 28101
    # "Requested Global Load Throughput" (units row GB/s): 25.658168
    row = first.loc["gld_requested_throughput"]
    assert row["tool_metric"] == "Requested Global Load Throughput"
    assert row["value"] == pytest.approx(25.658168 * GB)
    # "Multiprocessor Activity" (%, printed twice with the same values): 83.197210
    assert first.loc["sm_efficiency", "value"] == pytest.approx(0.83197210)
    assert (m["tool_metric"] == "Multiprocessor Activity").sum() == 2  # once per launch
    # "L1/Shared Memory Utilization": "Mid (4)" / "Low (1)"
    assert first.loc["l1_shared_utilization", "value"] == 4
    assert second.loc["l1_shared_utilization", "unit"] == "level"
    # the misspelt "Floating Point Operations(Double Precison FMA)" = 360480 on launch 1
    assert second.loc["flop_count_dp_fma", "value"] == 360480
    assert not m["metric"].str.contains(" ").any()  # every description has a metric name


@pytest.mark.real_profiles
def test_prefixed_blocks_reread_units(real_profiles: Path) -> None:
    p = _read(real_profiles, "amaris_gpuperfpredict/logs_run_0/dotProd-traces.csv")
    assert any("extra leading column" in n for n in p.provenance[0].notes)
    # first block (units ns,ns,...,KB,B,KB,GB/s), line 3: 512.000000 KB HtoD
    assert p.transfers.iloc[0]["bytes"] == 512 * KB
    # line 5: 215304848.000000,19937.000000,512,1,1,256,1,1,13,1.000000,0 ... [109]
    k = p.launches.iloc[0]
    assert (k["start_ns"], k["duration_ns"], k["grid_x"]) == (215_304_848, 19_937, 512)
    assert k["static_shared_bytes"] == 1 * KB
    # last block (line 410 units ...,KB,B,GB,GB/s), line 411: 1.000000 GB HtoD
    last_block = p.transfers.iloc[-3:]
    assert last_block.iloc[0]["bytes"] == 1 * GB
    assert last_block.iloc[-1]["bytes"] == pytest.approx(0.003906 * GB)
    # launches keep file order: start of each run's kernel increases with the input size
    assert p.launches.iloc[-1]["grid_x"] == 1048576


@pytest.mark.real_profiles
def test_headerless_rows_match_the_headed_run(real_profiles: Path) -> None:
    bare = _read(real_profiles, LOGS + "matMul_gpu_sharedmem-kernel-traces.csv")
    headed = _read(real_profiles, LOGS + "matMul_gpu_sharedmem-traces.csv")
    notes = " ".join(bare.provenance[0].notes)
    assert "time unit assumed ns" in notes and "CUDA 7/8 --print-gpu-trace layout" in notes
    # the grep-filtered rows are the kernel rows of the headed file, whose units row says ns
    cols = ["start_ns", "duration_ns", "grid_x", "block_x", "registers_per_thread"]
    assert bare.launches[cols].equals(headed.launches[cols])
    # line 1: 256,216809453.000000,128898.000000,16,16,1,16,16,1,23,2.000000,0,...[110]
    k = bare.launches.iloc[0]
    assert (k["start_ns"], k["duration_ns"], k["correlation_id"]) == (216_809_453, 128_898, 110)
    assert math.isnan(k["static_shared_bytes"])  # 2.000000 in an unknown unit
    assert k["dynamic_shared_bytes"] == 0  # 0 in any unit
    assert headed.launches.iloc[0]["static_shared_bytes"] == 2 * KB


@pytest.mark.real_profiles
def test_headerless_rodinia_one_and_two_prefix_columns(real_profiles: Path) -> None:
    lud = _read(real_profiles, "amaris_gpuperfpredict/rodinia_traces/lud-traces-1.csv")
    # line 2: 256,230242390.000000,39361.000000,1,1,1,16,1,1,36,1.000000,0,,,...
    #         "lud_diagonal(float*, int, int) [105]"
    k = lud.launches.iloc[0]
    assert k["name"] == "lud_diagonal(float*, int, int)"
    assert (k["start_ns"], k["duration_ns"], k["block_x"], k["registers_per_thread"]) == (
        230_242_390,
        39_361,
        16,
        36,
    )
    assert lud.transfers["bytes"].isna().all()  # sizes printed without a unit
    hot = _read(real_profiles, "amaris_gpuperfpredict/rodinia_traces/hotspot-traces-1.csv")
    # line 3: 64,256,287792789.000000,6688.000000,6,6,1,16,16,1,38,3.000000,0,...[119]
    k = hot.launches.iloc[0]
    assert (k["start_ns"], k["duration_ns"], k["grid_x"], k["grid_y"]) == (
        287_792_789,
        6_688,
        6,
        6,
    )


@pytest.mark.real_profiles
def test_truncated_last_line_is_dropped_with_a_note(real_profiles: Path) -> None:
    p = _read(real_profiles, "magus_nvprof/gtx1080ti/traces_shoc_lev1stencil2d.csv")
    assert any("line 13804 is cut short" in n for n in p.provenance[0].notes)


@pytest.mark.real_profiles
def test_failed_run_is_no_kernel_data(real_profiles: Path) -> None:
    with pytest.raises(NoKernelData, match="No kernels were profiled"):
        parsers.read(real_profiles / CSV / "amaris_gpuperfpredict/logs_run_0/subSeqMax-traces.csv")


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    "rel",
    [
        "amaris_gpuperfpredict/rodinia_traces/lud-time-1.csv",
        "amaris_gpuperfpredict/datasets/bpnn_layerforward_CUDA-GTX-680.csv",
        "amaris_bspgpu/gt-630/times1_nvprof_raw/SubSeqMax.txt",
        "nanzifan_nvprof_titanxp/text_mode/bfs_profile-api-trace.txt",
        "xgc_summit_v100_text/cabana-main-kernel.txt",
        "llmperfopt_rtx5090/nsys/all-stage_summary_cuda_gpu_kern_sum.csv",
        "llmperfopt_rtx5090/ncu/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3/ncu.details.csv",
        "roofline_analysis_ncu_b200/torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64.ncu.csv",
    ],
)
def test_sniffer_leaves_other_formats_alone(real_profiles: Path, rel: str) -> None:
    src = Source.from_path(real_profiles / CSV / rel)
    assert not sniff_nvprof_csv(src.head(500))


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    "rel",
    [
        "magus_nvprof/gtx1080ti/traces_shoc_lev1stencil2d.csv",
        "amaris_gpuperfpredict/rodinia_traces/lud-traces-1.csv",
        "magus_nvprof/gtx950/s3d_metrics.csv",
        "nanzifan_nvprof_titanxp/cfd_csv/print-gpu-trace.csv",
    ],
)
def test_large_files_parse(real_profiles: Path, rel: str) -> None:
    start = time.perf_counter()
    p = parsers.read(real_profiles / CSV / rel)
    print(f"{rel}: {time.perf_counter() - start:.2f} s")  # reported, not asserted
    assert p.has_kernel_data()


# --------------------------------------------------------------------------- synthetic

PRE = "==42== NVPROF is profiling process 42, command: ./app\n==42== Profiling result:\n"
TRACE9 = (
    '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
    '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","SrcMemType",'
    '"DstMemType","Device","Context","Stream","Name","Correlation_ID"\n'
)


def test_cuda9_trace_with_memory_kinds_and_memset(tmp_path: Path) -> None:
    text = (
        PRE + TRACE9 + "us,us,,,,,,,,KB,KB,KB,GB/s,,,,,,,\n"
        '0.000000,2.000000,,,,,,,,,,1.500000,0.5,"Device",,"Tesla T4 (1)","1","7",'
        '"[CUDA memset]",10\n'
        '5.500000,1.250000,,,,,,,,,,2.000000,1.5,"Pinned","Device","Tesla T4 (1)","1","7",'
        '"[CUDA memcpy HtoD]",11\n'
        '9.000000,3.000000,4,2,1,128,1,1,32,0.500000,1.000000,,,,,"Tesla T4 (1)","1","13",'
        '"k(float*)",12\n'
    )
    p = parsers.read(_write(tmp_path, text))
    memset, copy = p.transfers.iloc[0], p.transfers.iloc[1]
    assert (memset["kind"], memset["bytes"], memset["src_kind"]) == ("memset", 1536, "Device")
    assert memset["dst_kind"] is None or str(memset["dst_kind"]) == "<NA>"
    assert (copy["kind"], copy["start_ns"], copy["duration_ns"]) == ("HtoD", 5500, 1250)
    assert (copy["src_kind"], copy["dst_kind"], copy["correlation_id"]) == ("Pinned", "Device", 11)
    k = p.launches.iloc[0]
    assert (k["start_ns"], k["duration_ns"], k["stream"], k["correlation_id"]) == (
        9000,
        3000,
        13,
        12,
    )
    assert (k["static_shared_bytes"], k["dynamic_shared_bytes"]) == (512, 1024)
    assert (k["device"], k["device_id"]) == ("Tesla T4", 1)
    assert p.devices[["device_id", "name"]].values.tolist() == [[1, "Tesla T4"]]


def test_peer_to_peer_columns_and_unified_memory_faults(tmp_path: Path) -> None:
    text = (
        PRE + '"Start","Duration","Size","Throughput","Device","Context","Stream","Src Dev",'
        '"Src Ctx","Dst Dev","Dst Ctx","Unified Memory","Virtual Address","Name"\n'
        "ms,ms,MB,GB/s,,,,,,,,B,,\n"
        '1.0,0.5,2.0,4.0,"GPU A (0)","1","7","GPU A (0)","1","GPU B (1)","2",,,'
        '"[CUDA memcpy PtoP]"\n'
        '1.5,,,,,,,,,,,"PC 0x1234abcd","0x7f0000001000","[Unified Memory CPU page faults]"\n'
        '2.0,0.25,,,"GPU A (0)",,,,,,,"3","0x7f0000001000","[Unified Memory GPU page faults]"\n'
        '2.5,0.125,,,"GPU A (0)",,,,,,,4096.000000,"0x7f0000002000",'
        '"[Unified Memory Memcpy DtoH]"\n'
        '3.0,1.0,,,"GPU A (0)","1","7",,,,,,,"kern"\n'
    )
    p = parsers.read(_write(tmp_path, text))
    assert p.transfers["kind"].tolist() == ["PtoP", "UM-DtoH"]
    assert p.transfers["bytes"].tolist() == [2 * MB, 4096]
    assert p.transfers.iloc[1]["duration_ns"] == 125_000
    assert len(p.launches) == 1 and p.launches.iloc[0]["start_ns"] == 3_000_000
    assert any("1 [Unified Memory CPU page faults]" in n for n in p.provenance[0].notes)


def test_events_and_metrics_in_one_file(tmp_path: Path) -> None:
    text = (
        PRE + "==42== Event result:\n"
        '"Device","Kernel","Invocations","Event Name","Min","Max","Avg","Total"\n'
        '"GPU X (0)","k(int)",2,"inst_executed",400,500,450,900\n'
        '"GPU X (0)","k(int)",2,"warps_launched",<OVERFLOW>,32,32,64\n'
        "\n==42== Metric result:\n"
        '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"\n'
        '"GPU X (0)","k(int)",2,"dram_read_throughput","Device Memory Read Throughput",'
        "1.5MB/s,2.0GB/s,976.5625KB/s\n"
        '"GPU X (0)","k(int)",2,"dram_utilization","Device Memory Utilization","Low (1)",'
        '"Mid (4)","Low (2)"\n'
        '"GPU X (0)","k(int)",2,"gld_efficiency","Global Memory Load Efficiency",0,50.0%,'
        '"<OVERFLOW>"\n'
        "==42== Warning: One or more events or metrics overflowed. Rerun with "
        '"--print-gpu-trace" for detail.\n'
    )
    p = parsers.read(_write(tmp_path, text))
    assert p.provenance[0].modes == ("events", "metrics")
    assert any("overflowed" in n for n in p.provenance[0].notes)
    m = p.metrics.set_index("tool_metric")
    assert m.loc["inst_executed", ["section", "value", "minimum", "maximum", "total"]].tolist() == [
        "event",
        450,
        400,
        500,
        900,
    ]
    assert math.isnan(m.loc["warps_launched", "minimum"])  # <OVERFLOW>
    assert m.loc["dram_read_throughput", "value"] == 1_000_000  # 976.5625 KB/s
    assert m.loc["dram_read_throughput", "maximum"] == 2 * GB
    assert m.loc["dram_read_throughput", "section"] == "metric"
    assert m.loc["dram_utilization", ["unit", "value", "maximum"]].tolist() == ["level", 2, 4]
    eff = m.loc["gld_efficiency"]
    assert math.isnan(eff["value"]) and eff["text"] == "<OVERFLOW>"
    assert (eff["unit"], eff["minimum"], eff["maximum"]) == ("frac", 0, 0.5)  # bare 0 fits %


def test_metric_row_with_two_quantities_is_malformed(tmp_path: Path) -> None:
    text = (
        PRE
        + '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"\n'
        '"GPU X (0)","k",1,"m","M",5.0%,1.0GB/s,2.0%\n'
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert err.value.line == 4


def test_metric_trace_descriptions_duplicates_and_unknown_names(tmp_path: Path) -> None:
    text = (
        PRE + '"Device","Context","Stream","Kernel","Correlation_ID","inst_executed",'
        '"Achieved Occupancy","Global Load Throughput","Executed IPC","Executed IPC",'
        '"My Own Description","Multiprocessor Activity","Multiprocessor Activity"\n'
        ",,,,,,,GB/s,,,,%,%\n"
        '"GPU P (1)","1","7","k1(int) [12]",12,100,0.5,1.5,2.0,2.0,7,50.0,50.0\n'
        '"GPU P (1)","1","7","k1(int) [20]",20,<OVERFLOW>,0.75,0.5,1.0,1.0,8,40.0,45.0\n'
    )
    p = parsers.read(_write(tmp_path, text))
    assert p.provenance[0].modes == ("metric-trace",)
    assert p.launches["correlation_id"].tolist() == [12, 20]
    assert p.launches["name"].tolist() == ["k1(int)", "k1(int)"]
    m = p.metrics[p.metrics["launch_id"] == 0].set_index("tool_metric")
    assert m.loc["inst_executed", "section"] == "event"  # a name before described metrics
    assert m.loc["Global Load Throughput", ["metric", "unit", "value"]].tolist() == [
        "gld_throughput",
        "byte/s",
        1.5 * GB,
    ]
    assert m.loc["Achieved Occupancy", ["metric", "unit"]].tolist() == [
        "achieved_occupancy",
        "frac",
    ]
    assert m.loc["My Own Description", "metric"] == "My Own Description"
    assert m.loc["Multiprocessor Activity", "value"] == 0.5
    # "Executed IPC" repeats with equal values: dropped; "Multiprocessor Activity" differs
    assert (p.metrics["tool_metric"] == "Executed IPC").sum() == 2
    second = p.metrics[p.metrics["launch_id"] == 1].set_index("tool_metric")
    assert second.loc["Multiprocessor Activity #2", "value"] == pytest.approx(0.45)
    assert second.loc["inst_executed", "text"] == "<OVERFLOW>"
    notes = " ".join(p.provenance[0].notes)
    assert "'Executed IPC' with the same values dropped" in notes
    assert "2 metric column(s) headed by a description with no known metric name" in notes


def test_old_summary_without_type_column(tmp_path: Path) -> None:
    text = (
        PRE + '"Time(%)","Time","Calls","Avg","Min","Max","Name"\n'
        "%,ms,,us,us,ms,\n"
        '90.0,1.5,3,500.0,400.0,0.6,"kern(int)"\n'
        '10.0,0.5,1,500.0,500.0,0.5,"[CUDA memcpy HtoD]"\n'
        "\n==42== API calls:\n"
        '"Time(%)","Time","Calls","Avg","Min","Max","Name"\n'
        "%,ms,,ms,ms,ms,\n"
        '100.0,2.0,1,2.0,2.0,2.0,"cudaMalloc"\n'
    )
    p = parsers.read(_write(tmp_path, text))
    k = p.kernel_summary.iloc[0]
    assert (k["name"], k["calls"], k["time_frac"]) == ("kern(int)", 3, 0.9)
    assert (k["total_ns"], k["avg_ns"], k["min_ns"], k["max_ns"]) == (1.5e6, 5e5, 4e5, 6e5)
    assert p.transfer_summary["kind"].tolist() == ["HtoD"]
    assert p.api_summary[["name", "avg_ns"]].values.tolist() == [["cudaMalloc", 2e6]]


def test_api_trace_after_import_preamble(tmp_path: Path) -> None:
    text = (
        "======== Warning: imported profile\n======== Profiling result:\n"
        '"Start","Duration","Name","Correlation_ID"\nus,us,,\n'
        '0.000000,2.866000,"cuDeviceGetPCIBusId",1\n'
        '35863.518000,0.952000,"cudaLaunch",2\n'
    )
    path = _write(tmp_path, text)
    p = read_nvprof_csv(Source.from_path(path), None)
    assert p.provenance[0].modes == ("api-trace",)
    assert p.api_calls[["name", "start_ns", "duration_ns", "correlation_id"]].values.tolist() == [
        ["cuDeviceGetPCIBusId", 0.0, 2866.0, 1],
        ["cudaLaunch", 35_863_518.0, 952.0, 2],
    ]
    assert "profiler Warning: imported profile" in p.provenance[0].notes
    assert parsers.read(path).api_calls.shape[0] == 2  # API calls only: no kernels, still read


def test_headerless_rows_keep_only_unit_free_values(tmp_path: Path) -> None:
    text = (
        'app output line\n5,1000.000000,250.000000,,,,,,,,,,2.000000,8.0,"GPU (0)","1","7",'
        '"[CUDA memcpy HtoD]"\n'
        '5,1300.000000,20.000000,2,1,1,64,1,1,8,0,0.500000,,,"GPU (0)","1","7","k [3]"\n'
    )
    p = parsers.read(_write(tmp_path, text))
    assert p.transfers.iloc[0]["start_ns"] == 1000 and math.isnan(p.transfers.iloc[0]["bytes"])
    k = p.launches.iloc[0]
    assert (k["name"], k["correlation_id"], k["duration_ns"]) == ("k", 3, 20)
    assert k["static_shared_bytes"] == 0 and math.isnan(k["dynamic_shared_bytes"])
    notes = p.provenance[0].notes
    assert "1 line(s) of other text (application output) skipped" in notes
    assert any("'Size' left missing" in n for n in notes)


def test_empty_table_reads_as_empty_profile(tmp_path: Path) -> None:
    path = _write(tmp_path, PRE + TRACE9 + "us,us,,,,,,,,KB,KB,KB,GB/s,,,,,,,\n")
    p = read_nvprof_csv(Source.from_path(path), None)
    assert p.provenance[0].modes == ("gpu-trace",)
    assert len(p.launches) == 0 and len(p.transfers) == 0 and len(p.devices) == 0
    with pytest.raises(NoKernelData):
        parsers.read(path)
    for header in (
        '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"\n',
        '"Device","Context","Stream","Kernel","inst_executed"\n,,,,\n',
        '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n',
        '"Device","Count","Avg Size","Min Size","Max Size","Total Size","Total Time",""\n',
    ):
        empty = read_nvprof_csv(Source.from_path(_write(tmp_path, PRE + header)), None)
        assert not empty.has_kernel_data()


def test_no_kernels_profiled_quotes_the_profiler(tmp_path: Path) -> None:
    path = _write(tmp_path, "1,==9== Profiling result:\n1,No kernels were profiled.\n")
    with pytest.raises(NoKernelData, match="No kernels were profiled"):
        parsers.read(path)


def test_row_with_wrong_field_count_is_malformed_with_line(tmp_path: Path) -> None:
    text = (
        PRE + TRACE9 + "us,us,,,,,,,,KB,KB,KB,GB/s,,,,,,,\n"
        '0.0,2.0,,,,,,,,,,1.0,0.5,"Device",,"G (0)","1","7","[CUDA memset]",10\n'
        '1.0,2.0,,,"G (0)","1","7","[CUDA memset]",10\n'
        '2.0,2.0,,,,,,,,,,1.0,0.5,"Device",,"G (0)","1","7","[CUDA memset]",10\n'
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert err.value.line == 6
    assert "9 fields, expected 20" in str(err.value)


def test_bad_number_is_malformed_with_line(tmp_path: Path) -> None:
    text = (
        PRE + '"Start","Duration","Name","Correlation_ID"\nus,us,,\n'
        '0.0,1.0,"cudaMalloc",1\n'
        '2.0,fast,"cudaFree",2\n'
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert err.value.line == 6
    assert "'Duration'" in str(err.value) and "'fast'" in str(err.value)


def test_units_row_with_wrong_quantity_is_malformed(tmp_path: Path) -> None:
    text = PRE + '"Start","Duration","Name"\nus,KB,\n0.0,1.0,"cudaMalloc"\n'
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert err.value.line == 4


def test_sniffer_needs_a_quoted_nvprof_table() -> None:
    assert sniff_nvprof_csv(['256,"Start","Duration","Name"'])
    assert sniff_nvprof_csv(['"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"'])
    assert sniff_nvprof_csv(['1,2.0,3.0,,,,,,,,,,4.0,5.0,"Tesla K40c (0)","1","7","k [1]"'])
    assert not sniff_nvprof_csv(["Time(%)      Time     Calls       Avg       Min       Max  Name"])
    assert not sniff_nvprof_csv(['"ID","Process ID","Process Name","Host Name","Kernel Name"'])
    assert not sniff_nvprof_csv(["Time (%),Total Time (ns),Instances,Avg (ns),Name"])
    assert not sniff_nvprof_csv(["==1== Profiling result:", "No kernels were profiled."])


@pytest.mark.parametrize(
    ("cell", "column"),
    [("1.5", "Grid X"), ("99999999999999999999", "Grid X"), ("inf", "Grid X"), ("2.5", "Context")],
)
def test_whole_number_column_with_other_value_is_malformed_with_line(
    tmp_path: Path, cell: str, column: str
) -> None:
    """A grid size or context id that is no whole number (or too large for one) is the row's
    fault: MalformedInput naming line 5, not a schema error or a silently wrapped integer."""
    grid, context = (cell, "1") if column == "Grid X" else ("4", cell)
    text = (
        PRE + TRACE9 + "us,us,,,,,,,,KB,KB,KB,GB/s,,,,,,,\n"
        f"9.0,3.0,{grid},2,1,128,1,1,32,0.5,1.0,,,,,"
        f'"Tesla T4 (1)","{context}","13","k(float*)",12\n'
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert err.value.line == 5
    assert f"{column!r}: expected a whole number, got {cell!r}" in str(err.value)


def test_summary_calls_that_are_no_whole_number_are_malformed(tmp_path: Path) -> None:
    text = (
        PRE + '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,us,us,ms,\n'
        '"GPU activities",100.0,1.0,2.5,400.0,300.0,0.5,"k(float*)"\n'
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert err.value.line == 5 and "'Calls'" in str(err.value)


def test_metric_invocations_too_large_are_malformed(tmp_path: Path) -> None:
    text = (
        PRE
        + '"Device","Kernel","Invocations","Metric Name","Metric Description",'
        + '"Min","Max","Avg"\n'
        '"G (0)","k(float*)",99999999999999999999,"ipc","Executed IPC",1.0,1.0,1.0\n'
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert err.value.line == 4 and "'Invocations'" in str(err.value)


def test_ids_too_large_in_names_are_no_ids(tmp_path: Path) -> None:
    """A "[N]" suffix or a "(N)" device index too large for an id stays part of the text."""
    big = "99999999999999999999"
    text = (
        PRE + TRACE9 + "us,us,,,,,,,,KB,KB,KB,GB/s,,,,,,,\n"
        f'9.0,3.0,4,2,1,128,1,1,32,0.5,1.0,,,,,"G ({big})","1","13","k(float*) [{big}]",\n'
    )
    k = parsers.read(_write(tmp_path, text)).launches.iloc[0]
    assert k["name"] == f"k(float*) [{big}]" and pd.isna(k["correlation_id"])
    assert k["device"] == f"G ({big})" and pd.isna(k["device_id"])


def test_metric_trace_bad_value_message_shows_the_cell(tmp_path: Path) -> None:
    text = (
        PRE + '"Device","Context","Stream","Kernel","Global Load Throughput"\n,,,,GB/s\n'
        '"G (0)","1","7","k(float*)",1.5x\n'
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(_write(tmp_path, text))
    assert "got '1.5x'" in str(err.value) and "np.str_" not in str(err.value)


def test_summary_rows_of_other_groups_are_noted(tmp_path: Path) -> None:
    """OpenACC / OpenMP groups have no normalised table: their rows are counted in a note (as
    the text reader does), not dropped silently."""
    text = (
        PRE + '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,us,us,ms,\n'
        '"GPU activities",100.0,1.0,2,500.0,400.0,0.6,"k(float*)"\n'
        '"OpenACC (excl)",60.0,2.0,4,500.0,400.0,0.6,"acc_wait@a.F90:10"\n'
        '"OpenACC (excl)",40.0,1.0,2,500.0,400.0,0.6,"acc_enqueue_launch@a.F90:12"\n'
    )
    prof = parsers.read(_write(tmp_path, text))
    assert list(prof.kernel_summary["name"]) == ["k(float*)"]
    notes = prof.provenance[0].notes
    assert "2 summary rows of the group 'OpenACC (excl)' not imported (no table)" in notes
