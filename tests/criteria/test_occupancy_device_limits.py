"""The occupancy calculation with the device's own per-SM limits over the compute capability's.

Hand computations in the comments (the occupancy calculation of
advisor.criteria.engine.occupancy).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.criteria import evaluate
from advisor.criteria.engine.balance import calculated_theoretical_warps
from advisor.criteria.engine.inputs import DeviceView, device_view
from advisor.criteria.engine.occupancy import (
    SM_LIMITS,
    theoretical_warps_per_sm,
    with_device_limits,
)
from advisor.devices.characterization import default_characterization
from advisor.devices.database import find_device
from tests.criteria.test_criteria_engine import criterion, launch, make_profile, metric

#: 128 threads (4 warps), 40 registers, 20000 B of shared memory per block on cc 8.6
CONFIG = {
    "device.compute_capability": 8.6,
    "device.max_warps_per_sm": 48.0,
    "launch.block_threads": 128.0,
    "launch.registers_per_thread": 40.0,
    "launch.shared_bytes_per_block": 20000.0,
}


def test_no_device_limits_keep_the_compute_capabilitys() -> None:
    limits = SM_LIMITS["8.6"]
    assert with_device_limits(limits) == limits
    same = with_device_limits(limits, 48, 1536, 16, 65536, 102400)  # what an RTX 3070 reports
    assert same == limits


def test_each_missing_device_limit_falls_back_on_its_own() -> None:
    limits = with_device_limits(SM_LIMITS["8.6"], shared_bytes=65536, max_blocks=None)
    assert limits.shared_bytes == 65536
    assert (limits.max_warps, limits.max_blocks, limits.registers) == (48, 16, 65536)
    assert limits.reserved_shared_bytes == 1024  # allocation units stay the cc's
    # a thread limit caps the warps: 1024 threads = 32 warps
    assert with_device_limits(SM_LIMITS["8.0"], max_warps=64, max_threads=1024).max_warps == 32
    # unusable values are ignored
    unusable = with_device_limits(SM_LIMITS["8.0"], registers=float("nan"), max_blocks=0)
    assert unusable == SM_LIMITS["8.0"]


def test_smaller_shared_memory_than_the_table_lowers_the_theoretical_warps() -> None:
    # cc 8.6 table, 102400 B: (20000 + 1024) -> 21120 B per block -> 4 blocks -> 16 warps
    assert calculated_theoretical_warps(CONFIG) == 16
    # the device says 65536 B: 65536 // 21120 = 3 blocks -> 12 warps
    values = {**CONFIG, "device.shared_bytes_per_sm": 65536.0}
    assert calculated_theoretical_warps(values) == 12
    limits = with_device_limits(SM_LIMITS["8.6"], shared_bytes=65536)
    assert theoretical_warps_per_sm(limits, 128, 40, 20000) == 12


def test_registers_and_blocks_of_the_device_bind_too() -> None:
    # 32768 registers: 40 regs -> 1280 per warp -> 25 warps -> 24 (granularity 4) -> 6 blocks
    values = {**CONFIG, "device.registers_per_sm": 32768.0, "launch.shared_bytes_per_block": 0.0}
    assert calculated_theoretical_warps(values) == 24
    # 32 threads per block: 48 warps allow 48 blocks, the table 16, a device saying 8 -> 8 warps
    small = {**CONFIG, "launch.block_threads": 32.0, "launch.shared_bytes_per_block": 0.0}
    assert calculated_theoretical_warps(small) == 16
    assert calculated_theoretical_warps({**small, "device.max_blocks_per_sm": 8.0}) == 8


def test_the_device_limits_flow_from_the_spec_to_the_criteria() -> None:
    database = find_device("NVIDIA GeForce RTX 3070")  # cc 8.6, no limits of its own
    spec = replace(database, shared_bytes_per_sm=65536)
    view = device_view(default_characterization(spec))
    values = view.values()
    assert values["device.shared_bytes_per_sm"] == 65536.0
    assert "device.registers_per_sm" not in values  # unknown: the cc's table applies
    # nvprof-like launch: achieved occupancy 0.2 of 48 warps = 9.6 warps
    profile = make_profile(
        [
            launch(
                0, 1000.0, block_x=128, block_y=1, block_z=1, grid_x=1000, grid_y=1, grid_z=1,
                registers_per_thread=40, static_shared_bytes=20000.0, dynamic_shared_bytes=0.0,
            )
        ],
        [metric(0, "achieved_occupancy", 0.2)],
        profiler="nvprof",
    )  # fmt: skip
    table_view = device_view(default_characterization(database))
    table = criterion(evaluate(profile, table_view), "LOADBALANC_WARP")
    own = criterion(evaluate(profile, view), "LOADBALANC_WARP")
    assert table.value == pytest.approx(9.6 / 16)  # 16 warps with the cc table
    assert own.value == pytest.approx(9.6 / 12)  # 12 warps with the device's 64 KiB


def test_a_view_without_limits_gives_no_limit_values() -> None:
    values = DeviceView(compute_capability="8.6", max_warps_per_sm=48).values()
    assert sorted(k for k in values if k.endswith("_per_sm")) == ["device.max_warps_per_sm"]
