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
import pyarrow.compute as pc

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


#: the plain-text trace (no ``--csv``): column, width (values right-aligned under the header's
#: right edge, two spaces apart), as nvprof prints ``--print-gpu-trace`` to a terminal; Name is
#: last and left-aligned
TEXT_COLUMNS = (
    ("Start", 13), ("Duration", 12), ("Grid Size", 13), ("Block Size", 12), ("Regs*", 6),
    ("SSMem*", 8), ("DSMem*", 8), ("Size", 13), ("Throughput", 12), ("SrcMemType", 10),
    ("DstMemType", 10), ("Device", 14), ("Context", 7), ("Stream", 6),
)  # fmt: skip


def _dims(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    """``(x y z)`` cells, null where ``valid`` is False."""
    parts = [g.integers(values[:, i]) for i in range(3)]
    text = pc.binary_join_element_wise("(", *parts, ")", " ")
    text = pc.replace_substring(pc.replace_substring(text, "( ", "("), " )", ")")
    return g.masked(text, valid)


def _glued(text: pa.Array, unit: str) -> pa.Array:
    return pc.binary_join_element_wise(text, unit, "")


def _text_rows(tl: g.Timeline, lo: int, hi: int) -> bytes:
    part = slice(lo, hi)
    kern = tl.is_kernel[part]
    copy = ~kern
    n = hi - lo
    nbytes = tl.bytes[part].astype(np.float64)
    rate = nbytes / GIB / np.maximum(tl.duration_ns[part] / 1e9, 1e-12)
    transfer = tl.transfer[part]
    src = [s for _, s, _ in g.TRANSFERS]
    dst = [d or "-" for _, _, d in g.TRANSFERS]
    names = g.texts([*g.KERNEL_NAMES, *transfer_names()], np.where(
        kern, tl.kernel[part], len(g.KERNEL_NAMES) + transfer))  # fmt: skip
    launch_ids = pc.binary_join_element_wise(" [", g.integers(tl.correlation_id[part]), "]", "")
    names = pc.if_else(pa.array(kern), pc.binary_join_element_wise(names, launch_ids, ""), names)
    cells = [
        _glued(g.fixed(T0_S + tl.start_ns[part] / 1e9, 6), "s"),
        _glued(g.fixed(tl.duration_ns[part] / 1e3, 3), "us"),
        _dims(tl.grid[part], kern),
        _dims(tl.block[part], kern),
        g.integers(tl.registers[part], kern),
        _glued(g.integers(tl.static_smem_bytes[part], kern), "B"),
        _glued(g.integers(tl.dynamic_smem_bytes[part], kern), "B"),
        _glued(g.fixed(nbytes / 1024, 3, copy), "KB"),
        _glued(g.fixed(rate, 3, copy), "GB/s"),
        g.texts(src, np.where(copy, transfer, -1)),
        g.texts(dst, np.where(copy, transfer, -1)),
        g.texts([DEVICE], np.zeros(n, dtype=np.int64)),
        g.texts(["1"], np.zeros(n, dtype=np.int64)),
        g.integers(tl.stream[part]),
    ]
    padded = [
        pc.utf8_lpad(pc.fill_null(cell, "-"), width=width)
        for cell, (_, width) in zip(cells, TEXT_COLUMNS, strict=True)
    ]
    return g.join_lines([*padded, names], separator="  ")


def write_nvprof_gputrace_text(path: Path, n: int, seed: int = 0) -> None:
    """nvprof ``--print-gpu-trace`` as printed without ``--csv`` (FORMATS.md §1.3, last
    bullet): ``n`` kernel and copy rows, times and sizes with their units glued on."""
    tl = g.timeline(n, seed)
    header = "  ".join(name.rjust(width) for name, width in TEXT_COLUMNS) + "  Name"
    head = (
        f"=={PID}== NVPROF is profiling process {PID}, command: {APP}\n"
        + f"=={PID}== Profiling application: {APP}\n"
        + f"=={PID}== Profiling result:\n"
        + header
        + "\n"
    )
    g.write_chunked(Path(path), head, n, lambda lo, hi: _text_rows(tl, lo, hi))


GENERATORS: dict[str, tuple[Callable[[Path, int, int], None], int, bool]] = {
    "nvprof-gputrace-csv": (write_nvprof_gputrace, DEFAULT_N, True),
    "nvprof-gputrace-text": (write_nvprof_gputrace_text, DEFAULT_N, True),
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
