"""What the CUDA sources of the microbenchmarks define, read from the sources themselves.

The chain length, the instruction-level parallelism, the divergence configurations and the
arithmetic-intensity kernels are constants of the ``.cu`` files; the checks
(:mod:`advisor.microbench.checks`) and the fit read them here so that there is one source of truth.
"""

from __future__ import annotations

import re
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent
HEADER = "microbench.cuh"
#: translation units, in link order; each defines one group of benchmarks (main.cu: the driver)
SOURCES = ("main.cu", "arith.cu", "memory.cu", "shmem.cu", "divergence.cu")
#: the benchmark groups of the driver's ``--only`` option
GROUPS = ("arith", "arith_intensity", "memory", "dram_sweep", "shmem", "divergence")
BINARY_NAME = "cuda-advisor-microbench"


def _source(name: str) -> str:
    return (SOURCE_DIR / name).read_text(encoding="utf-8")


def _int(pattern: str, name: str) -> int:
    match = re.search(pattern, _source(name), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"{SOURCE_DIR / name}: no match for {pattern!r}")
    return int(match.group(1))


#: instructions per measured chain: MB_UNROLL copies x MB_DEPTH recursion levels
CHAIN = _int(r"^#define MB_UNROLL (\d+)", HEADER) * _int(r"^#define MB_DEPTH (\d+)", HEADER)
#: independent chains per thread in the throughput kernels
ILP = _int(r"^constexpr int MB_ILP = (\d+);", HEADER)
#: dependent shared loads per iteration of the bank-conflict kernel (two chains)
SHMEM_LOADS_PER_ITERATION = 2 * _int(r"^constexpr int MB_SHMEM_UNROLL = (\d+);", "shmem.cu")
#: (ways, uniform fma, divergent fma) of each F_Divergence kernel
DIVERGENCE_CONFIGS: tuple[tuple[int, int, int], ...] = tuple(
    (int(w), int(u), int(d))
    for w, u, d in re.findall(
        r"^MB_DIV_KERNEL\((\d+), (\d+), (\d+)\)", _source("divergence.cu"), re.MULTILINE
    )
)
#: fma per load of the unrolled arithmetic-intensity kernels (larger counts repeat the 64 one)
INTENSITY_KERNEL_FMAS: tuple[int, ...] = tuple(
    int(f) for f in re.findall(r"^MB_INTENSITY_KERNEL\((\d+)\)", _source("arith.cu"), re.MULTILINE)
)


def source_paths() -> tuple[Path, ...]:
    """The header and every translation unit."""
    return (SOURCE_DIR / HEADER, *(SOURCE_DIR / name for name in SOURCES))
