"""Compile the microbenchmarks with nvcc: one binary for several architectures, plus the PTX and
cubin of every translation unit for the Fig. 2 checks (:mod:`advisor.microbench.checks`).

Layout of a build folder (default ``microbench-build``)::

    cuda-advisor-microbench        the benchmark driver (all archs, plus PTX of the newest for JIT)
    ptx/sm_80/arith.ptx ...        nvcc's PTX of each translation unit, per architecture
    cubin/sm_80/arith.cubin ...    the matching cubins (``cuobjdump -sass`` reads them)
    build.json                     archs, nvcc version, command line, source digests
    build.log                      nvcc's output
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.errors import AdvisorError, UsageError
from advisor.microbench.layout import BINARY_NAME, CHAIN, ILP, SOURCE_DIR, SOURCES, source_paths
from advisor.microbench.toolchain import nvcc_version, require_nvcc, supported_archs
from advisor.output import write_atomic

#: Turing, Ampere and Hopper: three generations that CUDA 12 and 13 both compile for (CUDA 13
#: dropped everything before sm_75); newer GPUs run the sm_90 PTX through the driver's JIT.
DEFAULT_ARCHS = ("sm_75", "sm_80", "sm_90")
DEFAULT_BUILD_DIR = "microbench-build"
NVCC_FLAGS = ("-std=c++17", "-O3", "--threads", "0")
#: a full three-architecture build takes about 40 s on two cores
BUILD_TIMEOUT_S = 1800
MANIFEST = "build.json"
MANIFEST_SCHEMA = "cuda-advisor/microbench-build"
_ARCH = re.compile(r"^sm_(\d+)([af]?)$")


class BuildFailed(AdvisorError):
    """nvcc rejected the shipped sources (a bug or an unsupported toolkit: exit 1)."""


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    binary: Path
    archs: tuple[str, ...]
    ptx: dict[str, tuple[Path, ...]]  # arch -> one PTX file per translation unit
    cubins: dict[str, tuple[Path, ...]]
    nvcc_version: str
    seconds: float


def resolve_archs(requested: Sequence[str], supported: Sequence[str]) -> tuple[str, ...]:
    """Validated, deduplicated, sorted ``sm_XX`` names; the defaults this nvcc supports if none."""
    if not requested:
        chosen = [a for a in DEFAULT_ARCHS if a in supported]
        if not chosen:
            raise UsageError(
                f"this nvcc supports none of the default architectures {', '.join(DEFAULT_ARCHS)};"
                f" give --arch (supported: {', '.join(supported)})"
            )
        return tuple(chosen)
    out: list[str] = []
    for arch in requested:
        if not _ARCH.match(arch):
            raise UsageError(f"--arch {arch}: expected a real architecture such as sm_80")
        if arch not in supported:
            listed = ", ".join(supported)
            raise UsageError(
                f"--arch {arch}: this nvcc does not compile for it (supported: {listed})"
            )
        if arch not in out:
            out.append(arch)
    return tuple(sorted(out, key=_arch_key))


def _arch_key(arch: str) -> tuple[int, str]:
    match = _ARCH.match(arch)
    return (int(match.group(1)), match.group(2)) if match else (0, arch)


def gencode_flags(archs: Sequence[str]) -> list[str]:
    """SASS for every arch, and PTX of the newest so that newer GPUs can JIT-compile it."""
    flags: list[str] = []
    for arch in archs:
        compute = arch.replace("sm_", "compute_")
        flags += ["-gencode", f"arch={compute},code={arch}"]
    newest = archs[-1].replace("sm_", "compute_")
    flags += ["-gencode", f"arch={newest},code={newest}"]
    return flags


def nvcc_command(nvcc: str, archs: Sequence[str], binary: Path, keep_dir: Path) -> list[str]:
    sources = [str(SOURCE_DIR / name) for name in SOURCES]
    return [
        nvcc,
        *NVCC_FLAGS,
        *gencode_flags(archs),
        "--keep",
        "--keep-dir",
        str(keep_dir),
        "-o",
        str(binary),
        *sources,
    ]


def build_microbenchmarks(
    out_dir: str | Path, archs: Sequence[str] = (), nvcc: str | None = None
) -> BuildResult:
    """Compile the driver for ``archs`` into ``out_dir`` (created if needed)."""
    nvcc = nvcc or require_nvcc()
    chosen = resolve_archs(archs, supported_archs(nvcc))
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot create the build folder ({exc})") from None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=".nvcc-", dir=out) as tmp:
        keep = Path(tmp)
        staged = keep / BINARY_NAME
        command = nvcc_command(nvcc, chosen, staged, keep)
        _run_nvcc(command, out / "build.log")
        ptx = _collect(keep, out / "ptx", chosen, "ptx")
        cubins = _collect(keep, out / "cubin", chosen, "cubin")
        binary = out / BINARY_NAME
        shutil.move(str(staged), str(binary))
    version = nvcc_version(nvcc)
    shown = [str(out / BINARY_NAME) if a == str(staged) else a for a in command]
    shown = ["<temporary folder>" if a == str(keep) else a for a in shown]
    write_atomic(out / MANIFEST, _manifest(chosen, nvcc, version, shown))
    return BuildResult(out, binary, chosen, ptx, cubins, version, time.monotonic() - started)


def _run_nvcc(command: list[str], log: Path) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildFailed(f"nvcc could not run ({exc})") from None
    write_atomic(log, " ".join(command) + "\n" + done.stdout + done.stderr)
    if done.returncode != 0:
        errors = [ln for ln in done.stderr.splitlines() if "error" in ln.lower()]
        first = errors[0] if errors else (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BuildFailed(f"nvcc failed (exit {done.returncode}): {first.strip()}; see {log}")


def _collect(
    keep: Path, dest: Path, archs: Sequence[str], suffix: str
) -> dict[str, tuple[Path, ...]]:
    """Move nvcc's kept PTX or cubin files to ``dest/sm_XX/<unit>.<suffix>``."""
    out: dict[str, tuple[Path, ...]] = {}
    shutil.rmtree(dest, ignore_errors=True)  # no stale architectures from an earlier build
    for arch in archs:
        folder = dest / arch
        folder.mkdir(parents=True)
        files: list[Path] = []
        for name in SOURCES:
            unit = Path(name).stem
            kept = _kept_file(keep, unit, arch, suffix, single=len(archs) == 1)
            if not kept.is_file():
                raise BuildFailed(f"nvcc did not keep {kept.name} (unexpected nvcc version?)")
            target = folder / f"{unit}.{suffix}"
            shutil.move(str(kept), str(target))
            files.append(target)
        out[arch] = tuple(files)
    return out


