"""Microbenchmarks (seed 002 section III): the Fig. 2 checks on PTX and SASS, fitting raw samples
into a device characterization, and the ``cuda-advisor microbench`` commands.

Tests that compile need nvcc: they skip with the reason when it is missing, except under CI=true
(nvcc is on CI).  One session fixture builds every benchmark once for three architectures
(about a minute on two cores); the SASS checks also need cuobjdump and nvdisasm
(``pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm``) and skip without them.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import advisor.cli
import advisor.errors
from advisor.devices.characterization import load_characterization
from advisor.microbench import checks, fit, layout, toolchain
from advisor.microbench.build import (
    DEFAULT_ARCHS,
    _kept_file,
    build_microbenchmarks,
    gencode_flags,
    resolve_archs,
)
from advisor.microbench.checks import PTX, SASS
from advisor.microbench.fit import Point
from advisor.microbench.raw import read_raw

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
A100 = "NVIDIA A100-SXM4-40GB"  # the GPU of the synthetic ncu/nsys sample profiles


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(advisor.cli.main, args)


# ------------------------------------------------------------------- synthetic raw samples


def synthetic_raw(name: str = A100) -> dict[str, Any]:
    """Raw samples from hand-chosen timings; three repetitions at x1, x1.02, x0.99 (median x1)."""
    samples: list[dict[str, Any]] = []

    def reps(record: dict[str, Any], key: str, value: float) -> None:
        for rep, factor in enumerate((1.0, 1.02, 0.99)):
            samples.append({**record, "rep": rep, key: value * factor})

    for ways, ns in {1: 100.0, 2: 150.0, 4: 400.0, 8: 1000.0, 32: 4000.0}.items():
        reps({"bench": "shmem_conflicts", "ways": ways, "accesses": 1e6}, "ns", ns)
    for (w, u, d), ns in {
        (1, 0, 64): 100.0,
        (2, 0, 64): 210.0,
        (32, 0, 64): 3400.0,
        (2, 32, 32): 160.0,
    }.items():
        record = {"bench": "divergence", "ways": w, "uniform_fma": u, "divergent_fma": d}
        reps({**record, "efficiency": (u + d) / (u + w * d)}, "ns", ns)
    for in_flight, bandwidth in {1e5: 100e9, 4e5: 360e9, 3.2e6: 1400e9}.items():
        record = {"bench": "dram_sweep", "bytes": 1e9, "bytes_in_flight": in_flight}
        reps(record, "ns", 1e9 / bandwidth * 1e9)
    for fmas, flops_per_s in {4: 0.7e12, 64: 9e12, 512: 15e12}.items():
        intensity = fmas / 8  # 2 * fmas flop per 16-byte load
        record = {"bench": "arith_intensity", "flops": 1e12, "flops_per_byte": intensity}
        reps({**record, "bytes": 1e12 / intensity}, "ns", 1e12 / flops_per_s * 1e9)
    for level, cycles in {"shared": 23.0, "l1": 33.0, "l2": 210.5, "dram": 600.0}.items():
        record = {"bench": "mem_latency", "level": level, "op": "load", "accesses": 512}
        reps(record, "cycles", cycles * 512)
    reps({"bench": "arith_latency", "class": "fp32", "ops": 512}, "cycles", 4.0 * 512)
    reps({"bench": "mem_throughput", "level": "dram", "op": "load", "bytes": 1e9}, "ns", 1e6)
    return {
        "schema": "cuda-advisor/microbench-raw",
        "version": 1,
        "device": {
            "name": name,
            "compute_capability": "8.0",
            "sm_count": 108,
            "clock_khz": 1410000,
            "memory_clock_khz": 1215000,
            "memory_bus_width_bits": 5120,
            "l2_bytes": 41943040,
            "cuda_runtime_version": 13000,
            "driver_version": "580.65",
        },
        "command": ["cuda-advisor-microbench", "--device", "0", "--reps", "3"],
        "build": {},
        "samples": samples,
    }


@pytest.fixture()
def raw_file(tmp_path: Path) -> Path:
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(synthetic_raw()), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------ the sweeps


def test_sources_define_the_sizes_the_checks_expect() -> None:
    # Repeat<MB_DEPTH = 4> x MB_UNROLL = 128 copies: 512 instructions per chain (template recursion
    # past a single unrolled block, as Fig. 3); 4 chains per thread in the throughput kernels
    assert layout.CHAIN == 512
    assert layout.ILP == 4
    assert layout.SHMEM_LOADS_PER_ITERATION == 128
    assert (1, 0, 64) in layout.DIVERGENCE_CONFIGS  # the reference (no branch)
    assert {w for w, _, _ in layout.DIVERGENCE_CONFIGS} == {1, 2, 4, 8, 16, 32}
    assert all(u + d == 64 for _, u, d in layout.DIVERGENCE_CONFIGS)  # same useful work
    for name in layout.SOURCES:
        assert (layout.SOURCE_DIR / name).is_file()


def test_quantize_grids_x_merges_and_clips() -> None:
    # 0.5 and 0.501 both land on grid point 128/256 = 0.5: median of (0.8, 0.9) = 0.85;
    # 1.3 is clipped to 1 and counted; x = 0 is dropped
    points = [Point(0.5, 0.8, "a"), Point(0.501, 0.9, "b"), Point(1.0, 1.3, "c"), Point(0, 1, "d")]
    xs, ys, clipped = fit.quantize(points)
    assert xs == (0.5, 1.0)
    assert ys == (0.85, 1.0)
    assert clipped == 1


def test_shmem_points_by_hand() -> None:
    # F_SHMEM(1/k) = k * T(1) / T(k): 2 * 100 / 150 = 1.333 (clipped later), 8 * 100 / 1000 = 0.8,
    # 32 * 100 / 4000 = 0.8
    points = {round(1 / p.x): p.f for p in fit.shmem_points(synthetic_raw()["samples"])}
    assert points[1] == pytest.approx(1.0)
    assert points[2] == pytest.approx(4 / 3)
    assert points[4] == pytest.approx(1.0)
    assert points[8] == pytest.approx(0.8)
    assert points[32] == pytest.approx(0.8)


def test_divergence_points_by_hand() -> None:
    # x = (U + D) / (U + W * D); F = (T_ref / T) / x with T_ref = 100 (1 way)
    points = {round(p.x, 4): p.f for p in fit.divergence_points(synthetic_raw()["samples"])}
    assert points[0.5] == pytest.approx((100 / 210) / 0.5)  # 0.952
    assert points[0.0312] == pytest.approx((100 / 3400) * 32)  # 0.941
    assert points[0.6667] == pytest.approx((100 / 160) / (64 / 96))  # 0.9375
    assert points[1.0] == pytest.approx(1.0)


def test_dram_points_by_hand() -> None:
    # L0 = 1e5 B / 100 GB/s = 1 us; ideal(4e5 B) = 400 GB/s -> F = 360 / 400 = 0.9;
    # ideal(3.2e6 B) = min(1555.2, 3200) GB/s -> F = 1400 / 1555.2 = x (saturated: MEMTHR = 1)
    peak = 1555.2e9
    points = fit.dram_points(synthetic_raw()["samples"], peak)
    assert [p.f for p in points] == pytest.approx([1.0, 0.9, 1400 / 1555.2])
    assert [p.x for p in points] == pytest.approx([100 / 1555.2, 360 / 1555.2, 1400 / 1555.2])


def test_arith_points_by_hand() -> None:
    # roofline min(19.49 TFLOP/s, I * 1.5552 TB/s): I = 0.5 -> 0.7776e12, F = 0.7 / 0.7776;
    # I = 8 -> 12.44e12, F = 9 / 12.4416; I = 64 -> peak, F = 15 / 19.49184
    points = fit.arith_points(synthetic_raw()["samples"], 19.49184e12, 1555.2e9)
    assert [p.f for p in points] == pytest.approx([0.7 / 0.7776, 9 / 12.4416, 15 / 19.49184])


def test_fit_writes_the_hand_checked_curves(raw_file: Path) -> None:
    ch = fit.fit_characterization(read_raw(str(raw_file)))
    assert ch.device.name == A100 and ch.measured
    assert dict(ch.latencies_cycles) == {"shared": 23.0, "l1": 33.0, "l2": 210.5, "dram": 600.0}
    shmem = ch.functions["F_SHMEM"]
    assert shmem.x == (1 / 32, 1 / 8, 1 / 4, 1 / 2, 1.0)
    assert shmem.y == (0.8, 0.8, 1.0, 1.0, 1.0)
    # PCHIP: both end slopes of [1/8, 1/4] are 0 (flat neighbours), so the midpoint is the mean
    assert ch.F("F_SHMEM", 0.1875) == pytest.approx(0.9)
    # the DRAM curve's x on the 1/256 grid: 0.0643 -> 16/256, 0.2315 -> 59/256, 0.9002 -> 230/256
    assert ch.functions["F_DRAMThr"].x == (16 / 256, 59 / 256, 230 / 256)
    assert ch.functions["F_DRAMThr"].y == (1.0, 0.9, 0.9002)
    assert any("1 point(s) above 1 clipped to 1" in n for n in ch.notes)
    assert any("arithmetic fp32: 4.00 cycles latency" in n for n in ch.notes)
    assert any("memory dram: load 1000.0 GB/s" in n for n in ch.notes)


def test_fitted_curves_are_monotone_between_samples_and_never_overshoot(raw_file: Path) -> None:
    ch = fit.fit_characterization(read_raw(str(raw_file)))
    for name, function in ch.functions.items():
        pairs = list(zip(function.x, function.y, strict=True))
        for (x0, y0), (x1, y1) in itertools.pairwise(pairs):
            grid = [x0 + (x1 - x0) * i / 50 for i in range(51)]
            values = [ch.F(name, x) for x in grid]
            assert min(values) >= min(y0, y1) - 1e-12, name
            assert max(values) <= max(y0, y1) + 1e-12, name
            steps = [b - a for a, b in itertools.pairwise(values)]
            if y1 >= y0:
                assert all(s >= -1e-12 for s in steps), name
            else:
                assert all(s <= 1e-12 for s in steps), name
        assert all(0 < y <= 1 for y in function.y)


def test_fit_command_round_trips_through_load_characterization(
    raw_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "device.json"
    result = _invoke(["microbench", "fit", str(raw_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "functions: F_Divergence, F_DRAMThr, F_ARITHThr, F_SHMEM" in result.output
    loaded = load_characterization(str(out))
    direct = fit.fit_characterization(read_raw(str(raw_file)))
    assert loaded.measured and loaded.device == direct.device
    for name, function in direct.functions.items():
        for x in (*function.x, 0.01, 0.3, 0.7, 0.99):
            assert loaded.F(name, x) == pytest.approx(direct.F(name, x))
    assert dict(loaded.latencies_cycles) == dict(direct.latencies_cycles)
    shown = _invoke(["devices", str(out)])
    assert shown.exit_code == 0 and "measured: yes" in shown.output


def test_report_uses_the_fitted_characterization(raw_file: Path, tmp_path: Path) -> None:
    criteria = pytest.importorskip("advisor.criteria")
    if not hasattr(criteria, "evaluate"):
        pytest.skip("the criteria engine has no evaluate() yet")
    device = tmp_path / "device.json"
    assert _invoke(["microbench", "fit", str(raw_file), "-o", str(device)]).exit_code == 0
    out = tmp_path / "report.json"
    profile = REPO / "sample_profiles" / "synthetic_ncu_raw.csv"
    result = _invoke(["report", str(profile), "--json", str(out), "--device", str(device)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["device"]["measured"] is True
    # the characterization file by its base name: outputs name no local folder (docs/report.md)
    assert report["device"]["source"] == device.name
    ch = load_characterization(str(device))
    shmem = [
        k["criteria"]["SHMEM_EFFICIENCY"]
        for k in report["kernels"]
        if k["criteria"]["SHMEM_EFFICIENCY"]["status"] == "computed"
    ]
    assert shmem, "the sample profile has shared-memory kernels"
    for c in shmem:  # SHMEM_EFFICIENCY = raw * F_SHMEM(raw), F read through Characterization.F
        factor = ch.F("F_SHMEM", c["raw_value"])
        assert c["inputs"]["F_SHMEM"] == pytest.approx(factor)
        assert c["value"] == pytest.approx(min(1.0, c["raw_value"] * factor))
    # transposeCoalesced: 32-way conflicts, raw 0.0606 lies between the 1/32 and 1/8 samples (0.8)
    assert any(c["inputs"]["F_SHMEM"] == pytest.approx(0.8) for c in shmem)


# -------------------------------------------------------------------------- raw-file errors


def test_fit_reads_the_drivers_json_lines(tmp_path: Path) -> None:
    raw = synthetic_raw()
    lines = [json.dumps({"record": "device", **raw["device"]})]
    lines += [json.dumps(s) for s in raw["samples"]] + [json.dumps({"record": "done"})]
    path = tmp_path / "raw.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = read_raw(str(path))
    assert len(run.samples) == len(raw["samples"]) and run.device["name"] == A100


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "neither a raw samples document nor JSON lines"),
        ('{"schema": "other"}', 'not microbenchmark samples ("schema" must be'),
        ('{"record": "done"}\n', "no device record"),
    ],
)
def test_bad_raw_files_exit_3(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "raw.json"
    path.write_text(content, encoding="utf-8")
    result = _invoke(["microbench", "fit", str(path), "-o", str(tmp_path / "d.json")])
    assert result.exit_code == 3
    assert message in result.output and str(path) in result.output


def test_a_sample_without_its_fields_exits_3(tmp_path: Path) -> None:
    raw = synthetic_raw()
    raw["samples"].append({"bench": "shmem_conflicts", "ways": 3})  # no "ns"
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    result = _invoke(["microbench", "fit", str(path), "-o", str(tmp_path / "d.json")])
    assert result.exit_code == 3 and "shmem_conflicts sample: 'ns' missing" in result.output


def test_an_unknown_gpu_is_placed_from_its_device_properties(tmp_path: Path) -> None:
    # 2 x 1215 MHz x 5120 bit / 8 = 1555.2 GB/s; architecture from the database's cc 8.0 boards
    raw = synthetic_raw(name="Prototype GPU X")
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    ch = fit.fit_characterization(read_raw(str(path)))
    assert ch.device.architecture == "Ampere"
    assert ch.device.memory_bandwidth_bytes_per_s == pytest.approx(1555.2e9)
    assert any("not in the GPU database" in n for n in ch.notes)


# ---------------------------------------------------------------------- the checks' parser

_PTX = """
.visible .entry mb_fp32_latency(
{
\tmov.u32 %r1, %clock;
\tmov.u64 %rd1, %clock64;
\t// begin inline asm
\tfma.rn.f32 %f1, %f1, %f2, %f2;
\t// end inline asm
\tfma.rn.f32 %f1, %f1, %f2, %f2;
$L__BB0_1:
\t@%p1 bra $L__BB0_1;
\tmov.u64 %rd2, %clock64;
\tfma.rn.f32 %f3, %f1, %f2, %f2;
}
"""


def test_ptx_timed_region_counts_only_between_the_clock64_reads() -> None:
    region = checks.timed_region(checks.ptx_kernels(_PTX)["mb_fp32_latency"], PTX)
    assert region is not None
    assert checks.count(region, r"^fma\.rn\.f32\b") == 2  # the third fma is after the timer
    assert checks.count(region, r"^@!?%p\d+ bra\b") == 1


def test_a_chain_moved_out_of_the_timed_region_fails_the_check() -> None:
    sass = """
        Function : mb_fp32_latency
        /*0000*/                   CS2R.32 R0, SR_CLOCKLO ;  /* 0x0 */
        /*0010*/                   CS2R R2, SR_CLOCKLO ;  /* 0x0 */
        /*0020*/                   CS2R R4, SR_CLOCKLO ;  /* 0x0 */
        /*0030*/                   FFMA R7, R0, R5, R5 ;  /* 0x0 */
    """
    results = checks.check_text(sass, SASS, "sm_80", "x.cubin")
    ffma = next(r for r in results if r.what.startswith("FFMA"))
    assert (ffma.expected, ffma.found, ffma.ok) == (512, 0, False)
    assert "FAIL" in ffma.line()


def _throughput_sass(loop_first: int, back_edge: str = "@!P0 BRA 0x{loop:x}") -> str:
    """The shared-load throughput kernel's timed region, its four LDS.128 before the loop's label
    (hoisted: loop_first=4, the loop then XORs the same words) or inside the loop (loop_first=0)."""
    lds = [f"LDS.128 R{4 * k}, [R{4 * k}+UR4]" for k in range(4)]
    before, inside = lds[:loop_first], lds[loop_first:]
    body = ["CS2R R2, SR_CLOCKLO", "@!P1 BRA 0x{end:x}", *before]
    loop_at = len(body)
    body += [*inside, "LOP3.LUT R21, R4, R5, R21, 0x96, !PT", back_edge.format(loop=loop_at * 16)]
    body += ["CS2R R6, SR_CLOCKLO", "EXIT", "BRA 0x{self:x}"]
    end = (len(body) - 3) * 16
    lines = ["Function : mb_shared_load_throughput"]
    for i, ins in enumerate(body):
        text = ins.format(end=end, self=i * 16)
        lines.append(f"        /*{i * 16:04x}*/                   {text} ;  /* 0x0 */")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("back_edge", ["@!P0 BRA 0x{loop:x}", "BRA.U UP0, 0x{loop:x}"])
@pytest.mark.parametrize(("hoisted", "found"), [(4, 0), (0, 4)])
def test_loads_hoisted_out_of_the_loop_fail_the_check(
    hoisted: int, found: int, back_edge: str
) -> None:
    """Four loads in the timed region are not enough: they must be in the loop it times (its
    back edge a predicated branch, or sm_100's branch on a uniform predicate operand)."""
    sass = _throughput_sass(hoisted, back_edge)
    body = checks.sass_loop_bodies(sass)["mb_shared_load_throughput"]
    assert body is not None and "BRA" in body[-1]  # the loop ends at its back edge
    assert checks.count(body, r"^LOP3\.LUT\b") == 1
    region = checks.timed_region(checks.sass_kernels(sass)["mb_shared_load_throughput"], SASS)
    assert region is not None and checks.count(region, r"^LDS\S*\.128\b") == 4
    results = checks.check_text(sass, SASS, "sm_90", "x.cubin")
    (loop,) = [r for r in results if r.what == "16-byte accesses in the loop"]
    assert (loop.found, loop.ok) == (found, found == 4)


def test_a_region_without_a_backward_branch_has_no_loop_body() -> None:
    lines = _throughput_sass(0).splitlines()
    sass = "\n".join(line for line in lines if "@!P0 BRA" not in line) + "\n"
    assert checks.sass_loop_bodies(sass)["mb_shared_load_throughput"] is None
    (loop,) = [
        r
        for r in checks.check_text(sass, SASS, "sm_90", "x.cubin")
        if r.what == "16-byte accesses in the loop"
    ]
    assert loop.found is None and not loop.ok


# ------------------------------------------------------------------- commands without tools


def test_build_without_nvcc_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None)
    result = _invoke(["microbench", "build", "-o", str(tmp_path / "b")])
    assert result.exit_code == 2
    assert "nvcc (the CUDA compiler) was not found" in result.output
    assert "pip install nvidia-cuda-nvcc nvidia-cuda-runtime" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_run_without_a_gpu_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = toolchain.find_tool
    monkeypatch.setattr(toolchain, "find_tool", lambda n: None if n == "nvidia-smi" else real(n))
    result = _invoke(["microbench", "run", "--out", str(tmp_path / "raw.json")])
    assert result.exit_code == 2
    assert result.output.startswith("cuda-advisor: error: no NVIDIA GPU")
    assert not (tmp_path / "raw.json").exists()


def test_run_rejects_unknown_groups_before_looking_for_a_gpu() -> None:
    result = _invoke(["microbench", "run", "--only", "arith,bogus"])
    assert result.exit_code == 2 and "--only bogus: unknown group" in result.output


def test_run_collects_the_drivers_json_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a stand-in driver (a shell script) and GPU: run() wraps the lines into the raw document
    build_dir = tmp_path / "build"
    build_dir.mkdir()
    manifest = {"schema": "cuda-advisor/microbench-build", "archs": ["sm_80"], "nvcc_version": "x"}
    (build_dir / "build.json").write_text(json.dumps(manifest), encoding="utf-8")
    raw = synthetic_raw()
    lines = [json.dumps({"record": "device", "name": A100, "compute_capability": "8.0"})]
    lines += [json.dumps(s) for s in raw["samples"][:3]]
    driver = build_dir / layout.BINARY_NAME
    driver.write_text("#!/bin/sh\ncat <<'EOF'\n" + "\n".join(lines) + "\nEOF\n", encoding="utf-8")
    driver.chmod(0o755)
    gpu = toolchain.LocalGpu(0, A100, "8.0", "580.65")
    monkeypatch.setattr("advisor.microbench.run.local_gpus", lambda: [gpu])
    out = tmp_path / "raw.json"
    result = _invoke(["microbench", "run", "--build-dir", str(build_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["device"] == {"name": A100, "compute_capability": "8.0", "driver_version": "580.65"}
    assert doc["command"] == [layout.BINARY_NAME, "--device", "0", "--reps", "3"]
    assert len(doc["samples"]) == 3 and doc["build"] == {"archs": ["sm_80"], "nvcc_version": "x"}
    assert len(read_raw(str(out)).samples) == 3


@pytest.mark.parametrize("target", [layout.BINARY_NAME, "build.json"])
def test_run_refuses_to_write_over_its_own_driver_or_manifest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, target: str
) -> None:
    build_dir = tmp_path / "build"
    build_dir.mkdir()
    used = build_dir / target
    used.write_text("keep me", encoding="utf-8")
    # refused before looking for a GPU or running anything (no driver would be found here)
    monkeypatch.setattr("advisor.microbench.run.local_gpus", lambda: pytest.fail("ran"))
    result = _invoke(
        [
            "microbench",
            "run",
            "--build-dir",
            str(build_dir),
            "--out",
            str(build_dir / ".." / "build" / target),
        ]
    )
    assert result.exit_code == 2, result.output
    assert "refusing to overwrite an input file" in result.output
    assert used.read_text(encoding="utf-8") == "keep me"


def test_arch_validation() -> None:
    supported = ("sm_75", "sm_80", "sm_86", "sm_90")
    assert resolve_archs((), supported) == DEFAULT_ARCHS
    assert resolve_archs(("sm_90", "sm_80", "sm_90"), supported) == ("sm_80", "sm_90")
    with pytest.raises(advisor.errors.UsageError, match="expected a real architecture"):
        resolve_archs(("compute_80",), supported)
    with pytest.raises(advisor.errors.UsageError, match="does not compile for it"):
        resolve_archs(("sm_70",), supported)
    # SASS per arch plus the newest arch's PTX for the driver's JIT on newer GPUs
    assert gencode_flags(["sm_80", "sm_90"])[-1] == "arch=compute_90,code=compute_90"


@pytest.mark.parametrize(
    ("kept", "archs"),
    [
        (["arith.compute_80.ptx", "arith.compute_80.cubin"], ["sm_75", "sm_80"]),
        (["arith.compute_80.ptx", "arith.compute_80.sm_80.cubin"], ["sm_75", "sm_80"]),
        (["arith.ptx", "arith.sm_80.cubin"], ["sm_80"]),  # one virtual architecture
    ],
)
def test_kept_file_names_of_nvcc(tmp_path: Path, kept: list[str], archs: list[str]) -> None:
    for name in kept:
        (tmp_path / name).write_text("x", encoding="utf-8")
    single = len(archs) == 1
    assert _kept_file(tmp_path, "arith", "sm_80", "ptx", single).name == kept[0]
    assert _kept_file(tmp_path, "arith", "sm_80", "cubin", single).name == kept[1]


# ---------------------------------------------------------------- compiled: Fig. 2 checks


@pytest.fixture(scope="session")
def nvcc() -> str:
    """nvcc's path; skip without it (fail under CI=true, where it is installed)."""
    found = toolchain.find_tool("nvcc")
    if found is None:
        if _in_ci():
            pytest.fail("CI=true but nvcc is not installed")
        pytest.skip("nvcc is not installed: " + toolchain.NVCC_HINT)
    return found


@pytest.fixture(scope="session")
def built(nvcc: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build of every microbenchmark for sm_75, sm_80 and sm_90 (about a minute)."""
    out = tmp_path_factory.mktemp("microbench-build")
    build_microbenchmarks(out, DEFAULT_ARCHS, nvcc=nvcc)
    return out


@pytest.fixture(scope="session")
def report(built: Path) -> checks.CheckReport:
    return checks.check_build(built)


def test_build_writes_binary_ptx_cubins_and_manifest(built: Path) -> None:
    assert (built / layout.BINARY_NAME).is_file()
    manifest = json.loads((built / "build.json").read_text(encoding="utf-8"))
    assert manifest["archs"] == list(DEFAULT_ARCHS)
    assert manifest["chain"] == layout.CHAIN
    assert "<temporary folder>" in manifest["command"]
    for arch in DEFAULT_ARCHS:
        for unit in ("arith", "memory", "shmem", "divergence"):
            assert (built / "ptx" / arch / f"{unit}.ptx").is_file()
            assert (built / "cubin" / arch / f"{unit}.cubin").is_file()


def test_every_ptx_expectation_holds_on_every_arch(report: checks.CheckReport) -> None:
    ptx = [r for r in report.results if r.level == PTX]
    assert {r.arch for r in ptx} == set(DEFAULT_ARCHS)
    expected = sum(1 for e in checks.EXPECTATIONS if e.level == PTX) * len(DEFAULT_ARCHS)
    assert len(ptx) == expected
    assert [r.line() for r in ptx if not r.ok] == []
    assert not [m for m in report.missing if m.startswith("ptx")]


@pytest.mark.parametrize("arch", DEFAULT_ARCHS)
def test_ptx_spot_checks(built: Path, arch: str) -> None:
    # the measured sequences named in the paper's Fig. 2 (b): counted by hand from the sources
    def region(unit: str, kernel: str) -> list[str]:
        text = (built / "ptx" / arch / f"{unit}.ptx").read_text(encoding="utf-8")
        instructions = checks.ptx_kernels(text)[kernel]
        found = checks.timed_region(instructions, PTX)
        assert found is not None
        return found

    # fp32: 4 chains x Repeat<4> x 128 = 2048 fma.rn.f32, nothing else measured in between
    fp32 = region("arith", "mb_fp32_throughput")
    assert checks.count(fp32, r"^fma\.rn\.f32\b") == 2048
    # shared memory: the 512-load ld.shared chain after the bar.sync that publishes the ring
    assert checks.count(region("memory", "mb_shared_load_latency"), r"^ld\.shared\.u32\b") == 512
    text = (built / "ptx" / arch / "memory.ptx").read_text(encoding="utf-8")
    body = checks.ptx_kernels(text)["mb_shared_load_latency"]
    assert checks.count(body, r"^bar\.sync\b") == 1
    # divergence, 8 ways: 8 x 64 fma in 8 branches; 7 compare-and-branch + loop guard + back edge
    div = region("divergence", "mb_divergence_w8_u0_d64")
    assert checks.count(div, r"^fma\.rn\.f32\b") == 512
    assert checks.count(div, r"^@!?%p\d+ bra\b") == 9


def test_every_sass_expectation_holds(report: checks.CheckReport) -> None:
    if report.sass_skipped:
        pytest.skip(f"SASS not checked: {report.sass_skipped}")
    sass = [r for r in report.results if r.level == SASS]
    assert {r.arch for r in sass} == set(DEFAULT_ARCHS)
    assert [r.line() for r in sass if not r.ok] == []
    assert report.ok, report.missing
    # fp32 throughput: 2048 FFMA and nothing but them between the two CS2R clock reads
    fp32 = [r for r in sass if r.kernel == "mb_fp32_throughput"]
    assert {(r.what, r.found) for r in fp32} == {
        ("FFMA in the timed region", 2048),
        ("other SASS in the region", 0),
    }


def test_check_command_on_the_build(built: Path) -> None:
    result = _invoke(["microbench", "check", str(built), "--no-sass"])
    assert result.exit_code == 0, result.output
    total = sum(1 for e in checks.EXPECTATIONS if e.level == PTX) * len(DEFAULT_ARCHS)
    assert f"Fig. 2 checks: PTX {total}/{total} passed (sm_75, sm_80, sm_90)" in result.output


def test_driver_rejects_bad_arguments_before_touching_a_gpu(built: Path) -> None:
    driver = str(built / layout.BINARY_NAME)
    done = subprocess.run([driver, "--only", "bogus"], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "unknown group bogus" in done.stderr
    if toolchain.find_tool("nvidia-smi") is None:  # no driver: a clear message, exit 3
        done = subprocess.run([driver], capture_output=True, text=True, check=False)
        assert done.returncode == 3
        assert "no CUDA device is available" in done.stderr


def test_check_command_without_a_build(tmp_path: Path) -> None:
    result = _invoke(["microbench", "check", str(tmp_path)])
    assert result.exit_code == 2 and "no PTX files" in result.output


# ------------------------------------------------------------------------------- examples


EXAMPLE_SOURCES = sorted(EXAMPLES.glob("*/*.cu"))


@pytest.mark.parametrize("source", EXAMPLE_SOURCES, ids=lambda p: p.parent.name)
def test_examples_compile_to_ptx(source: Path, tmp_path: Path, nvcc: str) -> None:
    out = tmp_path / "example.ptx"
    done = subprocess.run(
        [nvcc, "-std=c++17", "-ptx", "-arch=sm_80", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    kernels = checks.ptx_kernels(out.read_text(encoding="utf-8"))
    assert len(kernels) >= 3, sorted(kernels)


@pytest.mark.parametrize("folder", ["matmul", "reduction", "transpose"])
def test_examples_have_profiling_scripts(folder: str) -> None:
    script = (EXAMPLES / folder / "profile.sh").read_text(encoding="utf-8")
    assert "ncu --set full" in script and "--csv --page raw" in script
    assert "nsys profile" in script and "nsys stats --report cuda_gpu_trace" in script
    assert (EXAMPLES / folder / "Makefile").is_file()
