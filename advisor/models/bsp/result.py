"""One ``predict bsp`` run as data, and its text and JSON forms (seed 000; MODELS.md §3).

:func:`run_bsp` calibrates λ on the measured (GPU, N, time) and predicts T_k for every requested
GPU and size, in the paper's form (one λ for every GPU), the architecture form
(λ = λ_app · η_arch, :mod:`advisor.models.bsp.arch`, docs/bsp.md Decision B1) or the roofline
form (compute part + memory part, Decision B2).  In every form each prediction carries the
roofline parts of its GPU, so the output names the part that dominates;
:func:`render_text` and :func:`to_json` only format the resulting :class:`BspResult` (no
computation happens while rendering).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from advisor.devices.database import DeviceSpec
from advisor.models.bsp import (
    SEED,
    GpuSpec,
    Latencies,
    Prediction,
    ThreadCounts,
    fit_lambda,
    gpu_cores,
    kernel_time_s,
    predict,
)
from advisor.models.bsp.arch import (
    FORM_ARCH,
    FORM_AUTO,
    FORM_PAPER,
    FORM_ROOFLINE,
    FORMS,
    ROOFLINE_COMBINE,
    ArchFactors,
    BoundParts,
    arch_factors,
    bound_parts,
    global_bytes_per_thread,
    issue_slots_per_thread,
)
from advisor.models.bsp.floor import Floor, choose_form, raise_to_floor, raised_note

EQUATION = "T_k = t·(Comp + Comm_GM + Comm_SM) / (R·P·λ)"
PAPER_FORM_LABEL = "paper (seed 000 §V)"
ARCH_FORM_LABEL = "architecture (project's own, docs/bsp.md Decision B1)"
ROOFLINE_FORM_LABEL = "roofline (project's own, docs/bsp.md Decision B2)"
_JOINED = {"sum": "(C + M)", "max": "max(C, M)", "smooth": "(C² + M²)^½"}
ROOFLINE_EQUATION = (
    "C = t·(Comp + ld0 + st0 + ld1 + st1)/(R·P·η_issue), M = t·B/bandwidth, "
    f"T = {_JOINED[ROOFLINE_COMBINE]}/λ_app"
)


@dataclass(frozen=True)
class Calibration:
    """λ fitted on one measured run: λ = T_k(λ = 1) / T_measured."""

    gpu: str
    size: float
    measured_s: float
    unscaled_s: float
    lam: float
    lam_app: float | None = None  # λ / η_arch (arch form) or model / T_measured (roofline form)
    parts: BoundParts | None = None  # roofline parts of the calibration run at λ = 1


@dataclass(frozen=True)
class BspResult:
    """Everything ``predict bsp`` prints."""

    input_kind: str  # "app" or "profile"
    input_name: str
    input_paths: tuple[str, ...]
    per_thread: tuple[tuple[str, str], ...]  # (term, expression, or value [source])
    notes: tuple[str, ...]  # assumptions and facts about the input
    latencies: Latencies
    calibration: Calibration
    predictions: tuple[Prediction, ...]
    form: str = FORM_PAPER  # the form used (``auto`` resolved)
    factors: tuple[ArchFactors, ...] = ()  # calibration GPU first, then the predicted ones
    form_requested: str = ""  # as asked (``auto`` when the form was chosen)
    form_reason: str = ""  # why ``auto`` chose ``form`` ("" when the form was asked for)
    measured_bytes: bool = False  # the counts hold measured DRAM bytes: the memory floor applies


def run_bsp(
    *,
    input_kind: str,
    input_name: str,
    input_paths: Sequence[str],
    per_thread: Sequence[tuple[str, str]],
    notes: Sequence[str],
    counts_at: Callable[[float], ThreadCounts],
    latencies: Latencies,
    calibration_gpu: GpuSpec,
    calibration_size: float,
    measured_s: float,
    gpus: Sequence[GpuSpec],
    sizes: Sequence[float],
    form: str = FORM_PAPER,
    characterizations: Mapping[str, Any] | None = None,
) -> BspResult:
    """Fit λ on the calibration run and predict every (GPU, size); errors are ValueError.

    ``form``: ``"paper"`` (seed 000: the same λ on every GPU), ``"arch"`` (λ_app · η_arch),
    ``"roofline"`` (compute part + memory part over λ_app) or ``"auto"`` (roofline for a kernel
    memory-bound by its measured DRAM bytes on the calibration GPU, else arch:
    :func:`advisor.models.bsp.floor.choose_form`); all but ``paper`` need database entries
    (:class:`~advisor.devices.database.DeviceSpec`).  Every prediction under the GPU's physical
    floor (:mod:`advisor.models.bsp.floor`, Decision B3) is raised to it.
    ``characterizations``: GPU name -> measured characterization (its DRAM latency feeds η_mem).
    """
    lam = fit_lambda(counts_at, calibration_gpu, calibration_size, measured_s, latencies)
    unscaled = kernel_time_s(
        counts_at(calibration_size),
        calibration_gpu.boost_clock_hz,
        gpu_cores(calibration_gpu),
        1.0,
        latencies,
    )
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; use one of {', '.join(FORMS)}")
    chars = characterizations or {}
    factors: tuple[ArchFactors, ...] = ()
    etas: list[float] | None = None
    lam_app: float | None = None
    cal_parts = _parts(counts_at(calibration_size), calibration_gpu)
    requested, reason = form, ""
    if form == FORM_AUTO:
        form, reason = choose_form(counts_at(calibration_size), cal_parts, calibration_gpu.name)
    if form in (FORM_ARCH, FORM_ROOFLINE):
        factors = tuple(
            arch_factors(g, chars.get(g.name))  # type: ignore[arg-type]
            for g in (calibration_gpu, *gpus)
        )
    if form == FORM_ARCH:
        lam_app = lam / factors[0].eta
        etas = [f.eta for f in factors[1:]]
        predictions = predict(counts_at, lam_app, gpus, sizes, latencies, etas)
    elif form == FORM_ROOFLINE:
        if cal_parts is None or not cal_parts.combined() > 0:
            raise ValueError("cannot calibrate the roofline form: it predicts 0 s on that run")
        lam_app = cal_parts.combined() / measured_s
        predictions = _predict_roofline(counts_at, lam_app, gpus, sizes)
    else:
        predictions = predict(counts_at, lam, gpus, sizes, latencies)
    return BspResult(
        input_kind=input_kind,
        input_name=input_name,
        input_paths=tuple(input_paths),
        per_thread=tuple(per_thread),
        notes=tuple(notes),
        latencies=latencies,
        calibration=Calibration(
            gpu=calibration_gpu.name,
            size=calibration_size,
            measured_s=measured_s,
            unscaled_s=unscaled,
            lam=lam,
            lam_app=lam_app,
            parts=cal_parts,
        ),
        predictions=tuple(_with_parts(p, counts_at, gpus) for p in predictions),
        form=form,
        factors=factors,
        form_requested=requested,
        form_reason=reason,
        measured_bytes=counts_at(calibration_size).dram_bytes is not None,
    )


def _parts(counts: ThreadCounts, gpu: GpuSpec) -> BoundParts | None:
    """The roofline parts on a database GPU (None for a GPU without its facts)."""
    return bound_parts(counts, gpu) if isinstance(gpu, DeviceSpec) else None


def _with_parts(
    p: Prediction, counts_at: Callable[[float], ThreadCounts], gpus: Sequence[GpuSpec]
) -> Prediction:
    """``p`` with its GPU's roofline parts and physical floor, raised to the floor when under
    it (Decision B3; a GPU without database facts has neither)."""
    gpu = next(g for g in gpus if g.name == p.gpu)
    counts = counts_at(p.size)
    parts = _parts(counts, gpu)
    if parts is None:
        return replace(p, model_s=p.predicted_s)
    floor = Floor.of_parts(gpu.name, parts, counts)
    value, raised = raise_to_floor(p.predicted_s, floor)
    return replace(
        p,
        compute_s=parts.compute_s,
        memory_s=parts.memory_s,
        model_s=p.predicted_s,
        predicted_s=value,
        raised=raised,
        floor_s=floor.seconds,
    )


def _predict_roofline(
    counts_at: Callable[[float], ThreadCounts],
    lam_app: float,
    gpus: Sequence[GpuSpec],
    sizes: Sequence[float],
) -> list[Prediction]:
    """T(g) = model(g) / λ_app for every (GPU, size); ``cycles_per_thread`` holds the issue
    slots per thread and ``eta`` η_issue (arch.py, roofline form)."""
    out: list[Prediction] = []
    for gpu in gpus:
        if not isinstance(gpu, DeviceSpec):
            raise ValueError(f"{gpu.name}: the roofline form needs a GPU database entry")
        eta_issue = arch_factors(gpu).eta_issue
        for size in sizes:
            counts = counts_at(size)
            parts = bound_parts(counts, gpu, eta_issue)
            out.append(
                Prediction(
                    gpu=gpu.name,
                    size=size,
                    threads=counts.threads,
                    cycles_per_thread=issue_slots_per_thread(counts),
                    clock_hz=float(gpu.boost_clock_hz),
                    cores=gpu_cores(gpu),
                    lam=lam_app,
                    predicted_s=parts.combined() / lam_app,
                    eta=eta_issue,
                )
            )
    return out


def format_ms(seconds: float) -> str:
    """Milliseconds with 4 significant digits below 1000 ms, whole milliseconds above."""
    ms = seconds * 1e3
    return f"{ms:.0f}" if ms >= 1000 else f"{ms:.4g}"


def _size(value: float) -> str:
    """Whole numbers in full (sizes, threads, cycles), others with 6 significant digits."""
    return f"{value:.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:.6g}"


def render_text(result: BspResult) -> str:
    """The table ``predict bsp`` prints, preceded by the model's inputs."""
    lat = result.latencies
    cal = result.calibration
    lines = [
        f"BSP model, {SEED}: {EQUATION}",
        f"{result.input_kind:<13}{result.input_name} ({', '.join(result.input_paths)})",
    ]
    if any(" [" in v for _, v in result.per_thread):  # values with sources: one per line
        width = max(len(k) for k, _ in result.per_thread)
        lines += [
            f"{'per thread' if i == 0 else '':<13}{k:<{width}} = {v}"
            for i, (k, v) in enumerate(result.per_thread)
        ]
    else:
        lines.append("per thread   " + "  ".join(f"{k}={v}" for k, v in result.per_thread))
    lines += [f"note         {note}" for note in result.notes]
    lines += [
        f"latencies    g_SM={lat.shared_cycles:g} g_GM={lat.global_cycles:g} "
        f"g_L1={lat.l1_cycles:g} g_L2={lat.l2_cycles:g} cycles",
        f"calibration  {cal.gpu} at N={_size(cal.size)}: measured {format_ms(cal.measured_s)} ms,"
        f" λ=1 predicts {format_ms(cal.unscaled_s)} ms -> λ = {cal.lam:.4g}",
    ]
    if result.form == FORM_ARCH and cal.lam_app is not None:
        lines += [
            f"form         {ARCH_FORM_LABEL}: λ = λ_app · η_arch, "
            f"λ_app = {cal.lam:.4g} / {result.factors[0].eta:.3g} = {cal.lam_app:.4g}",
            *[f"η_arch       {f.describe()}" for f in dict.fromkeys(result.factors)],
        ]
    elif result.form == FORM_ROOFLINE and cal.lam_app is not None and cal.parts is not None:
        lines += [
            f"form         {ROOFLINE_FORM_LABEL}: {ROOFLINE_EQUATION}",
            f"             on {cal.gpu}: C = {format_ms(cal.parts.compute_s)} ms, M = "
            f"{format_ms(cal.parts.memory_s)} ms -> λ_app = {cal.lam_app:.4g} "
            "(λ column: λ_app; cycles/thread: issue slots)",
        ]
    else:
        lines.append(f"form         {PAPER_FORM_LABEL}: the same λ on every GPU")
    if result.form_reason:
        lines.append(f"form choice  {result.form_requested} -> {result.form_reason}")
    lines += [f"limiter      {line}" for line in _limiter_lines(result)]
    lines += [f"floor        {line}" for line in _floor_lines(result)]
    lines.append("")
    header = (
        "GPU", "N", "threads", "cycles/thread", "R (MHz)", "P (cores)", "λ", "predicted (ms)",
        "floor (ms)", "",
    )  # fmt: skip
    rows = [
        (
            p.gpu,
            _size(p.size),
            _size(p.threads),
            _size(p.cycles_per_thread),
            f"{p.clock_hz / 1e6:g}",
            str(p.cores),
            f"{p.lam:.4g}",
            format_ms(p.predicted_s),
            format_ms(p.floor_s) if math.isfinite(p.floor_s) else "n/a",
            raised_note(p.raised),
        )
        for p in result.predictions
    ]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _limiter_lines(result: BspResult) -> list[str]:
    """The calibration run's and each predicted (GPU, N)'s roofline parts at λ = 1 and the
    one that dominates."""
    cal = result.calibration
    rows = [(f"{cal.gpu} N={_size(cal.size)} (calibration)", cal.parts)] if cal.parts else []
    rows += [
        (f"{p.gpu} N={_size(p.size)}", BoundParts(p.compute_s, p.memory_s))
        for p in result.predictions
        if p.dominant
    ]
    return [
        f"{where}: compute {format_ms(parts.compute_s)} ms, memory "
        f"{format_ms(parts.memory_s)} ms at peak rates -> {parts.dominant} dominates"
        for where, parts in rows
    ]


