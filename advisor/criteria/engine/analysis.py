"""The result of the criteria engine as small frozen values, and its JSON form.

:func:`advisor.criteria.evaluate` returns an :class:`Analysis`; :func:`to_json` turns it into the
plain dict the ``report --json`` command writes (layout in ``docs/criteria.md``).  Nothing here
computes a criterion: these are containers, and ``to_json`` only renames, orders and replaces
NaN / infinity by ``None`` (JSON ``null``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

#: identifier and version of the JSON layout written by ``report --json``
SCHEMA = "cuda-advisor/analysis@1"

#: the three states a criterion can be in
COMPUTED = "computed"
NOT_COMPUTABLE = "not_computable"  # its inputs are missing (Decision 2: never 0, never 1)
NOT_APPLICABLE = "not_applicable"  # the inputs are there, the kernel does not do that (0 / 0)


@dataclass(frozen=True)
class Speedups:
    """The potential speedup of one criterion in both forms (MODELS.md §1, Decisions 3-4)."""

    paper: float | None = None  # the paper's literal formula (seed 002, section V)
    amdahl: float | None = None  # Amdahl form: only the time attributed to the problem shrinks

    def pick(self, form: str) -> float | None:
        return self.paper if form == "paper" else self.amdahl


@dataclass(frozen=True)
class CriterionResult:
    """One criterion of one kernel (or of the application, for HOSTSYNC)."""

    name: str
    status: str  # COMPUTED | NOT_COMPUTABLE | NOT_APPLICABLE
    value: float | None = None  # in [0, 1], 1 = best; None unless COMPUTED
    raw_value: float | None = None  # the measured ratio before the characterization function F
    speedups: Speedups = field(default_factory=Speedups)
    method: str = ""  # which formula / metric recipe gave the value
    inputs: Mapping[str, float] = field(default_factory=dict)  # evidence: the values used
    missing: tuple[str, ...] = ()  # canonical (or tool) names of the inputs that were absent
    missing_tool_metrics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    collect: Mapping[str, str] = field(default_factory=dict)  # tool -> command line
    launches_used: int = 0
    level_share_frac: float | None = None  # p = L1% / L2% / ShMem% (granularity, SHMEM)
    scope: str = "kernel"  # "kernel" or "application"
    notes: tuple[str, ...] = ()
    variant: str = ""  # a diagnosis of the spec's ``variants`` (its own title and actions)

    @property
    def computable(self) -> bool:
        return self.status == COMPUTED


@dataclass(frozen=True)
class Hint:
    """A criterion below its threshold: what is wrong, the evidence, the gain, what to do."""

    criterion: str
    kernel: str | None  # None for application-level hints (HOSTSYNC)
    value: float
    threshold: float
    potential_speedup: float | None  # in the report's speedup form
    application_speedup: float | None  # the same gain seen on the whole GPU time (Amdahl)
    title: str
    evidence: Mapping[str, float]
    actions: tuple[str, ...]


@dataclass(frozen=True)
class Throughputs:
    """Fractions of peak used to classify the bound and give the overall potential speedup."""

    memory_frac: float | None = None  # busiest memory unit (ncu SOL) or DRAM, F-weighted
    dram_frac: float | None = None  # MEMTHR of seed 002 (DRAM only, F_DRAMThr-weighted)
    compute_frac: float | None = None  # ARITHTHR (F_ARITHThr-weighted)
    memory_method: str = ""
    compute_method: str = ""
    arithmetic_frac: float | None = None  # FLOP rate over peak (F_ARITHThr-weighted)
    bound_frac: float | None = None  # what the overall potential divides by (Decision P2)
    bound_method: str = ""


@dataclass(frozen=True)
class KernelAnalysis:
    name: str
    launches: int
    duration_ns: float | None
    share_of_gpu_time: float | None
    bound: str | None  # "memory" | "compute" | "latency" | None (unknown)
    throughputs: Throughputs
    potential_speedup: float | None  # 1 / MEMTHR or 1 / ARITHTHR (seed 002, section V)
    criteria: tuple[CriterionResult, ...]
    hints: tuple[Hint, ...]
    ncu_rules: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class OtherKernels:
    """The kernels folded out of the per-kernel analysis (:mod:`advisor.criteria.engine.folding`):
    how many, their launches and GPU time."""

    kernels: int
    launches: int
    duration_ns: float
    share_of_gpu_time: float | None


@dataclass(frozen=True)
class ApplicationAnalysis:
    gpu_time_ns: float | None
    kernels: int
    launches: int
    hostsync: CriterionResult
    potential_speedup: float | None  # 1 / HOSTSYNC x Amdahl over the kernels (Decision A1)
    kernels_without_estimate: int
    hints: tuple[Hint, ...]
    kernels_potential_speedup: float | None = None  # Amdahl over the kernels alone
    potential_speedup_basis: str = ""
    other_kernels: OtherKernels | None = None  # the kernels not scored one by one, if any


@dataclass(frozen=True)
class Analysis:
    inputs: tuple[Mapping[str, Any], ...]
    device: Mapping[str, Any]
    speedup_form: str
    application: ApplicationAnalysis
    kernels: tuple[KernelAnalysis, ...]
    notes: tuple[str, ...] = ()


def to_json(analysis: Analysis) -> dict[str, Any]:
    """The JSON-ready dict of an analysis (NaN and infinities become ``None``)."""
    out = {
        "schema": SCHEMA,
        "speedup_form": analysis.speedup_form,
        "inputs": [dict(i) for i in analysis.inputs],
        "device": dict(analysis.device),
        "application": _application(analysis.application, analysis.speedup_form),
        "kernels": [_kernel(k, analysis.speedup_form) for k in analysis.kernels],
        "notes": list(analysis.notes),
    }
    cleaned: dict[str, Any] = _clean(out)
    return cleaned


def _application(app: ApplicationAnalysis, form: str) -> dict[str, Any]:
    out = {
        "gpu_time_ns": app.gpu_time_ns,
        "kernels": app.kernels,
        "launches": app.launches,
        "HOSTSYNC": _criterion(app.hostsync, form),
        "potential_speedup": app.potential_speedup,
        "potential_speedup_basis": app.potential_speedup_basis,
        "kernels_potential_speedup": app.kernels_potential_speedup,
        "kernels_without_estimate": app.kernels_without_estimate,
        "hints": [_hint(h) for h in app.hints],
    }
    if app.other_kernels is not None:  # only when kernels were folded
        out["other_kernels"] = asdict(app.other_kernels)
    return out


def _kernel(k: KernelAnalysis, form: str) -> dict[str, Any]:
    return {
        "name": k.name,
        "launches": k.launches,
        "duration_ns": k.duration_ns,
        "share_of_gpu_time": k.share_of_gpu_time,
        "bound": k.bound,
        "throughputs": {
            "memory_frac": k.throughputs.memory_frac,
            "memory_method": k.throughputs.memory_method,
            "dram_frac": k.throughputs.dram_frac,
            "compute_frac": k.throughputs.compute_frac,
            "compute_method": k.throughputs.compute_method,
            "arithmetic_frac": k.throughputs.arithmetic_frac,
            "bound_frac": k.throughputs.bound_frac,
            "bound_method": k.throughputs.bound_method,
        },
        "potential_speedup": k.potential_speedup,
        "criteria": {c.name: _criterion(c, form) for c in k.criteria},
        "hints": [_hint(h) for h in k.hints],
        "ncu_rules": [dict(r) for r in k.ncu_rules],
        "notes": list(k.notes),
    }


def _criterion(c: CriterionResult, form: str) -> dict[str, Any]:
    return {
        "value": c.value,
        "computable": c.computable,
        "status": c.status,
        "raw_value": c.raw_value,
        "potential_speedup": c.speedups.pick(form),
        "potential_speedup_paper": c.speedups.paper,
        "potential_speedup_amdahl": c.speedups.amdahl,
        "level_share_frac": c.level_share_frac,
        "method": c.method,
        "inputs": dict(sorted(c.inputs.items())),
        "missing": list(c.missing),
        "missing_tool_metrics": {t: list(v) for t, v in sorted(c.missing_tool_metrics.items())},
        "collect": dict(sorted(c.collect.items())),
        "launches_used": c.launches_used,
        "scope": c.scope,
        "notes": list(c.notes),
        **({"variant": c.variant} if c.variant else {}),
    }


def _hint(h: Hint) -> dict[str, Any]:
    out = {
        "criterion": h.criterion,
        "kernel": h.kernel,
        "value": h.value,
        "threshold": h.threshold,
        "potential_speedup": h.potential_speedup,
        "application_speedup": h.application_speedup,
        "title": h.title,
        "evidence": dict(sorted(h.evidence.items())),
        "actions": list(h.actions),
    }
    kernels = getattr(h, "kernels", ())
    if len(kernels) > 1:  # an application entry grouping the kernels that share the criterion
        out["kernels"] = list(kernels)
        out["kernel_count"] = len(kernels)
    return out


def _clean(obj: Any) -> Any:
    """Replace NaN / infinity by None and numpy scalars by Python numbers, recursively.  The
    plain types (most of a report's some 24,000 values) are told by their exact type first;
    anything else, subclasses included, takes the general reading (:func:`_clean_other`)."""
    kind = type(obj)
    if kind is float:
        return obj if math.isfinite(obj) else None
    if kind is str or kind is int or kind is bool or obj is None:
        return obj
    if kind is dict:
        return {str(k): _clean(v) for k, v in obj.items()}
    if kind is list or kind is tuple:
        return [_clean(v) for v in obj]
    return _clean_other(obj)


def _clean_other(obj: Any) -> Any:
    """:func:`_clean` of a value of any type."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if hasattr(obj, "item") and not isinstance(obj, float):  # numpy scalar
        return _clean(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj
