"""Nsight Systems ``nsys stats`` reader (parsers/nsys/csv.py, parsers/nsys/reports.py).

Real files: the three ``cuda_gpu_kern_sum`` CSVs of ``llmperfopt_rtx5090`` (read in place).
Everything else is a small synthetic snippet written here after the layouts in FORMATS.md §3;
the expected values are worked out by hand in the comments.
"""

# Text tables are kept at their printed width, with nsys's trailing padding:
# ruff: noqa: E501, W291

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.errors import MalformedInput, NoKernelData
from parsers import registry
from parsers.nsys.csv import sniff_nsys
from parsers.source import Source

NSYS = "csv/llmperfopt_rtx5090/nsys"
DEVICE = "NVIDIA RTX 5000 Ada Generation Laptop GPU"
PROC = "Processing [run.sqlite] with [/opt/nvidia/nsight-systems/2025.3.2/host-linux-x64/reports/{}.py]... "
KERN_HEADER = (
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
)
API_HEADER = (
    "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
)
TRACE_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
)


def write(tmp_path: Path, text: str, name: str = "out.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def read_raw(path: Path) -> parsers.Profile:
    """The nsys reader without parsers.read's no-kernel check (for empty reports)."""
    return registry.text_format("nsys-csv").read(Source.from_path(path), None)


# --------------------------------------------------------------------------- real files


@pytest.mark.real_profiles
def test_real_all_stage_kern_sum(real_profiles: Path) -> None:
    path = real_profiles / NSYS / "all-stage_summary_cuda_gpu_kern_sum.csv"
    assert parsers.detect(path) == "nsys-csv"
    prof = parsers.read(path)
    prov = prof.provenance[0]
    assert (prov.format, prov.profiler, prov.modes) == ("nsys-csv", "nsys", ("cuda_gpu_kern_sum",))
    assert prov.profiler_version is None  # no Processing line: the file starts with the header
    ks = prof.kernel_summary
    # 114 lines = header + 113 rows; every name is distinct
    assert len(ks) == 113 and ks["name"].nunique() == 113
    # line 2: 24.9,1231822285,329035,3743.7,3712.0,2079,5856,416.2,"std::enable_if<!T7, void>..."
    first = ks.iloc[0]
    assert first["name"].startswith("std::enable_if<!T7, void>::type internal::gemvx::kernel<int")
    assert first["name"].endswith("float>>(T13)") and "(bool)0, (bool)1" in first["name"]
    assert first["calls"] == 329035
    assert first["total_ns"] == 1231822285
    assert first["avg_ns"] == pytest.approx(3743.7)
    assert first["median_ns"] == pytest.approx(3712.0)
    assert (first["min_ns"], first["max_ns"]) == (2079, 5856)
    assert first["stddev_ns"] == pytest.approx(416.2)
    assert first["time_frac"] == pytest.approx(0.249)
    # line 4, unquoted (no comma): 6.1,302283088,37853,...,void cutlass::Kernel2<...>(T1::Params)
    assert ks.iloc[2]["name"] == (
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>"
        "(T1::Params)"
    )
    assert ks.iloc[2]["calls"] == 37853
    # sums over the file (csv module, by hand): Instances 1,695,983; Total Time 4,946,064,742 ns
    assert int(ks["calls"].sum()) == 1695983
    assert ks["total_ns"].sum() == 4946064742
    assert ks["device"].isna().all()  # kern_sum has no device column
    # the longest name (line 5) has 483 characters, with commas, lambdas and std::array
    longest = ks["name"].str.len().max()
    assert longest == 483
    assert ks["name"].str.contains("[lambda() (instance 3)]", regex=False).any()


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    ("name", "rows", "instances", "total_ns"),
    [
        # counted with the csv module: rows, sum of Instances, sum of Total Time (ns)
        ("per-stage_decode_summary_cuda_gpu_kern_sum.csv", 46, 78016, 179072697),
        ("per-stage_prefill_summary_cuda_gpu_kern_sum.csv", 97, 6660, 65691733),
    ],
)
def test_real_per_stage_kern_sum(
    real_profiles: Path, name: str, rows: int, instances: int, total_ns: int
) -> None:
    prof = parsers.read(real_profiles / NSYS / name)
    ks = prof.kernel_summary
    assert len(ks) == rows
    assert int(ks["calls"].sum()) == instances
    assert ks["total_ns"].sum() == total_ns
    assert ks["time_frac"].between(0, 1).all()
    assert prof.provenance[0].modes == ("cuda_gpu_kern_sum",)


