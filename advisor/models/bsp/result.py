"""One ``predict bsp`` run as data, and its text and JSON forms (seed 000; MODELS.md §3).

:func:`run_bsp` calibrates λ on the measured (GPU, N, time) and predicts T_k for every requested
GPU and size; :func:`render_text` and :func:`to_json` only format the resulting
:class:`BspResult` (no computation happens while rendering).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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

EQUATION = "T_k = t·(Comp + Comm_GM + Comm_SM) / (R·P·λ)"


@dataclass(frozen=True)
class Calibration:
    """λ fitted on one measured run: λ = T_k(λ = 1) / T_measured."""

    gpu: str
    size: float
    measured_s: float
    unscaled_s: float
    lam: float


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
) -> BspResult:
    """Fit λ on the calibration run and predict every (GPU, size); errors are ValueError."""
    lam = fit_lambda(counts_at, calibration_gpu, calibration_size, measured_s, latencies)
    unscaled = kernel_time_s(
        counts_at(calibration_size),
        calibration_gpu.boost_clock_hz,
        gpu_cores(calibration_gpu),
        1.0,
        latencies,
    )
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
        ),
        predictions=tuple(predict(counts_at, lam, gpus, sizes, latencies)),
    )


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
        "",
    ]
    header = ("GPU", "N", "threads", "cycles/thread", "R (MHz)", "P (cores)", "predicted (ms)")
    rows = [
        (
            p.gpu,
            _size(p.size),
            _size(p.threads),
            _size(p.cycles_per_thread),
            f"{p.clock_hz / 1e6:g}",
            str(p.cores),
            format_ms(p.predicted_s),
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
                "predicted_ms": _finite(p.predicted_s * 1e3),
            }
            for p in result.predictions
        ],
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
    )
    return tuple(
        (key, _size(value) + (f" [{where[key]}]" if key in where else "")) for key, value in values
    )
