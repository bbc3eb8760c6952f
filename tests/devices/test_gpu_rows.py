"""The rows of advisor/data/gpus.csv: every row parses, names and aliases are unambiguous, every row
names its sources, and the GPUs of the tuning families resolve to rows with the figures verified
against their sources (Nsight Compute / Nsight Systems device records, NVIDIA and TechPowerUp
figures as cited in each row's ``sources``)."""

from __future__ import annotations

import csv
import json
from collections import defaultdict

import pytest

from advisor.devices.database import (
    ARCHITECTURES_JSON,
    GPUS_CSV,
    all_devices,
    find_device,
    normalize_name,
)

#: GPU names exactly as the profiles of shared/tuning_families print them
TUNING_FAMILY_GPUS = (
    "NVIDIA GeForce RTX 4050 Laptop GPU",  # F01 (ncu 2023.3)
    "NVIDIA A10G",  # F02
    "NVIDIA GeForce RTX 3070 Laptop GPU",  # F03-F05, F07
    "Tesla P40",  # F06
    "NVIDIA A40",  # F09
    "NVIDIA GeForce RTX 3080",  # F12
    "NVIDIA GeForce RTX 2070",  # F13
    "NVIDIA GeForce RTX 3080 Laptop GPU",  # F14
    "NVIDIA GeForce MX570",  # F15
    "NVIDIA GeForce RTX 3060",  # F17
)

#: FP32 cores per SM by compute capability (CUDA C++ Programming Guide, arithmetic instructions:
#: 32-bit floating-point add/multiply results per clock per SM), for cc >= 3.0
FP32_CORES_PER_SM = {
    "3.0": 192, "3.5": 192, "3.7": 192, "5.0": 128, "5.2": 128, "6.0": 64, "6.1": 128,
    "7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.9": 128, "9.0": 128, "10.0": 128,
    "12.0": 128,
}  # fmt: skip


def _csv_rows() -> list[dict[str, str]]:
    with GPUS_CSV.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_row_parses() -> None:
    rows = _csv_rows()
    specs = all_devices()
    assert len(specs) == len(rows) >= 120
    assert [s.name for s in specs] == [r["name"].strip() for r in rows]
    for spec in specs:
        assert spec.sm_count > 0 and spec.fp32_cores_per_sm > 0, spec.name
        assert spec.boost_clock_hz > 0 and spec.memory_bandwidth_bytes_per_s > 0, spec.name
        if spec.base_clock_hz is not None:
            assert spec.base_clock_hz <= spec.boost_clock_hz, spec.name
        if spec.l2_bytes is not None:
            assert spec.l2_bytes >= 64 * 1024, spec.name


def test_no_two_rows_share_a_normalised_name_or_alias() -> None:
    owners: dict[str, set[str]] = defaultdict(set)
    for spec in all_devices():
        for spelling in (spec.name, *spec.aliases):
            owners[normalize_name(spelling)].add(spec.name)
    shared = {key: names for key, names in owners.items() if len(names) > 1}
    assert not shared


def test_every_row_names_its_sources() -> None:
    for row in _csv_rows():
        assert row["sources"].strip(), row["name"]
    for spec in all_devices():
        assert spec.sources and all(s.strip() for s in spec.sources), spec.name


def test_architecture_and_cores_follow_the_compute_capability() -> None:
    archs = json.loads(ARCHITECTURES_JSON.read_text(encoding="utf-8"))["architectures"]
    for spec in all_devices():
        assert spec.compute_capability in archs[spec.architecture]["compute_capabilities"], (
            spec.name
        )
        if float(spec.compute_capability) >= 3.0:
            expected = FP32_CORES_PER_SM[spec.compute_capability]
            assert spec.fp32_cores_per_sm == expected, spec.name


@pytest.mark.parametrize("printed", TUNING_FAMILY_GPUS)
def test_tuning_family_gpus_resolve_to_their_own_row(printed: str) -> None:
    assert find_device(printed).name == printed
    assert find_device(printed.upper()).name == printed  # the lookup ignores case


