"""Large nvprof ``--csv --print-gpu-trace`` files for the scale benchmark (FORMATS.md §1.3).

The layout is the CUDA 9+ one of the real TITAN Xp trace (``nanzifan_nvprof_titanxp``): the
``==PID==`` preamble, the 22-column quoted header with ``SrcMemType``, ``DstMemType``,
``Unified Memory``, ``Virtual Address`` and ``Correlation_ID``, the units row
``s,ms,,,,,,,,B,B,MB,GB/s,,,,,,B,,,``, numbers unquoted with six decimals, text quoted
(``"TITAN Xp (0)","1","7"``), kernel rows with empty size/throughput, copy rows with empty
grid/block/registers/shared-memory fields.  nvprof's MB and GB are binary.

Run ``python benchmarks/gen_nvprof.py OUT.csv [--n N] [--seed S]``; the benchmark imports
:data:`GENERATORS`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

try:
    from benchmarks import gen_common as g
except ImportError:  # run as a script from benchmarks/
    import gen_common as g  # type: ignore[no-redef]

HEADER = (
    "Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z",
    "Registers Per Thread", "Static SMem", "Dynamic SMem", "Size", "Throughput", "SrcMemType",
    "DstMemType", "Device", "Context", "Stream", "Unified Memory", "Virtual Address", "Name",
    "Correlation_ID",
)  # fmt: skip
UNITS = "s,ms,,,,,,,,B,B,MB,GB/s,,,,,,B,,,"
DEVICE = "TITAN Xp (0)"
PID = 308065
APP = "./train --epochs 40"
T0_S = 1.183779
MIB = 2.0**20
GIB = 2.0**30
DEFAULT_N = 1_000_000


def transfer_names() -> list[str]:
    return [f"[CUDA memcpy {kind}]" if kind != "memset" else "[CUDA memset]"
            for kind, _, _ in g.TRANSFERS]  # fmt: skip


def _rows(tl: g.Timeline, lo: int, hi: int) -> bytes:
    part = slice(lo, hi)
    kern = tl.is_kernel[part]
    copy = ~kern
    n = hi - lo
    start_s = T0_S + tl.start_ns[part] / 1e9
    duration_ms = tl.duration_ns[part] / 1e6
    nbytes = tl.bytes[part].astype(np.float64)
    rate = nbytes / GIB / np.maximum(tl.duration_ns[part] / 1e9, 1e-12)
    transfer = tl.transfer[part]
    src = np.array([s for _, s, _ in g.TRANSFERS], dtype=object)
    dst = np.array([d for _, _, d in g.TRANSFERS], dtype=object)
    src_idx = np.where(copy, transfer, -1)
    dst_idx = np.where(copy & (dst[np.maximum(transfer, 0)] != ""), transfer, -1)
    names = g.texts([*g.KERNEL_NAMES, *transfer_names()], np.where(
        kern, tl.kernel[part], len(g.KERNEL_NAMES) + transfer), quote='"')  # fmt: skip
    empty = pa.nulls(n, pa.string())
    columns = [
        g.fixed(start_s, 6),
        g.fixed(duration_ms, 6),
        *(g.integers(tl.grid[part, i], kern) for i in range(3)),
        *(g.integers(tl.block[part, i], kern) for i in range(3)),
        g.integers(tl.registers[part], kern),
        g.integers(tl.static_smem_bytes[part], kern),
        g.integers(tl.dynamic_smem_bytes[part], kern),
        g.fixed(nbytes / MIB, 6, copy),
        g.fixed(rate, 6, copy),
        g.texts(list(src), src_idx, quote='"'),
        g.texts(list(dst), dst_idx, quote='"'),
        g.texts([DEVICE], np.zeros(n, dtype=np.int64), quote='"'),
        g.texts(["1"], np.zeros(n, dtype=np.int64), quote='"'),
        g.quoted(g.integers(tl.stream[part])),
        empty,
        empty,
        names,
        g.integers(tl.correlation_id[part]),
    ]
    return g.join_lines(columns)


def write_nvprof_gputrace(path: Path, n: int, seed: int = 0) -> None:
    """An nvprof ``--print-gpu-trace --csv`` file of ``n`` kernel and copy rows."""
    tl = g.timeline(n, seed)
    head = (
        f"=={PID}== NVPROF is profiling process {PID}, command: {APP}\n"
        + f"=={PID}== Profiling application: {APP}\n"
        + f"=={PID}== Profiling result:\n"
        + ",".join(f'"{h}"' for h in HEADER)
        + "\n"
        + UNITS
        + "\n"
    )
    g.write_chunked(Path(path), head, n, lambda lo, hi: _rows(tl, lo, hi))


GENERATORS: dict[str, tuple[Callable[[Path, int, int], None], int, bool]] = {
    "nvprof-gputrace-csv": (write_nvprof_gputrace, DEFAULT_N, True),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=DEFAULT_N)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    write_nvprof_gputrace(args.out, args.n, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
