"""Theoretical occupancy from a launch configuration and the limits of a compute capability.

This is the occupancy calculation the LOADBALANC_WARP and THROUGHPUT/OCCUPANCY criteria need when
the profiler did not report a theoretical occupancy (nvprof never does): the resident blocks per
SM are the minimum of the limits set by warps, blocks, registers and shared memory.  It is the
CUDA Occupancy Calculator's arithmetic, simplified: the register file is allocated per warp in
units of ``REG_ALLOC_UNIT`` registers, warps in groups of ``WARP_ALLOC_GRANULARITY``, shared
memory in ``SHARED_ALLOC_UNIT_BYTES`` chunks plus the per-block reservation of cc >= 8.0, and the
shared-memory limit is the largest carve-out of the architecture (so the result is an upper
bound when the application chose a smaller carve-out).

Limits per compute capability: CUDA C++ Programming Guide, "Technical Specifications per Compute
Capability" (see also FORMATS.md §5).  Where the profile states the device's own limits (Nsight
Compute's ``device__attribute_max_*_per_multiprocessor``, the nvprof/nsys device tables; the
``device.*`` values of the criteria), :func:`with_device_limits` puts them over the compute
capability's, field by field; the allocation units stay the compute capability's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SmLimits:
    max_warps: int
    max_blocks: int
    registers: int  # 32-bit registers per SM
    shared_bytes: int  # largest shared-memory carve-out per SM
    reg_alloc_unit: int = 256  # registers, per warp
    warp_alloc_granularity: int = 4
    shared_alloc_unit_bytes: int = 256
    reserved_shared_bytes: int = 0  # per block (cc >= 8.0 reserves 1 KB for the system)


_KB = 1024

#: compute capability -> per-SM limits
SM_LIMITS: dict[str, SmLimits] = {
    "1.0": SmLimits(24, 8, 8192, 16 * _KB, 256, 2, 512),
    "1.1": SmLimits(24, 8, 8192, 16 * _KB, 256, 2, 512),
    "1.2": SmLimits(32, 8, 16384, 16 * _KB, 512, 2, 512),
    "1.3": SmLimits(32, 8, 16384, 16 * _KB, 512, 2, 512),
    "2.0": SmLimits(48, 8, 32768, 48 * _KB, 64, 2, 128),
    "2.1": SmLimits(48, 8, 32768, 48 * _KB, 64, 2, 128),
    "3.0": SmLimits(64, 16, 65536, 48 * _KB),
    "3.2": SmLimits(64, 16, 65536, 48 * _KB),
    "3.5": SmLimits(64, 16, 65536, 48 * _KB),
    "3.7": SmLimits(64, 16, 131072, 112 * _KB),
    "5.0": SmLimits(64, 32, 65536, 64 * _KB),
    "5.2": SmLimits(64, 32, 65536, 96 * _KB),
    "5.3": SmLimits(64, 32, 65536, 64 * _KB),
    "6.0": SmLimits(64, 32, 65536, 64 * _KB),
    "6.1": SmLimits(64, 32, 65536, 96 * _KB),
    "6.2": SmLimits(64, 32, 65536, 64 * _KB),
    "7.0": SmLimits(64, 32, 65536, 96 * _KB),
    "7.2": SmLimits(64, 32, 65536, 96 * _KB),
    "7.5": SmLimits(32, 16, 65536, 64 * _KB),
    "8.0": SmLimits(64, 32, 65536, 164 * _KB, 256, 4, 128, _KB),
    "8.6": SmLimits(48, 16, 65536, 100 * _KB, 256, 4, 128, _KB),
    "8.7": SmLimits(48, 16, 65536, 164 * _KB, 256, 4, 128, _KB),
    "8.9": SmLimits(48, 24, 65536, 100 * _KB, 256, 4, 128, _KB),
    "9.0": SmLimits(64, 32, 65536, 228 * _KB, 256, 4, 128, _KB),
    "10.0": SmLimits(64, 32, 65536, 228 * _KB, 256, 4, 128, _KB),
    "12.0": SmLimits(48, 32, 65536, 100 * _KB, 256, 4, 128, _KB),
}


def limits_for(compute_capability: float | str | None) -> SmLimits | None:
    """The limits of compute capability ("8.6" or 8.6), else the closest lower one of its major."""
    if compute_capability is None:
        return None
    try:
        cc = float(compute_capability)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(cc):
        return None
    key = f"{cc:.1f}"
    if key in SM_LIMITS:
        return SM_LIMITS[key]
    same_major = [k for k in SM_LIMITS if int(float(k)) == int(cc) and float(k) <= cc]
    if same_major:
        return SM_LIMITS[max(same_major, key=float)]
    return None


def with_device_limits(
    limits: SmLimits,
    max_warps: float | None = None,
    max_threads: float | None = None,
    max_blocks: float | None = None,
    registers: float | None = None,
    shared_bytes: float | None = None,
) -> SmLimits:
    """``limits`` with the device's own per-SM limits where given (positive, finite); each one
    missing keeps the compute capability's.  A thread limit caps the warps at threads / 32."""

    def given(value: float | None) -> int | None:
        if value is None:
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            return None
        return int(number) if math.isfinite(number) and number >= 1 else None

    warps = given(max_warps) or limits.max_warps
    threads = given(max_threads)
    if threads is not None:
        warps = min(warps, threads // 32)
    return replace(
        limits,
        max_warps=warps,
        max_blocks=given(max_blocks) or limits.max_blocks,
        registers=given(registers) or limits.registers,
        shared_bytes=given(shared_bytes) or limits.shared_bytes,
    )


def resident_blocks_per_sm(
    limits: SmLimits,
    block_threads: float,
    registers_per_thread: float = 0.0,
    shared_bytes_per_block: float = 0.0,
    max_warps: float | None = None,
) -> int:
    """Blocks of this configuration that fit on one SM at once (0 if none fits).

    min(warps limit, blocks limit, registers limit, shared-memory limit), with
    warps/block = ceil(threads / 32); registers/warp = ceil(regs * 32 / unit) * unit;
    shared/block = ceil((bytes + reserved) / unit) * unit.
    """
    if not block_threads > 0:
        return 0
    warps_cap = int(max_warps or limits.max_warps)
    warps_per_block = math.ceil(block_threads / 32)
    blocks = min(warps_cap // warps_per_block, limits.max_blocks)
    if registers_per_thread > 0:
        per_warp = math.ceil(registers_per_thread * 32 / limits.reg_alloc_unit)
        per_warp *= limits.reg_alloc_unit
        warps_by_regs = limits.registers // per_warp
        warps_by_regs -= warps_by_regs % limits.warp_alloc_granularity
        blocks = min(blocks, warps_by_regs // warps_per_block)
    if shared_bytes_per_block > 0:
        need = shared_bytes_per_block + limits.reserved_shared_bytes
        unit = limits.shared_alloc_unit_bytes
        per_block = math.ceil(need / unit) * unit
        blocks = min(blocks, limits.shared_bytes // per_block)
    return max(blocks, 0)


def theoretical_warps_per_sm(
    limits: SmLimits,
    block_threads: float,
    registers_per_thread: float = 0.0,
    shared_bytes_per_block: float = 0.0,
    max_warps: float | None = None,
) -> float:
    """(BLOCKSIZE / 32) * #Blocks_per_SM, the denominator of LOADBALANC_WARP (seed 002, IV-D)."""
    blocks = resident_blocks_per_sm(
        limits, block_threads, registers_per_thread, shared_bytes_per_block, max_warps
    )
    return float(blocks * math.ceil(block_threads / 32))
