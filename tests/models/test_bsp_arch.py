"""BSP architecture form (docs/bsp.md Decision B1): λ = λ_app · η_arch from database facts;
the roofline form (Decision B2): compute part + DRAM-bandwidth part over one λ_app;
``predict bsp --profile`` without --calibrate, ``report --predict-gpu``, and the leave-one-out
splits of benchmarks/bsp_reproduction.py against their targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.devices.database import architecture_latencies, compute_capability_facts, find_device
from advisor.models.bsp import ThreadCounts
from advisor.models.bsp.arch import (
    DEFAULT_FORM,
    ROOFLINE_COMBINE,
    arch_factors,
    bound_parts,
    combine,
    global_bytes_per_thread,
    issue_lanes_per_sm,
)
from advisor.models.bsp.profile import counts_from_profile
from advisor.models.bsp.result import run_bsp
from tests.cli_helpers import assert_one_line_error, run
from tests.models.test_bsp import COUNTERS, KERNEL, _profile, _reproduction

REPO = Path(__file__).resolve().parents[2]
BPNN_980 = "csv/amaris_gpuperfpredict/datasets/bpnn_layerforward_CUDA-GTX-980.csv"


@pytest.mark.parametrize(
    ("gpu", "lanes", "eta_issue"),
    [
        ("GTX 680", 128, 128 / 192),  # Kepler: 4 schedulers x 32 lanes for 192 cores
        ("GT 630", 32, 32 / 48),  # cc 2.1: 2 schedulers x 16 lanes (hot clock) for 48 cores
        ("GTX 295", 8, 1.0),  # cc 1.3: a warp instruction over 4 clocks on 8 cores
        ("GTX 980", 128, 1.0),
        ("Tesla P100-PCIE-16GB", 64, 1.0),  # GP100: 2 schedulers, 64 cores
        ("Quadro RTX 8000", 128, 2.0),  # Turing: 64 FP32 + 64 INT32 lanes behind 4 schedulers
        ("RTX 4090", 128, 1.0),
    ],
)
def test_eta_issue_from_database_facts(gpu: str, lanes: int, eta_issue: float) -> None:
    spec = find_device(gpu)
    facts = compute_capability_facts(spec.compute_capability)
    assert facts["issue_source"]  # every fact names its source
    assert issue_lanes_per_sm(spec) == lanes
    assert arch_factors(spec).eta_issue == pytest.approx(eta_issue)


def test_eta_mem_from_architecture_latency() -> None:
    h100 = find_device("H100 PCIe")
    dram = architecture_latencies("Hopper")["dram"]["value"]
    factors = arch_factors(h100)
    assert factors.eta_mem == pytest.approx(500 / dram)
    assert factors.eta == pytest.approx(factors.eta_issue * factors.eta_mem)


def test_measured_latency_replaces_the_default() -> None:
    from types import SimpleNamespace

    measured = SimpleNamespace(measured=True, latencies_cycles={"dram": 400.0}, source="k40.json")
    assert arch_factors(find_device("Tesla K40"), measured).eta_mem == pytest.approx(1.25)


def _counts(_n: float) -> ThreadCounts:
    return ThreadCounts(1e6, 100.0, 4.0, 1.0, 20.0, 1.0, 0.0, 0.02)


def _run(form: str, gpus: list[str], counts: ThreadCounts | None = None) -> list[float]:
    from advisor.models.bsp import DEFAULT_LATENCIES

    result = run_bsp(
        input_kind="app",
        input_name="x",
        input_paths=(),
        per_thread=(),
        notes=(),
        counts_at=_counts if counts is None else (lambda _n: counts),
        latencies=DEFAULT_LATENCIES,
        calibration_gpu=find_device("GTX 680"),
        calibration_size=1.0,
        measured_s=0.01,
        gpus=[find_device(g) for g in gpus],
        sizes=[1.0],
        form=form,
    )
    return [p.predicted_s for p in result.predictions]


def test_arch_form_is_the_paper_form_within_an_architecture() -> None:
    kepler = ["GTX 660", "GTX Titan", "Tesla K20", "Tesla K40"]
    assert _run("arch", kepler) == pytest.approx(_run("paper", kepler), rel=1e-12)


def test_arch_form_across_architectures() -> None:
    # Kepler -> Maxwell: λ(980) = λ(680) · η(980)/η(680) = λ · 1.5, so 1.5 x shorter
    paper, arch = _run("paper", ["GTX 980"])[0], _run("arch", ["GTX 980"])[0]
    assert arch == pytest.approx(paper / 1.5)


# --------------------------------------------------------------------------------------------
# roofline form (Decision B2)


def test_roofline_parts_by_hand() -> None:
    counts = _counts(1.0)
    gtx680 = find_device("GTX 680")
    parts = bound_parts(counts, gtx680)
    # bytes: (ld1 + st1 − L1 − L2) × 4 B = (20 + 1 − 0 − 0.02·20) × 4 = 20.6 × 4 = 82.4 B
    assert global_bytes_per_thread(counts) == pytest.approx(82.4)
    # M = t · B / bandwidth = 1e6 · 82.4 / 192.2e9 = 4.2872e-4 s
    assert parts.memory_s == pytest.approx(1e6 * 82.4 / 192.2e9)
    # C = t · (Comp + ld0 + st0 + ld1 + st1) / (R · P · η_issue)
    #   = 1e6 · 126 / (1.006e9 · 1536 · 128/192) = 1.2231e-4 s
    assert parts.compute_s == pytest.approx(1e6 * 126 / (1.006e9 * 1536 * 128 / 192))
    assert parts.dominant == "memory"
    # the joined model: C + M, max(C, M), (C² + M²)^½
    c, m = parts.compute_s, parts.memory_s
    assert combine(c, m, "sum") == pytest.approx(c + m)
    assert combine(c, m, "max") == m
    assert combine(c, m, "smooth") == pytest.approx((c * c + m * m) ** 0.5)
    assert parts.combined() == combine(c, m, ROOFLINE_COMBINE)


def test_measured_dram_bytes_replace_the_counted_ones() -> None:
    # 1 MiB read + 1 MiB written over t = 1048576 threads: 2 B per thread
    metrics = COUNTERS | {"dram_read_bytes": 2.0**20, "dram_write_bytes": 2.0**20}
    found = counts_from_profile(_profile(metrics), KERNEL)
    assert found.counts.dram_bytes == pytest.approx(2.0)
    assert global_bytes_per_thread(found.counts) == pytest.approx(2.0)
    # without them: (2048 + 1 − 0.02 · 2048) × 4 B
    plain = counts_from_profile(_profile(COUNTERS), KERNEL).counts
    assert plain.dram_bytes is None
    assert global_bytes_per_thread(plain) == pytest.approx((2049 - 40.96) * 4)


def test_bandwidth_bound_kernel_scales_with_bandwidth() -> None:
    # one load, 1 kB of DRAM traffic per thread (1 GB: 5.2 ms at the GTX 680's 192.2 GB/s, under
    # the 10 ms measured): C / M < 1e-3, so T(g) = T(680) · BW(680)/BW(g)
    counts = ThreadCounts(1e6, 0.0, 0.0, 0.0, 1.0, 0.0, dram_bytes=1e3)
    predicted = _run("roofline", ["GTX 980", "Tesla P100-PCIE-16GB"], counts)
    assert predicted[0] == pytest.approx(0.01 * 192.2 / 224.4)
    assert predicted[1] == pytest.approx(0.01 * 192.2 / 732.0)


def test_compute_bound_kernel_scales_with_issue_rate() -> None:
    # no DRAM bytes: M = 0, so T(g) = T(680) · (R · P · η_issue)(680) / (R · P · η_issue)(g)
    counts = ThreadCounts(1e6, 500.0, 0.0, 0.0, 0.0, 0.0, dram_bytes=0.0)
    predicted = _run("roofline", ["GTX 980", "Quadro RTX 8000"], counts)
    rate_680 = 1006e6 * 1536 * 128 / 192
    assert predicted[0] == pytest.approx(0.01 * rate_680 / (1216e6 * 2048 * 1.0))
    rtx = find_device("Quadro RTX 8000")
    rate_rtx = rtx.boost_clock_hz * rtx.sm_count * rtx.fp32_cores_per_sm * 2.0
    assert predicted[1] == pytest.approx(0.01 * rate_680 / rate_rtx)


def test_roofline_round_trip_and_limiter_in_json() -> None:
    app = str(REPO / "sample_profiles" / "apps" / "matMul-Gm-SP.json")
    code, out, err = run(
        "predict", "bsp", "--app", app, "--calibrate", "GTX 680:1024:26.41",
        "--gpu", "GTX 680,GTX 980", "--form", "roofline", "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["form"] == "roofline" and data["roofline_combine"] == ROOFLINE_COMBINE
    first, second = data["predictions"]
    assert first["predicted_ms"] == pytest.approx(26.41)  # the calibration point comes back
    # matMul's paper counts: 2N + 1 accesses of 4 B per thread, far more than its 3N + 1 slots
    assert first["dominant"] == second["dominant"] == "memory"
    assert data["calibration"]["dominant"] == "memory"


# --------------------------------------------------------------------------------------------
# predict bsp --profile


def test_predict_profile_calibrates_on_its_own_run(real_profiles: Path) -> None:
    path = str(real_profiles / BPNN_980)
    code, out, err = run(
        "predict", "bsp", "--profile", path, "--gpu", "H100 PCIe,RTX 4090", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    # no DRAM byte counters in these nvprof tables: the default keeps the arch form, and says why
    assert data["form_requested"] == DEFAULT_FORM and data["form"] == "arch"
    assert data["form_reason"].startswith("arch form: no measured DRAM bytes")
    assert data["calibration"]["gpu"] == "GeForce GTX 980"
    # bpnn's issue slots outweigh its DRAM bytes on the GTX 980 and the H100; the RTX 4090
    # issues 1.6 x faster than the H100 with half its bandwidth: there the memory part wins
    assert data["calibration"]["dominant"] == "compute"
    assert [p["dominant"] for p in data["predictions"]] == ["compute", "memory"]
    assert [p["gpu"] for p in data["predictions"]] == [
        "NVIDIA H100 PCIe",
        "NVIDIA GeForce RTX 4090",
    ]
    assert data["eta_arch"]["NVIDIA H100 PCIe"]["eta_mem"] == pytest.approx(500 / 659)
    # predicting the profiled GPU returns the measured time (λ round trip)
    code, out, _ = run("predict", "bsp", "--profile", path, "--json")
    data = json.loads(out)
    assert data["predictions"][0]["predicted_ms"] == pytest.approx(
        data["calibration"]["measured_ms"]
    )


def test_predict_profile_ncu_report(tuning_families: Path) -> None:
    path = tuning_families / "cranberryyan/Elementwise/build/app/elementwise_relu_v1.ncu-rep"
    code, out, err = run("predict", "bsp", "--profile", str(path), "--gpu", "H100 PCIe")
    assert code == 0, err
    assert "NVIDIA GeForce RTX 3080" in out and "NVIDIA H100 PCIe" in out
    assert "λ_app" in out
    # measured DRAM bytes at the RTX 3080's peak bandwidth outweigh its instructions
    assert "form         roofline" in out
    assert "form choice  auto -> roofline form: memory-bound where measured" in out
    limiter = [line for line in out.splitlines() if line.startswith("limiter")]
    assert len(limiter) == 2 and all(line.endswith("dominates") for line in limiter)


def test_predict_profile_missing_metrics_is_one_line_exit_3(samples: Path) -> None:
    path = str(samples / "synthetic_ncu_raw.csv")
    code, _, err = run("predict", "bsp", "--profile", path, "--kernel", "transposeNaive")
    assert code == 3
    assert_one_line_error(err, "transposeNaive", "inst_executed_global_loads", "ncu --metrics")


def test_predict_paper_form_selectable() -> None:
    app = str(REPO / "sample_profiles" / "apps" / "matMul-Gm-SP.json")
    args = ("predict", "bsp", "--app", app, "--calibrate", "GTX 680:1024:26.41", "--gpu")
    _, paper, _ = run(*args, "GTX 980", "--form", "paper", "--json")
    _, arch, _ = run(*args, "GTX 980", "--json")
    p, a = json.loads(paper), json.loads(arch)
    assert p["form"] == "paper" and a["form"] == "arch"
    ratio = p["predictions"][0]["predicted_ms"] / a["predictions"][0]["predicted_ms"]
    assert ratio == pytest.approx(1.5)


# --------------------------------------------------------------------------------------------
# report --predict-gpu


def test_report_predict_gpu(real_profiles: Path, tmp_path: Path) -> None:
    html, md, js = tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.json"
    code, _, err = run(
        "report",
        str(real_profiles / BPNN_980),
        "-o",
        str(html),
        "--markdown",
        str(md),
        "--json",
        str(js),
        "--predict-gpu",
        "H100 PCIe,RTX 4090",
        "-q",
    )
    assert code == 0, err
    page = html.read_text(encoding="utf-8")
    assert 'id="bsp-gpus-table"' in page
    assert "NVIDIA H100 PCIe" in page and "NVIDIA GeForce RTX 4090" in page
    assert "(compute)" in page
    text = md.read_text(encoding="utf-8")
    assert "BSP on NVIDIA H100 PCIe" in text and "BSP on NVIDIA GeForce RTX 4090" in text
    assert f"({DEFAULT_FORM} form" in text and "(compute, arch form)" in text
    other = json.loads(js.read_text(encoding="utf-8"))["bsp_other_gpus"]
    assert [o["gpu"] for o in other] == ["NVIDIA H100 PCIe", "NVIDIA GeForce RTX 4090"]
    assert other[0]["form"] == DEFAULT_FORM
    first = other[0]["kernels"][0]
    assert first["predicted_ms"] > 0 and first["dominant"] == "compute"
    # no DRAM byte counters in the profile: the arch form, and the floor is the compute part
    assert first["form"] == "arch" and first["form_reason"].startswith("arch form: no measured")
    assert first["predicted_ms"] >= first["floor_ms"] > 0


def test_report_predict_gpu_unknown_name(real_profiles: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "r.json")
    code, _, err = run(
        "report", str(real_profiles / BPNN_980), "--json", out, "--predict-gpu", "GTX 9999"
    )
    assert code == 2
    assert_one_line_error(err, "--predict-gpu", "GTX 9999")


# --------------------------------------------------------------------------------------------
# leave-one-out splits of benchmarks/bsp_reproduction.py against their targets


@pytest.fixture(scope="module")
def module(real_profiles: Path, tuning_families: Path) -> object:
    return _reproduction()


@pytest.fixture(scope="module")
def found(module: object) -> list:
    return module.splits()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def splits(found: list) -> dict[tuple[str, str], object]:
    return {(s.data.split(" (")[0], s.split): s for s in found}


def _share(split: object, form: str) -> float:
    return round(100 * split.share(form), 1)  # type: ignore[attr-defined]


ROOFLINES = ("roofline-sum", "roofline-max", "roofline-smooth")


def _at_least(split: object, floors: dict[str, float]) -> None:
    """Every form's share in [0.8, 1.2] is at least the figure the benchmark reaches."""
    for form, floor in floors.items():
        assert _share(split, form) >= floor, form


