"""``cuda-advisor predict maxsum``: the MAX / SUM bounds of seed 001 for a kernel description
(the help text describes the model without the paper's name; the source follows its ``\\f``).

``maxsum_command`` is attached to the ``predict`` group by the command line; it also works on
its own (errors become one line and an exit code either way, see :func:`one_line_errors`).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import click

from advisor.cli import options
from advisor.errors import AdvisorError, UsageError, one_line
from advisor.models import maxsum
from advisor.models.maxsum import KernelBounds, MaxSumPrediction
from advisor.models.maxsum import description as maxsum_input

VERDICT_TEXT = {
    maxsum.BETWEEN: "between MAX and SUM",
    maxsum.BELOW_MAX: "below MAX (faster than full latency hiding predicts)",
    maxsum.ABOVE_SUM: "above SUM (slower than no latency hiding predicts)",
}


def one_line_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn an :class:`AdvisorError` into one stderr line and its exit code (``--debug`` re-raises).

    The ``cuda-advisor`` group does the same; this keeps a command right when invoked alone.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AdvisorError as exc:
            root = click.get_current_context().find_root()
            if root.params.get("debug"):
                raise
            click.echo(f"cuda-advisor: error: {one_line(str(exc))}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


def find_gpu(name: str) -> Any:
    """The device-database entry for ``name`` (``advisor.devices.database.find_device``)."""
    try:
        from advisor.devices.database import find_device
    except ImportError:
        raise UsageError(
            f"--gpu {name!r}: the device database is not available; give --cc (access) or "
            "the gpu fields in the kernel file (predict maxsum)"
        ) from None
    try:
        return find_device(name)
    except LookupError as exc:
        raise UsageError(f"--gpu {name!r}: {str(exc).strip(chr(39))}") from None


@click.command(name="maxsum")
@click.option(
    "--kernel",
    "kernel_path",
    required=True,
    type=options.INPUT_PATH,
    help="Kernel description JSON (per-thread op counts, accesses, launch shape).",
)
@click.option("--gpu", default=None, metavar="NAME", help="GPU from the device database.")
@click.option(
    "--measured-ms", type=float, default=None, help="Measured time of the whole program (ms)."
)
@click.option(
    "--profile",
    "profile_path",
    default=None,
    type=options.INPUT_PATH,
    help="Profile whose kernel durations are the measured times.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@one_line_errors
def maxsum_command(
    kernel_path: str,
    gpu: str | None,
    measured_ms: float | None,
    profile_path: str | None,
    as_json: bool,
) -> None:
    """Lower (MAX) and upper (SUM) time bounds for the kernels of a description file.

    Per thread, N_comp compute cycles and N_mem memory cycles (from the op counts, the access
    patterns' transactions and the latencies).  MAX assumes the warps hide all memory latency
    behind computation (C(T) = max(N_comp, N_mem)), SUM that they hide none (N_comp + N_mem);
    T(K) = N_B·N_w·N_t·C_T / (N_c·D·R): N_B blocks per SM one after the other, N_w warps per
    block, N_t threads per warp, N_c cores per SM, pipeline depth D, clock R; T(P) = Σ T(K).
    A measured time (--measured-ms for the program, measured_ms per kernel in the file, or
    --profile) is placed between the bounds.

    \f
    The MAX/SUM model of seed 001 §3 (MODELS.md §4).
    """
    if measured_ms is not None and not measured_ms > 0:
        raise UsageError(f"--measured-ms {measured_ms}: must be > 0")
    device = find_gpu(gpu) if gpu else None
    description = maxsum_input.load(kernel_path, device)
    kernels = description.kernels
    notes: list[str] = []
    if profile_path is not None:
        kernels, notes = _measure_from_profile(description, profile_path)
    prediction = maxsum.predict_program(
        kernels, description.gpu, None if measured_ms is None else measured_ms / 1e3
    )
    if as_json:
        doc = to_dict(prediction, kernel_path, notes)
        click.echo(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False))
    else:
        click.echo(render_text(prediction, kernel_path, notes), nl=False)


def _measure_from_profile(
    description: maxsum_input.KernelDescription, path: str
) -> tuple[tuple[maxsum.KernelModel, ...], list[str]]:
    """Each kernel's measured time per launch: the mean duration of the profile's launches whose
    name contains the kernel's ``profile_name`` (else the kernel summary's average)."""
    import dataclasses

    import parsers
    from advisor.models.maxsum.measured import measured_like

    profile = parsers.read(path)
    kernels = []
    notes = []
    measured = measured_like(profile, description.profile_names)
    for kernel, wanted in zip(description.kernels, description.profile_names, strict=True):
        found = measured[wanted]
        if found is None:
            notes.append(f"no kernel named like {wanted!r} in {path}; not measured")
            kernels.append(kernel)
            continue
        notes.append(
            f"{kernel.name}: measured = mean of {found.values} value(s) of {len(found.names)} "
            f"kernel name(s) matching {wanted!r} in {path}"
        )
        kernels.append(dataclasses.replace(kernel, measured_s=found.mean_ns / 1e9))
    return tuple(kernels), notes


def to_dict(p: MaxSumPrediction, path: str, notes: list[str]) -> dict[str, Any]:
    """The JSON document (times in ms, cycles in cycles)."""
    g = p.gpu
    return {
        "model": "MAX/SUM (seed 001 §3)",
        "kernel_file": path,
        "gpu": {
            "name": g.name,
            "compute_capability": g.compute_capability,
            "op_cycle_table": g.arch,
            "clock_hz": g.clock_hz,
            "cores_per_sm": g.cores_per_sm,
            "pipeline_depth": g.pipeline_depth,
            "sm_count": g.sm_count,
        },
        "kernels": [_kernel_dict(b) for b in p.kernels],
        "total_max_ms": p.total_max_s * 1e3,
        "total_sum_ms": p.total_sum_s * 1e3,
        "measured_ms": None if p.measured_s is None else p.measured_s * 1e3,
        "verdict": p.verdict,
        "notes": notes,
    }


def _kernel_dict(b: KernelBounds) -> dict[str, Any]:
    k = b.kernel
    return {
        "name": k.name,
        "blocks_per_sm": k.blocks_per_sm,
        "warps_per_block": k.warps_per_block,
        "threads_per_warp": k.threads_per_warp,
        "launches": k.launches,
        "threads": [
            {
                "name": t.name,
                "compute_cycles": t.compute_cycles,
                "memory_cycles": t.memory_cycles,
                "max_cycles": t.max_cycles,
                "sum_cycles": t.sum_cycles,
                "terms": [
                    {
                        "kind": x.kind,
                        "label": x.label,
                        "count": x.count,
                        "cycles_each": x.cycles_each,
                    }
                    for x in t.terms
                ],
            }
            for t in k.threads
        ],
        "ct_max_cycles": b.ct_max_cycles,
        "ct_sum_cycles": b.ct_sum_cycles,
        "cycles_max": b.cycles_max,
        "cycles_sum": b.cycles_sum,
        "time_max_ms": b.time_max_s * 1e3,
        "time_sum_ms": b.time_sum_s * 1e3,
        "measured_ms": None if k.measured_s is None else k.measured_s * 1e3,
        "verdict": b.verdict,
    }


def render_text(p: MaxSumPrediction, path: str, notes: list[str]) -> str:
    """The human-readable view."""
    g = p.gpu
    table = f"op cycles {g.arch}" if g.arch else "no op-cycle table (file values only)"
    cc = f"cc {g.compute_capability}, " if g.compute_capability else ""
    lines = [
        f"MAX/SUM model (seed 001 §3): {path}",
        f"GPU {g.name}: {cc}{table}; R = {g.clock_hz / 1e9:.4g} GHz, "
        f"N_c = {g.cores_per_sm:g} cores/SM, D = {g.pipeline_depth:g}",
    ]
    for b in p.kernels:
        k = b.kernel
        lines += [
            "",
            f"kernel {k.name}: N_B {k.blocks_per_sm:g} × N_w {k.warps_per_block:g} × "
            f"N_t {k.threads_per_warp:g}, {k.launches} launch{'es' * (k.launches != 1)}",
        ]
        for t in k.threads:
            lines.append(
                f"  {t.name}: N_comp {t.compute_cycles:g}, N_mem {t.memory_cycles:g} cycles"
            )
            lines += [
                f"    {x.label}: {x.count:g} × {x.cycles_each:g} = {x.cycles:g}" for x in t.terms
            ]
        lines += [
            f"  C_T(K)  MAX {b.ct_max_cycles:g}  SUM {b.ct_sum_cycles:g} cycles",
            f"  C(K)    MAX {b.cycles_max:.6g}  SUM {b.cycles_sum:.6g} cycles",
            f"  T(K)    MAX {_ms(b.time_max_s)}  SUM {_ms(b.time_sum_s)} per launch"
            + _measured(k.measured_s, b.verdict),
        ]
    lines += [
        "",
        f"T(P)  MAX {_ms(p.total_max_s)}  SUM {_ms(p.total_sum_s)}"
        + _measured(p.measured_s, p.verdict),
    ]
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g} ms"


def _measured(measured_s: float | None, verdict: str | None) -> str:
    if measured_s is None or verdict is None:
        return ""
    return f"; measured {_ms(measured_s)}: {VERDICT_TEXT[verdict]}"
