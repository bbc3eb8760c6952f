"""GPU database, device characterization and ``cuda-advisor devices``.

Hand computations are in the comments; seed 000 Table I figures are the paper's.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import parsers
from advisor.devices.characterization import (
    FUNCTION_NAMES,
    LATENCY_LEVELS,
    Characterization,
    MonotoneFunction,
    default_characterization,
    dump_characterization,
    load_characterization,
)
from advisor.devices.database import (
    all_devices,
    architecture_latencies,
    architecture_names,
    compute_capability_facts,
    find_device,
    normalize_name,
)
from advisor.devices.resolve import resolve_device
from advisor.errors import AdvisorError, MalformedInput, UnreadableInput, UsageError
from advisor.profile import Profile, Provenance
from tests.cli_helpers import one_line_error, run

# ----------------------------------------------------------------------------- database lookup


@pytest.mark.parametrize(
    ("printed", "canonical"),
    [
        ("GeForce GTX 1080 Ti", "GeForce GTX 1080 Ti"),  # nvprof CSV, magus_nvprof
        ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090"),  # ncu 2025
        ("Tesla K40c", "Tesla K40"),  # nvprof, amaris_bspgpusync_k40
        ("Tesla K40c (0)", "Tesla K40"),  # nvprof text keeps the device index
        ("NVIDIA B200", "NVIDIA B200"),
        ("TITAN Xp", "TITAN Xp"),
        ("GTX-680", "GeForce GTX 680"),  # gpuperfpredict R datasets
        ("Tesla-P100", "Tesla P100-PCIE-16GB"),
        ("Quadro", "Quadro K5200"),
        ("TitanX", "GeForce GTX TITAN X"),
        ("Titan", "GeForce GTX Titan"),
        ("nvidia geforce rtx 4090", "NVIDIA GeForce RTX 4090"),
        ("Tesla V100-SXM2-16GB", "Tesla V100-SXM2-16GB"),  # the nvprof samples
    ],
)
def test_find_device_on_profiler_spellings(printed: str, canonical: str) -> None:
    assert find_device(printed).name == canonical


def test_normalize_name() -> None:
    assert normalize_name("NVIDIA GeForce RTX 5090") == "rtx5090"
    assert normalize_name("Tesla K40c (0)") == "teslak40c"
    assert normalize_name("GTX-680") == "gtx680"
    assert normalize_name("NVIDIA") == "nvidia"  # a lone prefix stays


def test_unknown_gpu_lists_close_matches() -> None:
    with pytest.raises(UsageError) as err:
        find_device("GTX 1080 Ti Max")
    msg = str(err.value)
    assert msg.startswith("unknown GPU 'GTX 1080 Ti Max'; close matches: GeForce GTX 1080 Ti")
    assert msg.endswith("(see `cuda-advisor devices`)")
    with pytest.raises(UsageError, match="no close match"):
        find_device("Radeon VII")


def test_every_row_has_sources_and_known_facts() -> None:
    specs = all_devices()
    assert len(specs) >= 45
    names = [s.name for s in specs]
    assert len(names) == len(set(names))
    for spec in specs:
        assert spec.sources, spec.name
        for text in spec.sources + spec.notes:  # "; " inside parentheses does not split a cell
            assert text.count("(") == text.count(")"), (spec.name, text)
        assert spec.architecture in architecture_names()
        facts = compute_capability_facts(spec.compute_capability)
        assert (spec.max_warps_per_sm, spec.shared_banks) == (
            facts["max_warps_per_sm"],
            facts["shared_banks"],
        )
        assert spec.boost_clock_hz > 0 and spec.memory_bandwidth_bytes_per_s > 0


def test_per_compute_capability_facts_from_formats_section_5() -> None:
    assert compute_capability_facts("1.3")["max_warps_per_sm"] == 32
    assert find_device("GTX 280").shared_banks == 16
    assert find_device("Tesla T4").max_warps_per_sm == 32  # cc 7.5: 1024 threads
    assert find_device("NVIDIA A10").max_warps_per_sm == 48  # cc 8.6: 1536 threads
    assert find_device("NVIDIA B200").max_warps_per_sm == 64  # ncu attribute of the real B200 files


@pytest.mark.parametrize(
    ("board", "cc", "sms", "cores", "clock_mhz", "bandwidth_gb_s"),
    [  # seed 000 Table I: C.C., SM/Cores, Clock (bandwidth: the paper's, except K40 -- see notes)
        ("GT-630", "2.1", 2, 96, 1620, 21.3),
        ("GTX-660", "3.0", 5, 960, 1058, 144.2),
        ("GTX-680", "3.0", 8, 1536, 1006, 192.2),
        ("GTX-Titan", "3.5", 14, 2688, 876, 288.3),
        ("Tesla-k20", "3.5", 13, 2496, 706, 208.0),
        ("Tesla-k40", "3.5", 15, 2880, 745, 288.0),  # paper: 276.5 GB/s; NVIDIA: 288 GB/s
    ],
)
def test_seed_000_table_i_boards(
    board: str, cc: str, sms: int, cores: int, clock_mhz: float, bandwidth_gb_s: float
) -> None:
    spec = find_device(board)
    assert spec.compute_capability == cc
    assert spec.sm_count == sms and spec.sm_count * spec.fp32_cores_per_sm == cores
    assert spec.boost_clock_hz == clock_mhz * 1e6
    assert spec.memory_bandwidth_bytes_per_s == pytest.approx(bandwidth_gb_s * 1e9)
    assert any(src.startswith("seed 000 Table I") for src in spec.sources)


def test_peak_fp32_hand_computed() -> None:
    gtx680 = find_device("GeForce GTX 680")
    # the paper's clock: 2 x 8 SMs x 192 cores x 1006 MHz = 3,090,432 MFLOP/s
    assert gtx680.peak_fp32_flops == 2 * 8 * 192 * 1006e6 == 3_090_432_000_000
    # at NVIDIA's 1058 MHz boost: 2 x 8 x 192 x 1058 MHz = 3250.176 GFLOP/s (FORMATS.md: 3250)
    assert replace(gtx680, boost_clock_hz=1058e6).peak_fp32_flops / 1e9 == pytest.approx(3250.176)
    # RTX 4090: 2 x 128 x 128 x 2520 MHz = 82,575 GFLOP/s (FORMATS.md: 82575)
    assert find_device("RTX 4090").peak_fp32_flops / 1e9 == pytest.approx(82575.36)
    # GTX 280 (GT200, MAD only): 2 x 30 x 8 x 1296 MHz = 622.08 GFLOP/s (FORMATS.md: 622)
    assert find_device("GTX280").peak_fp32_flops / 1e9 == pytest.approx(622.08)


def test_peak_fp64_hand_computed() -> None:
    # K40: 15 SMs x 128 flops/clock (64 DP FMA) x 745 MHz = 1430.4 GFLOP/s
    # (NVIDIA: 1.43 TFLOPS at the base clock)
    assert find_device("Tesla K40c").peak_fp64_flops == pytest.approx(1430.4e9)
    assert find_device("NVIDIA B200").peak_fp64_flops is None  # rate not confirmed: left empty


# --------------------------------------------------------------------------- MonotoneFunction


def test_monotone_function_hand_computed_value() -> None:
    f = MonotoneFunction([0, 1, 2], [0, 1, 4])
    # secant slopes 1 and 3; d1 = (3+3) / (3/1 + 3/3) = 1.5 (weighted harmonic mean);
    # end slope d0 = ((2+1)*1 - 1*3) / 2 = 0
    # x = 0.5, t = 0.5: h00 = h01 = 0.5, h11 = -0.125 -> 0.5*0 + 0.5*1 - 0.125*1.5 = 0.3125
    assert f(0.5) == pytest.approx(0.3125)


def test_monotone_function_passes_through_samples_and_clamps() -> None:
    xs, ys = [0.0, 0.25, 0.5, 1.0], [1.0, 0.9, 0.5, 0.45]
    f = MonotoneFunction(xs, ys)
    for x, y in zip(xs, ys, strict=True):
        assert f(x) == pytest.approx(y)
    assert f(-3.0) == 1.0 and f(7.0) == 0.45
    assert math.isnan(f(math.nan))


def test_monotone_function_is_monotone_without_overshoot_on_a_step() -> None:
    f = MonotoneFunction([0, 1, 2, 3, 4, 5], [0, 0, 0, 1, 1, 1])
    grid = [i / 100 for i in range(501)]
    values = [f(x) for x in grid]
    assert all(0.0 <= v <= 1.0 for v in values)  # a natural cubic spline would overshoot here
    assert all(b >= a - 1e-12 for a, b in itertools.pairwise(values))
    assert f(1.5) == 0.0 and f(3.5) == 1.0  # flat where the data is flat


def test_monotone_function_degenerate_and_bad_inputs() -> None:
    assert MonotoneFunction([0.3], [0.8])(5.0) == 0.8
    assert MonotoneFunction([0, 1], [1, 3])(0.25) == pytest.approx(1.5)  # two points: a line
    for xs, ys in (
        ([0, 0], [1, 2]),
        ([1, 0], [1, 2]),
        ([0, 1], [1]),
        ([], []),
        ([0, math.nan], [1, 2]),
    ):
        with pytest.raises(ValueError):
            MonotoneFunction(xs, ys)


# ----------------------------------------------------------------------------- characterization


def test_default_characterization_is_f_one_with_architecture_latencies() -> None:
    ch = default_characterization(find_device("GTX 780"))
    assert not ch.measured and ch.source == "defaults for Kepler"
    assert dict(ch.latencies_cycles) == {"shared": 26.0, "l1": 35.0, "l2": 200.0, "dram": 500.0}
    for name in FUNCTION_NAMES:
        assert ch.F(name, 0.37) == 1.0
    with pytest.raises(ValueError):
        ch.F("F_Nonsense", 0.5)
    assert ch.peak_dram_bytes_per_s == 288.4e9
    assert ch.peak_fp32_flops == 2 * 12 * 192 * 900e6
    assert any("no measured characterization" in n for n in ch.notes)


def test_every_architecture_has_sourced_latencies() -> None:
    for arch in architecture_names():
        entries = architecture_latencies(arch)
        assert set(entries) == set(LATENCY_LEVELS)
        for entry in entries.values():
            assert entry["value"] > 0 and entry["source"]


def measured(spec_name: str = "GeForce GTX 780") -> Characterization:
    return Characterization(
        device=find_device(spec_name),
        latencies_cycles={"shared": 24.0, "l1": 30.0, "l2": 210.0, "dram": 450.0},
        functions={
            "F_SHMEM": MonotoneFunction([0, 0.5, 1], [1.0, 0.6, 0.5]),
            "F_DRAMThr": MonotoneFunction([0, 1], [0.8, 0.9]),
        },
        measured=True,
        source="bench",
        notes=("measured on a GTX 780",),
    )


def test_characterization_json_round_trip(tmp_path: Path) -> None:
    original = measured()
    text = dump_characterization(original)
    path = tmp_path / "gtx780.json"
    path.write_text(text)
    loaded = load_characterization(str(path))
    assert loaded.device == original.device
    assert dict(loaded.latencies_cycles) == dict(original.latencies_cycles)
    assert dict(loaded.functions) == dict(original.functions)
    assert loaded.measured and loaded.source == str(path) and loaded.notes == original.notes
    assert dump_characterization(loaded) == text  # deterministic, sorted keys
    assert loaded.F("F_SHMEM", 0.5) == pytest.approx(0.6)
    data = json.loads(text)
    assert data["schema"] == "cuda-advisor/device-characterization" and data["version"] == 1


def test_default_characterization_round_trips(tmp_path: Path) -> None:
    ch = default_characterization(find_device("NVIDIA B200"))
    path = tmp_path / "b200.json"
    path.write_text(dump_characterization(ch))
    loaded = load_characterization(str(path))
    assert loaded.device == ch.device and dict(loaded.latencies_cycles) == dict(ch.latencies_cycles)
    assert not loaded.measured and loaded.functions == {}


def write_json(tmp_path: Path, payload: Any, name: str = "ch.json") -> str:
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return str(path)


def minimal(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": "cuda-advisor/device-characterization",
        "version": 1,
        "device": {"name": "NVIDIA GeForce RTX 4090"},
        "latencies_cycles": {"l2": 250},
        "functions": {"F_Divergence": {"x": [0, 0.5, 1], "y": [1, 0.7, 0.6]}},
        "measured": True,
    }
    data.update(changes)
    return data


def test_partial_device_block_is_completed_from_the_database(tmp_path: Path) -> None:
    ch = load_characterization(write_json(tmp_path, minimal()))
    assert ch.device == find_device("RTX 4090")
    # l2 from the file; the other levels from the Ada defaults, with a note each
    assert dict(ch.latencies_cycles) == {"shared": 19.0, "l1": 32.0, "l2": 250.0, "dram": 500.0}
    assert sum("not in the file" in n for n in ch.notes) == 3


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ("{not json", "not valid JSON"),
        ([1, 2], "one JSON object"),
        (minimal(schema="something-else"), "not a device characterization"),
        (minimal(version=2), "version 2 is not supported"),
        (minimal(extra=1), "unknown key(s) extra"),
        (minimal(measured="yes"), "measured: expected true or false"),
        (minimal(device={"name": "Radeon VII"}), "is not in the database, so the file must give"),
        (
            minimal(device={"name": "RTX 4090", "sm_count": 0}),
            "device.sm_count: value outside (0, 1000000], got 0",
        ),
        (minimal(latencies_cycles={"l3": 5}), "unknown latency level(s) l3"),
        (
            minimal(latencies_cycles={"l1": -5}),
            "latencies_cycles.l1: value outside (0, 1000000], got -5",
        ),
        (minimal(functions={"F_X": {"x": [0], "y": [1]}}), "unknown function 'F_X'"),
        (
            minimal(functions={"F_SHMEM": {"x": [1, 0], "y": [1, 1]}}),
            "x must be strictly increasing",
        ),
        (
            minimal(functions={"F_SHMEM": {"x": [0, 1], "y": [1, 0]}}),
            "functions.F_SHMEM.y[1]: value outside (0, 1e+15], got 0",
        ),
    ],
)
def test_bad_characterization_files(tmp_path: Path, payload: Any, needle: str) -> None:
    path = write_json(tmp_path, payload)
    with pytest.raises(MalformedInput) as err:
        load_characterization(path)
    assert str(err.value).startswith(path) and needle in str(err.value)
    code, _, stderr = run("devices", path)  # through the CLI: one line, exit 3
    assert code == 3 and needle in one_line_error(stderr)


def test_bad_json_reports_the_line(tmp_path: Path) -> None:
    path = write_json(
        tmp_path, '{\n "schema": "cuda-advisor/device-characterization",\n "version": }'
    )
    with pytest.raises(MalformedInput) as err:
        load_characterization(path)
    assert err.value.line == 3


def test_unreadable_characterization_file(tmp_path: Path) -> None:
    with pytest.raises(UnreadableInput):
        load_characterization(str(tmp_path))  # a directory


# ----------------------------------------------------------------------------- resolve_device


def synthetic_profile(devices: list[str], durations_ns: list[float]) -> Profile:
    launches = pd.DataFrame(
        {
            "name": [f"k{i}" for i in range(len(devices))],
            "device": devices,
            "duration_ns": durations_ns,
        }
    )
    return Profile(provenance=(Provenance("hand-built", "test", "nvprof"),), launches=launches)


def test_resolve_device_options(tmp_path: Path) -> None:
    profile = synthetic_profile(["Tesla K40c"], [1.0])
    assert resolve_device(profile, "RTX 5090").device.name == "NVIDIA GeForce RTX 5090"
    path = write_json(tmp_path, minimal())
    ch = resolve_device(profile, path)
    assert ch.measured and ch.source == path
    with pytest.raises(UsageError, match="no such characterization file"):
        resolve_device(profile, str(tmp_path / "missing.json"))
    with pytest.raises(UsageError, match="close matches"):
        resolve_device(profile, "GTX 6800")


def test_resolve_device_from_profile_name() -> None:
    ch = resolve_device(synthetic_profile(["Tesla K40c", "Tesla K40c"], [1.0, 2.0]), None)
    assert ch.device.name == "Tesla K40" and ch.source == "defaults for Kepler"


def test_resolve_device_picks_the_gpu_with_most_time() -> None:
    # K40c: 100 + 50 = 150 ns, TITAN Xp: 600 ns -> TITAN Xp, 600/750 = 80 %
    profile = synthetic_profile(["Tesla K40c", "TITAN Xp", "Tesla K40c"], [100.0, 600.0, 50.0])
    ch = resolve_device(profile, None)
    assert ch.device.name == "TITAN Xp"
    assert any(
        "several GPUs (Tesla K40, TITAN Xp); using TITAN Xp (80% of its GPU time)" in n
        for n in ch.notes
    )


def test_profile_without_gpu_name_is_usage_error() -> None:
    profile = synthetic_profile([], [])
    with pytest.raises(
        UsageError, match=r"does not name its GPU; give --device NAME or --device FILE\.json"
    ):
        resolve_device(profile, None)


def test_profile_with_unknown_gpu_is_usage_error() -> None:
    with pytest.raises(UsageError, match=r"unknown GPU 'GeForce GTX 9990'.*give --device NAME"):
        resolve_device(synthetic_profile(["GeForce GTX 9990"], [1.0]), None)


def with_device_record(name: str, **facts: object) -> Profile:
    """A one-launch profile whose devices table describes ``name`` with ``facts``."""
    profile = synthetic_profile([name], [1.0])
    record = {
        "device_id": 0,
        "name": name,
        "compute_capability": None,
        "sm_count": None,
        "sm_clock_hz": None,
        "memory_clock_hz": None,
        "memory_bandwidth_bytes_per_s": None,
        "l2_bytes": None,
        **facts,
    }
    return Profile(
        provenance=profile.provenance, launches=profile.launches, devices=pd.DataFrame([record])
    )


def test_unknown_gpu_with_a_full_device_record_is_built_from_the_profile() -> None:
    profile = with_device_record(
        "NVIDIA Imaginary X1",
        compute_capability="8.6",
        sm_count=16,
        sm_clock_hz=1.155e9,
        memory_bandwidth_bytes_per_s=96.016e9,
        l2_bytes=1048576.0,
    )
    ch = resolve_device(profile, None)
    spec = ch.device
    assert (spec.name, spec.architecture, spec.sm_count) == ("NVIDIA Imaginary X1", "Ampere", 16)
    # cc 8.6: 128 FP32 cores and 48 resident warps per SM
    assert spec.fp32_cores_per_sm == 128 and spec.max_warps_per_sm == 48
    assert spec.peak_fp32_flops == 2 * 16 * 128 * 1.155e9
    assert spec.memory_bandwidth_bytes_per_s == 96.016e9 and spec.l2_bytes == 1048576.0
    assert ch.source == "defaults for Ampere" and ch.latencies_cycles["l2"] > 0
    assert any("the GPU database does not list this board" in n for n in ch.notes)


def test_unknown_gpu_with_only_its_compute_capability_gets_architecture_defaults() -> None:
    ch = resolve_device(with_device_record("NVIDIA Imaginary Y", compute_capability="7.5"), None)
    assert ch.device.architecture == "Turing" and ch.device.max_warps_per_sm == 32
    assert ch.device.sm_count == 0  # unknown: left out of the analysis' device values
    assert any(
        "unknown GPU 'NVIDIA Imaginary Y': Turing defaults for compute capability 7.5" in n
        and "does not give SMs, SM clock, bandwidth" in n
        for n in ch.notes
    )


def test_known_gpu_without_a_device_record_comes_from_the_database() -> None:
    ch = resolve_device(with_device_record("Tesla K40c", compute_capability="3.5"), None)
    assert ch.device.name == "Tesla K40" and ch.device.sm_count == 15


def test_resolve_device_on_samples(samples: Path) -> None:
    nvprof = parsers.read(samples / "synthetic_nvprof_gputrace.csv")
    assert resolve_device(nvprof, None).device.name == "Tesla V100-SXM2-16GB"
    ncu = parsers.read(samples / "synthetic_ncu_raw.csv")
    assert resolve_device(ncu, None).device.name == "NVIDIA A100-SXM4-40GB"


@pytest.mark.real_profiles
def test_resolve_device_on_real_profiles(real_profiles: Path) -> None:
    trace = parsers.read(real_profiles / "csv/magus_nvprof/gtx1080ti/matrixMul_trace.csv")
    ch = resolve_device(trace, None)
    assert ch.device.name == "GeForce GTX 1080 Ti" and ch.device.sm_count == 28
    # the GTX 1080 board in this report boosts to 1847.5 MHz, 6.6 % above the reference 1733 MHz
    report = parsers.read(real_profiles / "reports/PMKID_Brute-Force/profile.nsight-cuprof-report")
    ch = resolve_device(report, None)
    # the report's own device record wins over the database (Decision D1 of docs/devices.md)
    assert ch.device.name == "GeForce GTX 1080" and ch.device.boost_clock_hz == 1_847_500_000
    assert "GeForce GTX 1080: device facts from the profile's own device record" in ch.notes
    assert ch.device.chip == "GP104"  # what the profile lacks still comes from the database
    table = parsers.read(
        real_profiles / "csv/amaris_bspgpu/gt-630/SubSeqMax.txt"
    )  # folder-only name
    with pytest.raises(UsageError, match="does not name its GPU"):
        resolve_device(table, None)


#: every GPU name the real profiles print (checked with `cuda-advisor inspect --json`)
REAL_PROFILE_GPUS = {
    "GTX-680", "GTX-970", "GTX-980", "GeForce GT 520M", "GeForce GT 710", "GeForce GTX 1080",
    "GeForce GTX 1080 Ti", "GeForce GTX 1660 SUPER", "GeForce GTX 950", "NVIDIA A10",
    "NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB",
    "NVIDIA A100-PG509-200", "NVIDIA B200", "NVIDIA GH200 480GB", "NVIDIA GeForce GTX 1660 SUPER",
    "NVIDIA GeForce RTX 3060 Laptop GPU", "NVIDIA GeForce RTX 3070", "NVIDIA GeForce RTX 3090",
    "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 5060 Ti", "Quadro", "TITAN V", "TITAN Xp",
    "Tesla K40c", "Tesla T4", "Tesla V100-SXM2-32GB", "Tesla-K20", "Tesla-K40", "Tesla-P100",
    "Titan", "TitanX",
}  # fmt: skip


@pytest.mark.real_profiles
def test_every_gpu_in_the_real_profiles_resolves(real_profiles: Path) -> None:
    seen: set[str] = set()
    for path in sorted(real_profiles.rglob("*")):
        if not path.is_file() or path.suffix in (".md", ".tsv"):
            continue
        try:
            profile = parsers.read(path)
        except AdvisorError:
            continue  # negative cases, covered by test_real_profiles_all
        for frame, column in (
            (profile.devices, "name"),
            (profile.launches, "device"),
            (profile.kernel_summary, "device"),
            (profile.metrics, "device"),
        ):
            seen.update(str(v) for v in frame[column].dropna())
        try:
            resolve_device(profile, None)
        except UsageError as exc:
            assert "does not name its GPU" in str(exc), (path, exc)
    assert seen == REAL_PROFILE_GPUS
    for name in sorted(seen):
        find_device(name)


# --------------------------------------------------------------------------------------- CLI


def test_cli_lists_the_database() -> None:
    code, out, _ = run("devices")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "GPU",
        "CC",
        "SMs",
        "cores/SM",
        "boost",
        "MHz",
        "GB/s",
        "FP32",
        "GFLOP/s",
    ]
    row = next(ln for ln in lines if ln.startswith("GeForce GTX 680 "))
    assert row.split()[-6:] == ["3.0", "8", "192", "1006", "192.2", "3090"]
    assert len(lines) == len(all_devices()) + 1
    code, out, _ = run("devices", "--json")
    rows = json.loads(out)
    assert code == 0 and rows[0]["name"] == all_devices()[0].name and "peak_fp32_flops" in rows[0]


def test_cli_shows_one_device() -> None:
    code, out, _ = run("devices", "NVIDIA GeForce RTX 5090")
    assert code == 0
    assert "170 x 128" in out and "peak FP32:        104753 GFLOP/s" in out
    assert "characterization: defaults for Blackwell (measured: no)" in out
    code, out, _ = run("devices", "Tesla K40c", "--json")
    data = json.loads(out)
    assert code == 0 and data["device"]["name"] == "Tesla K40" and data["measured"] is False


def test_cli_unknown_device_exits_2_with_close_matches() -> None:
    code, _, err = run("devices", "RTX 4095")
    assert code == 2
    assert "close matches: NVIDIA GeForce RTX 4090" in one_line_error(err)


def test_cli_writes_a_characterization_template(tmp_path: Path) -> None:
    out_path = tmp_path / "k20.json"
    code, out, _ = run("devices", "Tesla-K20", "-o", str(out_path))
    assert code == 0 and out == ""
    assert load_characterization(str(out_path)).device == find_device("Tesla K20")
    code, _, err = run("devices", "-o", str(out_path))
    assert code == 2 and "--output needs a NAME" in err
