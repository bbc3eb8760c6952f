"""The MAX / SUM kernel-time model (seed 001 §3, MODELS.md §4).

Per thread T (seed 001 §3.2-3.3):

* N_comp = Σ_op n_op · c_op, with c_op the cycles of the operation on the architecture (GT200:
  4 for int add, 16 for 32-bit int mul, 48 for int modulus; ``advisor/data/op_cycles.json``);
* N_mem = Σ memory costs: a global access costs 500 cycles, or (500 + k) / k when k threads share
  one coalesced transaction; a shared access costs 4 cycles, 4k when k accesses conflict on a bank;
* MAX model: C(T) = max(N_comp, N_mem) (latency fully hidden);
  SUM model: C(T) = N_comp + N_mem (nothing hidden).

Per kernel K (seed 001 §3.4, equations 2-4):

* C_T(K) = max over threads T of C(T)  (computed with MAX or with SUM);
* C(K) = N_B(K) · N_w(K) · N_t(K) · C_T(K) / (N_c · D);  T(K) = C(K) / R;
* T(P) = Σ_K T(K)  (equation 1; a kernel launched n times counts n times).

N_B: blocks per SM in sequence, N_w: warps per block, N_t: threads per warp, N_c: cores per SM,
D: pipeline depth (4 on GT200), R: clock rate in Hz.  The truth should lie between the MAX and the
SUM time; :func:`bounds_verdict` says where a measured time falls.

**Reading of k** (seed 001 §3.2.2 gives "(500 + k)/k for the k threads a transaction benefits"
without saying which k when a request needs transactions of different sizes): k is the average
number of active threads per transaction of the request, so a request of T transactions serving
A threads costs the group 500·T + A cycles in all.  k = 1 (every thread its own transaction) is
the paper's non-coalesced case and costs 500, not 501.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

_DATA = Path(__file__).resolve().parents[2] / "data" / "op_cycles.json"

GLOBAL_ACCESS_CYCLES = 500.0
"""Seed 001 §3.2.2: global accesses take 400-600 cycles; the paper takes the average, 500."""

SHARED_ACCESS_CYCLES = 4.0
"""Seed 001 §3.2.2: a shared access takes about 4 cycles (4k with k-way contention)."""

THREADS_PER_WARP = 32
"""N_t on every NVIDIA GPU (seed 001 §2)."""


@dataclass(frozen=True)
class OpCycleTable:
    """Cycles per operation (per thread) and memory costs of one architecture."""

    arch: str
    compute_capabilities: tuple[str, ...]
    pipeline_depth: int
    global_cycles: float
    shared_cycles: float
    ops: Mapping[str, float] = field(hash=False)
    sources: Mapping[str, str] = field(hash=False, compare=False)


@cache
def op_cycle_tables() -> dict[str, OpCycleTable]:
    """The per-architecture tables of ``advisor/data/op_cycles.json``, keyed by architecture."""
    raw = json.loads(_DATA.read_text(encoding="utf-8"))
    tables = {}
    for arch, entry in raw["architectures"].items():
        tables[arch] = OpCycleTable(
            arch=arch,
            compute_capabilities=tuple(entry["compute_capabilities"]),
            pipeline_depth=int(entry["pipeline_depth"]),
            global_cycles=float(entry["memory"]["global_cycles"]),
            shared_cycles=float(entry["memory"]["shared_cycles"]),
            ops={name: float(op["cycles"]) for name, op in entry["ops"].items()},
            sources={name: str(op["source"]) for name, op in entry["ops"].items()},
        )
    return tables


def table_for(arch_or_cc: str) -> OpCycleTable | None:
    """The table of an architecture name ("GT200") or compute capability ("1.3"); None if none."""
    tables = op_cycle_tables()
    if arch_or_cc in tables:
        return tables[arch_or_cc]
    wanted = str(arch_or_cc).strip()
    return next((t for t in tables.values() if wanted in t.compute_capabilities), None)


def compute_cycles(ops: Mapping[str, float], cycles: Mapping[str, float]) -> float:
    """N_comp = Σ_op n_op · c_op (seed 001 §3.2.1).

    ``ops`` maps an operation name to its count per thread.  Raises ValueError naming the
    operations missing from ``cycles``.  Example (seed 001 §3.2.1): 2 int adds + 2 int muls
    = 2·4 + 2·16 = 40 cycles (the seed prints 72, an arithmetic slip).
    """
    unknown = sorted(set(ops) - set(cycles))
    if unknown:
        known = ", ".join(sorted(cycles))
        raise ValueError(f"no cycle count for operation(s) {', '.join(unknown)}; known: {known}")
    return float(sum(count * cycles[name] for name, count in ops.items()))


def global_access_cycles(
    threads_per_transaction: float, latency_cycles: float = GLOBAL_ACCESS_CYCLES
) -> float:
    """Cycles of one global access per thread: (L + k) / k, or L when k <= 1 (seed 001 §3.2.2)."""
    k = float(threads_per_transaction)
    if k <= 1.0:
        return float(latency_cycles)
    return (latency_cycles + k) / k


def shared_access_cycles(
    conflict_degree: float, latency_cycles: float = SHARED_ACCESS_CYCLES
) -> float:
    """Cycles of one shared access: L · k for a k-way bank conflict, L without (seed 001 §3.2.2)."""
    return float(latency_cycles) * max(float(conflict_degree), 1.0)


def thread_cycles_max(n_comp: float, n_mem: float) -> float:
    """MAX model, C(T) = max(N_comp, N_mem): latency fully hidden (seed 001 §3.3)."""
    return max(n_comp, n_mem)


def thread_cycles_sum(n_comp: float, n_mem: float) -> float:
    """SUM model, C(T) = N_comp + N_mem: nothing hidden (seed 001 §3.3)."""
    return n_comp + n_mem


def kernel_cycles(
    blocks_per_sm: float,
    warps_per_block: float,
    threads_per_warp: float,
    thread_cycles: float,
    cores_per_sm: float,
    pipeline_depth: float,
) -> float:
    """C(K) = N_B · N_w · N_t · C_T(K) / (N_c · D)  (seed 001 §3.4, equation 3).

    Raises ValueError when N_c · D is not positive (no cores: the time is undefined).
    """
    lanes = cores_per_sm * pipeline_depth
    if lanes <= 0:
        raise ValueError("cores per SM × pipeline depth must be positive")
    return blocks_per_sm * warps_per_block * threads_per_warp * thread_cycles / lanes


def kernel_time_s(cycles: float, clock_hz: float) -> float:
    """T(K) = C(K) / R (seed 001 §3.4, equation 4).  ValueError for a non-positive clock."""
    if clock_hz <= 0:
        raise ValueError("clock rate must be positive")
    return cycles / clock_hz


def program_time_s(kernel_times_s: Iterable[float]) -> float:
    """T(P) = Σ_K T(K) (seed 001 §3.4, equation 1)."""
    return float(sum(kernel_times_s))


BETWEEN = "between"
BELOW_MAX = "below_max"
ABOVE_SUM = "above_sum"


def bounds_verdict(measured_s: float | None, max_s: float, sum_s: float) -> str | None:
    """Where a measured time falls: ``between`` [MAX, SUM], ``below_max`` or ``above_sum``.

    None when no measured time is given.
    """
    if measured_s is None:
        return None
    if measured_s < max_s:
        return BELOW_MAX
    if measured_s > sum_s:
        return ABOVE_SUM
    return BETWEEN


@dataclass(frozen=True)
class CostTerm:
    """One line of a thread's cycle count: ``count`` × ``cycles_each`` (``kind`` says of what)."""

    kind: str  # "op", "compute", "global", "shared", "memory"
    label: str
    count: float
    cycles_each: float

    @property
    def cycles(self) -> float:
        return self.count * self.cycles_each


