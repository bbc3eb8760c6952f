"""Per-SM limits from the profile's device record into the DeviceSpec (Decision D1 of
docs/devices.md) and through characterization files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parsers
from advisor.devices.characterization import (
    default_characterization,
    dump_characterization,
    load_characterization,
)
from advisor.devices.database import SM_LIMIT_FIELDS, find_device
from advisor.devices.resolve import resolve_device
from advisor.errors import MalformedInput
from tests.devices.test_devices import minimal, with_device_record, write_json

FULL = {
    "compute_capability": "8.6",
    "sm_count": 16,
    "sm_clock_hz": 1.155e9,
    "memory_bandwidth_bytes_per_s": 96.016e9,
}


def test_a_records_limits_reach_the_spec() -> None:
    profile = with_device_record(
        "NVIDIA Imaginary X1",
        **FULL,
        max_warps_per_sm=40,  # not cc 8.6's 48: the record wins
        max_threads_per_sm=1280,
        max_blocks_per_sm=12,
        registers_per_sm=32768,
        shared_bytes_per_sm=65536.0,
    )
    spec = resolve_device(profile, None).device
    assert spec.max_warps_per_sm == 40
    assert (spec.max_threads_per_sm, spec.max_blocks_per_sm) == (1280, 12)
    assert (spec.registers_per_sm, spec.shared_bytes_per_sm) == (32768, 65536)


def test_limits_the_record_lacks_stay_the_compute_capabilitys() -> None:
    profile = with_device_record("NVIDIA Imaginary X1", **FULL, shared_bytes_per_sm=float("nan"))
    spec = resolve_device(profile, None).device
    assert spec.max_warps_per_sm == 48  # cc 8.6 (architectures.json)
    assert all(getattr(spec, name) is None for name in SM_LIMIT_FIELDS)


def test_zero_or_negative_limits_are_ignored() -> None:
    profile = with_device_record(
        "NVIDIA Imaginary X1", **FULL, max_warps_per_sm=0, registers_per_sm=-1
    )
    spec = resolve_device(profile, None).device
    assert spec.max_warps_per_sm == 48 and spec.registers_per_sm is None


def test_an_incomplete_record_still_gives_its_limits_to_the_database_entry() -> None:
    # no SMs, clock or bandwidth: the database entry of the K40, with the record's limits
    profile = with_device_record(
        "Tesla K40c", compute_capability="3.5", shared_bytes_per_sm=49152.0, max_blocks_per_sm=16
    )
    spec = resolve_device(profile, None).device
    assert spec.name == "Tesla K40" and spec.sm_count == 15
    assert (spec.shared_bytes_per_sm, spec.max_blocks_per_sm) == (49152, 16)
    assert find_device("Tesla K40").shared_bytes_per_sm is None  # the database is unchanged


def test_database_entries_have_no_limits_and_their_files_no_limit_keys() -> None:
    spec = find_device("NVIDIA A100-SXM4-40GB")
    assert all(getattr(spec, name) is None for name in SM_LIMIT_FIELDS)
    device = json.loads(dump_characterization(default_characterization(spec)))["device"]
    assert not set(SM_LIMIT_FIELDS) & set(device)


def test_limits_survive_a_characterization_file(tmp_path: Path) -> None:
    record = {**FULL, "compute_capability": "8.0", "sm_count": 108}
    spec = resolve_device(
        with_device_record("NVIDIA A100-SXM4-40GB", **record, shared_bytes_per_sm=65536.0), None
    ).device
    path = tmp_path / "x1.json"
    path.write_text(dump_characterization(default_characterization(spec)))
    loaded = load_characterization(str(path)).device
    assert loaded.shared_bytes_per_sm == 65536 and loaded.max_blocks_per_sm is None
    assert loaded == spec


def test_a_bad_limit_in_a_characterization_file_is_malformed(tmp_path: Path) -> None:
    data = minimal(device={"name": "NVIDIA GeForce RTX 4090", "registers_per_sm": -1})
    with pytest.raises(
        MalformedInput, match=r"device\.registers_per_sm: value outside \(0, 1000000\], got -1"
    ):
        load_characterization(write_json(tmp_path, data))


@pytest.mark.real_profiles
def test_real_report_limits_reach_the_spec(real_profiles: Path) -> None:
    # TITAN V nvprof database: 64 warps, 32 blocks, 65536 registers, 96 KiB per SM
    profile = parsers.read(real_profiles / "reports/GPU_ML/timeline.nvvp")
    spec = resolve_device(profile, None).device
    assert spec.name == "TITAN V" and spec.max_warps_per_sm == 64
    assert (spec.max_blocks_per_sm, spec.registers_per_sm) == (32, 65536)
    assert spec.shared_bytes_per_sm == 98304 and spec.max_threads_per_sm is None
