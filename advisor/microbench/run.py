"""Run the microbenchmark driver on the local GPU and collect its samples into raw JSON.

The driver (``cuda-advisor-microbench``, built by :mod:`advisor.microbench.build`) prints one JSON
object per line: a ``device`` record, one record per sample (``bench`` names the benchmark) and a
``done`` record.  :func:`run` wraps them into one document::

    {"schema": "cuda-advisor/microbench-raw", "version": 1,
     "device": {...the driver's device record, plus nvidia-smi's driver_version...},
     "command": [...], "build": {"archs": [...], "nvcc_version": "..."},
     "samples": [{"bench": "arith_latency", "class": "fp32", "rep": 0, "cycles": 2093, ...}, ...]}

Without a GPU :func:`run` raises :class:`~advisor.microbench.toolchain.NoGpu` (exit 2) before it
builds or starts anything.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.errors import AdvisorError, InputError, UsageError
from advisor.microbench.build import DEFAULT_ARCHS, build_microbenchmarks, read_manifest
from advisor.microbench.layout import BINARY_NAME, GROUPS
from advisor.microbench.raw import RAW_SCHEMA, RAW_VERSION, parse_json_lines
from advisor.microbench.toolchain import LocalGpu, local_gpus

#: the whole suite takes seconds to a minute; a hung GPU should not hang the command forever
RUN_TIMEOUT_S = 1800
DEFAULT_REPS = 3


class RunFailed(AdvisorError):
    """The driver failed on the GPU (exit 1)."""


def raw_document(
    device: dict[str, Any],
    samples: Sequence[Mapping[str, Any]],
    command: Sequence[str],
    manifest: dict[str, Any] | None,
) -> str:
    payload = {
        "schema": RAW_SCHEMA,
        "version": RAW_VERSION,
        "device": device,
        "command": list(command),
        "build": {k: manifest.get(k) for k in ("archs", "nvcc_version")} if manifest else {},
        "samples": list(samples),
    }
    return json.dumps(payload, indent=2, sort_keys=True, allow_nan=False) + "\n"


def pick_gpu(gpus: Sequence[LocalGpu], index: int) -> LocalGpu:
    for gpu in gpus:
        if gpu.index == index:
            return gpu
    listed = ", ".join(f"{g.index} ({g.name})" for g in gpus)
    raise UsageError(f"--gpu {index}: no such GPU; nvidia-smi lists {listed}")


def ensure_binary(build_dir: Path, gpu: LocalGpu) -> tuple[Path, dict[str, Any] | None]:
    """The driver of ``build_dir``, built (or rebuilt) first if it lacks the GPU's architecture."""
    manifest = read_manifest(build_dir)
    binary = build_dir / BINARY_NAME
    if binary.is_file() and manifest and gpu.arch in manifest.get("archs", []):
        return binary, manifest
    archs = sorted({*(manifest or {}).get("archs", DEFAULT_ARCHS), gpu.arch})
    result = build_microbenchmarks(build_dir, archs)
    return result.binary, read_manifest(build_dir)


def run_microbenchmarks(
    build_dir: str | Path,
    reps: int = DEFAULT_REPS,
    only: Sequence[str] = (),
    gpu_index: int = 0,
) -> str:
    """Run the suite on one local GPU; returns the raw JSON document."""
    unknown = [g for g in only if g not in GROUPS]
    if unknown:
        raise UsageError(f"--only {','.join(unknown)}: unknown group; use {', '.join(GROUPS)}")
    if reps < 1:
        raise UsageError("--reps must be at least 1")
    gpu = pick_gpu(local_gpus(), gpu_index)
    binary, manifest = ensure_binary(Path(build_dir), gpu)
    command = [str(binary), "--device", str(gpu_index), "--reps", str(reps)]
    if only:
        command += ["--only", ",".join(only)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunFailed(f"{binary} could not run ({exc})") from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise RunFailed(
            f"{binary} failed (exit {done.returncode}): {lines[-1] if lines else 'no message'}"
        )
    try:
        device, samples = parse_json_lines(done.stdout, str(binary))
    except InputError as exc:
        raise RunFailed(f"unexpected output: {exc}") from None
    device["driver_version"] = gpu.driver_version
    shown = [BINARY_NAME, *command[1:]]
    return raw_document(device, samples, shown, manifest)