@dataclass(frozen=True)
class ThreadCost:
    """A thread (or a class of threads doing the same work): its compute and memory terms."""

    name: str
    terms: tuple[CostTerm, ...]

    @property
    def compute_cycles(self) -> float:
        """N_comp."""
        return sum(t.cycles for t in self.terms if t.kind in ("op", "compute"))

    @property
    def memory_cycles(self) -> float:
        """N_mem."""
        return sum(t.cycles for t in self.terms if t.kind in ("global", "shared", "memory"))

    @property
    def max_cycles(self) -> float:
        return thread_cycles_max(self.compute_cycles, self.memory_cycles)

    @property
    def sum_cycles(self) -> float:
        return thread_cycles_sum(self.compute_cycles, self.memory_cycles)


@dataclass(frozen=True)
class GpuParams:
    """The machine constants of the model: R, N_c, D (and where they came from)."""

    name: str
    clock_hz: float
    cores_per_sm: float
    pipeline_depth: float
    sm_count: int | None = None
    compute_capability: str | None = None
    arch: str | None = None


@dataclass(frozen=True)
class KernelModel:
    """One kernel: launch shape, its thread classes, and a measured time per launch if known."""

    name: str
    blocks_per_sm: float
    warps_per_block: float
    threads_per_warp: float
    threads: tuple[ThreadCost, ...]
    launches: int = 1
    measured_s: float | None = None


