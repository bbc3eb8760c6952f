"""The report's predictions: BSP from the profile's counts (λ over the kernels), an application
description (--app), a MAX/SUM kernel description (--kernels) and the roofline, checked against
hand-computed values by parsing the HTML; escaping, determinism and bad description files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from advisor import pipeline
from advisor.cli import main
from advisor.devices.database import DeviceSpec, all_devices, find_device
from advisor.models import bsp
from advisor.models.bsp.floor import floor_ns
from advisor.render import report as render
from advisor.render.templating import fmt_duration_ms, fmt_quantity
from advisor.report import predictions as predictions_module
from advisor.report.predictions import (
    BspPrediction,
    ModelInputs,
    base_name,
    build_predictions,
    match_app_kernel,
)
from tests.render.test_report_html import EVIL_KERNEL, _parse

NAIVE = "transposeNaive(float*, const float*, int, int)"
COALESCED = "transposeCoalesced(float*, const float*, int, int)"
DEVICE = "Tesla V100-SXM2-16GB (0)"
# Tesla V100-SXM2-16GB in advisor/data/gpus.csv: 80 SMs x 64 FP32 cores, 1530 MHz, 900 GB/s
CLOCK_HZ, CORES, BANDWIDTH, PEAK32 = 1.53e9, 80 * 64, 900e9, 2 * 80 * 64 * 1.53e9
THREADS = 128 * 128 * 32 * 8  # grid 128x128, block 32x8 in the synthetic trace
# mean launch durations of the synthetic trace (us): (415.232 + 412.480 + 412.896) / 3 and
# (238.112 + 236.800 + 236.544) / 3
NAIVE_MS, COALESCED_MS = 1240.608 / 3 / 1e3, 711.456 / 3 / 1e3

# per kernel: warp-level counts (nvprof metric Avg) and roofline counts
COUNTS = {
    NAIVE: {
        "inst_executed_global_loads": 131072,
        "inst_executed_global_stores": 131072,
        "inst_executed": 1310720,
        "flop_count_sp": 4194304,
        "dram_read_transactions": 524288,
        "dram_write_transactions": 524288,
    },
    COALESCED: {
        "inst_executed_global_loads": 131072,
        "inst_executed_global_stores": 131072,
        "inst_executed_shared_loads": 131072,
        "inst_executed_shared_stores": 131072,
        "inst_executed": 1310720,
    },
}


def _metrics_file(samples: Path, folder: Path, kernel_names: dict[str, str] | None = None) -> Path:
    """The synthetic nvprof metrics file with the counts above appended (nvprof --csv layout)."""
    text = (samples / "synthetic_nvprof_metrics.csv").read_text(encoding="utf-8")
    rows = [
        f'"{DEVICE}","{kernel}",3,"{metric}","{metric}",{value},{value},{value}'
        for kernel, metrics in COUNTS.items()
        for metric, value in metrics.items()
    ]
    text = text.rstrip("\n") + "\n" + "\n".join(rows) + "\n"
    for old, new in (kernel_names or {}).items():
        text = text.replace(old, new)
    path = folder / "metrics.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _report(samples: Path, tmp_path: Path, *extra: str) -> tuple[str, str]:
    metrics = _metrics_file(samples, tmp_path)
    out, md = tmp_path / "r.html", tmp_path / "r.md"
    trace = str(samples / "synthetic_nvprof_gputrace.csv")
    args = ["report", trace, str(metrics), "-o", str(out), "--markdown", str(md), *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")


def _rows(page_html: str, cls: str) -> list[list[str]]:
    return [cells for c, cells in _parse(page_html).rows if c == cls]


def test_bsp_from_profile_counts_with_one_lambda(samples: Path, tmp_path: Path) -> None:
    html, md = _report(samples, tmp_path)
    # Naive: ld1 = st1 = 32 x 131072 / t = 1; Comp = (32 x 1310720 - 2 t) / t = 10 - 2 = 8;
    # cycles = 8 + (1 + 1) x 500 = 1008.  Coalesced adds ld0 = st0 = 1: Comp = 10 - 4 = 6,
    # cycles = 6 + 1000 + (1 + 1) x 5 = 1016.  T(λ=1) = t x cycles / (R x P).
    naive_1 = THREADS * 1008 / (CLOCK_HZ * CORES) * 1e3  # 0.5397 ms
    coalesced_1 = THREADS * 1016 / (CLOCK_HZ * CORES) * 1e3  # 0.5440 ms
    assert math.isclose(naive_1, 0.539708, rel_tol=1e-5)
    counts = bsp.ThreadCounts(THREADS, 8, 0, 0, 1, 1)
    assert math.isclose(bsp.kernel_time_s(counts, CLOCK_HZ, CORES) * 1e3, naive_1)
    lam = math.sqrt(naive_1 / NAIVE_MS * coalesced_1 / COALESCED_MS)  # 1.7302
    rows = {r[1]: r for r in _rows(html, "bsp-row")}
    assert set(rows) == {NAIVE, COALESCED}  # the third kernel has no counts
    # columns: #, kernel, t, cycles, λ=1, predicted, measured (times in the unit their
    # magnitude calls for), ratio, λ_k
    naive = rows[NAIVE]
    assert naive[2] == fmt_quantity(THREADS) == "4.19 M" and naive[3] == "1,008"
    assert naive[4] == fmt_duration_ms(naive_1) == "540 µs"
    assert naive[5] == fmt_duration_ms(naive_1 / lam)
    assert naive[6] == fmt_duration_ms(NAIVE_MS) and naive[8] == fmt_quantity(naive_1 / NAIVE_MS)
    assert rows[COALESCED][3] == "1,016"
    page = _parse(html)
    text = " ".join(page.text)
    assert f"λ = {fmt_quantity(lam)}" in text and "geometric mean" in text
    assert "1 kernel(s) have no BSP prediction" in text  # transposeNoBankConflicts
    assert f"BSP λ = {lam:.4g} fitted to 2 kernels" in md


def test_roofline_point_from_flop_and_dram_counts(samples: Path, tmp_path: Path) -> None:
    html, md = _report(samples, tmp_path)
    # Naive: 4194304 FLOP, 32 x (524288 + 524288) = 33554432 bytes -> 0.125 FLOP/B;
    # achieved 4194304 / 413.536 us = 1.0143e10 FLOP/s; roof min(15.67e12, 900e9 x 0.125)
    (row,) = _rows(html, "roofline-row")
    assert row[1] == NAIVE and row[2] == "4.19 M" and row[3] == "33.6 MB"
    assert row[4] == "0.125"
    assert row[5] == fmt_quantity(4194304 / (NAIVE_MS * 1e-3))
    assert row[6] == fmt_quantity(min(PEAK32, BANDWIDTH * 0.125)) == "112 G"
    assert row[8] == "fp32"
    assert '<figure id="roofline-chart"><svg' in html
    assert "roofline of 1 kernel\n" in md  # one kernel, singular


def test_absent_counts_name_metrics_and_commands(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    files = [str(samples / "synthetic_nvprof_gputrace.csv")]
    result = CliRunner().invoke(main, ["report", *files, "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = _parse(out.read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert "Roofline not drawn" in text and "flop_count_sp" in text
    assert "dram__bytes_read.sum" in text  # the ncu command
    assert "inst_executed_global_loads" in text and "smsp__thread_inst_executed.sum" in text
    assert not [r for c, r in page.rows if c in ("bsp-row", "roofline-row")]


def test_app_and_kernel_descriptions(samples: Path, tmp_path: Path) -> None:
    apps, kernels = samples / "apps", samples / "kernels"
    # the app matMul-Gm-SP names no kernel of the profile: predicted only.  At N = 1024:
    # t = N^2, Comp = N, ld1 = 2N, st1 = 1, L2 rate 0.02: cycles = 1024 + (2049 - 40.96) x 500
    # + 40.96 x 250 = 1015284 (docs/bsp.md); T = t x cycles / (R x P) with λ = 1
    html, md = _report(
        samples,
        tmp_path,
        "--app",
        str(apps / "matMul-Gm-SP.json"),
        "--app-size",
        "1024",
        "--kernels",
        str(kernels / "listRank-gtx280.json"),
    )
    expected = 1024**2 * 1015284 / (CLOCK_HZ * CORES) * 1e3  # 135.9 ms
    text = "".join(_parse(html).text)
    assert f"predicted {fmt_duration_ms(expected)} with λ = 1" in text  # 136 ms
    assert "No profile kernel is named like 'matMul-Gm-SP'" in text
    (ms_row,) = _rows(html, "maxsum-row")
    assert ms_row[0] == "listRank local ranks" and ms_row[4] == "not measured"
    assert "MAX/SUM for 1 described kernel\n" in md


def test_app_description_matches_a_kernel_by_name() -> None:
    assert base_name("void ns::matMul<32>(float*, int)") == "matMul"
    names = ["matMul(float*, float*, float*, int)", "matMulShared(float*)", "other()"]
    assert match_app_kernel("matMul-Gm-SP", names) == [names[0]]
    assert match_app_kernel("SubSeqMax", names) == []


def test_bad_description_files_exit_3(samples: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"threads": "N**2", "comp": "__import__(1)"}', encoding="utf-8")
    base = ["report", str(samples / "synthetic_nvprof_gputrace.csv"), "--json", str(tmp_path / "j")]
    app = CliRunner().invoke(main, [*base, "--app", str(bad), "--app-size", "8"])
    assert app.exit_code == 3 and str(bad) in app.output
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    kern = CliRunner().invoke(main, [*base, "--kernels", str(broken)])
    assert kern.exit_code == 3 and str(broken) in kern.output
    assert "Traceback" not in app.output + kern.output
    alone = CliRunner().invoke(main, [*base, "--app", str(bad)])
    assert alone.exit_code == 2 and "--app-size" in alone.output


def test_predictions_escaped_and_deterministic(samples: Path, tmp_path: Path) -> None:
    metrics = _metrics_file(samples, tmp_path, {NAIVE: EVIL_KERNEL})
    trace = (samples / "synthetic_nvprof_gputrace.csv").read_text(encoding="utf-8")
    (tmp_path / "trace.csv").write_text(trace.replace(NAIVE, EVIL_KERNEL), encoding="utf-8")
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / f"{run}.html"
        args = ["report", str(tmp_path / "trace.csv"), str(metrics), "-o", str(out)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    html = outputs[0].decode("utf-8")
    assert EVIL_KERNEL not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert EVIL_KERNEL in [r[1] for r in _rows(html, "bsp-row")]  # the name, escaped, is there


def test_kernel_table_headers_are_short_with_full_names() -> None:
    assert all(len(short) <= 10 for short in render.CRITERIA_SHORT.values())
    assert (
        render.fmt_ms_value(858_304.0) == "0.858" and render.fmt_ms_value(23_031_000.0) == "23.03"
    )


# --------------------------------------------------------------------------------------------
# the physical floor (docs/bsp.md Decision B3): no prediction of the report under it

RELU_V3 = "cranberryyan/Elementwise/build/app/elementwise_relu_v3.ncu-rep"


def predictions_under_floor(view: BspPrediction, device: DeviceSpec) -> list[str]:
    """Every BSP prediction of ``view`` (on the report's GPU and on each --predict-gpu GPU)
    that is under its floor, recomputed from the kernel's counts with ``floor_ns``."""
    counts = {k.kernel: k.counts for k in view.kernels if k.counts is not None}
    under = [
        f"{k.kernel} on {device.name}: {k.predicted_ms} ms"
        for k in view.kernels
        if k.counts is not None and k.predicted_ms * 1e6 < floor_ns(k.counts, device) * (1 - 1e-12)
    ]
    for o in view.other_gpus:
        gpu = find_device(o.gpu)
        under += [
            f"{name} on {o.gpu}: {ms} ms"
            for _, name, ms in o.predicted_ms
            if ms * 1e6 < floor_ns(counts[name], gpu) * (1 - 1e-12)
        ]
    return under


def _build(path: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> tuple[BspPrediction, Any]:
    """The report's BSP predictions of ``path`` on every database GPU, carried in ``form``."""
    monkeypatch.setattr(predictions_module, "DEFAULT_FORM", form)
    profile = pipeline.read((str(path),))
    launches = profile.launches
    kernels = [
        {"name": name, "duration_ns": float(rows["duration_ns"].sum()), "launches": len(rows)}
        for name, rows in launches.groupby("name", sort=True)
    ]
    device = find_device(str(launches["device"].dropna().iloc[0]))
    inputs = ModelInputs(device=device, predict_gpus=all_devices())
    view = build_predictions(profile, kernels, inputs).bsp
    assert view is not None and view.other_gpus
    return view, device


@pytest.mark.parametrize("form", ["auto", "arch", "roofline", "paper"])
def test_no_report_prediction_under_its_floor(
    tuning_families: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    view, device = _build(tuning_families / RELU_V3, monkeypatch, form)
    assert len(view.other_gpus) == len(all_devices())
    assert predictions_under_floor(view, device) == []
    raised = {o.gpu for o in view.other_gpus for _, limiter in o.raised if limiter}
    if form == "arch":  # the arch form alone put the RTX 4090 under its memory part
        assert "NVIDIA GeForce RTX 4090" in raised
    if form == "auto":  # memory-bound by its measured DRAM bytes on the RTX 3080
        assert [f for _, f, _ in view.form_choice] == ["roofline"]


def test_predict_gpu_with_json_alone_writes_the_json_written_beside_the_pages(
    tuning_families: Path, tmp_path: Path
) -> None:
    """``report --json`` alone builds no predictions (the pages show them), except those
    ``--predict-gpu`` carries into the JSON: the same bytes as beside the pages."""
    path = str(tuning_families / RELU_V3)
    alone, beside = tmp_path / "alone.json", tmp_path / "beside.json"
    gpus = ["--predict-gpu", "H100 PCIe,RTX 4090", "-q"]
    result = CliRunner().invoke(main, ["report", path, "--json", str(alone), *gpus])
    assert result.exit_code == 0, result.output
    pages = ["-o", str(tmp_path / "r.html")]
    result = CliRunner().invoke(main, ["report", path, "--json", str(beside), *pages, *gpus])
    assert result.exit_code == 0, result.output
    assert alone.read_bytes() == beside.read_bytes()
    assert len(json.loads(alone.read_text("utf-8"))["bsp_other_gpus"]) == 2


def test_report_predict_gpu_default_form_and_floor(
    tuning_families: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tuning_families / RELU_V3)
    js, md, html = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.html"
    gpus = "H100 PCIe,RTX 4090,A100-SXM4-40GB"
    args = ["report", path, "--json", str(js), "--markdown", str(md), "-o", str(html)]
    result = CliRunner().invoke(main, [*args, "--predict-gpu", gpus, "-q"])
    assert result.exit_code == 0, result.output
    other = {o["gpu"]: o["kernels"][0] for o in json.loads(js.read_text("utf-8"))["bsp_other_gpus"]}
    assert all(k["form"] == "roofline" for k in other.values())
    assert other["NVIDIA H100 PCIe"]["form_reason"].startswith("roofline form: memory-bound")
    assert all(k["predicted_ms"] >= k["floor_ms"] for k in other.values())
    # twice the bandwidth of the RTX 4090: not predicted slower
    h100, rtx4090 = other["NVIDIA H100 PCIe"], other["NVIDIA GeForce RTX 4090"]
    assert h100["predicted_ms"] < rtx4090["predicted_ms"]
    assert "(memory, roofline form)" in md.read_text("utf-8")
    assert ">roofline</span>" in html.read_text("utf-8")
    # carried in the arch form, the RTX 4090 is raised to its memory part, and says so
    monkeypatch.setattr(predictions_module, "DEFAULT_FORM", "arch")
    result = CliRunner().invoke(main, [*args, "--predict-gpu", gpus, "-q"])
    assert result.exit_code == 0, result.output
    other = {o["gpu"]: o["kernels"][0] for o in json.loads(js.read_text("utf-8"))["bsp_other_gpus"]}
    raised = other["NVIDIA GeForce RTX 4090"]
    assert raised["raised_to_floor"] == "memory" and raised["model_ms"] < raised["floor_ms"]
    assert raised["predicted_ms"] == raised["floor_ms"]
    assert other["NVIDIA H100 PCIe"]["raised_to_floor"] is None
    assert "(memory, arch form, raised to the memory floor)" in md.read_text("utf-8")
    assert "raised to the memory floor" in html.read_text("utf-8")