@pytest.mark.parametrize(
    ("printed", "cc", "sms", "boost_mhz", "gb_per_s", "l2_kib"),
    [
        # ncu device attributes of the tuning-family reports
        ("NVIDIA GeForce RTX 3080", "8.6", 68, 1710, 760.0, 5120),
        ("NVIDIA A40", "8.6", 84, 1740, 696.0, 6144),
        ("NVIDIA A10G", "8.6", 80, 1710, 600.1, 6144),
        ("NVIDIA GeForce MX570", "8.6", 16, 1155, 96.0, 1024),
        ("NVIDIA GeForce RTX 3060", "8.6", 28, 1777, 360.0, 2304),
        ("NVIDIA GeForce RTX 2070", "7.5", 36, 1620, 448.0, 4096),
        # laptop parts: the top of NVIDIA's published boost range
        ("NVIDIA GeForce RTX 4050 Laptop GPU", "8.9", 20, 2370, 192.0, 24576),
        ("NVIDIA GeForce RTX 3070 Laptop GPU", "8.6", 40, 1620, 448.0, 4096),
        ("NVIDIA GeForce RTX 3080 Laptop GPU", "8.6", 48, 1710, 448.0, 4096),
        # datasheet / TechPowerUp figures
        ("Tesla P40", "6.1", 30, 1531, 347.1, 3072),
        ("NVIDIA H100 PCIe", "9.0", 114, 1755, 2039.0, 51200),
        ("NVIDIA GeForce RTX 4070 Ti", "8.9", 60, 2610, 504.2, 49152),
    ],
)
def test_verified_figures(
    printed: str, cc: str, sms: int, boost_mhz: int, gb_per_s: float, l2_kib: int
) -> None:
    spec = find_device(printed)
    assert spec.compute_capability == cc
    assert spec.sm_count == sms
    assert spec.boost_clock_hz == pytest.approx(boost_mhz * 1e6)
    assert spec.memory_bandwidth_bytes_per_s == pytest.approx(gb_per_s * 1e9, abs=0.5e9)
    assert spec.l2_bytes == l2_kib * 1024


@pytest.mark.parametrize(
    ("printed", "tflops"),
    [
        ("NVIDIA A40", 37.42),  # NVIDIA A40 product brief: 37.4 TFLOPS
        ("NVIDIA H100 PCIe", 51.22),  # NVIDIA H100 whitepaper table: 51 TFLOPS
        ("NVIDIA L40S", 91.61),  # 91.6 TFLOPS
        ("NVIDIA GeForce RTX 4070 Ti", 40.09),
        ("NVIDIA GeForce MX570", 4.731),
        ("Quadro RTX 5000", 11.15),  # Cornell CVW: 3072 cores x 2 x 1.815 GHz
    ],
)
def test_peak_fp32_matches_published_tflops(printed: str, tflops: float) -> None:
    assert find_device(printed).peak_fp32_flops == pytest.approx(tflops * 1e12, rel=0.005)


@pytest.mark.parametrize(
    ("printed", "canonical"),
    [
        ("GeForce RTX 3080 Laptop GPU", "NVIDIA GeForce RTX 3080 Laptop GPU"),
        ("RTX 4050 Mobile", "NVIDIA GeForce RTX 4050 Laptop GPU"),
        ("NVIDIA GeForce RTX 2070 with Max-Q Design", "NVIDIA GeForce RTX 2070 Mobile"),
        ("NVIDIA GeForce GTX 1650 with Max-Q Design", "NVIDIA GeForce GTX 1650 Mobile"),
        ("NVIDIA RTX A2000 12GB", "NVIDIA RTX A2000"),
        ("NVIDIA H100 NVL", None),  # left out: its clocks are not confirmed
        ("NVIDIA H100 SXM", "NVIDIA H100 80GB HBM3"),
        ("Tesla V100-PCIE-32GB (0)", "Tesla V100-PCIE-32GB"),
        ("NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada Generation"),
    ],
)
def test_profiler_spellings(printed: str, canonical: str | None) -> None:
    if canonical is None:
        assert normalize_name(printed) not in {
            normalize_name(s) for spec in all_devices() for s in (spec.name, *spec.aliases)
        }
        return
    assert find_device(printed).name == canonical


def test_laptop_rows_say_how_their_clock_was_chosen() -> None:
    for spec in all_devices():
        if "Laptop GPU" in spec.name or spec.name.endswith("Mobile"):
            assert any("clock" in note for note in spec.notes), spec.name