@pytest.mark.real_profiles
def test_real_decode_lambda_name(real_profiles: Path) -> None:
    # line 4: 6.0,10662464,6016,1772.4,1952.0,960,3264,585.6,"void at::native::unrolled_...
    ks = parsers.read(real_profiles / NSYS / "per-stage_decode_summary_cuda_gpu_kern_sum.csv")
    row = ks.kernel_summary.iloc[2]
    assert row["name"].startswith("void at::native::unrolled_elementwise_kernel<at::native::")
    assert "::[lambda() (instance 3)]::operator ()() const::" in row["name"]
    assert (row["calls"], row["total_ns"], row["median_ns"]) == (6016, 10662464, 1952.0)


# --------------------------------------------------------------------------- cuda_gpu_trace


def test_gpu_trace_new_header(tmp_path: Path) -> None:
    text = "\n".join(
        [
            TRACE_HEADER,
            f"1134711990,661398,123,,,,,,,,,,4.194,6337.593,Pinned,Device,{DEVICE} (0),1,,13,"
            "[CUDA memcpy Host-to-Device]",
            f"1136125733,7072,128,4096,1,1,256,1,1,16,0.000,0.000,,,,,{DEVICE} (0),1,,13,"
            '"ns::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"',
            f"1136200000,1500,130,,,,,,,,,,1.049,699.333,Device,,{DEVICE} (0),1,,14,[CUDA memset]",
            f"1136300000,900000,131,,,,,,,,,,4.194,4660.000,Device,Pageable,{DEVICE} (0),1,,13,"
            "[CUDA memcpy Device-to-Host]",
            "",
        ]
    )
    prof = parsers.read(write(tmp_path, text, "trace.csv"))
    assert prof.provenance[0].modes == ("cuda_gpu_trace",)
    (launch,) = prof.launches.to_dict("records")
    assert (
        launch["name"] == "ns::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"
    )
    assert (launch["start_ns"], launch["duration_ns"], launch["correlation_id"]) == (
        1136125733,
        7072,
        128,
    )
    assert (launch["grid_x"], launch["grid_y"], launch["grid_z"]) == (4096, 1, 1)
    assert (launch["block_x"], launch["registers_per_thread"]) == (256, 16)
    assert launch["static_shared_bytes"] == 0.0 and launch["dynamic_shared_bytes"] == 0.0
    assert (launch["device"], launch["device_id"], launch["context"], launch["stream"]) == (
        DEVICE,
        0,
        1,
        13,
    )
    tr = prof.transfers
    assert tr["kind"].tolist() == ["HtoD", "memset", "DtoH"]
    # Bytes (MB) 4.194 is decimal MB: 4,194,000 bytes (throughput column not read)
    assert tr["bytes"].tolist() == pytest.approx([4_194_000, 1_049_000, 4_194_000])
    assert tr["src_kind"].tolist() == ["Pinned", "Device", "Device"]
    assert tr["dst_kind"].isna().tolist() == [False, True, False]  # memset has no DstMemKd
    assert tr["correlation_id"].tolist() == [123, 130, 131]
    assert tr["stream"].tolist() == [13, 14, 13]
    assert prof.devices[["device_id", "name"]].values.tolist() == [[0, DEVICE]]


def test_gpu_trace_old_header_shared_memory_mb(tmp_path: Path) -> None:
    # ~2022-2024: Throughput (MBps), no GreenCtx; StcSMem 0.025 MB = 25,000 B (decimal)
    header = TRACE_HEADER.replace("(MB/s)", "(MBps)").replace("GreenCtx,", "")
    row = "5000,2000,7,64,2,1,128,1,1,40,0.025,0.001,,,,,Tesla T4 (1),3,21,mmul"
    prof = parsers.read(write(tmp_path, f"{header}\n{row}\n"))
    launch = prof.launches.iloc[0]
    assert launch["static_shared_bytes"] == pytest.approx(25_000)
    assert launch["dynamic_shared_bytes"] == pytest.approx(1_000)
    assert (launch["device"], launch["device_id"], launch["stream"]) == ("Tesla T4", 1, 21)
    assert any("StcSMem/DymSMem are printed in MB" in n for n in prof.provenance[0].notes)


