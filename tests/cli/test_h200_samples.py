"""The real profiles of the example programs under ``sample_profiles/h200`` (an NVIDIA H200,
Nsight Compute 2025.3.1, one launch of each variant; sample_profiles/README.md).

They are this project's own recordings, so their truth is known: the three transposes differ by
their global access pattern and their shared-memory bank conflicts, in lines of
``examples/transpose/transpose.cu`` that the tests read.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

import advisor.cli
import parsers
from advisor import pipeline

H200 = Path(__file__).resolve().parents[2] / "sample_profiles" / "h200"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
VARIANTS = (
    "matmul-gm-un",
    "matmul-gm",
    "matmul-sm-un",
    "matmul-sm",
    "reduction-v1",
    "reduction-v2",
    "reduction-v3",
    "transpose-naive",
    "transpose-shared",
    "transpose-padded",
)
REPORTS = ("transpose-naive", "transpose-shared", "transpose-padded")


def _kernel(path: Path, device: str | None = None) -> dict[str, Any]:
    run = pipeline.analyse_profile(pipeline.read([str(path)]), device=device)
    (kernel,) = run.data["kernels"]
    return dict(kernel)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("page", ["raw", "details"])
def test_each_csv_page_is_one_h200_launch(variant: str, page: str) -> None:
    path = H200 / f"{variant}.ncu-{page}.csv"
    head = path.read_text(encoding="utf-8").splitlines()[:2]
    assert head[0].startswith("# real profile: NVIDIA H200") and "ncu --set full" in head[1]
    profile = parsers.read(str(path))
    assert profile.provenance[0].format == "ncu-csv"
    assert len(profile.launches) == 1
    if page == "raw":  # the details page does not name its GPU
        assert "H200" in str(profile.devices["name"].iloc[0])


@pytest.mark.parametrize("variant", REPORTS)
def test_the_raw_page_and_its_report_file_give_the_same_criteria(
    variant: str, ncu_module: ModuleType
) -> None:
    """One run, two exports: every criterion and the headroom agree to the CSV's printed
    precision (the raw page carries the source counters' totals the report file has)."""
    rep = _kernel(H200 / f"{variant}.ncu-rep")
    raw = _kernel(H200 / f"{variant}.ncu-raw.csv")
    assert rep["duration_ns"] == raw["duration_ns"]
    assert rep["potential_speedup"] == pytest.approx(raw["potential_speedup"], rel=1e-6)
    for name, criterion in rep["criteria"].items():
        other = raw["criteria"][name]
        assert criterion["method"] == other["method"], name
        if criterion["value"] is None:
            assert other["value"] is None, name
        else:
            assert criterion["value"] == pytest.approx(other["value"], abs=1e-3), name


def _source_line(location: dict[str, Any]) -> str:
    program = Path(location["file"]).name
    lines = (EXAMPLES / Path(program).stem / program).read_text(encoding="utf-8").splitlines()
    return lines[int(location["line"]) - 1].strip()


@pytest.mark.parametrize(
    ("variant", "criterion", "code"),
    [
        ("transpose-naive", "L2_GRANULARITY", "out[x * height + (y + j)] = in[(y + j) * width"),
        ("transpose-shared", "SHMEM_EFFICIENCY", "= tile[threadIdx.x][threadIdx.y + j]"),
    ],
)
def test_the_hint_names_the_line_that_causes_it(
    variant: str, criterion: str, code: str, ncu_module: ModuleType
) -> None:
    """The naive transpose writes a column (a 32-sector store per warp); the shared one reads
    a column of its 32 x 32 tile (32-way bank conflicts): each hint's top location is that
    line of the example's source, as the report file embeds it and as the repository has it."""
    kernel = _kernel(H200 / f"{variant}.ncu-rep")
    assert kernel["hints"][0]["criterion"] == criterion
    top = kernel["locations"]["criteria"][criterion]["top"][0]
    assert top["share"] == pytest.approx(1.0)
    assert code in top["source"]
    assert _source_line(top) == top["source"].strip()


def test_the_padded_tile_has_no_conflicts_left(ncu_module: ModuleType) -> None:
    shared = _kernel(H200 / "transpose-shared.ncu-rep")["criteria"]["SHMEM_EFFICIENCY"]
    padded = _kernel(H200 / "transpose-padded.ncu-rep")["criteria"]["SHMEM_EFFICIENCY"]
    assert shared["value"] < 0.1  # 32-way: about 1/32 of the wavefronts are needed
    assert padded["value"] == pytest.approx(1.0)


def test_the_committed_characterization_is_the_fit_of_the_committed_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``microbench fit`` of the H200's raw samples gives the committed device JSON byte for
    byte (the note names the raw file by the path given, so the fit runs from the repository
    root with the same relative path)."""
    monkeypatch.chdir(H200.parents[1])
    out = tmp_path / "device.json"
    result = CliRunner().invoke(
        advisor.cli.main,
        ["microbench", "fit", "sample_profiles/h200/microbench-raw.json", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (H200 / "device-h200.json").read_bytes()
    fitted = json.loads(out.read_text(encoding="utf-8"))
    assert fitted["measured"] is True and fitted["device"]["name"] == "NVIDIA H200"


def test_the_measured_characterization_weighs_the_headroom(ncu_module: ModuleType) -> None:
    """With the H200's measured F_DRAMThr the padded transpose, which moves its bytes at the
    bandwidth the microbenchmarks reach, has no roofline headroom left; without it the
    datasheet peak leaves 1.48x."""
    path = H200 / "transpose-padded.ncu-rep"
    assert _kernel(path)["potential_speedup"] == pytest.approx(1.48, abs=0.01)
    measured = _kernel(path, device=str(H200 / "device-h200.json"))
    assert measured["potential_speedup"] == pytest.approx(1.0)


def test_the_characterization_weighs_flop_rates_not_the_sms_busy_share() -> None:
    """The shared-tile matrix product: SM throughput 70 % of peak (Speed Of Light), L1/TEX at
    91 %, DRAM at 0.5 %. F_ARITHThr is measured on FLOP rates; applied to the SM's busy share it
    raised 0.70 to 1.00 and called the kernel compute-bound."""
    path = H200 / "matmul-sm.ncu-raw.csv"
    plain, measured = _kernel(path), _kernel(path, device=str(H200 / "device-h200.json"))
    sm = plain["throughputs"]["compute_frac"]
    assert sm == pytest.approx(0.697, abs=1e-3)
    assert measured["throughputs"]["compute_frac"] == sm
    assert measured["bound"] == plain["bound"] == "memory"
    # the FLOP rate is what F_ARITHThr weighs: 0.116 of peak reads 0.161 of what the H200 reaches
    flops = plain["throughputs"]["arithmetic_frac"], measured["throughputs"]["arithmetic_frac"]
    assert flops[0] == pytest.approx(0.116, abs=1e-3) and flops[1] > flops[0]


def test_a_cache_bound_kernel_with_headroom_is_told_about_its_cache_not_dram(
    tmp_path: Path,
) -> None:
    out = tmp_path / "m.md"
    args = ["report", str(H200 / "matmul-sm.ncu-raw.csv"), "--markdown", str(out), "-q"]
    result = CliRunner().invoke(
        advisor.cli.main, [*args, "--device", str(H200 / "device-h200.json")]
    )
    assert result.exit_code == 0, result.output
    first = out.read_text(encoding="utf-8").split("\n\n")[0]
    assert "it is memory-bound on L1/TEX (91% of peak), not on DRAM" in first
    assert "below peak DRAM bandwidth" not in first and "compute-bound" not in first