def _floor_lines(result: BspResult) -> list[str]:
    """One line per raised prediction: the form's value, the floor and its part (Decision B3);
    one line saying none was raised otherwise."""
    if not any(math.isfinite(p.floor_s) for p in result.predictions):
        return []
    what = (
        "max(compute, memory) at peak rates"
        if result.measured_bytes
        else "the compute part at peak rate (no measured DRAM bytes: no memory floor)"
    )
    raised = [p for p in result.predictions if p.raised]
    if not raised:
        return [f"every prediction is at or above its GPU's floor, {what}"]
    return [f"each GPU's floor is {what}"] + [
        f"{p.gpu} N={_size(p.size)}: the {result.form} form gives {format_ms(p.model_s)} ms, "
        f"under the {p.raised} part at peak rate {format_ms(p.floor_s)} ms -> "
        f"{raised_note(p.raised)}"
        for p in raised
    ]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def to_json(result: BspResult) -> dict[str, Any]:
    """A JSON-ready dict (NaN/inf as null) with the same content as :func:`render_text`."""
    lat = result.latencies
    cal = result.calibration
    return {
        "model": "bsp",
        "source": SEED,
        "equation": EQUATION,
        "form": result.form,
        "form_requested": result.form_requested or result.form,
        "form_reason": result.form_reason or None,
        "roofline_combine": ROOFLINE_COMBINE if result.form == FORM_ROOFLINE else None,
        "eta_arch": {
            f.gpu: {
                "eta": f.eta,
                "eta_issue": f.eta_issue,
                "eta_mem": f.eta_mem,
                "issue_lanes_per_sm": f.issue_lanes_per_sm,
                "fp32_cores_per_sm": f.fp32_cores_per_sm,
                "dram_latency_cycles": f.dram_latency_cycles,
                "latency_source": f.latency_source,
            }
            for f in result.factors
        },
        "input": {
            "kind": result.input_kind,
            "name": result.input_name,
            "paths": list(result.input_paths),
        },
        "per_thread": dict(result.per_thread),
        "notes": list(result.notes),
        "latency_cycles": {
            "g_sm": lat.shared_cycles,
            "g_gm": lat.global_cycles,
            "g_l1": lat.l1_cycles,
            "g_l2": lat.l2_cycles,
        },
        "calibration": {
            "gpu": cal.gpu,
            "n": cal.size,
            "measured_ms": _finite(cal.measured_s * 1e3),
            "unscaled_ms": _finite(cal.unscaled_s * 1e3),
            "lambda": _finite(cal.lam),
            "lambda_app": None if cal.lam_app is None else _finite(cal.lam_app),
            **_parts_json(cal.parts),
        },
        "predictions": [
            {
                "gpu": p.gpu,
                "n": p.size,
                "threads": p.threads,
                "cycles_per_thread": _finite(p.cycles_per_thread),
                "clock_hz": p.clock_hz,
                "cores": p.cores,
                "lambda": _finite(p.lam),
                "eta_arch": None if result.form == FORM_ROOFLINE else _finite(p.eta),
                "eta_issue": _finite(p.eta) if result.form == FORM_ROOFLINE else None,
                "predicted_ms": _finite(p.predicted_s * 1e3),
                "model_ms": _finite(p.model_s * 1e3),
                "floor_ms": _finite(p.floor_s * 1e3),
                "raised_to_floor": p.raised or None,
                **_parts_json(
                    BoundParts(p.compute_s, p.memory_s) if p.dominant else None,
                ),
            }
            for p in result.predictions
        ],
    }