@dataclass(frozen=True)
class KernelBounds:
    """MAX and SUM predictions for one kernel (per launch, and over its launches)."""

    kernel: KernelModel
    ct_max_cycles: float
    ct_sum_cycles: float
    cycles_max: float
    cycles_sum: float
    time_max_s: float
    time_sum_s: float
    verdict: str | None

    @property
    def total_max_s(self) -> float:
        return self.time_max_s * self.kernel.launches

    @property
    def total_sum_s(self) -> float:
        return self.time_sum_s * self.kernel.launches


@dataclass(frozen=True)
class MaxSumPrediction:
    """T(P) under both models, per kernel and in total, with the measured comparison."""

    gpu: GpuParams
    kernels: tuple[KernelBounds, ...]
    total_max_s: float
    total_sum_s: float
    measured_s: float | None
    verdict: str | None


def predict_kernel(kernel: KernelModel, gpu: GpuParams) -> KernelBounds:
    """C_T(K) (max over threads), C(K) and T(K) under MAX and SUM (seed 001 equations 2-4)."""
    if not kernel.threads:
        raise ValueError(f"kernel {kernel.name}: no thread description")
    ct_max = max(t.max_cycles for t in kernel.threads)
    ct_sum = max(t.sum_cycles for t in kernel.threads)
    shape = (kernel.blocks_per_sm, kernel.warps_per_block, kernel.threads_per_warp)
    c_max = kernel_cycles(*shape, ct_max, gpu.cores_per_sm, gpu.pipeline_depth)
    c_sum = kernel_cycles(*shape, ct_sum, gpu.cores_per_sm, gpu.pipeline_depth)
    t_max = kernel_time_s(c_max, gpu.clock_hz)
    t_sum = kernel_time_s(c_sum, gpu.clock_hz)
    return KernelBounds(
        kernel=kernel,
        ct_max_cycles=ct_max,
        ct_sum_cycles=ct_sum,
        cycles_max=c_max,
        cycles_sum=c_sum,
        time_max_s=t_max,
        time_sum_s=t_sum,
        verdict=bounds_verdict(kernel.measured_s, t_max, t_sum),
    )


def predict_program(
    kernels: Iterable[KernelModel], gpu: GpuParams, measured_s: float | None = None
) -> MaxSumPrediction:
    """T(P) = Σ T(K) under MAX and SUM; ``measured_s`` (the whole program) is compared with both.

    Without ``measured_s``, the program's measured time is the sum of the kernels' measured
    times × launches when every kernel has one.
    """
    bounds = tuple(predict_kernel(k, gpu) for k in kernels)
    total_max = program_time_s(b.total_max_s for b in bounds)
    total_sum = program_time_s(b.total_sum_s for b in bounds)
    if measured_s is None and bounds and all(b.kernel.measured_s is not None for b in bounds):
        measured_s = sum(float(b.kernel.measured_s or 0.0) * b.kernel.launches for b in bounds)
    return MaxSumPrediction(
        gpu=gpu,
        kernels=bounds,
        total_max_s=total_max,
        total_sum_s=total_sum,
        measured_s=measured_s,
        verdict=bounds_verdict(measured_s, total_max, total_sum),
    )
