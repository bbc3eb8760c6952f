"""Where the CUDA tools are: ``nvcc`` (build), ``cuobjdump`` (SASS checks), ``nvidia-smi`` (run).

Each tool is looked up on PATH, then in ``$CUDA_HOME/bin`` (or ``$CUDA_PATH/bin``),
``/usr/local/cuda/bin``, and the ``bin`` folders of NVIDIA's PyPI wheels (``nvidia/cu13/bin``,
``nvidia/cu12/bin`` in site-packages).  A missing tool is a :class:`ToolMissing` error (exit 2)
whose one-line message says how to install it; a machine without an NVIDIA GPU is a
:class:`NoGpu` error (exit 2).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from advisor.errors import UsageError

#: the PyPI packages that together give a working nvcc (checked with CUDA 13.5 wheels)
NVCC_PIP_PACKAGES = (
    "nvidia-cuda-nvcc",
    "nvidia-cuda-runtime",
    "nvidia-cuda-crt",
    "nvidia-cuda-cccl",
    "nvidia-nvvm",
)
#: cuobjdump -sass calls nvdisasm, so both are needed for the SASS checks
CUOBJDUMP_PIP_PACKAGES = ("nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm")
_WHEEL_BIN_DIRS = ("cu13/bin", "cu12/bin", "cuda_nvcc/bin", "cuda_cuobjdump/bin")
#: seconds a tool may take to print its version or list GPUs
QUERY_TIMEOUT_S = 60


class ToolMissing(UsageError):
    """A CUDA tool the command needs is not installed (exit 2)."""


class NoGpu(UsageError):
    """The command needs an NVIDIA GPU and this machine has none (exit 2)."""


NVCC_HINT = (
    "nvcc (the CUDA compiler) was not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin;"
    " install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) or, on Linux x86-64,"
    f" `pip install {' '.join(NVCC_PIP_PACKAGES)}`, or set CUDA_HOME to the toolkit folder"
)
CUOBJDUMP_HINT = (
    "cuobjdump was not found (the SASS checks need it and nvdisasm);"
    f" `pip install {' '.join(CUOBJDUMP_PIP_PACKAGES)}` or install the CUDA toolkit"
)


def _candidate_dirs() -> list[Path]:
    dirs: list[Path] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "bin")
    dirs.append(Path("/usr/local/cuda/bin"))
    for entry in sys.path:
        base = Path(entry or ".") / "nvidia"
        dirs.extend(base / sub for sub in _WHEEL_BIN_DIRS)
    return dirs


def find_tool(name: str) -> str | None:
    """The path of an executable ``name``, or None."""
    found = shutil.which(name)
    if found:
        return found
    for folder in _candidate_dirs():
        path = folder / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def require_nvcc() -> str:
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise ToolMissing(NVCC_HINT)
    return nvcc


def nvcc_version(nvcc: str) -> str:
    """``release 13.0, V13.0.88`` from ``nvcc --version``."""
    out = _query([nvcc, "--version"])
    match = re.search(r"release [^\n]*", out)
    return match.group(0).strip() if match else out.strip().splitlines()[-1]


def supported_archs(nvcc: str) -> tuple[str, ...]:
    """The real architectures nvcc compiles for (``sm_75``, ...), from ``--list-gpu-arch``."""
    out = _query([nvcc, "--list-gpu-arch"])
    return tuple("sm_" + m.group(1) for m in re.finditer(r"^compute_(\w+)\s*$", out, re.MULTILINE))


def find_cuobjdump() -> tuple[str, dict[str, str]] | None:
    """cuobjdump and an environment whose PATH reaches nvdisasm; None if either is absent."""
    cuobjdump = find_tool("cuobjdump")
    nvdisasm = find_tool("nvdisasm")
    if cuobjdump is None or nvdisasm is None:
        return None
    env = dict(os.environ)
    env["PATH"] = str(Path(nvdisasm).parent) + os.pathsep + env.get("PATH", "")
    return cuobjdump, env


@dataclass(frozen=True)
class LocalGpu:
    """One GPU as ``nvidia-smi`` lists it."""

    index: int
    name: str
    compute_capability: str  # "8.0"
    driver_version: str

    @property
    def arch(self) -> str:
        return "sm_" + self.compute_capability.replace(".", "")


def local_gpus() -> list[LocalGpu]:
    """The machine's NVIDIA GPUs; :class:`NoGpu` when there is no driver or no GPU."""
    smi = find_tool("nvidia-smi")
    if smi is None:
        raise NoGpu(
            "no NVIDIA GPU: `nvidia-smi` is not installed (no NVIDIA driver);"
            " run `cuda-advisor microbench run` on a machine with a CUDA GPU"
        )
    query = "index,name,compute_cap,driver_version"
    try:
        out = _query([smi, f"--query-gpu={query}", "--format=csv,noheader"])
    except ToolMissing as exc:
        raise NoGpu(f"no usable NVIDIA GPU: {exc}") from None
    gpus: list[LocalGpu] = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) == 4 and cells[0].isdigit():
            gpus.append(LocalGpu(int(cells[0]), cells[1], cells[2], cells[3]))
    if not gpus:
        raise NoGpu("no NVIDIA GPU: `nvidia-smi` lists none; run this on a machine with a CUDA GPU")
    return gpus


def _query(command: list[str]) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolMissing(f"`{' '.join(command)}` could not run ({exc})") from None
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()
        reason = first[0] if first else f"exit code {done.returncode}"
        raise ToolMissing(f"`{' '.join(command)}` failed: {reason}")
    return done.stdout
