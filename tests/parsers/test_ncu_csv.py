"""Nsight Compute ``--csv`` output: details page, raw page, per-kernel summary (FORMATS.md §2).

Real files are read in place from ``../shared/real_profiles/csv``; the expected values below were
read off those files by hand (line and column named in each comment).  Synthetic snippets are
written here for the layouts and failure cases the real set lacks.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.errors import MalformedInput, NoKernelData
from parsers import registry
from parsers.ncu.csv import sniff_ncu_csv
from parsers.source import Source

B200 = "csv/roofline_analysis_ncu_b200"
RTX = "csv/llmperfopt_rtx5090/ncu"
K1 = f"{RTX}/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
K4 = f"{RTX}/kernel_0004_16864015d8ec27ba6cf878e5c5ff03d9"
BATCH_DECODE = (
    "void BatchDecodeWithPagedKVCacheKernel<0, 2, 1, 8, 16, 4, 2, "
    "DefaultAttention<0, 0, 0, 0>, Params>(T9)"
)


def write(tmp_path: Path, text: str, name: str = "ncu.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def metric(profile: parsers.Profile, tool_metric: str, launch_id: int = 0) -> pd.Series:
    m = profile.metrics
    rows = m[(m["tool_metric"] == tool_metric) & (m["launch_id"] == launch_id)]
    assert len(rows) == 1, (tool_metric, len(rows))
    return rows.iloc[0]


def read_format(path: Path) -> parsers.Profile:
    """The ncu-csv reader itself (parsers.read turns an empty profile into NoKernelData)."""
    return registry.text_format("ncu-csv").read(Source.from_path(path), None)


# --- real files: raw page (B200, ncu 2025.x) -------------------------------------------------


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    ("name", "launches", "kernel0", "duration0_ns"),
    [
        # 2 ==PROF== lines, header, units row, then one row per launch; 475 columns of which 11
        # identify the launch (ID..CC) and 464 are metrics; launch__kernel_name is blank in
        # every row, so 463 metrics rows per launch.  Durations: column gpu__time_duration.sum
        # (unit "ns") of the first data row.
        ("flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64", 64, BATCH_DECODE, 628480.0),
        (
            "flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64",
            16,
            "void PersistentVariableLengthMergeStatesKernel<8, 16, 8, 4, __nv_bfloat16, "
            "__nv_bfloat16, int>(T5 *, float *, T7 *, T6 *, float *, unsigned int, "
            "unsigned int *, unsigned int)",
            9920.0,
        ),
        (
            "torch_sdpa_auto__mqa_bf16_b128_ctx4k_p64",
            16,
            "cudnn_generated_fort_native_sdpa_sm100_flash_fprop_f16_knob_7_32x128x128_4x1x1"
            "_cga1x1x1_kernel0_0",
            92032.0,
        ),
        (
            "torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64",
            16,
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, 0, 0, bfloat16_t, "
            "Flash_kernel_traits<128, 128, 64, 4, bfloat16_t>>, 0, 0, 0, 0, 0, 1, 0, 0>"
            "(Flash_fwd_params)",
            687488.0,
        ),
    ],
)
def test_raw_page_counts(
    real_profiles: Path, name: str, launches: int, kernel0: str, duration0_ns: float
) -> None:
    profile = parsers.read(real_profiles / B200 / f"{name}.ncu.csv")
    prov = profile.provenance[0]
    assert (prov.format, prov.profiler, prov.modes) == ("ncu-csv", "ncu", ("raw",))
    assert prov.profiler_version is None  # no line of these files names the version
    assert len(profile.launches) == launches
    assert list(profile.launches["launch_id"]) == list(range(launches))
    assert len(profile.metrics) == launches * 463
    assert profile.metrics.groupby("launch_id").size().eq(463).all()
    assert profile.launches["name"][0] == kernel0
    assert profile.launches["duration_ns"][0] == duration0_ns
    assert len(profile.rules) == 0 and len(profile.kernel_summary) == 0


@pytest.mark.real_profiles
def test_raw_page_launch_and_device_values(real_profiles: Path) -> None:
    profile = parsers.read(
        real_profiles / B200 / "flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64.ncu.csv"
    )
    # line 6 (ID "1"): Block Size "(16, 4, 2)", Grid Size "(32, 8, 1)", Device "0", CC "10.0",
    # Context "1", Stream "7", gpu__time_duration.sum "23872" ns,
    # launch__registers_per_thread "56" register/thread, launch__shared_mem_per_block_dynamic
    # "9216" byte/block, launch__shared_mem_per_block_static "0" byte/block
    launch = profile.launches.iloc[1]
    assert launch["name"] == BATCH_DECODE
    assert (launch["grid_x"], launch["grid_y"], launch["grid_z"]) == (32, 8, 1)
    assert (launch["block_x"], launch["block_y"], launch["block_z"]) == (16, 4, 2)
    assert (launch["device_id"], launch["context"], launch["stream"]) == (0, 1, 7)
    assert launch["device"] == "NVIDIA B200"
    assert launch["duration_ns"] == 23872.0
    assert launch["registers_per_thread"] == 56
    assert launch["dynamic_shared_bytes"] == 9216.0
    assert launch["static_shared_bytes"] == 0.0
    assert pd.isna(launch["start_ns"])
    # device__attribute_display_name "NVIDIA B200", _multiprocessor_count "148",
    # _clock_rate "1965000" and _memory_clock_rate "3996000" (kHz, blank unit),
    # _l2_cache_size "132644864" (bytes, blank unit)
    assert len(profile.devices) == 1
    device = profile.devices.iloc[0]
    assert device["name"] == "NVIDIA B200"
    assert device["compute_capability"] == "10.0"
    assert device["sm_count"] == 148
    assert device["sm_clock_hz"] == pytest.approx(1.965e9)
    assert device["memory_clock_hz"] == pytest.approx(3.996e9)
    assert device["l2_bytes"] == 132644864.0
    # _global_memory_bus_width "7680" (bits): 2 x 3.996e9 Hz x 7680 / 8, as for .ncu-rep reports
    assert device["memory_bandwidth_bytes_per_s"] == pytest.approx(7.67232e12)
    assert any("kHz" in n for n in profile.provenance[0].notes)


@pytest.mark.real_profiles
def test_raw_page_metric_values(real_profiles: Path) -> None:
    profile = parsers.read(
        real_profiles / B200 / "flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64.ncu.csv"
    )
    # launch 0: sm__maximum_warps_per_active_cycle_pct "75" % -> theoretical occupancy 0.75
    row = metric(profile, "sm__maximum_warps_per_active_cycle_pct", 0)
    assert (row["metric"], row["unit"], row["value"]) == ("theoretical_occupancy", "frac", 0.75)
    # launch 1: the same column says "56.25"
    assert metric(profile, "sm__maximum_warps_per_active_cycle_pct", 1)["value"] == 0.5625
    # non-numeric cells are kept as text with a missing value
    row = metric(profile, "launch__cluster_scheduling_policy", 0)
    assert row["text"] == "PolicySpread" and math.isnan(row["value"])
    assert metric(profile, "device__attribute_display_name", 3)["text"] == "NVIDIA B200"
    # launch__registers_per_thread (unit "register/thread") is the canonical registers count
    row = metric(profile, "launch__registers_per_thread", 1)
    assert (row["metric"], row["unit"], row["value"]) == ("registers_per_thread", "", 56.0)
    # an unmapped count keeps its printed unit: launch__thread_count "32768" thread
    row = metric(profile, "launch__thread_count", 1)
    assert (row["metric"], row["unit"], row["value"]) == ("launch__thread_count", "thread", 32768.0)
    assert (profile.metrics["device"] == "NVIDIA B200").all()
    assert profile.metrics["launch_id"].notna().all()


# --- real files: details page (RTX 5090, ncu 2025.1.1) ---------------------------------------


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    ("path", "metrics", "rules", "modes"),
    [
        # counted by hand: rows with a Metric Name vs rule rows (empty metric fields)
        (f"{K1}/ncu.details.csv", 44, 4, ("details", "rules")),
        (f"{K1}/ncu.metrics.csv", 11, 4, ("details", "rules")),
        (f"{K1}/ncu.section_MemoryWorkloadAnalysis.csv", 7, 0, ("details",)),
        (f"{K1}/ncu.section_SpeedOfLight.csv", 10, 1, ("details", "rules")),
        (f"{K4}/ncu.details.csv", 44, 4, ("details", "rules")),
        (f"{K4}/ncu.metrics.csv", 11, 4, ("details", "rules")),
        (f"{K4}/ncu.section_MemoryWorkloadAnalysis.csv", 7, 0, ("details",)),
        (f"{K4}/ncu.section_SpeedOfLight.csv", 10, 1, ("details", "rules")),
    ],
)
def test_details_page_counts(
    real_profiles: Path, path: str, metrics: int, rules: int, modes: tuple[str, ...]
) -> None:
    profile = parsers.read(real_profiles / path)
    assert profile.provenance[0].modes == modes
    assert len(profile.launches) == 1  # every row has ID "0"
    assert len(profile.metrics) == metrics
    assert len(profile.rules) == rules
    assert (profile.metrics["launch_id"] == 0).all()
    # Device "0", CC "12.0"; the details page does not name the device
    assert profile.devices[["device_id", "compute_capability"]].values.tolist() == [[0, "12.0"]]
    assert pd.isna(profile.devices["name"][0])


@pytest.mark.real_profiles
def test_details_page_values(real_profiles: Path) -> None:
    profile = parsers.read(real_profiles / K1 / "ncu.details.csv")
    launch = profile.launches.iloc[0]
    assert launch["name"].startswith("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16")
    # Block Size "(32, 4, 1)", Grid Size "(224, 1, 1)", Context "1", Stream "7"
    assert (launch["grid_x"], launch["grid_y"], launch["grid_z"]) == (224, 1, 1)
    assert (launch["block_x"], launch["block_y"], launch["block_z"]) == (32, 4, 1)
    assert (launch["context"], launch["stream"], launch["device_id"]) == (1, 7, 0)
    # "Duration","us","6.75" (and gpu__time_duration.sum "us" "6.75") -> 6750 ns
    assert launch["duration_ns"] == pytest.approx(6750.0)
    # no Launch Statistics section in this export: registers unknown
    assert pd.isna(launch["registers_per_thread"])
    # line 2: "dram__bytes_read.sum","Mbyte","2.33" -> 2.33e6 bytes
    row = metric(profile, "dram__bytes_read.sum")
    assert (row["metric"], row["unit"]) == ("dram_read_bytes", "byte")
    assert row["value"] == pytest.approx(2.33e6)
    assert row["section"] == "Command line profiler metrics"
    # line 11: "DRAM Frequency","Ghz","13.72" -> 1.372e10 hz
    row = metric(profile, "DRAM Frequency")
    assert (row["metric"], row["unit"]) == ("dram_frequency", "hz")
    assert row["value"] == pytest.approx(1.372e10)
    # line 13: "Elapsed Cycles","cycle","13,485" (thousands separator)
    row = metric(profile, "Elapsed Cycles")
    assert (row["metric"], row["unit"], row["value"]) == ("elapsed_cycles", "", 13485.0)
    assert metric(profile, "SM Active Cycles")["value"] == pytest.approx(9495.42)  # "9,495.42"
    # "Achieved Occupancy","%","11.32" -> 0.1132
    row = metric(profile, "Achieved Occupancy")
    assert (row["metric"], row["unit"]) == ("achieved_occupancy", "frac")
    assert row["value"] == pytest.approx(0.1132)
    # "Memory Throughput" is % in Speed Of Light and Gbyte/s in Memory Workload Analysis
    m = profile.metrics[profile.metrics["tool_metric"] == "Memory Throughput"]
    by_section = dict(zip(m["section"], zip(m["metric"], m["value"], strict=True), strict=True))
    assert by_section["GPU Speed Of Light Throughput"][0] == "memory_throughput_pct_of_peak"
    assert by_section["GPU Speed Of Light Throughput"][1] == pytest.approx(0.1966)
    assert by_section["Memory Workload Analysis"][0] == "Memory Throughput"
    assert by_section["Memory Workload Analysis"][1] == pytest.approx(345.14e9)
    # "flop_count_hp.sum","","n/a": missing value, cell kept as text
    row = metric(profile, "flop_count_hp.sum")
    assert math.isnan(row["value"]) and row["text"] == "n/a"


@pytest.mark.real_profiles
def test_details_page_rules(real_profiles: Path) -> None:
    rules = parsers.read(real_profiles / K1 / "ncu.details.csv").rules
    assert list(rules["rule"]) == [
        "SOLBottleneck", "SOLFPRoofline", "IssueSlotUtilization", "TheoreticalOccupancy"
    ]  # fmt: skip
    # rule rows name the section by identifier, not display name
    assert list(rules["section"]) == [
        "SpeedOfLight", "SpeedOfLight_RooflineChart", "SchedulerStats", "Occupancy"
    ]  # fmt: skip
    assert list(rules["rule_type"]) == ["OPT", "INF", "OPT", "OPT"]
    last = rules.iloc[3]  # "TheoreticalOccupancy","OPT",...,"global","80.34"
    assert last["speedup_type"] == "global"
    assert last["estimated_speedup_frac"] == pytest.approx(0.8034)
    assert last["description"].startswith("The 2.00 theoretical warps per scheduler")
    assert rules.iloc[2]["speedup_type"] == "local"  # IssueSlotUtilization "local","80.34"
    first = rules.iloc[0]  # SOLBottleneck: both speedup fields empty
    assert pd.isna(first["speedup_type"]) and math.isnan(first["estimated_speedup_frac"])
    assert (rules["launch_id"] == 0).all()


@pytest.mark.real_profiles
def test_details_second_kernel(real_profiles: Path) -> None:
    profile = parsers.read(real_profiles / K4 / "ncu.details.csv")
    launch = profile.launches.iloc[0]
    assert launch["name"].startswith("void unrolled_elementwise_kernel<direct_copy_kernel_cuda")
    assert (launch["grid_x"], launch["block_x"]) == (2, 128)  # "(2, 1, 1)", "(128, 1, 1)"
    assert launch["duration_ns"] == pytest.approx(4700.0)  # "Duration","us","4.70"
    # "dram__bytes_read.sum","Kbyte","32.77" -> 32770 bytes (decimal prefix)
    assert metric(profile, "dram__bytes_read.sum")["value"] == pytest.approx(32770.0)
    rule = profile.rules[profile.rules["rule"] == "AchievedOccupancy"].iloc[0]
    assert rule["estimated_speedup_frac"] == pytest.approx(0.9169)  # "global","91.69"


# --- real files: failed runs -------------------------------------------------------------------


@pytest.mark.real_profiles
def test_failed_run_quotes_the_profiler_error(real_profiles: Path) -> None:
    path = real_profiles / B200 / "flashinfer_paged_decode__gqa_bf16_b128_ctx8k_p64.ncu.csv"
    with pytest.raises(
        NoKernelData, match=r"==ERROR== The application returned an error code \(1\)"
    ):
        parsers.read(path)


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    "name",
    [
        "flashinfer_paged_decode__gqa_bf16_b64_ctx4k_p64_qh32_kvh8_hd64",
        "flashinfer_trtllm_decode__mha_bf16_b16_ctx4k_p64",
    ],
)
def test_only_status_lines_says_no_kernel_was_profiled(real_profiles: Path, name: str) -> None:
    with pytest.raises(NoKernelData, match="no kernel was profiled"):
        parsers.read(real_profiles / B200 / f"{name}.ncu.csv")


@pytest.mark.real_profiles
def test_sniffer_claims_exactly_the_ncu_exports(real_profiles: Path) -> None:
    claimed = set()
    for path in sorted((real_profiles / "csv").rglob("*")):
        is_data = path.is_file() and path.suffix != ".tsv"
        if is_data and sniff_ncu_csv(Source.from_path(path).head(500)):
            claimed.add(str(path.relative_to(real_profiles)))
    expected = {str(p.relative_to(real_profiles)) for p in (real_profiles / RTX).rglob("*.csv")}
    expected |= {
        f"{B200}/{n}.ncu.csv"
        for n in (
            "flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64",
            "flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64",
            "torch_sdpa_auto__mqa_bf16_b128_ctx4k_p64",
            "torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64",
        )
    }
    assert claimed == expected


# --- synthetic snippets ------------------------------------------------------------------------

# 2019.x-2021.x details header: "Kernel Time" is a timestamp; units of that era
# ("cycle/second", "nsecond", "Kbyte/block"); application output before and inside the table.
DETAILS_2019 = """\
==PROF== Connected to process 4242 (/home/me/stencil)
iteration 1 done
==PROF== Profiling "stencil_step": 0%....50%....100% - 8 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","stencil","127.0.0.1","stencil_step","2019-Nov-12 10:00:01","1","7","GPU Speed Of Light","Memory Frequency","cycle/second","877,000,000"
"0","4242","stencil","127.0.0.1","stencil_step","2019-Nov-12 10:00:01","1","7","GPU Speed Of Light","SOL FB","%","41.50"
"0","4242","stencil","127.0.0.1","stencil_step","2019-Nov-12 10:00:01","1","7","GPU Speed Of Light","Duration","nsecond","1,234,567"
"0","4242","stencil","127.0.0.1","stencil_step","2019-Nov-12 10:00:01","1","7","Launch Statistics","Block Size","","256"
"0","4242","stencil","127.0.0.1","stencil_step","2019-Nov-12 10:00:01","1","7","Launch Statistics","Registers Per Thread","register/thread","32"
"0","4242","stencil","127.0.0.1","stencil_step","2019-Nov-12 10:00:01","1","7","Launch Statistics","Static Shared Memory Per Block","Kbyte/block","8.19"
iteration 2 done
"1","4242","stencil","127.0.0.1","stencil_reduce","2019-Nov-12 10:00:02","1","8","GPU Speed Of Light","Duration","usecond","2.50"
"1","4242","stencil","127.0.0.1","stencil_reduce","2019-Nov-12 10:00:02","1","8","Launch Statistics","Registers Per Thread","register/thread","n/a"
==PROF== Disconnected from process 4242
"""  # noqa: E501


def test_details_2019_header(tmp_path: Path) -> None:
    profile = parsers.read(write(tmp_path, DETAILS_2019))
    prov = profile.provenance[0]
    assert prov.modes == ("details",)
    # "iteration 2 done" inside the table; "iteration 1 done" comes before the header
    assert prov.notes == ("1 line(s) of application output after the header skipped",)
    launches = profile.launches
    assert list(launches["name"]) == ["stencil_step", "stencil_reduce"]
    assert list(launches["stream"]) == [7, 8]
    # "Duration","nsecond","1,234,567" and "usecond","2.50"
    assert list(launches["duration_ns"]) == [1234567.0, 2500.0]
    assert launches["registers_per_thread"][0] == 32
    assert pd.isna(launches["registers_per_thread"][1])  # "n/a"
    assert launches["static_shared_bytes"][0] == pytest.approx(8190.0)  # 8.19 Kbyte/block
    # no launch-shape columns in this era, no Device column; Kernel Time is not a start time
    # the scalar Block Size row of this version is the block's total: (256, 1, 1)
    assert launches["block_x"][0] == 256 and launches["block_y"][0] == 1
    assert launches[["grid_x", "device_id"]].isna().all().all() and pd.isna(launches["block_x"][1])
    assert launches["start_ns"].isna().all()
    assert len(profile.devices) == 0
    m = profile.metrics.set_index("tool_metric")
    assert m.loc["Memory Frequency", "metric"] == "dram_frequency"
    assert m.loc["Memory Frequency", "unit"] == "hz"
    assert m.loc["Memory Frequency", "value"] == 877e6
    # the 2019-2020 SpeedOfLight label "SOL FB" is fbpa__sol_pct: DRAM (frame buffer) throughput
    assert m.loc["SOL FB", "metric"] == "dram_throughput_pct_of_peak"
    assert m.loc["SOL FB", "value"] == pytest.approx(0.415)
    assert m.loc["Block Size", "metric"] == "block_size"


# --nvtx (2021) inserts NVTX columns before Kernel Name; rule columns without speedups.
DETAILS_NVTX = """\
"ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","Kernel Time","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description"
"0","77","app","host","<default domain>:step:::::::","scale(float*, int)","2021-Mar-01 09:00:00","1","7","GPU Speed Of Light Throughput","Duration","usecond","3.20"
"0","77","app","host","<default domain>:step:::::::","scale(float*, int)","2021-Mar-01 09:00:00","1","7","SpeedOfLight","","","","SOLBottleneck","WRN","Memory is more heavily utilized than Compute."
"""  # noqa: E501


def test_details_with_nvtx_and_rule_columns(tmp_path: Path) -> None:
    profile = parsers.read(write(tmp_path, DETAILS_NVTX))
    assert profile.provenance[0].modes == ("details", "rules")
    assert profile.launches["duration_ns"][0] == pytest.approx(3200.0)
    rule = profile.rules.iloc[0]
    assert (rule["section"], rule["rule"], rule["rule_type"]) == (
        "SpeedOfLight",
        "SOLBottleneck",
        "WRN",
    )
    assert rule["description"] == "Memory is more heavily utilized than Compute."
    assert pd.isna(rule["speedup_type"]) and math.isnan(rule["estimated_speedup_frac"])
    assert rule["kernel"] == "scale(float*, int)"


# --print-summary per-kernel (FORMATS.md §2.4): one kernel in two launch shapes, units per row.
SUMMARY = """\
"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","Device","CC","Invocations","Section Name","Metric Name","Metric Unit","Minimum","Maximum","Average"
"501","bench","127.0.0.1","axpy(float, const float *, float *, int)","(256, 1, 1)","(4096, 1, 1)","0","9.0","10","GPU Speed Of Light Throughput","SM Frequency","Mhz","980.50","1,410.00","1,200.25"
"501","bench","127.0.0.1","axpy(float, const float *, float *, int)","(256, 1, 1)","(4096, 1, 1)","0","9.0","10","GPU Speed Of Light Throughput","Duration","us","12.00","30.00","20.00"
"501","bench","127.0.0.1","axpy(float, const float *, float *, int)","(256, 1, 1)","(4096, 1, 1)","0","9.0","10","Occupancy","Achieved Occupancy","%","70.00","90.00","80.00"
"501","bench","127.0.0.1","axpy(float, const float *, float *, int)","(1, 1, 1)","(1048576, 1, 1)","0","9.0","2","GPU Speed Of Light Throughput","SM Frequency","Ghz","1.10","1.30","1.20"
"501","bench","127.0.0.1","axpy(float, const float *, float *, int)","(1, 1, 1)","(1048576, 1, 1)","0","9.0","2","GPU Speed Of Light Throughput","Duration","ms","1.00","3.00","2.00"
"""  # noqa: E501


def test_per_kernel_summary(tmp_path: Path) -> None:
    profile = parsers.read(write(tmp_path, SUMMARY))
    assert profile.provenance[0].modes == ("summary-per-kernel",)
    assert len(profile.launches) == 0
    m = profile.metrics
    assert len(m) == 5
    assert m["launch_id"].isna().all()
    assert list(m["invocations"]) == [10, 10, 10, 2, 2]
    freq = m[m["metric"] == "sm_frequency"]
    # per-row units: "Mhz" 980.50/1,410.00/1,200.25 then "Ghz" 1.10/1.30/1.20
    assert list(freq["minimum"]) == pytest.approx([980.5e6, 1.10e9])
    assert list(freq["maximum"]) == pytest.approx([1410e6, 1.30e9])
    assert list(freq["value"]) == pytest.approx([1200.25e6, 1.20e9])
    occ = m[m["metric"] == "achieved_occupancy"].iloc[0]
    assert (occ["value"], occ["minimum"], occ["maximum"]) == pytest.approx((0.8, 0.7, 0.9))
    ks = profile.kernel_summary
    # group 1: 10 calls, Duration us 12/30/20 -> total 10 * 20 us = 200,000 ns
    # group 2: 2 calls, Duration ms 1/3/2 -> total 2 * 2 ms = 4,000,000 ns
    assert list(ks["calls"]) == [10, 2]
    assert list(ks["avg_ns"]) == pytest.approx([20e3, 2e6])
    assert list(ks["min_ns"]) == pytest.approx([12e3, 1e6])
    assert list(ks["max_ns"]) == pytest.approx([30e3, 3e6])
    assert list(ks["total_ns"]) == pytest.approx([200e3, 4e6])
    assert list(ks["time_frac"]) == pytest.approx([200e3 / 4.2e6, 4e6 / 4.2e6])
    assert (ks["name"] == "axpy(float, const float *, float *, int)").all()
    assert profile.devices[["device_id", "compute_capability"]].values.tolist() == [[0, "9.0"]]


# Old raw page (no Block/Grid/Device/CC columns, has Kernel Time); shape from launch__* metrics.
RAW_OLD = """\
"ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream","device__attribute_display_name","dram__bytes_read.sum","gpu__time_duration.sum","launch__block_dim_x","launch__block_dim_y","launch__block_dim_z","launch__grid_dim_x","launch__grid_dim_y","launch__grid_dim_z","launch__registers_per_thread","sm__warps_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","Mbyte","usecond","","","","","","","register/thread","%"
"0","900","app","host","k1(int)","2020-Jan-05 12:00:00","1","7","GeForce RTX 2080 Ti","2,000.5","1.50","128","1","1","40","2","1","24","n/a"
"1","900","app","host","k2(int)","2020-Jan-05 12:00:01","1","7","GeForce RTX 2080 Ti","4.25","0.75","64","2","1","10","1","1","30","61.25"
"""  # noqa: E501


def test_raw_page_old_layout(tmp_path: Path) -> None:
    profile = parsers.read(write(tmp_path, RAW_OLD))
    launches = profile.launches
    assert list(launches["name"]) == ["k1(int)", "k2(int)"]
    assert list(launches["duration_ns"]) == pytest.approx([1500.0, 750.0])
    assert list(launches["grid_x"]) == [40, 10] and list(launches["grid_y"]) == [2, 1]
    assert list(launches["block_y"]) == [1, 2]
    assert list(launches["registers_per_thread"]) == [24, 30]
    assert launches["device_id"].isna().all()  # no Device column, no launch__device_id
    m = profile.metrics
    dram = m[m["metric"] == "dram_read_bytes"]
    assert list(dram["value"]) == pytest.approx([2000.5e6, 4.25e6])  # "2,000.5" Mbyte
    occ = m[m["tool_metric"] == "sm__warps_active.avg.pct_of_peak_sustained_active"]
    assert occ["metric"].eq("achieved_occupancy").all()
    assert math.isnan(occ["value"].iloc[0]) and occ["text"].iloc[0] == "n/a"
    assert occ["value"].iloc[1] == pytest.approx(0.6125)
    names = m[m["tool_metric"] == "device__attribute_display_name"]
    assert list(names["text"]) == ["GeForce RTX 2080 Ti"] * 2


def test_raw_page_without_units_row_is_noted(tmp_path: Path) -> None:
    lines = RAW_OLD.splitlines()
    profile = parsers.read(write(tmp_path, "\n".join([lines[0], *lines[2:]]) + "\n"))
    assert len(profile.launches) == 2
    # without a unit the duration cannot be told to be in ns: kept as printed, under its name
    row = metric(profile, "gpu__time_duration.sum")
    assert (row["metric"], row["unit"], row["value"]) == ("gpu__time_duration.sum", "", 1.50)
    assert profile.launches["duration_ns"].isna().all()
    assert any("units row" in n for n in profile.provenance[0].notes)


# Nsight Compute 2025 raw page: the source counters' kernel totals are columns without a
# "unit__" prefix, beside their per-instruction codes and the rule scripts' temporaries.
RAW_SOURCE_TOTALS = """\
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","inst_executed","memory_access_type","memory_l1_wavefronts_shared","memory_l1_wavefronts_shared_ideal","memory_l2_theoretical_sectors_global","memory_l2_theoretical_sectors_global_ideal","memory_type","derived_tempMetric0"
"","","","","","","","","","","","nsecond","inst","","sectors","sectors","sectors","sectors","",""
"0","520","app","host","k(float *)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","1,000","1,771,008","0","65,536","2,048","134,348,800","33,587,200","0","175,424"
"""  # noqa: E501


def test_raw_page_reads_the_source_counter_totals(tmp_path: Path) -> None:
    """Read as metrics, they give the ideal / actual recipes a report file of the same run
    gives; without them the granularity fell back to bytes per sector, which counts a
    warp-wide broadcast (one 4-byte word in a sector) as 28 wasted bytes."""
    profile = parsers.read(write(tmp_path, RAW_SOURCE_TOTALS))
    m = profile.metrics
    values = dict(zip(m["tool_metric"], m["value"], strict=True))
    assert values["memory_l2_theoretical_sectors_global"] == 134_348_800
    assert values["memory_l2_theoretical_sectors_global_ideal"] == 33_587_200
    assert values["memory_l1_wavefronts_shared_ideal"] == 2_048
    assert values["inst_executed"] == 1_771_008
    for code in ("memory_type", "memory_access_type", "derived_tempMetric0"):
        assert code not in values  # per-instruction codes and temporaries are not totals
    from advisor import pipeline

    kernel = pipeline.analyse_profile(profile, device="H100").data["kernels"][0]
    l1 = kernel["criteria"]["L1_GRANULARITY"]
    assert l1["method"].startswith("ideal / actual global sectors")
    assert l1["value"] == pytest.approx(33_587_200 / 134_348_800)
    shared = kernel["criteria"]["SHMEM_EFFICIENCY"]
    assert shared["method"].startswith("ideal / actual shared wavefronts")
    assert shared["raw_value"] == pytest.approx(2_048 / 65_536)


def test_repeated_header_starts_a_second_table(tmp_path: Path) -> None:
    profile = parsers.read(write(tmp_path, RAW_OLD + "==PROF== Disconnected\n" + RAW_OLD))
    assert list(profile.launches["launch_id"]) == [0, 1, 2, 3]
    assert list(profile.launches["name"]) == ["k1(int)", "k2(int)"] * 2
    assert sorted(profile.metrics["launch_id"].unique()) == [0, 1, 2, 3]


def test_locale_formatted_numbers(tmp_path: Path) -> None:
    # a decimal-comma locale: "27.595.520" (groups) and "65,77" (decimal comma)
    header = DETAILS_2019.splitlines()[3]
    ids = '"0","1","app","host","k","2025-Jan-01 00:00:00","1","7"'
    text = "\n".join(
        [
            header,
            f'{ids},"Memory Workload Analysis","dram__bytes_read.sum","byte","27.595.520"',
            f'{ids},"Occupancy","Achieved Occupancy","%","65,77"',
            f'{ids},"Launch Statistics","Grid Size","","1.024"',
        ]
    )
    profile = parsers.read(write(tmp_path, text))
    values = profile.metrics.set_index("tool_metric")["value"]
    assert values["dram__bytes_read.sum"] == 27595520.0
    assert values["Achieved Occupancy"] == pytest.approx(0.6577)
    assert values["Grid Size"] == 1024.0  # "1.024" in that locale
    assert "decimal comma" in profile.provenance[0].notes[0]


def test_ambiguous_grouping_is_read_the_ordinary_way(tmp_path: Path) -> None:
    header = DETAILS_2019.splitlines()[3]
    ids = '"0","1","app","host","k","2025-Jan-01 00:00:00","1","7"'
    text = "\n".join(
        [
            header,
            f'{ids},"Launch Statistics","Waves Per SM","","1.234"',
            f'{ids},"Occupancy","Achieved Occupancy","%","65.50"',
        ]
    )
    profile = parsers.read(write(tmp_path, text))
    values = profile.metrics.set_index("tool_metric")["value"]
    assert values["Waves Per SM"] == 1.234
    assert profile.provenance[0].notes == ()


@pytest.mark.parametrize(
    "text",
    [
        DETAILS_2019.splitlines()[3] + "\n",
        SUMMARY.splitlines()[0] + "\n",
        "\n".join(RAW_OLD.splitlines()[:2]) + "\n",
        RAW_OLD.splitlines()[0] + "\n",
    ],
    ids=["details", "summary", "raw", "raw-no-units"],
)
def test_empty_table(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "==PROF== Connected to process 1 (/bin/app)\n" + text)
    profile = read_format(path)
    assert not profile.has_kernel_data()
    assert len(profile.devices) == 0 and len(profile.rules) == 0
    with pytest.raises(NoKernelData, match="no kernel launches"):
        parsers.read(path)


def test_profiler_error_with_an_empty_table_is_quoted(tmp_path: Path) -> None:
    text = (
        "==PROF== Connected to process 31 (/bin/app)\n"
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
        "Performance Counters on the target device 0.\n" + DETAILS_2019.splitlines()[3] + "\n"
    )
    with pytest.raises(NoKernelData, match="ERR_NVGPUCTRPERM"):
        parsers.read(write(tmp_path, text))


@pytest.mark.parametrize(
    ("row", "line", "message"),
    [
        # unterminated quote
        ('"0","4242","stencil","127.0.0.1","k","t","1","7","S","Duration","ns","12', 6, "quoting"),
        # text after a closing quote
        ('"0","4242","stencil","127.0.0.1","k","t","1","7","S","Duration","ns""12"x', 6, "quoting"),
        # too few fields: stops before "Metric Value"
        ('"0","4242","stencil","127.0.0.1","k","t","1","7","S","Duration"', 6, "at least 12"),
        # more fields than the header
        ('"0","4242","s","h","k","t","1","7","S","Duration","ns","12","x","y"', 6, "more than"),
    ],
)
def test_malformed_details_row_names_the_line(
    tmp_path: Path, row: str, line: int, message: str
) -> None:
    lines = [*DETAILS_2019.splitlines()[:5], row]
    with pytest.raises(MalformedInput, match=message) as info:
        parsers.read(write(tmp_path, "\n".join(lines) + "\n"))
    assert info.value.line == line


def test_malformed_raw_row_names_the_line(tmp_path: Path) -> None:
    lines = RAW_OLD.splitlines()
    lines[3] = lines[3].rsplit(",", 2)[0]  # two fields short
    with pytest.raises(MalformedInput, match="expected the 19 of the header") as info:
        parsers.read(write(tmp_path, "\n".join(lines) + "\n"))
    assert info.value.line == 4


@pytest.mark.parametrize(
    "head",
    [
        # nvprof --metrics summary, gpu-trace, api-trace, per-launch metric trace
        '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"',
        '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Name"',
        '"Start","Duration","Name","Correlation_ID"',
        '"Device","Context","Stream","Kernel","Correlation_ID","achieved_occupancy"',
        '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"',
        # nsys stats
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,Strm,Name",
        # an ID column alone is not enough
        '"ID","Name","Value"',
    ],
)
def test_sniffer_declines_other_csv(head: str) -> None:
    assert not sniff_ncu_csv(["==123== Profiling result:", head, "1,2,3"])


@pytest.mark.parametrize(
    "text", [DETAILS_2019, DETAILS_NVTX, SUMMARY, RAW_OLD], ids=["2019", "nvtx", "summary", "raw"]
)
def test_sniffer_accepts_ncu_headers(tmp_path: Path, text: str) -> None:
    assert sniff_ncu_csv(text.splitlines())
    assert parsers.detect(write(tmp_path, text)) == "ncu-csv"


def test_profiler_version_from_a_status_line(tmp_path: Path) -> None:
    text = "==WARNING== Using /opt/nvidia/nsight-compute/2023.2.2/sections as section folder\n"
    profile = parsers.read(write(tmp_path, text + RAW_OLD))
    assert profile.provenance[0].profiler_version == "2023.2.2"


def test_large_raw_page_parses_in_seconds(tmp_path: Path) -> None:
    # 1,000 launches x 400 metric columns (about 2.5 MB), all quoted like ncu prints them
    names = [f"sm__metric_{j}.sum" for j in range(400)]
    header = ",".join(f'"{h}"' for h in ["ID", "Kernel Name", "Context", "Stream", *names])
    units = ",".join(['""'] * 4 + ['"%"' if j % 2 else '"byte"' for j in range(400)])
    rows = [
        ",".join([f'"{i}"', '"void k<int, 4>(float *, int)"', '"1"', '"7"']
                 + [f'"{(i * j) % 997}.{j % 100:02d}"' for j in range(400)])
        for i in range(1000)
    ]  # fmt: skip
    path = write(tmp_path, "\n".join([header, units, *rows]) + "\n")
    start = time.perf_counter()
    profile = parsers.read(path)
    elapsed = time.perf_counter() - start
    assert len(profile.launches) == 1000 and len(profile.metrics) == 400_000
    assert elapsed < 15, f"took {elapsed:.1f}s"


RAW_HUGE = """\
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","device__attribute_compute_capability_major","device__attribute_compute_capability_minor","launch__registers_per_thread"
"","","","","","","","","","","","","","register/thread"
"0","900","app","host","k1(int)","99999999999999999999","7","(128, 1, 1)","(99999999999999999999, 1, 1)","99999999999999999999","","inf","0","1e20"
"1","900","app","host","k1(int)","1","7","(128, 1, 1)","(4, 1, 1)","0","","inf","0","32"
"""  # noqa: E501


def test_raw_page_numbers_too_large_for_ids_are_missing(tmp_path: Path) -> None:
    """Ids, dimensions and counts too large for a whole-number column are missing values (as
    fractions are), not an overflow; a compute capability of 'inf' is unknown."""
    profile = parsers.read(write(tmp_path, RAW_HUGE))
    launch = profile.launches.iloc[0]
    for column in ("context", "device_id", "grid_x", "registers_per_thread"):
        assert pd.isna(launch[column]), column
    assert (launch["block_x"], launch["stream"]) == (128, 7)
    devices = profile.devices
    assert list(devices["device_id"]) == [0] and pd.isna(devices["compute_capability"].iloc[0])


def test_details_header_without_metric_unit_is_malformed(tmp_path: Path) -> None:
    text = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Section Name","Metric Name","Units?","Metric Value"\n'
        '"0","1","app","host","k(int)","1","7","GPU Speed Of Light Throughput","Duration",'
        '"us","1.50"\n'
    )
    with pytest.raises(MalformedInput, match="Metric Unit") as err:
        parsers.read(write(tmp_path, text))
    assert err.value.line == 1


def test_wide_header_with_short_rows_is_refused_before_padding(tmp_path: Path) -> None:
    """Padding 2,000 twelve-field rows to a 60,012-column header would take 120 million cells
    from a 300 kB file: the reader refuses the table instead of running out of memory."""
    cols = [
        "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
        "Context", "Stream", "Section Name", "Metric Name", "Metric Unit", "Metric Value",
    ]  # fmt: skip
    header = ",".join(f'"{c}"' for c in [*cols, *(f"x{i}" for i in range(60_000))])
    row = '"0","1","p","h","k","t","1","7","S","M","%","1"'
    path = write(tmp_path, header + "\n" + "\n".join([row] * 2000) + "\n")
    with pytest.raises(MalformedInput, match=r"60012 columns but its 2000 rows have 12 fields"):
        parsers.read(path)


def test_short_trailing_cells_are_still_padded(tmp_path: Path) -> None:
    """A details row missing its empty trailing cells reads as before (the padding limit only
    refuses padding out of proportion to the file)."""
    text = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context",'
        '"Stream","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name"\n'
        '"0","1","p","h","k","t","1","7","S","Memory Frequency","cycle/nsecond","1.5"\n'
    )
    profile = parsers.read(write(tmp_path, text))
    assert list(profile.launches["name"]) == ["k"]
    assert profile.metrics["value"].tolist() == [1.5e9]