def test_gputrace_2020_text_table(tmp_path: Path) -> None:
    # nsys 2020.4 `nsys stats --report gputrace`: Start in seconds, sizes in plain bytes
    text = """\
Using report1.sqlite export for stats reports.
Exporting [/soft/cuda-11.2.0/nsight-systems-2020.4.3/target-linux-x64/reports/gputrace.py report1.sqlite] to console...

 Start(sec)  Duration(nsec)  CorrId  GrdX  GrdY  GrdZ  BlkX  BlkY  BlkZ  Reg/Trd  StcSMem  DymSMem    Bytes    Thru(MB/s)  SrcMemKd  DstMemKd        Device        Ctx  Strm         Name        
 ----------  --------------  ------  ----  ----  ----  ----  ----  ----  -------  -------  -------  ---------  ----------  --------  --------  ------------------  ---  ----  -------------------
   0.357341       1,400,294      63                                                                 4,000,000   2,856.543  Pageable  Device    A100-PCIE-40GB (0)    1    13  [CUDA memcpy HtoD] 
   0.364801         222,080      74     1     1     1    33     1     1       36    1,134        0                                             A100-PCIE-40GB (0)    1    13  main_l20           
"""
    prof = parsers.read(write(tmp_path, text))
    prov = prof.provenance[0]
    assert prov.modes == ("text:cuda_gpu_trace",)
    assert prov.profiler_version == "2020.4.3"
    assert "report gputrace (nsys 2020.x-2021.x name) read as cuda_gpu_trace" in prov.notes
    launch = prof.launches.iloc[0]
    # 0.364801 s -> 364,801,000 ns; StcSMem 1,134 -> 1134 bytes
    assert launch["start_ns"] == pytest.approx(364_801_000)
    assert (launch["duration_ns"], launch["block_x"], launch["registers_per_thread"]) == (
        222080,
        33,
        36,
    )
    assert launch["static_shared_bytes"] == 1134
    transfer = prof.transfers.iloc[0]
    assert (transfer["kind"], transfer["bytes"], transfer["duration_ns"]) == ("HtoD", 4e6, 1400294)
    assert (transfer["device"], transfer["device_id"]) == ("A100-PCIE-40GB", 0)


# --------------------------------------------------------------------------- cuda_api_trace


@pytest.mark.parametrize("ids", ["CorrID,Pid,Tid", "CorrID,PID,TID"])
def test_api_trace(tmp_path: Path, ids: str) -> None:
    text = (
        f"Start (ns),Duration (ns),Name,Result,{ids},T-Pri,Thread Name\n"
        "456173024,2155,cuModuleGetLoadingMode,0,1,811552,811553,20,saxpy\n"
        "459348415,170736162,cudaMalloc,2,118,811552,811552,20,saxpy main\n"
    )
    prof = parsers.read(write(tmp_path, text))
    assert prof.provenance[0].modes == ("cuda_api_trace",)
    calls = prof.api_calls
    assert calls["name"].tolist() == ["cuModuleGetLoadingMode", "cudaMalloc"]
    assert calls["duration_ns"].tolist() == [2155, 170736162]
    assert calls["result"].tolist() == [0, 2]
    assert calls["correlation_id"].tolist() == [1, 118]
    assert calls["process_id"].tolist() == [811552, 811552]
    assert calls["thread_id"].tolist() == [811553, 811552]


# --------------------------------------------------------------------------- summaries


@pytest.mark.parametrize(
    "header",
    [
        # nsys 2020.x CSV: no Med/StdDev, no unit on Average (the unit of Total Time applies)
        "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,Name",
        "Time(%),Total Time (ns),Instances,Average(ns),Minimum(ns),Maximum(ns),Name",
    ],
)
def test_kern_sum_old_headers(tmp_path: Path, header: str) -> None:
    text = f'{header}\n75.0,3000,2,1500.0,1000,2000,"k<int, 2>(int *)"\n25.0,1000,1,1000.0,1000,1000,k2\n'
    prof = parsers.read(write(tmp_path, text))
    ks = prof.kernel_summary
    assert ks["name"].tolist() == ["k<int, 2>(int *)", "k2"]
    assert ks["calls"].tolist() == [2, 1]
    assert ks["avg_ns"].tolist() == [1500.0, 1000.0]
    assert ks["time_frac"].tolist() == pytest.approx([0.75, 0.25])
    assert ks["median_ns"].isna().all() and ks["stddev_ns"].isna().all()
    assert prof.provenance[0].notes == ()


def test_kern_sum_microseconds(tmp_path: Path) -> None:
    # nsys stats --timeunit us: every time column in us -> x1000
    header = KERN_HEADER.replace("(ns)", "(us)")
    prof = parsers.read(write(tmp_path, f"{header}\n100.0,12.5,5,2.5,2.4,2,3,0.4,k\n"))
    row = prof.kernel_summary.iloc[0]
    assert (row["total_ns"], row["avg_ns"], row["median_ns"]) == (12500, 2500, 2400)
    assert row["stddev_ns"] == pytest.approx(400)


def test_kern_gb_sum(tmp_path: Path) -> None:
    header = KERN_HEADER.replace(",Name", ",GridXYZ,BlockXYZ,Name")
    text = (
        f"{header}\n"
        "60.0,600,3,200.0,200.0,100,300,100.0,  64    1    1, 256    1    1,k\n"
        "40.0,400,1,400.0,400.0,400,400,0.0, 128    1    1, 256    1    1,k\n"
    )
    prof = parsers.read(write(tmp_path, text))
    assert prof.provenance[0].modes == ("cuda_gpu_kern_gb_sum",)
    assert prof.kernel_summary["calls"].tolist() == [3, 1]
    assert any("GridXYZ/BlockXYZ are not kept" in n for n in prof.provenance[0].notes)