def _kept_file(keep: Path, unit: str, arch: str, suffix: str, single: bool) -> Path:
    """nvcc's name for a kept file: ``<unit>.compute_90.ptx``, or ``<unit>.compute_90.sm_90.cubin``
    when compute_90 also goes in as PTX; with one virtual architecture ``<unit>.ptx`` and
    ``<unit>.sm_90.cubin``."""
    compute = arch.replace("sm_", "compute_")
    names = [f"{unit}.{compute}.{suffix}", f"{unit}.{compute}.{arch}.{suffix}"]
    if single:
        names += [f"{unit}.{arch}.{suffix}", f"{unit}.{suffix}"]
    return next((keep / n for n in names if (keep / n).is_file()), keep / names[0])


def _manifest(archs: Sequence[str], nvcc: str, version: str, command: list[str]) -> str:
    payload: dict[str, Any] = {
        "schema": MANIFEST_SCHEMA,
        "version": 1,
        "archs": list(archs),
        "nvcc": nvcc,
        "nvcc_version": version,
        "command": command,
        "chain": CHAIN,
        "ilp": ILP,
        "sources": {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in source_paths()
        },
    }
    return json.dumps(payload, indent=2, sort_keys=True) + "\n"


def read_manifest(out_dir: str | Path) -> dict[str, Any] | None:
    """The build.json of a build folder, or None when there is none (or it is unreadable)."""
    path = Path(out_dir) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == MANIFEST_SCHEMA else None


def built_files(out_dir: str | Path, suffix: str) -> dict[str, tuple[Path, ...]]:
    """``ptx`` or ``cubin`` files of a build folder, by architecture."""
    base = Path(out_dir) / suffix
    if not base.is_dir():
        return {}
    return {
        folder.name: tuple(sorted(folder.glob(f"*.{suffix}")))
        for folder in sorted(base.iterdir())
        if folder.is_dir()
    }
