"""BSP-based kernel time model with one calibration parameter λ (seed 000; MODELS.md §3).

Seed ``000_c6c93339b4edc0e2.txt`` (Amaris et al., "A simple BSP-based model to predict execution
time in GPU applications"), §IV, equations (3)–(5)::

    T_k     = t · (Comp + Comm_GM + Comm_SM) / (R · P · λ)                     (3)
    Comm_SM = (ld0 + st0) · g_SM                                               (4)
    Comm_GM = (ld1 + st1 − L1 − L2) · g_GM + L1 · g_L1 + L2 · g_L2             (5)

t threads, R clock rate (Hz), P cores, Comp compute cycles per thread, ld0/st0 shared and
ld1/st1 global loads and stores per thread, L1/L2 cache hits per thread.  The paper obtains L1 and
L2 as a hit rate from a profile times the accesses; the project multiplies the rate by the
thread's global *loads* ld1 (Fermi/Kepler L1 caches loads only; the paper's published R scripts,
github.com/marcosamaris/BSPGPU ``experiment/*/…-ModelBSP.R``, do the same with ``L2Effect <-
rate * reads``).  λ is "the ratio between the predicted execution time of the application with
the actual measured execution time" (§IV): predict with λ = 1 on one (GPU, size) and divide by
the measured time; that λ then predicts other sizes and other GPUs (§V).

Latencies (§IV and §VI): g_SM = g_L1 = 5 cycles, g_GM = 500 cycles, g_L2 = 250 cycles (half the
global latency).  R and P come from the GPU: P = SMs × FP32 cores per SM, R the clock of the
paper's Table I (the GPU database holds it as ``boost_clock_hz``).

Zero-denominator policy: R, P and λ must be > 0, a measured time must be > 0, and calibrating
against a model that predicts zero cycles is refused; each raises :class:`ValueError` with the
reason (the command line turns it into a usage error).  Counts must be finite and >= 0, hit rates
in [0, 1] with L1 + L2 <= 1 (otherwise Comm_GM would count negative misses).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

SEED = "seed 000 (000_c6c93339b4edc0e2.txt) §IV eq. (3)-(5)"

#: g_SM: "5 cycles for latency in the communication in shared memory" (seed 000 §VI)
G_SM_CYCLES = 5.0
#: g_L1: "the same latency from shared memory to the L1 cache" (seed 000 §VI)
G_L1_CYCLES = 5.0
#: g_GM: "500 cycles are considered for latency communication in global memory" (§VI, ref. [9])
G_GM_CYCLES = 500.0
#: g_L2: "half the global memory latency for L2 cache" (seed 000 §VI; 250 cycles in §IV)
G_L2_CYCLES = 250.0


def _check_count(name: str, value: float) -> None:
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class Latencies:
    """Communication latencies in cycles (the g of BSP), seed 000 §IV / §VI defaults."""

    shared_cycles: float = G_SM_CYCLES
    global_cycles: float = G_GM_CYCLES
    l1_cycles: float = G_L1_CYCLES
    l2_cycles: float = G_L2_CYCLES

    def __post_init__(self) -> None:
        for name in ("shared_cycles", "global_cycles", "l1_cycles", "l2_cycles"):
            _check_count(name, getattr(self, name))


DEFAULT_LATENCIES = Latencies()


@dataclass(frozen=True)
class ThreadCounts:
    """What one thread does, in the paper's terms (seed 000 §IV), for one input size.

    ``comp_cycles`` = Comp; ``shared_loads``/``shared_stores`` = ld0/st0;
    ``global_loads``/``global_stores`` = ld1/st1; hit rates are fractions of the global loads.
    ``word_bytes`` (bytes per global access) and ``dram_bytes`` (measured DRAM bytes per thread,
    None when not measured) feed only the memory part of the roofline form
    (:mod:`advisor.models.bsp.arch`, docs/bsp.md Decision B2); the paper's equations ignore them.
    """

    threads: float
    comp_cycles: float
    shared_loads: float
    shared_stores: float
    global_loads: float
    global_stores: float
    l1_hit_rate: float = 0.0
    l2_hit_rate: float = 0.0
    word_bytes: float = 4.0  # 32-bit words: the paper's applications are single precision
    dram_bytes: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "threads",
            "comp_cycles",
            "shared_loads",
            "shared_stores",
            "global_loads",
            "global_stores",
            "word_bytes",
        ):
            _check_count(name, getattr(self, name))
        if self.dram_bytes is not None:
            _check_count("dram_bytes", self.dram_bytes)
        for name in ("l1_hit_rate", "l2_hit_rate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ValueError(f"{name} must be a fraction in [0, 1], got {value!r}")
        if self.l1_hit_rate + self.l2_hit_rate > 1.0 + 1e-12:
            raise ValueError(
                f"l1_hit_rate + l2_hit_rate = {self.l1_hit_rate + self.l2_hit_rate:g} > 1: "
                "a load hits at most one cache level"
            )

    @property
    def l1_hits(self) -> float:
        """L1 of eq. (5): L1 hit rate × global loads per thread."""
        return self.l1_hit_rate * self.global_loads

    @property
    def l2_hits(self) -> float:
        """L2 of eq. (5): L2 hit rate × global loads per thread."""
        return self.l2_hit_rate * self.global_loads


class GpuSpec(Protocol):
    """What the model needs of a GPU (``advisor.devices.database.DeviceSpec`` provides it)."""

    @property
    def name(self) -> str: ...

    @property
    def boost_clock_hz(self) -> float: ...

    @property
    def sm_count(self) -> int: ...

    @property
    def fp32_cores_per_sm(self) -> int: ...


@dataclass(frozen=True)
class Prediction:
    """One predicted kernel time: T_k of eq. (3) for one GPU and one input size."""

    gpu: str
    size: float
    threads: float
    cycles_per_thread: float
    clock_hz: float
    cores: int
    lam: float
    predicted_s: float
    eta: float = 1.0  # η_arch of this GPU (1 in the paper's form); lam = λ_app · eta
    # the roofline parts on this GPU at λ = 1 (advisor.models.bsp.arch.bound_parts), s
    compute_s: float = math.nan
    memory_s: float = math.nan
    # the form's own value before the physical floor (advisor.models.bsp.floor, Decision B3), s
    model_s: float = math.nan
    raised: str = ""  # "memory" or "compute" when predicted_s was raised to that floor
    floor_s: float = math.nan  # the physical floor on this GPU (NaN when not known)

    @property
    def dominant(self) -> str:
        """The larger roofline part, "compute" or "memory" ("" when they are not known)."""
        if not (math.isfinite(self.compute_s) and math.isfinite(self.memory_s)):
            return ""
        return "memory" if self.memory_s > self.compute_s else "compute"


def comm_sm_cycles(shared_loads: float, shared_stores: float, g_sm: float = G_SM_CYCLES) -> float:
    """Comm_SM = (ld0 + st0) · g_SM — seed 000 §IV eq. (4)."""
    return (shared_loads + shared_stores) * g_sm


def comm_gm_cycles(
    global_loads: float,
    global_stores: float,
    l1_hits: float,
    l2_hits: float,
    latencies: Latencies = DEFAULT_LATENCIES,
) -> float:
    """Comm_GM = (ld1 + st1 − L1 − L2) · g_GM + L1 · g_L1 + L2 · g_L2 — seed 000 §IV eq. (5)."""
    misses = global_loads + global_stores - l1_hits - l2_hits
    return (
        misses * latencies.global_cycles
        + l1_hits * latencies.l1_cycles
        + l2_hits * latencies.l2_cycles
    )


def cycles_per_thread(counts: ThreadCounts, latencies: Latencies = DEFAULT_LATENCIES) -> float:
    """Comp + Comm_GM + Comm_SM: the cycles one thread costs (numerator of eq. (3) over t)."""
    return (
        counts.comp_cycles
        + comm_gm_cycles(
            counts.global_loads, counts.global_stores, counts.l1_hits, counts.l2_hits, latencies
        )
        + comm_sm_cycles(counts.shared_loads, counts.shared_stores, latencies.shared_cycles)
    )


def gpu_cores(gpu: GpuSpec) -> int:
    """P of eq. (3): SMs × FP32 cores per SM (seed 000 Table I "SM/Cores")."""
    return int(gpu.sm_count) * int(gpu.fp32_cores_per_sm)


def kernel_time_s(
    counts: ThreadCounts,
    clock_hz: float,
    cores: int,
    lam: float = 1.0,
    latencies: Latencies = DEFAULT_LATENCIES,
) -> float:
    """T_k = t · (Comp + Comm_GM + Comm_SM) / (R · P · λ) in seconds — seed 000 §IV eq. (3)."""
    _check_positive("clock rate R (Hz)", clock_hz)
    _check_positive("cores P", cores)
    _check_positive("lambda", lam)
    return counts.threads * cycles_per_thread(counts, latencies) / (clock_hz * cores * lam)


def calibrate_lambda(
    counts: ThreadCounts,
    clock_hz: float,
    cores: int,
    measured_s: float,
    latencies: Latencies = DEFAULT_LATENCIES,
) -> float:
    """λ = T_k(λ = 1) / T_measured on one (GPU, size) — seed 000 §IV ("ratio between the
    predicted execution time ... with the actual measured execution time")."""
    _check_positive("measured time", measured_s)
    unscaled_s = kernel_time_s(counts, clock_hz, cores, 1.0, latencies)
    if unscaled_s <= 0.0:
        raise ValueError("cannot calibrate lambda: the model predicts 0 cycles at this size")
    return unscaled_s / measured_s


def fit_lambda(
    counts_at: Callable[[float], ThreadCounts],
    gpu: GpuSpec,
    size: float,
    measured_s: float,
    latencies: Latencies = DEFAULT_LATENCIES,
) -> float:
    """λ from one measured run of size ``size`` on ``gpu`` (clock and cores from the GPU)."""
    return calibrate_lambda(
        counts_at(size), gpu.boost_clock_hz, gpu_cores(gpu), measured_s, latencies
    )


def predict(
    counts_at: Callable[[float], ThreadCounts],
    lam: float,
    gpus: Sequence[GpuSpec],
    sizes: Sequence[float],
    latencies: Latencies = DEFAULT_LATENCIES,
    etas: Sequence[float] | None = None,
) -> list[Prediction]:
    """T_k for every (GPU, size), GPUs in the given order, sizes in the given order.

    ``etas``: η_arch per GPU (``advisor.models.bsp.arch``); then ``lam`` is λ_app and GPU i is
    predicted with λ_app · etas[i].  Without it every GPU gets ``lam`` (the paper's form)."""
    out: list[Prediction] = []
    for i, gpu in enumerate(gpus):
        cores = gpu_cores(gpu)
        eta = 1.0 if etas is None else float(etas[i])
        gpu_lam = lam * eta
        for size in sizes:
            counts = counts_at(size)
            out.append(
                Prediction(
                    gpu=gpu.name,
                    size=size,
                    threads=counts.threads,
                    cycles_per_thread=cycles_per_thread(counts, latencies),
                    clock_hz=float(gpu.boost_clock_hz),
                    cores=cores,
                    lam=gpu_lam,
                    predicted_s=kernel_time_s(
                        counts, gpu.boost_clock_hz, cores, gpu_lam, latencies
                    ),
                    eta=eta,
                )
            )
    return out


def _check_positive(name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be > 0, got {value!r}")