@pytest.mark.parametrize("calls", ["Num Calls", "Calls"])
def test_api_sum(tmp_path: Path, calls: str) -> None:
    text = (
        API_HEADER.replace("Num Calls", calls) + "\n"
        "58.5,199253613,183,1088817.6,131481.0,46630,3841722,1397635.5,cudaMemcpy\n"
        "41.5,141000000,61,2311475.4,12750.0,8963,90426000,12614.7,cudaLaunchKernel\n"
    )
    prof = parsers.read(write(tmp_path, text))
    api = prof.api_summary
    assert api["name"].tolist() == ["cudaMemcpy", "cudaLaunchKernel"]
    assert api["calls"].tolist() == [183, 61]
    assert api["total_ns"].tolist() == [199253613, 141000000]
    assert api["avg_ns"].iloc[0] == pytest.approx(1088817.6)
    assert api["time_frac"].tolist() == pytest.approx([0.585, 0.415])


def test_osrt_sum_without_processing_line_is_not_read(tmp_path: Path) -> None:
    # osrt_sum prints cuda_api_sum's header; its names are not CUDA calls
    text = f"{API_HEADER}\n90.0,900,3,300.0,300.0,100,500,200.0,poll\n"
    prof = read_raw(write(tmp_path, text))
    assert len(prof.api_summary) == 0 and prof.provenance[0].modes == ()
    assert any("osrt_sum" in n for n in prof.provenance[0].notes)


def test_mem_time_and_size_merge_by_kind(tmp_path: Path) -> None:
    text = "\n".join(
        [
            PROC.format("cuda_gpu_mem_time_sum"),
            "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation",
            "74.4,2408928,122,19745.3,19168.0,18496,42528,3108.3,[CUDA memcpy Host-to-Device]",
            "25.6,827168,61,13560.1,13856.0,11840,25024,1954.5,[CUDA memcpy Device-to-Host]",
            "",
            PROC.format("cuda_gpu_mem_size_sum"),
            "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation",
            "255.853,61,4.194,4.194,4.194,4.194,0.000,[CUDA memcpy Device-to-Host]",
            "511.705,122,4.194,4.194,4.194,4.194,0.000,[CUDA memcpy Host-to-Device]",
            "1.000,2,0.500,0.500,0.250,0.750,0.354,[CUDA memset]",
            "",
        ]
    )
    prof = read_raw(write(tmp_path, text))  # no kernels: parsers.read would say NoKernelData
    assert prof.provenance[0].modes == ("cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum")
    ts = prof.transfer_summary
    assert ts["kind"].tolist() == ["HtoD", "DtoH", "memset"]  # time order, then size-only kinds
    assert ts["calls"].tolist() == [122, 61, 2]
    assert ts["total_ns"].iloc[:2].tolist() == [2408928, 827168]
    assert ts["avg_ns"].iloc[0] == pytest.approx(19745.3)
    assert math.isnan(ts["total_ns"].iloc[2])  # memset only in the size summary
    # 511.705 MB = 511,705,000 B; 4.194 MB = 4,194,000 B; 0.250 MB = 250,000 B
    assert ts["total_bytes"].tolist() == pytest.approx([511_705_000, 255_853_000, 1_000_000])
    assert ts["avg_bytes"].iloc[0] == pytest.approx(4_194_000)
    assert ts["min_bytes"].iloc[2] == pytest.approx(250_000)


def test_mem_summaries_of_two_captures_pair_up_per_capture(tmp_path: Path) -> None:
    """Two captures in one file: each capture's time row pairs with its size row (the transfer
    count is 3 + 5, not every row twice)."""
    time_header = (
        "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation"
    )
    size_header = "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation"
    lines = []
    for calls in (3, 5):
        lines += [
            PROC.format("cuda_gpu_mem_time_sum"),
            time_header,
            f"100.0,{calls * 100},{calls},100.0,100.0,90,110,10.0,[CUDA memcpy Host-to-Device]",
            "",
            PROC.format("cuda_gpu_mem_size_sum"),
            size_header,
            f"{calls}.000,{calls},1.000,1.000,1.000,1.000,0.000,[CUDA memcpy Host-to-Device]",
            "",
        ]
    ts = read_raw(write(tmp_path, "\n".join(lines))).transfer_summary
    assert ts["calls"].tolist() == [3, 5]
    assert ts["total_ns"].tolist() == [300, 500]
    assert ts["total_bytes"].tolist() == pytest.approx([3e6, 5e6])


