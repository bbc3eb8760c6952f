"""Nsight Compute binary reports (``.ncu-rep``; 2019.x ``.nsight-cuprof-report``): ``ncu-rep``.

Real reports are read in place from ``../shared/real_profiles/reports``.  Every expected value
below was read by hand with NVIDIA's module in a scratch script::

    ctx = ncu_report.load_report(path); a = ctx.range_by_idx(0).action_by_idx(i)
    a.name(a.NameBase_DEMANGLED); m = a.metric_by_name(name); m.unit(), m.value()
    [(r.rule_identifier(), r.speedup_estimation()) for r in a.rule_results()]

and the comments give the raw value and unit it printed.  Tests that read reports need the
optional ``ncu_report`` module: without it they skip, except under ``CI=true`` where its absence
is an error.  Tests of the container check, the missing-module message and the mapping of plain
records need no module.
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

import parsers
from advisor.cli import main
from advisor.errors import InputError, MalformedInput, MissingDependency, NoKernelData
from parsers.ncu.rep import UnreadableReport, sniff_ncu_rep
from parsers.ncu.rep_file import scan
from parsers.ncu.rep_frames import RawAction, RawMetric, RawRule, build_frames, plain_text

REPORTS = (
    "CUDA_Learning/shared_report.ncu-rep",
    "CudaCode/global_mem_coalesce.ncu-rep",
    "CudaCode/naive.ncu-rep",
    "CudaProgramming/smemRect.ncu-rep",
    "GPU-DEMO/ncu_report_optimized.ncu-rep",
    "MultipleNodesScalingCUDACPPApplications/report.ncu-rep",
    "PMKID_Brute-Force/profile.nsight-cuprof-report",
    "cs599k/silu-triton.ncu-rep",
    "cuda-mlp-inference/report.ncu-rep",
    "gpu-ray-tracer/report.ncu-rep",
    "hpca-gpu-memory-profiling/naive.ncu-rep",
    "seq_align/profile.ncu-rep",
    "speedy_scan/profile.ncu-rep",
    "spyinfer/report.ncu-rep",
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def reports(real_profiles: Path, ncu_module: ModuleType) -> Path:
    return real_profiles / "reports"


_CACHE: dict[str, parsers.Profile] = {}


def read(reports: Path, name: str) -> parsers.Profile:
    if name not in _CACHE:
        _CACHE[name] = parsers.read(reports / name)
    return _CACHE[name]


def metric(profile: parsers.Profile, tool_metric: str, launch_id: int = 0) -> dict[str, object]:
    m = profile.metrics
    rows = m[(m["tool_metric"] == tool_metric) & (m["launch_id"] == launch_id)]
    assert len(rows) == 1, (tool_metric, len(rows))
    return rows.iloc[0].to_dict()


def container(results: int = 1, payload: bytes = b"") -> bytes:
    """A hand-built report container: magic, FileHeader {Version: 7}, one block whose header
    announces ``results`` results (field 2) and a payload of len(payload) bytes (field 5)."""
    header = bytes([0x10, results, 0x28, len(payload)])
    return (
        b"NVR\x00"
        + struct.pack("<I", 2)
        + b"\x08\x07"
        + struct.pack("<I", len(header))
        + header
        + payload
    )


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text, text
    return text


# --- detection and the container, no module needed ------------------------------------------


def test_sniff_is_the_magic_only() -> None:
    assert sniff_ncu_rep(b"NVR\x00\x02\x00\x00\x00")
    assert not sniff_ncu_rep(b"SQLite format 3\x00")
    assert not sniff_ncu_rep(b'"ID","Process ID"')


@pytest.mark.real_profiles
@pytest.mark.parametrize("name", REPORTS)
def test_every_report_is_detected_and_its_container_intact(real_profiles: Path, name: str) -> None:
    path = real_profiles / "reports" / name
    assert path.read_bytes()[:4] == b"NVR\x00"  # 4e 56 52 00, checked with xxd on every file
    assert parsers.detect(path) == "ncu-rep"
    layout = scan(path.read_bytes())
    assert layout.problem is None
    assert layout.format_version == 7  # FileHeader {1: 7} in all 14 files (xxd: 08 07 at byte 8)


@pytest.mark.real_profiles
def test_container_gives_version_and_result_count(real_profiles: Path) -> None:
    seq = scan((real_profiles / "reports/seq_align/profile.ncu-rep").read_bytes())
    # session entry "Nsight Compute Target" = "2024.2.1.0 (build 34372528) (public-release)";
    # block headers announce 1 + 1 results (the module returns 2 actions)
    assert seq.ncu_version == "2024.2.1.0"
    assert seq.session["CUDA Version"] == "12.2"
    assert seq.results == 2
    spy = scan((real_profiles / "reports/spyinfer/report.ncu-rep").read_bytes())
    assert (spy.ncu_version, spy.results) == ("2023.2.0.0", 105)
    # the V100 report records no "Nsight Compute Target" entry (strings finds no version)
    v100 = scan(
        (
            real_profiles / "reports/MultipleNodesScalingCUDACPPApplications/report.ncu-rep"
        ).read_bytes()
    )
    assert v100.ncu_version is None and v100.results == 1


@pytest.mark.real_profiles
def test_truncated_report_is_one_line_malformed_input(real_profiles: Path, tmp_path: Path) -> None:
    whole = (real_profiles / "reports/seq_align/profile.ncu-rep").read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(whole[:1000])
    with pytest.raises(MalformedInput) as info:
        parsers.read(cut)
    text = one_line(info.value)
    # the block at byte 220 (header 67 bytes + payload 175192) runs past byte 1000
    assert "truncated report: the block at byte 220 needs 175263 bytes" in text
    assert "the file has 1000 bytes" in text
    assert "ncu --import FILE --csv --page raw > FILE.csv" in text


@pytest.mark.real_profiles
def test_truncated_report_via_cli_exits_3(real_profiles: Path, tmp_path: Path) -> None:
    whole = (real_profiles / "reports/seq_align/profile.ncu-rep").read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(whole[:1000])
    result = CliRunner().invoke(main, ["inspect", "--json", str(cut)])
    assert result.exit_code == 3
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "truncated report" in lines[0], result.stderr


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"NVR\x00", "the file header at byte 4 is cut short"),
        (b"NVR\x00" + struct.pack("<I", 2) + b"\x08\x07" + b"\x10\x00", "the block at byte 10"),
        (container(1, b"")[:-2], "truncated report"),
    ],
)
def test_damaged_containers(tmp_path: Path, data: bytes, needle: str) -> None:
    path = tmp_path / "bad.ncu-rep"
    path.write_bytes(data)
    with pytest.raises(MalformedInput) as info:
        parsers.read(path)
    assert needle in one_line(info.value)


def test_report_without_results_is_no_kernel_data(tmp_path: Path) -> None:
    path = tmp_path / "empty.ncu-rep"
    path.write_bytes(container(results=0))
    with pytest.raises(NoKernelData):
        parsers.read(path)


def test_missing_module_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "one.ncu-rep"
    path.write_bytes(container(results=1))
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import ncu_report -> ImportError
    with pytest.raises(MissingDependency) as info:
        parsers.read(path)
    assert one_line(info.value) == (
        f"{path}: reading Nsight Compute reports needs the optional ncu-report package: "
        "pip install 'cuda-advisor[ncu]' — or export CSV: "
        "ncu --import FILE --csv --page raw > FILE.csv"
    )


def test_missing_module_via_cli_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "one.ncu-rep"
    path.write_bytes(container(results=1))
    monkeypatch.setitem(sys.modules, "ncu_report", None)
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 3
    assert "pip install 'cuda-advisor[ncu]'" in result.stderr
    assert "Traceback" not in result.stderr


# --- a container the module cannot read -----------------------------------------------------


@pytest.mark.parametrize("payload", [b"", b"\x01\x02garbage"])
def test_results_the_module_cannot_read(
    ncu_module: ModuleType, tmp_path: Path, capfd: pytest.CaptureFixture[str], payload: bytes
) -> None:
    path = tmp_path / "odd.ncu-rep"
    path.write_bytes(container(results=1, payload=payload))
    with pytest.raises(UnreadableReport) as info:
        parsers.read(path)
    text = one_line(info.value)
    assert "could not read any of the 1 results" in text
    assert "pip install -U ncu-report" in text and "--csv --page raw" in text
    assert isinstance(info.value, InputError)
    assert capfd.readouterr().err == ""  # the module's native log lines are captured


# --- real reports: counts, names, durations, devices, versions ------------------------------

# (file, launches, distinct kernels, launch, kernel name prefix, duration ns of that launch,
#  device, compute capability, ncu version); durations are gpu__time_duration.sum (unit 'ns'),
#  for PMKID gpu__time_duration (no unit stored)
EXPECTED = [
    ("CUDA_Learning/shared_report.ncu-rep", 7, 7, 1, "setRowReadRow(int *)", 3872.0,
     "NVIDIA GeForce RTX 3060 Laptop GPU", "8.6", "2024.1.0.0"),
    ("CudaCode/global_mem_coalesce.ncu-rep", 2, 1, 0, "sgemm_global_mem_coalesce(", 4648416.0,
     "NVIDIA GeForce GTX 1660 SUPER", "7.5", "2024.1.1.0"),
    ("CudaCode/naive.ncu-rep", 2, 1, 0, "naive_gemm(const float *", 4789792.0,
     "NVIDIA GeForce GTX 1660 SUPER", "7.5", "2024.1.1.0"),
    ("CudaProgramming/smemRect.ncu-rep", 6, 6, 0, "setRowReadRow(int *)", 1664.0,
     "NVIDIA GeForce RTX 4090", "8.9", "2023.1.0.0"),
    ("GPU-DEMO/ncu_report_optimized.ncu-rep", 4, 4, 0, "transposeMatrix(float *", 60896.0,
     "NVIDIA GeForce RTX 5060 Ti", "12.0", "2025.2.1.0"),
    ("MultipleNodesScalingCUDACPPApplications/report.ncu-rep", 1, 1, 0, "jacobi(", 25792.0,
     "Tesla V100-SXM2-32GB", "7.0", None),
    ("PMKID_Brute-Force/profile.nsight-cuprof-report", 1, 1, 0, "El1t3Hax0r(unsigned char*",
     1288368224.0, "GeForce GTX 1080", "6.1", None),
    ("cs599k/silu-triton.ncu-rep", 1, 1, 0, "void at::native::<unnamed>::distribution_", 542912.0,
     "NVIDIA GH200 480GB", "9.0", "2025.1.0.0"),
    ("cuda-mlp-inference/report.ncu-rep", 1, 1, 0, "matrix_addition2D(float *", 52576.0,
     "Tesla T4", "7.5", "2024.2.1.0"),
    ("gpu-ray-tracer/report.ncu-rep", 3, 3, 0, "rtracer::build_meshes(", 29344.0,
     "GeForce GTX 1660 SUPER", "7.5", "2021.1.0.0"),
    ("hpca-gpu-memory-profiling/naive.ncu-rep", 4, 1, 3, "kernel_conv2d_baseline(", 37552000.0,
     "NVIDIA A100-SXM4-40GB", "8.0", "2022.2.0.0"),
    ("seq_align/profile.ncu-rep", 2, 2, 1, "fill_matrix(int *, const char *", 505888.0,
     "NVIDIA GeForce RTX 4090", "8.9", "2024.2.1.0"),
    ("speedy_scan/profile.ncu-rep", 1, 1, 0, "kernel(int const*, int*", 336704.0,
     "NVIDIA GeForce RTX 3070", "8.6", "2020.3.1.0"),
    ("spyinfer/report.ncu-rep", 105, 1, 104, "void __cuda_linear_fp32_fp16_kernel<(int)256",
     17440.0, "NVIDIA A10", "8.6", "2023.2.0.0"),
]  # fmt: skip


@pytest.mark.real_profiles
@pytest.mark.parametrize(
    ("name", "launches", "kernels", "launch", "prefix", "duration_ns", "gpu", "cc", "version"),
    EXPECTED,
)
def test_real_report(
    reports: Path,
    name: str,
    launches: int,
    kernels: int,
    launch: int,
    prefix: str,
    duration_ns: float,
    gpu: str,
    cc: str,
    version: str | None,
) -> None:
    profile = read(reports, name)
    assert len(profile.launches) == launches
    assert profile.launches["name"].nunique() == kernels
    row = profile.launches.iloc[launch]
    assert row["name"].startswith(prefix)
    assert row["duration_ns"] == duration_ns
    assert row["device"] == gpu and row["device_id"] == 0
    assert profile.devices["name"].tolist() == [gpu]
    assert profile.devices["compute_capability"].tolist() == [cc]
    prov = profile.provenance[0]
    assert (prov.format, prov.profiler, prov.profiler_version) == ("ncu-rep", "ncu", version)
    assert profile.metrics["launch_id"].nunique() == launches


@pytest.mark.real_profiles
def test_launch_configuration(reports: Path) -> None:
    seq = read(reports, "seq_align/profile.ncu-rep").launches.iloc[1]
    # fill_matrix: launch__grid_dim_x/y/z 1/1/1, launch__block_dim_x/y/z 1024/1/1,
    # launch__registers_per_thread 50 register/thread, context 1, stream 7
    assert [seq[c] for c in ("grid_x", "grid_y", "grid_z")] == [1, 1, 1]
    assert [seq[c] for c in ("block_x", "block_y", "block_z")] == [1024, 1, 1]
    assert (seq["registers_per_thread"], seq["context"], seq["stream"]) == (50, 1, 7)
    smem = read(reports, "CudaProgramming/smemRect.ncu-rep").launches.iloc[0]
    # setRowReadRow: launch__shared_mem_per_block_static 2048 byte/block, dynamic 0
    assert (smem["static_shared_bytes"], smem["dynamic_shared_bytes"]) == (2048.0, 0.0)


@pytest.mark.real_profiles
def test_launches_without_dimensions_or_duration(reports: Path) -> None:
    v100 = read(reports, "MultipleNodesScalingCUDACPPApplications/report.ncu-rep")
    # no launch__grid_dim_*; launch__grid_size 4096, launch__block_size 256 (unit '')
    assert v100.launches[["grid_x", "block_x"]].isna().all().all()
    assert metric(v100, "launch__grid_size")["value"] == 4096.0
    assert metric(v100, "launch__grid_size")["metric"] == "grid_size"
    assert any("grid and block dimensions are left empty" in n for n in v100.provenance[0].notes)
    assert any("does not record the Nsight Compute version" in n for n in v100.provenance[0].notes)
    ray = read(reports, "gpu-ray-tracer/report.ncu-rep")
    # result 2 (rtracer::trace) holds only device attributes and a few nvlink/profiler metrics
    assert ray.launches["name"].iloc[2] == "rtracer::trace(renv::Scene*)"
    assert math.isnan(ray.launches["duration_ns"].iloc[2])
    assert any("1 of 3 launches have no duration" in n for n in ray.provenance[0].notes)


# --- metrics: units converted, canonical names, text ----------------------------------------


@pytest.mark.real_profiles
def test_metric_values_in_base_units(reports: Path, ncu_module: ModuleType) -> None:
    seq = read(reports, "seq_align/profile.ncu-rep")
    # sm__warps_active.avg.pct_of_peak_sustained_active: '%' 44.08273193180629, a header
    # metric of the Occupancy section (IAction.sections, ncu-report 2026.x; absent in 2025.3)
    occ = metric(seq, "sm__warps_active.avg.pct_of_peak_sustained_active")
    assert (occ["metric"], occ["unit"]) == ("achieved_occupancy", "frac")
    if hasattr(ncu_module.IAction, "sections"):
        assert occ["section"] == "Occupancy"
    else:
        assert seq.metrics["section"].isna().all()
    assert occ["value"] == pytest.approx(0.4408273193180629, rel=1e-12)
    # device__attribute_clock_rate: unit '' 2565000 (CUDA's kHz) -> 2.565e9 hz
    clock = metric(seq, "device__attribute_clock_rate")
    assert (clock["unit"], clock["value"]) == ("hz", 2.565e9)
    # gpu__time_duration.sum 'ns' 2624.0 -> canonical gpu_time_duration
    dur = metric(seq, "gpu__time_duration.sum")
    assert (dur["metric"], dur["unit"], dur["value"]) == ("gpu_time_duration", "ns", 2624.0)
    # launch__func_cache_config is a string metric: 'CachePreferNone'
    cache = metric(seq, "launch__func_cache_config")
    assert cache["text"] == "CachePreferNone" and math.isnan(cache["value"])
    # speedy_scan dram__bytes_read.sum.per_second 'byte/s' 119139707279.9848
    speedy = read(reports, "speedy_scan/profile.ncu-rep")
    rate = metric(speedy, "dram__bytes_read.sum.per_second")
    assert (rate["metric"], rate["unit"]) == ("dram_read_throughput", "byte/s")
    assert rate["value"] == pytest.approx(119139707279.9848)


@pytest.mark.real_profiles
def test_instanced_metrics_keep_their_aggregate(reports: Path) -> None:
    seq = read(reports, "seq_align/profile.ncu-rep")
    # inst_executed: 90 instances (one per PC), aggregate value() 1620 'inst'
    rows = seq.metrics[
        (seq.metrics["tool_metric"] == "inst_executed") & (seq.metrics["launch_id"] == 0)
    ]
    assert rows["value"].tolist() == [1620.0]
    # ncu's group:/breakdown: lists of metric names are not metrics
    assert not seq.metrics["tool_metric"].str.contains(":").any()


@pytest.mark.real_profiles
def test_legacy_2019_names_and_units(reports: Path) -> None:
    pmkid = read(reports, "PMKID_Brute-Force/profile.nsight-cuprof-report")
    # pre-2020 names, stored without units: gpu__time_duration '' 1288368224.0 (ns),
    # sm__active_warps_avg_per_active_cycle_pct '' 5.584475350374015 (%),
    # tex__hitrate_pct '' 6.639670844129453 (%), launch__registers_per_thread '' 253
    dur = metric(pmkid, "gpu__time_duration")
    assert (dur["metric"], dur["unit"], dur["value"]) == ("gpu_time_duration", "ns", 1288368224.0)
    occ = metric(pmkid, "sm__active_warps_avg_per_active_cycle_pct")
    assert (occ["metric"], occ["unit"]) == ("achieved_occupancy", "frac")
    assert occ["value"] == pytest.approx(0.05584475350374015)
    hit = metric(pmkid, "tex__hitrate_pct")
    assert (hit["metric"], hit["unit"]) == ("tex_cache_hit_rate", "frac")
    assert hit["value"] == pytest.approx(0.06639670844129453)
    # smsp__thread_inst_executed_per_inst_executed '' 19.23148583294967 -> / 32 (metric map)
    warp = metric(pmkid, "smsp__thread_inst_executed_per_inst_executed")
    assert warp["metric"] == "warp_execution_efficiency"
    assert warp["value"] == pytest.approx(19.23148583294967 / 32)
    assert pmkid.launches["registers_per_thread"].tolist() == [253]
    notes = pmkid.provenance[0].notes
    assert any("units inferred for" in n for n in notes)
    # newer reports store units: nothing inferred
    seq = read(reports, "seq_align/profile.ncu-rep")
    assert not any("units inferred" in n for n in seq.provenance[0].notes)


@pytest.mark.real_profiles
def test_devices(reports: Path) -> None:
    pmkid = read(reports, "PMKID_Brute-Force/profile.nsight-cuprof-report").devices.iloc[0]
    # device__attribute_multiprocessor_count 20, clock_rate 1847500 kHz,
    # memory_clock_rate 5005000 kHz, global_memory_bus_width 256, l2_cache_size 2097152
    assert pmkid["sm_count"] == 20
    assert pmkid["sm_clock_hz"] == 1.8475e9
    assert pmkid["memory_clock_hz"] == 5.005e9
    assert pmkid["memory_bandwidth_bytes_per_s"] == pytest.approx(2 * 5.005e9 * 256 / 8)  # 320 GB/s
    assert pmkid["l2_bytes"] == 2097152.0
    a100 = read(reports, "hpca-gpu-memory-profiling/naive.ncu-rep").devices.iloc[0]
    # memory_clock_rate 1215000 kHz, bus 5120 bits -> 1555.2 GB/s (the A100-40GB figure)
    assert a100["memory_bandwidth_bytes_per_s"] == pytest.approx(1555.2e9)
    assert a100["sm_count"] == 108


# --- stored rule results --------------------------------------------------------------------


@pytest.mark.real_profiles
def test_rule_results_with_estimated_speedups(reports: Path) -> None:
    seq = read(reports, "seq_align/profile.ncu-rep").rules
    # result 0 (init_borders): 13 rule results, one of them empty (UncoalescedGlobalAccess with
    # type NONE, no message) -> 12 kept; LaunchConfiguration in LaunchStats: type 2 (OPT),
    # speedup_estimation {'type': 2 (GLOBAL), 'speedup': 99.21875}
    assert (seq["launch_id"] == 0).sum() == 12
    launch = seq[(seq["launch_id"] == 0) & (seq["rule"] == "LaunchConfiguration")].iloc[0]
    assert (launch["section"], launch["rule_type"], launch["speedup_type"]) == (
        "LaunchStats",
        "OPT",
        "global",
    )
    assert launch["estimated_speedup_frac"] == 0.9921875
    assert launch["description"].startswith("Small Grid: The grid for this launch is configured")
    # link markup "@section:LaunchStats:Launch Statistics@" becomes its text
    bottleneck = seq[(seq["launch_id"] == 0) & (seq["rule"] == "SOLBottleneck")].iloc[0]
    assert "Look at Launch Statistics for more details" in bottleneck["description"]
    assert math.isnan(bottleneck["estimated_speedup_frac"])

    triton = read(reports, "cs599k/silu-triton.ncu-rep").rules
    # TheoreticalOccupancy (Occupancy): speedup {'type': 1 (LOCAL), 'speedup': 50.0}
    occ = triton[triton["rule"] == "TheoreticalOccupancy"].iloc[0]
    assert (occ["speedup_type"], occ["estimated_speedup_frac"]) == ("local", 0.5)

    spy = read(reports, "spyinfer/report.ncu-rep").rules
    # two rule results per launch; launch 104: Occupancy speedup 13.16325834699161 % (local)
    assert len(spy) == 210
    last = spy[(spy["launch_id"] == 104) & (spy["rule"] == "Occupancy")].iloc[0]
    assert last["estimated_speedup_frac"] == pytest.approx(0.1316325834699161)


@pytest.mark.real_profiles
def test_rule_errors_are_kept(reports: Path) -> None:
    ray = read(reports, "gpu-ray-tracer/report.ncu-rep").rules
    # the 2021.1 rules failed on result 2: 8 results of type 4 (ERR), e.g.
    # "Rule Occupancy returned an error: Metric sm__maximum_warps_per_active_cycle_pct not found"
    errors = ray[(ray["launch_id"] == 2)]
    assert len(errors) == 8 and set(errors["rule_type"]) == {"ERR"}
    assert (
        "Metric sm__maximum_warps_per_active_cycle_pct not found" in errors.iloc[0]["description"]
    )


# --- the CLI, exactly as on CSV inputs ------------------------------------------------------


@pytest.mark.real_profiles
@pytest.mark.parametrize("name", REPORTS)
def test_inspect_json(reports: Path, name: str) -> None:
    result = CliRunner().invoke(main, ["inspect", "--json", str(reports / name)])
    assert result.exit_code == 0, result.stderr
    [summary] = json.loads(result.stdout)
    expected = next(e for e in EXPECTED if e[0] == name)
    assert summary["format"] == "ncu-rep" and summary["profiler"] == "ncu"
    assert (summary["launches"], summary["launch_source"]) == (expected[1], "per-launch")
    assert summary["kernels"] == expected[2]
    assert summary["devices"] == [f"{expected[6]} (cc {expected[7]})"]
    assert summary["profiler_version"] == expected[8]
    assert summary["metric_values"] > 0


@pytest.mark.real_profiles
def test_load_time(reports: Path) -> None:
    """The largest reports (3.3 MB V100, 2.1 MB with 105 launches) read in well under a few
    seconds each."""
    for name in (
        "MultipleNodesScalingCUDACPPApplications/report.ncu-rep",
        "spyinfer/report.ncu-rep",
        "PMKID_Brute-Force/profile.nsight-cuprof-report",
    ):
        start = time.perf_counter()
        parsers.read(reports / name)
        assert time.perf_counter() - start < 5.0, name


# --- the mapping of plain records, no module needed -----------------------------------------


def test_plain_text_of_rule_links() -> None:
    assert plain_text(
        "See @section:SourceCounters:Source Counters@ and "
        "@url:Kernel Profiling Guide:https://docs.nvidia.com/x#y@."
    ) == ("See Source Counters and Kernel Profiling Guide (https://docs.nvidia.com/x#y).")
    assert plain_text("at @source:/src/a.cu:42:line 42@ / @sass:0x1f0:this@") == (
        "at line 42 / this"
    )


def test_build_frames_from_records() -> None:
    action = RawAction(
        name="k(int)",
        metrics=(
            RawMetric("gpu__time_duration.sum", "usecond", value=1.5),
            RawMetric("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", value=40.0),
            RawMetric("launch__grid_dim_x", "", value=8.0),
            RawMetric("launch__block_dim_x", "block", value=128.0),
            RawMetric("launch__registers_per_thread", "register/thread", value=32.0),
            RawMetric("device__attribute_display_name", "", text="Test GPU"),
            RawMetric("device__attribute_device_index", "", value=1.0),
            RawMetric("device__attribute_memory_clock_rate", "", value=1000.0),  # kHz
            RawMetric("device__attribute_global_memory_bus_width", "", value=64.0),
            RawMetric("legacy__thing_pct", "", value=12.5),
        ),
        sections={"gpu__time_duration.sum": "GPU Speed Of Light Throughput"},
        rules=(
            RawRule(
                "LaunchStats",
                "LaunchConfiguration",
                "OPT",
                "Small Grid",
                "Only @section:LaunchStats:one@ block.",
                "global",
                25.0,
            ),
            RawRule("SourceCounters", "UncoalescedGlobalAccess", None, "", ""),
        ),
    )
    frames = build_frames([action])
    launch = frames.launches.iloc[0]
    # 1.5 usecond = 1500 ns; 40 % = 0.4; 1000 kHz x 2 x 64 bit / 8 = 16e6 byte/s
    assert launch["duration_ns"] == 1500.0
    assert (launch["grid_x"], launch["block_x"], launch["device_id"]) == (8, 128, 1)
    assert launch["registers_per_thread"] == 32
    metrics = frames.metrics.set_index("tool_metric")
    assert metrics.loc["sm__throughput.avg.pct_of_peak_sustained_elapsed", "value"] == 0.4
    assert metrics.loc["gpu__time_duration.sum", "section"] == "GPU Speed Of Light Throughput"
    assert (
        metrics.loc["legacy__thing_pct", "unit"],
        metrics.loc["legacy__thing_pct", "value"],
    ) == ("frac", 0.125)
    assert frames.devices.iloc[0]["memory_bandwidth_bytes_per_s"] == 16e6
    assert frames.devices.iloc[0]["device_id"] == 1
    # the empty NONE result is dropped; the speedup is a fraction
    assert len(frames.rules) == 1
    rule = frames.rules.iloc[0]
    assert rule["description"] == "Small Grid: Only one block."
    assert rule["estimated_speedup_frac"] == 0.25
    assert any("units inferred for" in n for n in frames.notes)


def test_build_frames_of_no_results_is_valid() -> None:
    frames = build_frames([])
    profile = parsers.Profile(
        provenance=(),
        launches=frames.launches,
        metrics=frames.metrics,
        rules=frames.rules,
        devices=frames.devices,
    )
    assert not profile.has_kernel_data()
    assert frames.notes == []