def test_splits_paper_data(splits: dict) -> None:
    within = splits[("amaris_bspgpu", "within one family")]
    across = splits[("amaris_bspgpu", "across families")]
    # within Kepler η_arch is one value: both forms give the same figures
    assert (_share(within, "paper"), _share(within, "arch")) == (78.0, 78.0)
    assert len(within.arch) == 501
    # across Kepler, Fermi (GT 630) and GT200 (GTX 295): better, far from the target (12.4 and
    # 17.6 % before the compute floor raised 36 points)
    assert (_share(across, "paper"), _share(across, "arch")) == (13.5, 18.7)
    assert across.raised("arch") == 36 and within.raised("arch") == 0
    assert len(across.arch) == 614
    assert not within.met() and not across.met()
    # the roofline form: the paper's matMul counts (2N global reads per thread in every
    # variant, tiled or not) make the memory part dominate; worse than the arch form here
    _at_least(within, dict(zip(ROOFLINES, (71.9, 71.3, 71.5), strict=True)))
    _at_least(across, dict(zip(ROOFLINES, (12.1, 11.1, 11.1), strict=True)))
    assert within.memory_bound() == 357 and across.memory_bound() == 518
    # so the default form does not trust counted bytes: choosing the roofline form on them
    # (auto-counted) loses 5.9 and 7.6 points; auto (measured bytes only) is the arch form here
    assert _share(within, "auto-counted") == 72.1 and _share(across, "auto-counted") == 11.1
    assert within.ratios("auto") == within.arch and across.ratios("auto") == across.arch