def test_mem_size_kib_alone(tmp_path: Path) -> None:
    text = (
        "Total (KiB),Count,Avg (KiB),Med (KiB),Min (KiB),Max (KiB),StdDev (KiB),Operation\n"
        "8.000,2,4.000,4.000,2.000,6.000,2.828,[CUDA memcpy HtoD]\n"
    )
    prof = read_raw(write(tmp_path, text))
    row = prof.transfer_summary.iloc[0]
    # KiB is binary: 8 KiB = 8192 B, 2 KiB = 2048 B
    assert (row["kind"], row["calls"], row["total_bytes"], row["min_bytes"]) == (
        "HtoD",
        2,
        8192,
        2048,
    )
    assert math.isnan(row["total_ns"])


# --------------------------------------------------------------------------- captures


def test_multi_report_capture(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "Generating SQLite file run.sqlite from run.nsys-rep",
            "Exporting 1374 events: [===================================================100%]",
            "NOTICE: Existing SQLite export found: run.sqlite",
            "        It is assumed file was previously exported from: run.nsys-rep",
            PROC.format("cuda_api_sum"),
            API_HEADER,
            "95.5,88330,1,88330.0,88330.0,88330,88330,0.0,cudaLaunchKernel",
            "",
            PROC.format("cuda_gpu_kern_sum"),
            "",
            " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):",
            "",
            KERN_HEADER,
            '100.0,178481856,61,2925932.1,2890848.0,2852032,3774688,149253.5,"saxpy(float, float *)"',
            "",
            PROC.format("osrt_sum"),
            API_HEADER,
            "90.0,900,3,300.0,300.0,100,500,200.0,poll",
            "",
            PROC.format("nvtx_sum"),
            "SKIPPED: run.sqlite does not contain NV Tools Extension (NVTX) data.",
            "",
        ]
    )
    prof = parsers.read(write(tmp_path, text))
    prov = prof.provenance[0]
    assert prov.modes == ("cuda_api_sum", "cuda_gpu_kern_sum")
    assert prov.profiler_version == "2025.3.2"
    assert "report osrt_sum is not one cuda-advisor reads; its table was skipped" in prov.notes
    assert any(n.startswith("nvtx_sum: SKIPPED:") for n in prov.notes)
    assert prof.api_summary["name"].tolist() == ["cudaLaunchKernel"]
    row = prof.kernel_summary.iloc[0]
    assert (row["name"], row["calls"], row["avg_ns"]) == ("saxpy(float, float *)", 61, 2925932.1)


def test_reports_without_blank_line_between(tmp_path: Path) -> None:
    # two single-report files concatenated with `cat`
    text = f"{KERN_HEADER}\n100.0,10,1,10.0,10.0,10,10,0.0,k\n{API_HEADER}\n100.0,5,1,5.0,5.0,5,5,0.0,cudaFree\n"
    prof = parsers.read(write(tmp_path, text))
    assert prof.provenance[0].modes == ("cuda_gpu_kern_sum", "cuda_api_sum")
    assert (len(prof.kernel_summary), len(prof.api_summary)) == (1, 1)


def test_all_skipped_capture_is_no_kernel_data(tmp_path: Path) -> None:
    text = "\n".join(
        [
            PROC.format("cuda_gpu_kern_sum"),
            "SKIPPED: /tmp/x/no_kernels.sqlite does not contain CUDA kernel data.",
            PROC.format("cuda_gpu_mem_time_sum"),
            "SKIPPED: /tmp/x/no_kernels.sqlite does not contain GPU memory data.",
            "",
        ]
    )
    path = write(tmp_path, text)
    assert parsers.detect(path) == "nsys-csv"
    with pytest.raises(NoKernelData) as err:
        parsers.read(path)
    assert "SKIPPED: /tmp/x/no_kernels.sqlite does not contain CUDA kernel data." in str(err.value)


@pytest.mark.parametrize("header", [KERN_HEADER, API_HEADER, TRACE_HEADER])
def test_empty_report(tmp_path: Path, header: str) -> None:
    path = write(tmp_path, header + "\n")
    prof = read_raw(path)
    assert all(len(frame) == 0 for frame in prof.frames.values())
    assert len(prof.provenance[0].modes) == 1
    with pytest.raises(NoKernelData):
        parsers.read(path)


def test_non_ascii_names_and_placeholders(tmp_path: Path) -> None:
    text = f'{KERN_HEADER}\n100.0,10,1,10.0,,10,10,,"κ_ñ<α, β>(float)"\n'
    row = parsers.read(write(tmp_path, text)).kernel_summary.iloc[0]
    assert row["name"] == "κ_ñ<α, β>(float)"
    assert math.isnan(row["median_ns"]) and math.isnan(row["stddev_ns"])


# --------------------------------------------------------------------------- text tables


