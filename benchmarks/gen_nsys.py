"""Large Nsight Systems inputs for the scale benchmark: a ``cuda_gpu_trace`` CSV and a SQLite
export (FORMATS.md §3.2, §3.8).

* ``nsys stats --report cuda_gpu_trace --format csv``: the 2024+ header with ``GreenCtx``
  and ``Throughput (MB/s)``, no units row, fields quoted only when they hold a comma, decimal MB
  with three decimals, the report script's integer-division throughput
  (``bytes * (1000000000 / duration)``), memcpy names ``[CUDA memcpy Host-to-Device]``,
  memsets with the memory kind in ``SrcMemKd``.
* ``nsys export --type sqlite``: the tables and columns of the real nsys 2023.3 export
  (schema 3.4.0): ``CUPTI_ACTIVITY_KIND_KERNEL`` with ``StringIds`` name ids, ``..._MEMCPY``,
  ``..._MEMSET``, ``..._RUNTIME`` (one launch/copy call per activity), ``TARGET_INFO_GPU``,
  ``ENUM_CUDA_MEMCPY_OPER``, ``ENUM_CUDA_MEM_KIND`` and ``META_DATA_EXPORT``; ``n`` counts the
  kernel rows.

* ``distinct-csv``: the ``cuda_gpu_trace`` CSV with every kernel row named differently
  (``vectorAdd_17(float const*, ...)``).

Run ``python benchmarks/gen_nsys.py csv|sqlite|distinct-csv OUT [--n N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import sqlite3
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
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
)
DEVICE = "NVIDIA A100-SXM4-80GB"
T0_NS = 512_340_118
DEFAULT_N = 1_000_000
#: rows of the many-distinct-names trace (about nine in ten of them kernels, each its own name)
DISTINCT_N = 1_000_000
#: nsys's spelling of the directions in memcpy names (FORMATS.md §3.2)
_NSYS_COPY = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device"}
#: ENUM_CUDA_MEMCPY_OPER / ENUM_CUDA_MEM_KIND ids of the real export
_COPY_KIND = {"HtoD": 1, "DtoH": 2, "DtoD": 8}
_MEM_KIND = {"Pageable": 0, "Pinned": 1, "Device": 2}


def _name_cell(name: str) -> str:
    """nsys quotes a field only when it holds a comma."""
    return f'"{name}"' if "," in name else name


def transfer_names() -> list[str]:
    return [f"[CUDA memcpy {_NSYS_COPY[k]}]" if k != "memset" else "[CUDA memset]"
            for k, _, _ in g.TRANSFERS]  # fmt: skip


def _csv_rows(tl: g.Timeline, lo: int, hi: int, distinct: bool = False) -> bytes:
    """The CSV lines of rows ``lo:hi``; with ``distinct``, every kernel row's name is its own
    (the mix's name with a ``_<row>`` suffix on the function name)."""
    part = slice(lo, hi)
    kern = tl.is_kernel[part]
    copy = ~kern
    n = hi - lo
    duration = tl.duration_ns[part]
    nbytes = tl.bytes[part]
    rate = nbytes * (1_000_000_000 // duration) / 1e6  # the report script's integer division
    transfer = tl.transfer[part]
    dst = np.array([d for _, _, d in g.TRANSFERS], dtype=object)
    cells = [_name_cell(n) for n in (*g.KERNEL_NAMES, *transfer_names())]
    names = pa.array(cells, type=pa.string()).take(
        pa.array(np.where(kern, tl.kernel[part], len(g.KERNEL_NAMES) + transfer))
    )
    if distinct:
        names = pc.if_else(pa.array(kern), _distinct_names(tl.kernel[part], lo), names)
    empty = pa.nulls(n, pa.string())
    columns = [
        g.integers(T0_NS + tl.start_ns[part]),
        g.integers(duration),
        g.integers(tl.correlation_id[part]),
        *(g.integers(tl.grid[part, i], kern) for i in range(3)),
        *(g.integers(tl.block[part, i], kern) for i in range(3)),
        g.integers(tl.registers[part], kern),
        g.fixed(tl.static_smem_bytes[part] / 1e6, 3, kern),
        g.fixed(tl.dynamic_smem_bytes[part] / 1e6, 3, kern),
        g.fixed(nbytes / 1e6, 3, copy),
        g.fixed(rate, 3, copy),
        g.texts([s for _, s, _ in g.TRANSFERS], np.where(copy, transfer, -1)),
        g.texts(list(dst), np.where(copy & (dst[np.maximum(transfer, 0)] != ""), transfer, -1)),
        g.texts([f"{DEVICE} (0)"], np.zeros(n, dtype=np.int64)),
        g.texts(["1"], np.zeros(n, dtype=np.int64)),
        empty,
        g.integers(tl.stream[part]),
        names,
    ]
    return g.join_lines(columns)


def write_nsys_gputrace(path: Path, n: int, seed: int = 0) -> None:
    """An nsys ``cuda_gpu_trace`` CSV of ``n`` kernel and copy rows."""
    tl = g.timeline(n, seed)
    g.write_chunked(Path(path), HEADER + "\n", n, lambda lo, hi: _csv_rows(tl, lo, hi))


def _distinct_names(kernel: np.ndarray, lo: int) -> pa.Array:
    """Row ``lo + i``'s name: kernel ``kernel[i]`` of the mix renamed ``<name>_<lo + i>``
    (quoted when it holds a comma, as nsys writes it)."""
    stems = [_name_cell(n.replace("(", "_{}(", 1) if "(" in n else n + "_{}")
             for n in g.KERNEL_NAMES]  # fmt: skip
    return pa.array([stems[k].format(lo + i) for i, k in enumerate(kernel.tolist())], pa.string())


def write_nsys_distinct_names(path: Path, n: int, seed: int = 0) -> None:
    """An nsys ``cuda_gpu_trace`` CSV of ``n`` rows whose kernel names are all different (a
    JIT or autotuning run that names each kernel by its parameters): the case where the cost
    per distinct name shows."""
    tl = g.timeline(n, seed)
    g.write_chunked(Path(path), HEADER + "\n", n, lambda lo, hi: _csv_rows(tl, lo, hi, True))


def _kernel_timeline(n: int, seed: int) -> g.Timeline:
    """A timeline cut right after its ``n``-th kernel."""
    tl = g.timeline(n + n // 5 + 10, seed)
    kernels = np.flatnonzero(tl.is_kernel)
    cut = int(kernels[n - 1]) + 1 if n > 0 else 0
    return g.Timeline(**{k: v[:cut] for k, v in vars(tl).items()})


_SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
    busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER,
    memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, cuDevice INTEGER,
    computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
    registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
    gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
    localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
    graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
    deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
    srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
    graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
    graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
    nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
"""
_GLOBAL_PID = 281578458578944
_GLOBAL_TID = 281578458585112
#: StringIds: kernel names from 100, API names after them
_NAME_BASE = 100
_API = ("cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020")


def write_nsys_sqlite(path: Path, n: int, seed: int = 0) -> None:
    """An nsys SQLite export with ``n`` kernel rows (and the copies and API calls around them)."""
    tl = _kernel_timeline(n, seed)
    path = Path(path)
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    try:
        con.executescript(_SCHEMA)
        _static_tables(con)
        _activity_tables(con, tl)
        con.commit()
    finally:
        con.close()


def _static_tables(con: sqlite3.Connection) -> None:
    strings = [(0, "[Unknown]")]
    strings += [(_NAME_BASE + i, name) for i, name in enumerate(g.KERNEL_NAMES)]
    api_base = _NAME_BASE + len(g.KERNEL_NAMES)
    strings += [(api_base + i, name) for i, name in enumerate(_API)]
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", strings)
    opers = [(0, "UNKNOWN", "Unknown"), (1, "HTOD", "Host-to-Device"),
             (2, "DTOH", "Device-to-Host"), (8, "DTOD", "Device-to-Device")]  # fmt: skip
    con.executemany(
        "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)",
        [(i, f"CUDA_MEMCPY_KIND_{name}", label) for i, name, label in opers],
    )
    con.executemany(
        "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)",
        [(i, f"CUDA_MEMOPR_MEMORY_KIND_{label.upper()}", label) for label, i in _MEM_KIND.items()],
    )
    con.executemany(
        "INSERT INTO META_DATA_EXPORT VALUES (?, ?)",
        [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
         ("EXPORT_PRODUCT_VERSION", "2023.3.1.92"), ("EXPORT_SCHEMA_VERSION", "3.4.0")],
    )  # fmt: skip
    con.execute(
        "INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, ?, '0000:07:00.0', 1, 41943040, "
        "85899345920, 2039000000000, 1410000000, 108, 0, 8, 0)",
        (DEVICE,),
    )


def _activity_tables(con: sqlite3.Connection, tl: g.Timeline) -> None:
    start = T0_NS + tl.start_ns
    end = start + tl.duration_ns
    api_start = start - 4_000
    kern = np.flatnonzero(tl.is_kernel)
    name_id = _NAME_BASE + tl.kernel[kern]
    kernel_rows = zip(
        start[kern].tolist(), end[kern].tolist(), tl.stream[kern].tolist(),
        tl.correlation_id[kern].tolist(), name_id.tolist(), tl.registers[kern].tolist(),
        tl.grid[kern, 0].tolist(), tl.block[kern, 0].tolist(),
        tl.static_smem_bytes[kern].tolist(), tl.dynamic_smem_bytes[kern].tolist(),
        range(1, len(kern) + 1), strict=True,
    )  # fmt: skip
    con.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, ?, ?, "
        f"{_GLOBAL_PID}, ?, ?, NULL, 1, 0, ?, ?, 1, 1, ?, 1, 1, ?, ?, 0, 0, ?, 8192, NULL, 0)",
        ((s, e, st, c, nm, nm, r, gx, bx, ss, ds, gid)
         for s, e, st, c, nm, r, gx, bx, ss, ds, gid in kernel_rows),
    )  # fmt: skip
    kinds = [k for k, _, _ in g.TRANSFERS]
    copy = np.flatnonzero(~tl.is_kernel & (tl.transfer != kinds.index("memset")))
    src = np.array([_MEM_KIND[s] for _, s, _ in g.TRANSFERS])[tl.transfer[copy]]
    dst = np.array([_MEM_KIND.get(d, 2) for _, _, d in g.TRANSFERS])[tl.transfer[copy]]
    oper = np.array([_COPY_KIND.get(k, 0) for k in kinds])[tl.transfer[copy]]
    con.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 1, ?, ?, "
        f"{_GLOBAL_PID}, ?, ?, NULL, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
        zip(start[copy].tolist(), end[copy].tolist(), tl.stream[copy].tolist(),
            tl.correlation_id[copy].tolist(), tl.bytes[copy].tolist(), oper.tolist(),
            src.tolist(), dst.tolist(), strict=True),
    )  # fmt: skip
    sets = np.flatnonzero(~tl.is_kernel & (tl.transfer == kinds.index("memset")))
    con.executemany(
        f"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, 0, 1, ?, ?, {_GLOBAL_PID}, 0, ?, "
        "NULL, 2)",
        zip(start[sets].tolist(), end[sets].tolist(), tl.stream[sets].tolist(),
            tl.correlation_id[sets].tolist(), tl.bytes[sets].tolist(), strict=True),
    )  # fmt: skip
    api_base = _NAME_BASE + len(g.KERNEL_NAMES)
    api = np.where(tl.is_kernel, 0, np.where(tl.transfer == kinds.index("memset"), 2, 1))
    con.executemany(
        f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, {_GLOBAL_TID}, ?, ?, 0, NULL)",
        zip(api_start.tolist(), (api_start + 3_000).tolist(), tl.correlation_id.tolist(),
            (api_base + api).tolist(), strict=True),
    )  # fmt: skip


GENERATORS: dict[str, tuple[Callable[[Path, int, int], None], int, bool]] = {
    "nsys-gputrace-csv": (write_nsys_gputrace, DEFAULT_N, True),
    "nsys-sqlite": (write_nsys_sqlite, DEFAULT_N, False),
    "nsys-distinct-names-csv": (write_nsys_distinct_names, DISTINCT_N, True),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["csv", "sqlite", "distinct-csv"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=DEFAULT_N)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    write = {"csv": write_nsys_gputrace, "sqlite": write_nsys_sqlite,
             "distinct-csv": write_nsys_distinct_names}[args.kind]  # fmt: skip
    write(args.out, args.n, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
