"""The physical floor of a predicted kernel time, and the default form's choice (project's own).

docs/bsp.md, **Decision B3**.  Whatever a form predicts (the paper's one λ, λ_app · η_arch, or
the roofline form over λ_app), a kernel cannot run faster on GPU g than its DRAM traffic at g's
peak bandwidth or its instructions at g's peak issue rate::

    floor(g) = max(C(g), M(g))
    C(g)     = t · (Comp + ld0 + st0 + ld1 + st1) / (R · P · η_issue(g))   instructions / issue rate
    M(g)     = t · B / DRAM bandwidth(g)                                  bytes / bandwidth

C and M are the roofline parts at λ = 1 (:func:`advisor.models.bsp.arch.bound_parts`): R, P and
the bandwidth from ``advisor/data/gpus.csv``, η_issue from ``architectures.json``.  B must be
*measured* DRAM bytes (a profile's ``dram_read_bytes``/``dram_write_bytes`` or sectors): counted
bytes ((ld1 + st1 − L1 − L2) × a word, what an application file gives) ignore the reuse the
caches give across threads and overstate the traffic (the paper's matMul counts put the GTX 680
run of 26.4 ms under a "floor" of 43.8 ms), so without measured bytes only the compute part
bounds.  A prediction under the floor is raised to it, and the output names the part ("raised to
the memory floor").

**Default form** (``--form auto``): a kernel whose *measured* DRAM bytes at the source GPU's peak
bandwidth take longer than its instructions at the peak issue rate (memory-bound by the roofline
on the GPU it was calibrated on) is carried in the roofline form, which scales with bandwidth;
every other kernel in the architecture form (λ = λ_app · η_arch).  Counted bytes (an application
file, or a profile without DRAM byte counters) do not choose the roofline form: they are the
accesses × a word, not the traffic, and on the paper's data they name memory-bound kernels the
architecture form predicts better (benchmarks/bsp_reproduction.py, the ``auto-counted`` column).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.devices.database import DeviceSpec
from advisor.models.bsp import ThreadCounts
from advisor.models.bsp.arch import FORM_ARCH, FORM_ROOFLINE, BoundParts, bound_parts

#: a prediction this much under the floor (relative) is left alone: rounding, not a raise
FLOOR_TOLERANCE = 1e-12
MEMORY, COMPUTE = "memory", "compute"


@dataclass(frozen=True)
class Floor:
    """The two physical lower bounds of one kernel on one GPU, in seconds."""

    gpu: str
    compute_s: float  # instructions / peak issue rate
    memory_s: float  # measured DRAM bytes / peak bandwidth; NaN when the bytes are not measured

    @property
    def seconds(self) -> float:
        """max(C, M) over the known parts: no prediction may be shorter."""
        known = [v for v in (self.compute_s, self.memory_s) if math.isfinite(v)]
        return max(known) if known else math.nan

    @property
    def ns(self) -> float:
        return self.seconds * 1e9

    @property
    def limiter(self) -> str:
        """The part the floor comes from: "memory" when M > C, else "compute"."""
        memory_known = math.isfinite(self.memory_s)
        return MEMORY if memory_known and not self.memory_s <= self.compute_s else COMPUTE

    @classmethod
    def of_parts(cls, gpu: str, parts: BoundParts, counts: ThreadCounts) -> Floor:
        """The floor from the roofline parts of ``counts`` (the memory part only when
        ``counts`` holds measured DRAM bytes)."""
        measured = counts.dram_bytes is not None
        return cls(gpu, parts.compute_s, parts.memory_s if measured else math.nan)


def physical_floor(counts: ThreadCounts, gpu: DeviceSpec) -> Floor:
    """max(instructions / peak issue rate, DRAM bytes / peak bandwidth) of ``counts`` on ``gpu``
    (module docstring); ValueError when the GPU lacks clock, cores or bandwidth."""
    return Floor.of_parts(gpu.name, bound_parts(counts, gpu), counts)


def floor_ns(counts: ThreadCounts, gpu: DeviceSpec) -> float:
    """The physical floor of ``counts`` on ``gpu`` in nanoseconds (:func:`physical_floor`)."""
    return physical_floor(counts, gpu).ns


def raise_to_floor(predicted_s: float, floor: Floor | None) -> tuple[float, str]:
    """(the prediction, or the floor when the prediction is under it; the part it was raised
    to, "memory" or "compute", or "" when not raised or the floor is unknown)."""
    if floor is None or not math.isfinite(floor.seconds):
        return predicted_s, ""
    if predicted_s < floor.seconds * (1.0 - FLOOR_TOLERANCE):
        return floor.seconds, floor.limiter
    return predicted_s, ""


def raised_note(limiter: str) -> str:
    """What the output says of a raised prediction ("" when not raised)."""
    return f"raised to the {limiter} floor" if limiter else ""


def choose_form(counts: ThreadCounts, parts: BoundParts | None, gpu: str) -> tuple[str, str]:
    """(form, why) of the default form for a kernel calibrated on ``gpu`` whose roofline parts
    there are ``parts`` (None: not known): the rule of the module docstring."""
    if parts is None:
        return FORM_ARCH, f"arch form: {gpu} has no roofline facts (bandwidth, issue rate)"
    measures = (
        f"on {gpu} the memory part is {parts.memory_s * 1e3:.4g} ms at peak bandwidth, "
        f"the compute part {parts.compute_s * 1e3:.4g} ms at peak issue rate"
    )
    if counts.dram_bytes is None:
        return FORM_ARCH, (
            "arch form: no measured DRAM bytes (the memory part is counted accesses, "
            f"not traffic); {measures}"
        )
    if parts.dominant == MEMORY:
        return FORM_ROOFLINE, f"roofline form: memory-bound where measured, {measures}"
    return FORM_ARCH, f"arch form: compute-bound where measured, {measures}"