STATS_TRUE = """\
Generating '/tmp/nsys-report-2ee6.qdstrm'
[1/4] [========================100%] run.nsys-rep
[2/4] [========================100%] run.sqlite
[3/4] Executing 'osrt_sum' stats report

 Time (%)  Total Time (ns)  Num Calls   Avg (ns)    Med (ns)   Min (ns)   Max (ns)   StdDev (ns)   Name
 --------  ---------------  ---------  ----------  ----------  --------  ----------  -----------  ------
     75.0        3,000,000          2  1,500,000.0  1,500,000.0  1,000,000  2,000,000    707,106.8  poll  

[4/4] Executing 'cuda_gpu_kern_sum' stats report

 Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)                     Name                    
 --------  ---------------  ---------  --------  --------  --------  --------  -----------  ------------------------------------------
     90.0        1,800,000      1,000   1,800.0   1,790.0     1,700     4,700         93.3  scale(const float *, float *, int)        
     10.0          200,000        100   2,000.0   2,000.0     2,000     2,000          0.0  void reduce<float, 256>(const float *, fl…

Generated:
    /home/user/run.nsys-rep
"""


def test_stats_true_text_tables(tmp_path: Path) -> None:
    prof = parsers.read(write(tmp_path, STATS_TRUE))
    prov = prof.provenance[0]
    assert prov.modes == ("text:cuda_gpu_kern_sum",)
    assert "report osrt_sum is not one cuda-advisor reads; its table was skipped" in prov.notes
    assert any("1 name(s) cut short with '…'" in n for n in prov.notes)
    ks = prof.kernel_summary
    # thousands separators: 1,800,000 -> 1800000; 1,000 -> 1000
    assert ks["total_ns"].tolist() == [1_800_000, 200_000]
    assert ks["calls"].tolist() == [1000, 100]
    assert ks["median_ns"].tolist() == [1790, 2000]
    assert ks["name"].tolist() == [
        "scale(const float *, float *, int)",
        "void reduce<float, 256>(const float *, fl…",
    ]


def test_2021_text_sections(tmp_path: Path) -> None:
    text = """\
Exporting 4661 events: [==================================================100%]

CUDA API Statistics:

 Time(%)  Total Time (ns)  Num Calls    Average      Minimum     Maximum                Name             
 -------  ---------------  ---------  ------------  ----------  ----------  -----------------------------
    73.3       52,866,564          1  52,866,564.0  52,866,564  52,866,564  cuDevicePrimaryCtxRelease_v2 



CUDA Kernel Statistics:

 Time(%)  Total Time (ns)  Instances   Average   Minimum  Maximum                  Name                 
 -------  ---------------  ---------  ---------  -------  -------  -------------------------------------
   100.0          222,080          1  222,080.0  222,080  222,080  __omp_offloading_30_736b0b47_main_l20



CUDA Memory Operation Statistics (by time):

 Time(%)  Total Time (ns)  Operations    Average    Minimum   Maximum       Operation     
 -------  ---------------  ----------  -----------  -------  ---------  ------------------
    78.6        4,194,961           4  1,048,740.3    2,911  1,400,294  [CUDA memcpy HtoD]



CUDA Memory Operation Statistics (by size in KiB):

   Total     Operations   Average   Minimum   Maximum       Operation     
 ----------  ----------  ---------  -------  ---------  ------------------
 11,718.754           4  2,929.688    0.004  3,906.250  [CUDA memcpy HtoD]



Operating System Runtime API Statistics:

 Time(%)  Total Time (ns)  Num Calls     Average     Minimum    Maximum         Name     
 -------  ---------------  ---------  -------------  -------  -----------  --------------
    49.1      303,045,683          2  151,522,841.5   15,721  303,029,962  sem_wait      
"""
    prof = parsers.read(write(tmp_path, text))
    prov = prof.provenance[0]
    assert prov.modes == (
        "text:cuda_api_sum",
        "text:cuda_gpu_kern_sum",
        "text:cuda_gpu_mem_time_sum",
        "text:cuda_gpu_mem_size_sum",
    )
    assert prof.api_summary["name"].tolist() == ["cuDevicePrimaryCtxRelease_v2"]
    ks = prof.kernel_summary.iloc[0]
    assert (ks["calls"], ks["avg_ns"], ks["max_ns"]) == (1, 222080.0, 222080)
    ts = prof.transfer_summary.iloc[0]
    assert (ts["kind"], ts["calls"], ts["total_ns"]) == ("HtoD", 4, 4194961)
    # the size unit is in the section title: 11,718.754 KiB = 11718.754 * 1024 B
    assert ts["total_bytes"] == pytest.approx(11718.754 * 1024)
    assert ts["max_bytes"] == pytest.approx(3906.25 * 1024)


