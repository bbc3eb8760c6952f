"""λ split into an application part and an architecture part: λ = λ_app · η_arch (project's own).

Seed 000 §IV fits one λ per (application, GPU) and §V carries it to other GPUs "of the same
architecture"; λ absorbs everything R · P leaves out, and part of that is the hardware.  This
module names that part from hardware facts so that one measured run carries across generations
(docs/bsp.md, **Decision B1**; MODELS.md §3)::

    λ(g)        = λ_app · η_arch(g)
    η_arch(g)   = η_issue(g) · η_mem(g)
    η_issue(g)  = warp schedulers per SM × thread lanes one scheduler issues per clock
                  / FP32 cores per SM
    η_mem(g)    = g_GM / DRAM load latency of g (cycles)

* η_issue: P = SMs × FP32 cores counts the cores, but an SM runs at most one instruction per
  scheduler per clock (one dispatch; a second dispatch needs independent instructions the paper's
  counts do not know about).  Kepler's 192 cores behind four schedulers give 128/192 = 0.67, a
  cc 2.1 SM's 48 cores behind two 16-lane schedulers 0.67, Volta/Turing/GA100 (64 FP32 + 64
  INT32 lanes behind four schedulers) 2, Maxwell, Pascal, GA10x, Ada, Hopper 1.  Facts per
  compute capability in ``advisor/data/architectures.json`` (``warp_schedulers_per_sm``,
  ``lanes_per_scheduler_clock``, each with its whitepaper as ``issue_source``).
* η_mem: the paper charges g_GM = 500 cycles per global access on every board; a generation
  whose DRAM latency is L cycles serves the same accesses 500 / L times as fast per cycle.  L is
  the architecture's DRAM load latency (``architectures.json``), or the measured one of a device
  characterization JSON when one is given for that GPU.

The calibration run on GPU a gives λ(a) as in the paper; λ_app = λ(a) / η_arch(a), and another
GPU b is predicted with λ(b) = λ_app · η_arch(b).  Two GPUs with the same facts (same compute
capability family and latency) have the same η, so the prediction is the paper's exactly.

**Roofline form** (docs/bsp.md, **Decision B2**, project's own): the same one calibration, with
a bandwidth term.  On GPU g::

    C(g)     = t · (Comp + ld0 + st0 + ld1 + st1) / (R · P · η_issue(g))      compute part
    M(g)     = t · B / DRAM bandwidth(g)                                    memory part
    model(g) = (C(g)² + M(g)²)^½         (ROOFLINE_COMBINE; C + M and max(C, M) measured too)
    λ_app    = model(a) / T_measured(a);   T(g) = model(g) / λ_app

C counts issue slots (every instruction, memory ones too, takes one; η_issue turns cores into
slots); B is the global-memory bytes per thread: the measured DRAM bytes of the profile when
present, else the accesses that miss the caches, (ld1 + st1 − L1 − L2) × the word size.  The
bandwidth is the GPU database's ``memory_bandwidth_gb_per_s``.  The larger part names the
kernel's limiter; nothing is classified by name or fitted beyond λ_app.  Zero-denominator
policy: a GPU without bandwidth, clock or cores, or a model of 0 s, raises ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from advisor.devices.database import (
    DeviceSpec,
    architecture_latencies,
    compute_capability_facts,
)
from advisor.models.bsp import G_GM_CYCLES, ThreadCounts, gpu_cores

#: the paper's form (seed 000 eq. (3), one λ for every GPU) and the project's two forms
FORM_PAPER = "paper"
FORM_ARCH = "arch"
FORM_ROOFLINE = "roofline"
#: per kernel: the roofline form for a kernel memory-bound by its measured DRAM bytes on the
#: calibration GPU, else the architecture form (advisor.models.bsp.floor.choose_form, Decision B3)
FORM_AUTO = "auto"
FORMS = (FORM_AUTO, FORM_ARCH, FORM_ROOFLINE, FORM_PAPER)
#: the form the command line and the report use (Decision B3; the architecture form alone was
#: the best of the leave-one-out splits, benchmarks/bsp_reproduction.py, Decision B2)
DEFAULT_FORM = FORM_AUTO
#: how the roofline form joins its parts: the best of the three on the same splits (Decision B2)
COMBINE_SUM, COMBINE_MAX, COMBINE_SMOOTH = "sum", "max", "smooth"
COMBINES = (COMBINE_SUM, COMBINE_MAX, COMBINE_SMOOTH)
ROOFLINE_COMBINE = COMBINE_SMOOTH
#: exponent of the smooth maximum (C^p + M^p)^(1/p): between the sum (p = 1) and the max (p → ∞);
#: the one value measured, not tuned
SMOOTH_POWER = 2.0


@dataclass(frozen=True)
class ArchFactors:
    """η_arch of one GPU and the facts it is built from."""

    gpu: str
    eta_issue: float
    eta_mem: float
    issue_lanes_per_sm: int  # schedulers × lanes per scheduler clock
    fp32_cores_per_sm: int
    dram_latency_cycles: float
    latency_source: str  # "architecture defaults (...)" or a characterization file

    @property
    def eta(self) -> float:
        """η_arch = η_issue · η_mem."""
        return self.eta_issue * self.eta_mem

    def describe(self) -> str:
        """One line: the factors and where they come from."""
        return (
            f"{self.gpu}: η_issue = {self.issue_lanes_per_sm}/{self.fp32_cores_per_sm} = "
            f"{self.eta_issue:.3g}, η_mem = {G_GM_CYCLES:g}/{self.dram_latency_cycles:g} = "
            f"{self.eta_mem:.3g} ({self.latency_source}) -> η_arch = {self.eta:.3g}"
        )


def issue_lanes_per_sm(gpu: DeviceSpec) -> int:
    """Thread instructions an SM issues per clock, one dispatch per scheduler (facts of the
    compute capability in architectures.json)."""
    facts = compute_capability_facts(gpu.compute_capability)
    return int(facts["warp_schedulers_per_sm"]) * int(facts["lanes_per_scheduler_clock"])


def arch_factors(gpu: DeviceSpec, characterization: Any = None) -> ArchFactors:
    """η_arch of ``gpu``; ``characterization``: an ``advisor.devices.characterization``
    object of this GPU whose measured DRAM latency replaces the architecture default."""
    lanes = issue_lanes_per_sm(gpu)
    latency, source = _dram_latency(gpu, characterization)
    return ArchFactors(
        gpu=gpu.name,
        eta_issue=lanes / int(gpu.fp32_cores_per_sm),
        eta_mem=G_GM_CYCLES / latency,
        issue_lanes_per_sm=lanes,
        fp32_cores_per_sm=int(gpu.fp32_cores_per_sm),
        dram_latency_cycles=latency,
        latency_source=source,
    )


def _dram_latency(gpu: DeviceSpec, characterization: Any) -> tuple[float, str]:
    if characterization is not None and getattr(characterization, "measured", False):
        latencies: Mapping[str, float] = characterization.latencies_cycles
        value = float(latencies.get("dram", math.nan))
        if math.isfinite(value) and value > 0:
            return value, f"measured, {characterization.source}"
    entry = architecture_latencies(gpu.architecture)["dram"]
    return float(entry["value"]), f"{gpu.architecture} default"


def lambda_app(lam: float, factors: ArchFactors) -> float:
    """λ_app = λ / η_arch of the calibration GPU."""
    return lam / factors.eta


def lambda_on(lam_app: float, factors: ArchFactors) -> float:
    """λ of another GPU: λ_app · η_arch."""
    return lam_app * factors.eta


# ------------------------------------------------------------------------------------------
# roofline form (Decision B2)


@dataclass(frozen=True)
class BoundParts:
    """The compute and memory parts of one kernel on one GPU at λ = 1, in seconds."""

    compute_s: float
    memory_s: float

    @property
    def dominant(self) -> str:
        """The larger part: "memory" when M > C, else "compute"."""
        return "memory" if self.memory_s > self.compute_s else "compute"

    def combined(self, how: str = ROOFLINE_COMBINE) -> float:
        """C + M ("sum"), max(C, M) ("max") or (C^p + M^p)^(1/p) ("smooth")."""
        return combine(self.compute_s, self.memory_s, how)


def combine(compute_s: float, memory_s: float, how: str = ROOFLINE_COMBINE) -> float:
    """The two parts joined as ``how`` says (:data:`COMBINES`)."""
    if how == COMBINE_SUM:
        return compute_s + memory_s
    if how == COMBINE_MAX:
        return max(compute_s, memory_s)
    if how == COMBINE_SMOOTH:
        return float((compute_s**SMOOTH_POWER + memory_s**SMOOTH_POWER) ** (1 / SMOOTH_POWER))
    raise ValueError(f"unknown combination {how!r}; use one of {', '.join(COMBINES)}")


def issue_slots_per_thread(counts: ThreadCounts) -> float:
    """Comp + ld0 + st0 + ld1 + st1: the instructions one thread issues."""
    return (
        counts.comp_cycles
        + counts.shared_loads
        + counts.shared_stores
        + counts.global_loads
        + counts.global_stores
    )


def global_bytes_per_thread(counts: ThreadCounts) -> float:
    """B: measured DRAM bytes per thread, else (ld1 + st1 − L1 − L2) × word size."""
    if counts.dram_bytes is not None:
        return counts.dram_bytes
    misses = counts.global_loads + counts.global_stores - counts.l1_hits - counts.l2_hits
    return max(misses, 0.0) * counts.word_bytes


def bound_parts(
    counts: ThreadCounts, gpu: DeviceSpec, eta_issue: float | None = None
) -> BoundParts:
    """C(g) and M(g) of the module docstring; ``eta_issue`` defaults to the GPU's facts."""
    issue = arch_factors(gpu).eta_issue if eta_issue is None else eta_issue
    rate = float(gpu.boost_clock_hz) * gpu_cores(gpu) * issue
    bandwidth = float(gpu.memory_bandwidth_bytes_per_s)
    if not (rate > 0 and bandwidth > 0 and math.isfinite(rate) and math.isfinite(bandwidth)):
        raise ValueError(f"{gpu.name}: the roofline form needs clock, cores and bandwidth > 0")
    return BoundParts(
        compute_s=counts.threads * issue_slots_per_thread(counts) / rate,
        memory_s=counts.threads * global_bytes_per_thread(counts) / bandwidth,
    )
