"""The physical floor of cross-GPU BSP predictions and the default form's choice (docs/bsp.md
Decision B3): no prediction under max(instructions / peak issue rate, measured DRAM bytes / peak
bandwidth) of its GPU, in any form; the roofline form for a kernel memory-bound by measured bytes
on its calibration GPU, else the arch form; more bandwidth never predicts slower."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from advisor import pipeline
from advisor.devices.database import DeviceSpec, all_devices, find_device
from advisor.models.bsp import DEFAULT_LATENCIES, ThreadCounts
from advisor.models.bsp.arch import (
    DEFAULT_FORM,
    FORM_ARCH,
    FORM_AUTO,
    FORM_PAPER,
    FORM_ROOFLINE,
    FORMS,
    BoundParts,
    bound_parts,
)
from advisor.models.bsp.floor import (
    Floor,
    choose_form,
    floor_ns,
    physical_floor,
    raise_to_floor,
)
from advisor.models.bsp.profile import counts_from_profile, pick_kernel
from advisor.models.bsp.result import BspResult, run_bsp, to_json
from tests.cli_helpers import run

RELU_V3 = "cranberryyan/Elementwise/build/app/elementwise_relu_v3.ncu-rep"
#: 1 GB of measured DRAM traffic over 1e6 threads, 12 issue slots each: memory-bound everywhere
MEMORY_BOUND = ThreadCounts(1e6, 10.0, 0.0, 0.0, 1.0, 1.0, dram_bytes=1000.0)


def _bsp(
    counts: ThreadCounts,
    calibration: DeviceSpec,
    measured_s: float,
    gpus: Sequence[DeviceSpec],
    form: str,
) -> BspResult:
    return run_bsp(
        input_kind="profile",
        input_name="k",
        input_paths=(),
        per_thread=(),
        notes=(),
        counts_at=lambda _n: counts,
        latencies=DEFAULT_LATENCIES,
        calibration_gpu=calibration,
        calibration_size=1.0,
        measured_s=measured_s,
        gpus=gpus,
        sizes=[1.0],
        form=form,
    )


def assert_not_under_floor(result: BspResult, counts: ThreadCounts) -> None:
    """Every prediction of ``result`` is at least the floor recomputed from ``counts``."""
    for p in result.predictions:
        floor = floor_ns(counts, find_device(p.gpu)) * 1e-9
        assert p.predicted_s >= floor * (1 - 1e-12), (result.form, p.gpu)
        assert p.floor_s == pytest.approx(floor)


# --------------------------------------------------------------------------------------------
# the floor itself


def test_floor_is_the_larger_part_of_measured_bytes_and_instructions() -> None:
    gtx680 = find_device("GTX 680")
    floor = physical_floor(MEMORY_BOUND, gtx680)
    # M = 1e6 · 1000 B / 192.2 GB/s; C = 1e6 · 12 / (1006 MHz · 1536 · 128/192)
    assert floor.memory_s == pytest.approx(1e9 / 192.2e9)
    assert floor.compute_s == pytest.approx(12e6 / (1.006e9 * 1536 * 128 / 192))
    assert floor.seconds == floor.memory_s and floor.limiter == "memory"
    assert floor_ns(MEMORY_BOUND, gtx680) == pytest.approx(floor.memory_s * 1e9)
    # counted bytes (no DRAM counters) are no floor: the compute part alone bounds
    counted = replace(MEMORY_BOUND, dram_bytes=None)
    assert bound_parts(counted, gtx680).memory_s > 0
    only = physical_floor(counted, gtx680)
    assert math.isnan(only.memory_s) and only.seconds == only.compute_s
    assert only.limiter == "compute"


def test_raise_to_floor() -> None:
    floor = Floor("g", compute_s=1.0, memory_s=3.0)
    assert raise_to_floor(2.0, floor) == (3.0, "memory")
    assert raise_to_floor(4.0, floor) == (4.0, "")
    assert raise_to_floor(3.0 * (1 - 1e-15), floor) == (3.0 * (1 - 1e-15), "")  # rounding
    assert raise_to_floor(0.5, Floor("g", 2.0, math.nan)) == (2.0, "compute")
    assert raise_to_floor(0.5, None) == (0.5, "")


# --------------------------------------------------------------------------------------------
# synthetic inputs, each form


def test_arch_form_raised_to_the_memory_floor() -> None:
    # measured 6 ms on the GTX 680 (its floor: 5.2 ms); the arch form scales by R·P·η only:
    # 6 ms · (1006·1536)/(2520·16384) / 1.5 = 0.15 ms on the RTX 4090, under 1 GB / 1008 GB/s
    rtx4090 = find_device("RTX 4090")
    result = _bsp(MEMORY_BOUND, find_device("GTX 680"), 6e-3, [rtx4090], FORM_ARCH)
    (p,) = result.predictions
    assert p.model_s == pytest.approx(6e-3 * (1006 * 1536) / (2520 * 16384) / 1.5)
    assert p.raised == "memory"
    assert p.predicted_s == pytest.approx(1e9 / rtx4090.memory_bandwidth_bytes_per_s)
    assert_not_under_floor(result, MEMORY_BOUND)
    data = to_json(result)["predictions"][0]
    assert data["raised_to_floor"] == "memory"
    assert data["model_ms"] < data["floor_ms"] == data["predicted_ms"]


def test_roofline_form_raised_to_the_memory_floor() -> None:
    # C = M on the GTX 680 and the run at that floor: λ_app = (C² + M²)^½ / M = √2, so a GPU
    # where memory dominates gets ~M/√2, under its memory part
    gtx680, rtx4090 = find_device("GTX 680"), find_device("RTX 4090")
    per_byte = bound_parts(replace(MEMORY_BOUND, dram_bytes=1.0), gtx680)
    balanced = replace(MEMORY_BOUND, dram_bytes=per_byte.compute_s / per_byte.memory_s)
    parts = bound_parts(balanced, gtx680)
    assert parts.compute_s == pytest.approx(parts.memory_s)
    result = _bsp(balanced, gtx680, parts.memory_s, [rtx4090, gtx680], FORM_ROOFLINE)
    far, home = result.predictions
    assert far.raised == "memory" and far.model_s < far.floor_s == far.predicted_s
    assert home.raised == "" and home.predicted_s == pytest.approx(parts.memory_s)
    assert_not_under_floor(result, balanced)


def test_paper_form_raised_to_the_compute_floor() -> None:
    # no DRAM counters: the compute part alone bounds.  Calibrated at its issue floor on a
    # Turing board (η_issue 2), the paper form's R·P scaling gives the GTX 980 (η_issue 1)
    # half its instructions at its peak issue rate
    counts = ThreadCounts(1e6, 500.0, 0.0, 0.0, 0.0, 0.0)
    turing, gtx980 = find_device("Quadro RTX 8000"), find_device("GTX 980")
    measured = physical_floor(counts, turing).seconds
    result = _bsp(counts, turing, measured, [gtx980], FORM_PAPER)
    (p,) = result.predictions
    assert p.model_s == pytest.approx(p.floor_s / 2)
    assert p.raised == "compute" and p.predicted_s == pytest.approx(p.floor_s)
    # the arch form carries η_issue, so it lands on the floor by itself
    arch = _bsp(counts, turing, measured, [gtx980], FORM_ARCH).predictions[0]
    assert arch.raised == "" and arch.predicted_s == pytest.approx(p.floor_s)


@pytest.mark.parametrize("form", FORMS)
def test_more_bandwidth_never_predicts_slower(form: str) -> None:
    # the same GPU but its bandwidth, for a memory-bound kernel: non-increasing in every form
    base = find_device("RTX 4090")
    gpus = [
        replace(base, name=f"RTX 4090 at {bw:g} GB/s", memory_bandwidth_bytes_per_s=bw * 1e9)
        for bw in (100, 250, 500, 1008, 2000, 4000)
    ]
    result = _bsp(MEMORY_BOUND, find_device("GTX 680"), 6e-3, gpus, form)
    times = [p.predicted_s for p in result.predictions]
    assert all(b <= a for a, b in itertools.pairwise(times)), times
    if form in (FORM_AUTO, FORM_ROOFLINE):  # the memory part scales with 1 / bandwidth
        assert times[0] / times[-1] == pytest.approx(40, rel=0.01)


# --------------------------------------------------------------------------------------------
# the default form's choice


def test_choose_form_from_what_is_measured() -> None:
    memory, compute = BoundParts(1.0, 2.0), BoundParts(2.0, 1.0)
    form, why = choose_form(MEMORY_BOUND, memory, "G")
    assert form == FORM_ROOFLINE and why.startswith("roofline form: memory-bound where measured")
    assert "on G the memory part is 2000 ms" in why
    assert choose_form(MEMORY_BOUND, compute, "G")[0] == FORM_ARCH
    counted = replace(MEMORY_BOUND, dram_bytes=None)
    form, why = choose_form(counted, memory, "G")
    assert form == FORM_ARCH and "no measured DRAM bytes" in why
    assert choose_form(MEMORY_BOUND, None, "G")[0] == FORM_ARCH
    assert DEFAULT_FORM == FORM_AUTO


def test_auto_resolves_per_kernel() -> None:
    gtx680, gtx980 = find_device("GTX 680"), find_device("GTX 980")
    memory = _bsp(MEMORY_BOUND, gtx680, 6e-3, [gtx980], FORM_AUTO)
    assert memory.form == FORM_ROOFLINE and memory.form_requested == FORM_AUTO
    roofline = _bsp(MEMORY_BOUND, gtx680, 6e-3, [gtx980], FORM_ROOFLINE)
    assert memory.predictions == roofline.predictions
    compute = ThreadCounts(1e6, 500.0, 0.0, 0.0, 1.0, 1.0, dram_bytes=1.0)
    chosen = _bsp(compute, gtx680, 1.0, [gtx980], FORM_AUTO)
    assert chosen.form == FORM_ARCH and chosen.form_reason.startswith("arch form: compute-bound")
    data = to_json(chosen)
    assert data["form"] == "arch" and data["form_requested"] == "auto"
    assert data["form_reason"] == chosen.form_reason
    # asked for by name: no reason
    assert to_json(roofline)["form_reason"] is None


# --------------------------------------------------------------------------------------------
# the real report: RTX 3080, relu over 33.5M floats


@pytest.fixture(scope="module")
def relu(tuning_families: Path) -> tuple[str, ThreadCounts, float]:
    path = str(tuning_families / RELU_V3)
    profile = pipeline.read((path,))
    found = counts_from_profile(profile, pick_kernel(profile, None))
    assert found.measured_s is not None and found.counts.dram_bytes is not None
    return path, found.counts, found.measured_s


@pytest.mark.parametrize("form", FORMS)
def test_real_report_never_under_the_floor_on_any_database_gpu(
    relu: tuple[str, ThreadCounts, float], form: str
) -> None:
    _, counts, measured = relu
    gpus = list(all_devices())
    result = _bsp(counts, find_device("RTX 3080"), measured, gpus, form)
    assert len(result.predictions) == len(gpus) > 100
    assert_not_under_floor(result, counts)


def test_real_report_default_form_and_bandwidth_order(
    relu: tuple[str, ThreadCounts, float],
) -> None:
    path, _, _ = relu
    gpus = "H100 PCIe,RTX 4090,A100-SXM4-40GB"
    code, out, err = run("predict", "bsp", "--profile", path, "--gpu", gpus, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["form_requested"], data["form"]) == ("auto", "roofline")
    assert data["form_reason"].startswith("roofline form: memory-bound where measured")
    by_gpu = {p["gpu"]: p for p in data["predictions"]}
    h100, rtx4090 = by_gpu["NVIDIA H100 PCIe"], by_gpu["NVIDIA GeForce RTX 4090"]
    # the H100 PCIe has twice the RTX 4090's bandwidth: not predicted slower
    assert h100["predicted_ms"] < rtx4090["predicted_ms"]
    assert all(p["predicted_ms"] >= p["floor_ms"] for p in data["predictions"])
    # the arch form alone put the RTX 4090 at 0.174 ms, under its 0.264 ms memory part
    code, out, err = run("predict", "bsp", "--profile", path, "--gpu", gpus, "--form", "arch")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("NVIDIA GeForce RTX 4090"))
    assert row.endswith("raised to the memory floor")
    assert "floor        NVIDIA GeForce RTX 4090 N=1: the arch form gives 0.1737 ms" in out