def test_2020_text_sections_with_units_in_titles(tmp_path: Path) -> None:
    # nsys 2020.x --stats=true: units in the titles, "Calls", memory tables say "Name"; the
    # first kernel row lost its alignment (pasted), so it is split on blanks
    text = """\
Generating CUDA API Statistics...
CUDA API Statistics (nanoseconds)

Time(%)      Total Time       Calls         Average         Minimum         Maximum  Name            
-------  --------------  ----------  --------------  --------------  --------------  ----------------
   99.1       238934624           2     119467312.0           15728       238918896  cudaMallocManaged

Generating CUDA Kernel Statistics...

Generating CUDA Memory Operation Statistics...
CUDA Kernel Statistics (nanoseconds)

Time(%)  Total Time   Instances  Average  Minimum    Maximum  Name                
-------  ----------  ----------  -------  -------  ---------  --------------------
  80.0    800000    4     200000.0   100000     300000  matmul kernel 
   20.0      200000           1   200000.0   200000     200000  init                


CUDA Memory Operation Statistics (nanoseconds)

Time(%)      Total Time  Operations         Average         Minimum         Maximum  Name                
-------  --------------  ----------  --------------  --------------  --------------  --------------------
  100.0           50000           2         25000.0           20000           30000  [CUDA memcpy HtoD]  


CUDA Memory Operation Statistics (KiB)

              Total      Operations              Average            Minimum              Maximum  Name                
-------------------  --------------  -------------------  -----------------  -------------------  --------------------
           2048.000               2             1024.000            512.000             1536.000  [CUDA memcpy HtoD]  
"""
    path = write(tmp_path, text)
    assert parsers.detect(path) == "nsys-csv"
    prof = parsers.read(path)
    assert prof.provenance[0].modes == (
        "text:cuda_api_sum",
        "text:cuda_gpu_kern_sum",
        "text:cuda_gpu_mem_time_sum",
        "text:cuda_gpu_mem_size_sum",
    )
    assert prof.api_summary.iloc[0][["name", "calls"]].tolist() == ["cudaMallocManaged", 2]
    ks = prof.kernel_summary
    assert ks["name"].tolist() == ["matmul kernel", "init"]
    assert ks["calls"].tolist() == [4, 1]
    assert ks["max_ns"].tolist() == [300000, 200000]
    ts = prof.transfer_summary.iloc[0]
    assert (ts["kind"], ts["calls"], ts["avg_ns"]) == ("HtoD", 2, 25000)
    # (KiB) title: 2048 KiB = 2,097,152 B; 512 KiB = 524,288 B
    assert (ts["total_bytes"], ts["min_bytes"]) == (2_097_152, 524_288)


def test_text_capture_with_skipped_kernels_is_no_kernel_data(tmp_path: Path) -> None:
    text = """\
[5/8] Executing 'cuda_api_sum' stats report

 Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)      Name     
 --------  ---------------  ---------  --------  --------  --------  --------  -----------  -------------
    100.0            5,000          1   5,000.0   5,000.0     5,000     5,000          0.0  cudaMalloc   

[6/8] Executing 'cuda_gpu_kern_sum' stats report
SKIPPED: /home/u/run.sqlite does not contain CUDA kernel data.
"""
    path = write(tmp_path, text)
    assert read_raw(path).api_summary["calls"].tolist() == [1]
    with pytest.raises(NoKernelData, match="does not contain CUDA kernel data"):
        parsers.read(path)


def test_table_format_with_border(tmp_path: Path) -> None:
    text = """\
 ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):

+----------+-----------------+-----------+----------+----------+----------+----------+-------------+-----------------------------+
| Time (%) | Total Time (ns) | Instances | Avg (ns) | Med (ns) | Min (ns) | Max (ns) | StdDev (ns) |            Name             |
+----------+-----------------+-----------+----------+----------+----------+----------+-------------+-----------------------------+
|     60.0 |      11,294,113 |       144 | 78,431.3 | 58,352.5 |   27,072 |  112,000 |    30,000.1 | mul_mat_q<(ggml_type)2, 64> |
|     40.0 |       7,529,409 |        10 | 752,940.9| 752,940.0|  750,000 |  760,000 |     3,000.0 | operator|(int, int)          |
+----------+-----------------+-----------+----------+----------+----------+----------+-------------+-----------------------------+
"""
    ks = parsers.read(write(tmp_path, text)).kernel_summary
    assert ks["name"].tolist() == ["mul_mat_q<(ggml_type)2, 64>", "operator|(int, int)"]
    assert ks["total_ns"].tolist() == [11_294_113, 7_529_409]
    assert ks["avg_ns"].tolist() == pytest.approx([78431.3, 752940.9])


# --------------------------------------------------------------------------- errors


def test_row_with_extra_fields_is_malformed(tmp_path: Path) -> None:
    # an unquoted name with a comma: 10 fields under a 9-field header, on line 3
    text = (
        f"{KERN_HEADER}\n100.0,10,1,10.0,10.0,10,10,0.0,k\n50.0,10,1,10.0,10.0,10,10,0.0,k<a, b>\n"
    )
    with pytest.raises(MalformedInput) as err:
        parsers.read(write(tmp_path, text))
    assert err.value.line == 3
    assert "row has 10 fields, the header has 9" in str(err.value)