def _parts_json(parts: BoundParts | None) -> dict[str, Any]:
    """The roofline parts at λ = 1 in ms and the dominant one (all null when unknown)."""
    if parts is None:
        return {"compute_ms": None, "memory_ms": None, "dominant": None}
    return {
        "compute_ms": _finite(parts.compute_s * 1e3),
        "memory_ms": _finite(parts.memory_s * 1e3),
        "dominant": parts.dominant,
    }


def profile_per_thread(
    counts: ThreadCounts, sources: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """The per-thread values of a profile-derived :class:`ThreadCounts` and their sources."""
    where = dict(sources)
    values = (
        ("threads", counts.threads),
        ("comp", counts.comp_cycles),
        ("ld0", counts.shared_loads),
        ("st0", counts.shared_stores),
        ("ld1", counts.global_loads),
        ("st1", counts.global_stores),
        ("l1_hit_rate", counts.l1_hit_rate),
        ("l2_hit_rate", counts.l2_hit_rate),
        ("bytes", global_bytes_per_thread(counts)),
    )
    where["bytes"] = (
        where.get("dram_bytes", "measured DRAM bytes")
        if counts.dram_bytes is not None
        else f"(ld1 + st1 − L1 − L2) × {counts.word_bytes:.3g} B"
    )
    return tuple(
        (key, _size(value) + (f" [{where[key]}]" if key in where else "")) for key, value in values
    )