def test_splits_sgemm_pair(splits: dict) -> None:
    pair = splits[("SGEMM coalesced 1024³", "across families")]
    assert (_share(pair, "paper"), _share(pair, "arch")) == (0.0, 100.0)
    assert pair.met()
    _at_least(pair, {"roofline-sum": 50.0, "roofline-max": 100.0, "roofline-smooth": 100.0})
    assert pair.met("roofline-max") and pair.met("roofline-smooth")


def test_splits_bpnn_nine_boards(splits: dict) -> None:
    within = splits[("gpuperfpredict bpnn", "within one family")]
    across = splits[("gpuperfpredict bpnn", "across families")]
    assert (_share(within, "paper"), _share(within, "arch")) == (99.6, 99.6)
    assert within.met()
    _at_least(within, dict(zip(ROOFLINES, (100.0, 99.6, 99.8), strict=True)))
    assert all(within.met(form) for form in ROOFLINES)
    # issue-bound on every board (memory part never dominates), and the instruction count per
    # thread differs between the boards' builds (Kepler 127, Maxwell 267-270, Pascal 169), so
    # one board's counts do not carry: no form reaches the target across families
    # (the paper form was 24.8 % before the compute floor raised 310 of its points: a's build
    # issues more instructions per thread than b's, so a's counts overstate b's floor)
    assert (_share(across, "paper"), _share(across, "arch")) == (23.7, 3.6)
    _at_least(across, dict(zip(ROOFLINES, (7.9, 3.6, 4.2), strict=True)))
    assert across.memory_bound() == 0
    assert not across.met()


def test_bpnn_misses_are_in_the_counts_not_the_hardware_factors(module: object) -> None:
    # with each board's own counts the same parts predict 98.8 % across families
    alone, roofline = module.bpnn_own_counts_share()  # type: ignore[attr-defined]
    assert round(100 * alone, 1) >= 98.8 and round(100 * roofline, 1) >= 98.7


def test_default_form_is_the_best_of_the_splits(module: object, found: list) -> None:
    best, means = module.best_form(found)  # type: ignore[attr-defined]
    assert DEFAULT_FORM == "auto" and means[DEFAULT_FORM] == max(means.values())
    assert best == DEFAULT_FORM
    best_roofline, _ = module.best_form(found, ROOFLINES)  # type: ignore[attr-defined]
    assert best_roofline == f"roofline-{ROOFLINE_COMBINE}"
    # mean share over the five splits, floors applied: paper 43.0, auto 60.0, auto-counted
    # 57.3, arch 60.0, sum 48.4, max 57.1, smooth 57.3 (arch 59.8 before the floors)
    assert round(100 * means["auto"], 1) >= 60.0
    assert means["auto"] > means["auto-counted"]