def test_bad_number_is_malformed(tmp_path: Path) -> None:
    text = f"{PROC.format('cuda_gpu_kern_sum')}\n{KERN_HEADER}\n100.0,10,1,10.0,ten,10,10,0.0,k\n"
    with pytest.raises(MalformedInput) as err:
        parsers.read(write(tmp_path, text))
    assert err.value.line == 3
    assert "'Med (ns)': expected a number, found 'ten'" in str(err.value)


def test_fractional_count_is_malformed(tmp_path: Path) -> None:
    text = f"{KERN_HEADER}\n100.0,10,1.5,10.0,10.0,10,10,0.0,k\n"
    with pytest.raises(MalformedInput, match="'Instances': expected a whole number"):
        parsers.read(write(tmp_path, text))


def test_named_report_with_wrong_header_is_malformed(tmp_path: Path) -> None:
    text = f"{PROC.format('cuda_gpu_kern_sum')}\nTime (%),Total Time (ns),Avg (ns),Name\n1,2,3,k\n"
    with pytest.raises(MalformedInput) as err:
        parsers.read(write(tmp_path, text))
    assert err.value.line == 2
    assert "cuda_gpu_kern_sum table lacks the column(s) instances" in str(err.value)


def test_unknown_time_unit_is_malformed(tmp_path: Path) -> None:
    header = KERN_HEADER.replace("Avg (ns)", "Avg (fortnights)")
    with pytest.raises(MalformedInput, match="unknown time unit 'fortnights'"):
        parsers.read(write(tmp_path, f"{header}\n100.0,10,1,10.0,10.0,10,10,0.0,k\n"))


# --------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize(
    "head",
    [
        # nvprof --csv summary: quoted header with Time(%) but no Total Time, then a units row
        [
            "==123== Profiling result:",
            '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"',
            ",%,ms,,ms,ms,ms,",
            '"GPU activities",90.0,1.0,1,1.0,1.0,1.0,"k"',
        ],
        # nvprof --print-gpu-trace --csv
        [
            '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
            '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput",'
            '"SrcMemType","DstMemType","Device","Context","Stream","Name","Correlation_ID"',
            "ms,us,,,,,,,,KB,B,MB,GB/s,,,,,,,",
        ],
        # nvprof unified memory table: "Total Time" without a unit
        ['"Device","Count","Avg Size","Min Size","Max Size","Total Size","Total Time","Name"'],
        # ncu --csv details: every field quoted
        [
            '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
            '"Metric Value"',
            '"0","1","a.out","host","k","1","7","(256, 1, 1)","(64, 1, 1)","0","8.0",'
            '"GPU Speed Of Light Throughput","Duration","usecond","1,234.56"',
        ],
        ["SKIPPED: x.sqlite does not contain CUDA kernel data."],
    ],
)
def test_sniff_declines_other_tools(head: list[str]) -> None:
    assert not sniff_nsys(head)


def test_sniff_claims_nsys(tmp_path: Path) -> None:
    assert sniff_nsys([KERN_HEADER])
    assert sniff_nsys([PROC.format("cuda_gpu_kern_sum")])
    assert sniff_nsys(STATS_TRUE.splitlines())
    assert parsers.detect(write(tmp_path, f"{TRACE_HEADER}\n")) == "nsys-csv"


def test_reading_is_deterministic(tmp_path: Path) -> None:
    path = write(tmp_path, STATS_TRUE)
    first, second = parsers.read(path), parsers.read(path)
    for table in first.frames:
        pd.testing.assert_frame_equal(first.frames[table], second.frames[table])


@pytest.mark.parametrize("count", ["99999999999999999999", "inf"])
def test_count_too_large_for_a_whole_number_is_malformed(tmp_path: Path, count: str) -> None:
    text = f"{KERN_HEADER}\n100.0,10,{count},10.0,10.0,10,10,0.0,k\n"
    with pytest.raises(MalformedInput, match="'Instances': expected a whole number") as err:
        parsers.read(write(tmp_path, text))
    assert err.value.line == 2


def test_device_index_too_large_is_no_id(tmp_path: Path) -> None:
    big = "99999999999999999999"
    text = (
        f"{TRACE_HEADER}\n"
        f"1136125733,7072,128,4096,1,1,256,1,1,16,0.000,0.000,,,,,GPU ({big}),1,,13,k\n"
    )
    launch = parsers.read(write(tmp_path, text, "trace.csv")).launches.iloc[0]
    assert launch["device"] == f"GPU ({big})" and pd.isna(launch["device_id"])
