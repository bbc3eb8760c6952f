"""Nsight Systems SQLite exports (``nsys export --type sqlite``): format ``nsys-sqlite``.

Detected through :mod:`parsers.sqlite.db` by a ``StringIds`` table with ``CUPTI_ACTIVITY_KIND_*``,
``TARGET_INFO_*`` or export metadata tables (FORMATS.md §3.8 names the tables NVIDIA's own report
scripts read).  Exports of nsys 2023.1 (schema 3.1.2) and 2023.3 (schema 3.4.0) were read;
columns are found by name and later additions are optional.  nsys omits empty tables, so any
table may be absent: an export without ``CUPTI_ACTIVITY_KIND_KERNEL`` rows is NoKernelData.

* ``CUPTI_ACTIVITY_KIND_KERNEL``: launches; ``start``/``end`` in ns since the start of the
  session (kept as stored, the timeline ``nsys stats`` prints); ``demangledName`` (else
  ``shortName``, ``mangledName``) is a ``StringIds`` id.
* ``CUPTI_ACTIVITY_KIND_MEMCPY`` (``copyKind``, ``srcKind``, ``dstKind``, ``bytes``, and a
  unified-memory migration's ``migrationCause`` where the export has it) and ``MEMSET``
  (``memKind``): transfers.  The kinds are decoded with the export's own
  ``ENUM_CUDA_MEMCPY_OPER`` / ``ENUM_CUDA_MEM_KIND`` tables (nsys numbers memory kinds
  differently from CUPTI: 0 is Pageable); an older export without them holds the same codes, read
  with the numbering the tables give (a note says so).
* ``CUPTI_ACTIVITY_KIND_RUNTIME``: runtime and driver API calls by name (``nameId``); the CUPTI
  version suffix is dropped (``cudaLaunchKernel_v7000`` -> ``cudaLaunchKernel``) as nsys stats
  does; ``globalTid`` holds pid and tid (``/ 0x1000000 % 0x1000000`` and ``% 0x1000000``).
* ``TARGET_INFO_GPU``: GPUs (``clockRate`` Hz, ``memoryBandwidth`` B/s, ``l2CacheSize`` B);
  its CUDA device id is ``cudaId`` of ``TARGET_INFO_CUDA_DEVICE`` when that table exists, else
  its ``cuDevice`` column, else its ``id``; the per-SM limits from ``maxWarpsPerSm``,
  ``maxBlocksPerSm``, ``maxRegistersPerSm`` and ``maxShmemPerSm`` (bytes) where the export has
  them.
* ``META_DATA_EXPORT`` (``EXPORT_META_DATA`` in 2023.1): ``EXPORT_PRODUCT_VERSION``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from advisor import schema
from advisor.errors import NoKernelData
from advisor.profile import Profile, Provenance
from parsers.names import compute_capability
from parsers.registry import Selection
from parsers.sqlite.columns import in_time_order, text_column, text_per_distinct
from parsers.sqlite.cupti_ids import MEMCPY_KINDS
from parsers.sqlite.db import (
    Database,
    SqliteReader,
    add_reader,
    as_int,
    as_text,
    int_column,
    lookup,
    number_column,
    sm_limit,
    string_by_id,
)

FORMAT = "nsys-sqlite"
PROFILER = "nsys"
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
_META_TABLES = ("META_DATA_EXPORT", "EXPORT_META_DATA")
_GID = 0x1000000
#: "htod" -> "HtoD": the directions of CUPTI's memcpy kinds, which nsys's enum names spell out
_DIRECTIONS = {kind.lower(): kind for kind in MEMCPY_KINDS.values()}
_VERSION_SUFFIX = re.compile(r"_v\d{4,5}$")
_NAME_COLUMNS = ("demangledName", "shortName", "mangledName")
_COMMON = {
    "start": "start_ns", "end": "end_ns", "deviceId": "device_id", "contextId": "context",
    "streamId": "stream", "correlationId": "correlation_id",
}  # fmt: skip
_KERNEL_COLS = {
    **_COMMON, "gridX": "grid_x", "gridY": "grid_y", "gridZ": "grid_z", "blockX": "block_x",
    "blockY": "block_y", "blockZ": "block_z", "registersPerThread": "registers_per_thread",
    "staticSharedMemory": "static_shared_bytes", "dynamicSharedMemory": "dynamic_shared_bytes",
}  # fmt: skip


def claims(tables: frozenset[str]) -> bool:
    """An nsys export has StringIds and CUDA activity, target-info or export metadata tables."""
    return "StringIds" in tables and any(
        t.startswith(("CUPTI_ACTIVITY_KIND_", "TARGET_INFO_")) or t in _META_TABLES for t in tables
    )


def read_nsys_sqlite(db: Database, selected: Selection) -> Profile:
    """Read an nsys SQLite export (see the module docstring); an export has no metrics rows, so
    ``selected`` (the registry's metric selection) is not used."""
    if not db.has_rows(KERNEL):
        raise NoKernelData(
            db.path,
            f"no kernel activity: the Nsight Systems export has no {KERNEL} table "
            "(nsys omits empty tables; was CUDA traced with -t cuda and did the run launch "
            "kernels?)",
        )
    strings = db.strings("StringIds", "id", "value")
    devices = _devices(db)
    device_names = dict(zip(devices["device_id"], devices["name"], strict=True))
    notes = [
        "start_ns is in ns since the start of the Nsight Systems session, as stored",
    ]
    launches = _launches(db, strings, device_names)
    transfers = _transfers(db, device_names, notes)
    api = _api_calls(db, strings)
    modes = ["gpu-trace"] + (["api-trace"] if len(api) else [])
    return Profile(
        provenance=(
            Provenance(
                path=db.path, format=FORMAT, profiler=PROFILER, modes=tuple(modes),
                profiler_version=_version(db), notes=tuple(notes),
            ),
        ),
        launches=launches,
        transfers=transfers,
        api_calls=api,
        devices=devices,
    )  # fmt: skip


def _frame(
    db: Database, table: str, columns: Mapping[str, str], schema_table: str = ""
) -> pd.DataFrame:
    """``columns`` of ``table`` renamed; exact integer times turned into start and duration.
    The columns the schema keeps narrow in ``schema_table`` (:data:`advisor.schema.NARROW`) are
    narrowed as they are read."""
    keep = [raw for raw, name in columns.items() if name == "name"]  # a string id, or text
    narrow_names = schema.NARROW.get(schema_table, frozenset())
    narrow = [raw for raw, name in columns.items() if name in narrow_names]
    out = db.int_frame(table, list(columns), required=("start", "end"), keep=keep, narrow=narrow)
    out = out.rename(columns=dict(columns))
    start = out["start_ns"]
    end = out.pop("end_ns")
    out["duration_ns"] = (end - start).astype("float64")
    out["start_ns"] = start.astype("float64")
    return out


def _launches(
    db: Database, strings: Mapping[int, str], device_names: Mapping[object, object]
) -> pd.DataFrame:
    have = set(db.columns(KERNEL))
    name_col = next((c for c in _NAME_COLUMNS if c in have), None)
    if name_col is None:
        raise db.malformed(f"table {KERNEL} has no kernel name column ({', '.join(_NAME_COLUMNS)})")
    out = _frame(db, KERNEL, {**_KERNEL_COLS, name_col: "name"}, "launches")
    dtypes = schema.TABLES["launches"]  # a trace repeats a few dozen names: categoricals
    out["name"] = text_column(
        out["name"], lambda v: _string(db, strings, v, "kernel name"), dtypes["name"]
    )
    out["device"] = text_column(
        out["device_id"], lambda v: _device_name(device_names, v), dtypes["device"]
    )
    out = in_time_order(out)
    out["launch_id"] = range(len(out))
    return out[[c for c in schema.TABLES["launches"] if c in out.columns]]


#: ``ENUM_CUDA_MEMCPY_OPER`` / ``ENUM_CUDA_MEM_KIND`` as the exports that have them write them
#: (nsys 2023.3; the export's own numbering, 11-13 the unified-memory migrations): older
#: exports hold the same codes without the tables
_COPY_KIND_CODES = {
    0: "CUDA_MEMCPY_KIND_UNKNOWN", 1: "CUDA_MEMCPY_KIND_HTOD", 2: "CUDA_MEMCPY_KIND_DTOH",
    3: "CUDA_MEMCPY_KIND_HTOA", 4: "CUDA_MEMCPY_KIND_ATOH", 5: "CUDA_MEMCPY_KIND_ATOA",
    6: "CUDA_MEMCPY_KIND_ATOD", 7: "CUDA_MEMCPY_KIND_DTOA", 8: "CUDA_MEMCPY_KIND_DTOD",
    9: "CUDA_MEMCPY_KIND_HTOH", 10: "CUDA_MEMCPY_KIND_PTOP", 11: "CUDA_MEMCPY_KIND_UVM_HTOD",
    12: "CUDA_MEMCPY_KIND_UVM_DTOH", 13: "CUDA_MEMCPY_KIND_UVM_DTOD",
}  # fmt: skip
#: ``migrationCause`` (the export's ``ENUM_CUDA_UNIF_MEM_MIGRATION``, CUPTI's
#: ``CUpti_ActivityUnifiedMemoryMigrationCause``) -> the ``cause`` of a transfer; 0 = unknown
_MIGRATION_CAUSES = {
    1: "prefetch", 2: "page fault", 3: "speculative prefetch", 4: "eviction",
    5: "access counters",
}  # fmt: skip
_MEM_KIND_CODES = {
    0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
    6: "Managed Static", 7: "Unknown",
}  # fmt: skip


def _transfers(
    db: Database, device_names: Mapping[object, object], notes: list[str]
) -> pd.DataFrame:
    copy_kinds = _enum(db, "ENUM_CUDA_MEMCPY_OPER", "name")
    mem_kinds = _enum(db, "ENUM_CUDA_MEM_KIND", "label")
    without_enums = not copy_kinds or not mem_kinds
    if without_enums:
        copy_kinds = copy_kinds or _COPY_KIND_CODES
        mem_kinds = mem_kinds or _MEM_KIND_CODES
    frames = []
    if db.has_rows(MEMCPY):
        cols = {**_COMMON, "bytes": "bytes", "copyKind": "kind", "srcKind": "src_kind",
                "dstKind": "dst_kind", "migrationCause": "cause"}  # fmt: skip
        copies = _frame(db, MEMCPY, cols)
        copies["kind"] = text_per_distinct(
            copies["kind"], lambda v: _copy_kind(lookup(copy_kinds, v))
        )
        if "cause" in copies.columns:
            copies["cause"] = text_per_distinct(
                copies["cause"], lambda v: lookup(_MIGRATION_CAUSES, v)
            )
        frames.append(copies)
    if db.has_rows(MEMSET):
        sets = _frame(db, MEMSET, {**_COMMON, "bytes": "bytes", "memKind": "src_kind"})
        sets["kind"] = "memset"
        frames.append(sets)
    if not frames:
        return schema.empty("transfers")
    if without_enums:
        notes.append(
            "the export has no ENUM_CUDA_MEMCPY_OPER / ENUM_CUDA_MEM_KIND table: transfer "
            "directions and memory kinds are read with the codes later exports define"
        )
    out = pd.concat(frames, ignore_index=True)
    for col in ("src_kind", "dst_kind"):
        codes = out[col] if col in out.columns else pd.Series([None] * len(out))
        out[col] = text_per_distinct(codes, lambda v: lookup(mem_kinds, v))
    out["device"] = out["device_id"].map(device_names)
    out = in_time_order(out)
    return out[[c for c in schema.TABLES["transfers"] if c in out.columns]]


def _device_name(device_names: Mapping[object, object], device_id: object) -> str | None:
    """The name of ``device_id`` (None: a launch without one, which matches a GPU without an
    id, as ``Series.map`` matches them); None when the export has no such GPU."""
    name = device_names.get(pd.NA if device_id is None else device_id)
    return None if name is None or name is pd.NA else str(name)


def _copy_kind(enum_name: str | None) -> str:
    """``CUDA_MEMCPY_KIND_HTOD`` -> ``HtoD``; ``..._UVM_DTOH`` -> ``UM-DtoH``; else ``memcpy``."""
    if not enum_name:
        return "memcpy"
    code = enum_name.removeprefix("CUDA_MEMCPY_KIND_").lower()
    prefix = "UM-" if code.startswith("uvm_") else ""
    direction = _DIRECTIONS.get(code.removeprefix("uvm_"))
    return prefix + direction if direction else "memcpy"


def _api_calls(db: Database, strings: Mapping[int, str]) -> pd.DataFrame:
    if not db.has_rows(RUNTIME):
        return schema.empty("api_calls")
    cols = {
        "start": "start_ns", "end": "end_ns", "nameId": "name", "correlationId": "correlation_id",
        "returnValue": "result", "globalTid": "gtid",
    }  # fmt: skip
    out = _frame(db, RUNTIME, cols, "api_calls")
    out["name"] = text_column(
        out["name"], lambda v: _api_name(db, strings, v), schema.TABLES["api_calls"]["name"]
    )
    gtid = int_column(out.pop("gtid"))
    out["process_id"] = schema.narrow_ints(gtid // _GID % _GID)
    out["thread_id"] = schema.narrow_ints(gtid % _GID)
    del gtid
    out = in_time_order(out)
    return out[[c for c in schema.TABLES["api_calls"] if c in out.columns]]


def _devices(db: Database) -> pd.DataFrame:
    cols = [
        "id", "cuDevice", "name", "computeMajor", "computeMinor", "smCount", "clockRate",
        "memoryBandwidth", "l2CacheSize", *_SM_LIMITS.values(),
    ]  # fmt: skip
    raw = db.frame("TARGET_INFO_GPU", cols)
    to_cuda: dict[int, int | None] = {}
    if db.has_rows("TARGET_INFO_CUDA_DEVICE"):
        mapping = db.frame("TARGET_INFO_CUDA_DEVICE", ["gpuId", "cudaId"])
        for gpu, cuda in zip(mapping["gpuId"], mapping["cudaId"], strict=True):
            if (key := as_int(gpu)) is not None:
                to_cuda.setdefault(key, as_int(cuda))
    device_ids = []
    for gpu, cu_device in zip(raw["id"], raw["cuDevice"], strict=True):
        key = as_int(gpu)
        fallback = as_int(cu_device) if as_int(cu_device) is not None else key
        device_ids.append(to_cuda.get(key, fallback) if key is not None else fallback)
    cc = [
        compute_capability(a, b)
        for a, b in zip(raw["computeMajor"], raw["computeMinor"], strict=True)
    ]
    out = pd.DataFrame(
        {
            "device_id": pd.array(device_ids, dtype="Int64"),
            "name": [as_text(v) for v in raw["name"]],
            "compute_capability": cc,
            "sm_count": int_column(raw["smCount"]),
            "sm_clock_hz": number_column(raw["clockRate"]),  # Hz
            "memory_bandwidth_bytes_per_s": number_column(raw["memoryBandwidth"]),
            "l2_bytes": number_column(raw["l2CacheSize"]),
            **{c: sm_limit(raw[name]) for c, name in _SM_LIMITS.items()},
        }
    )
    out = out.drop_duplicates(subset=["device_id", "name"])
    return out.sort_values("device_id", kind="stable").reset_index(drop=True)


#: devices column <- TARGET_INFO_GPU column (exports of 2021+; no threads per SM there)
_SM_LIMITS = {
    "max_warps_per_sm": "maxWarpsPerSm",
    "max_blocks_per_sm": "maxBlocksPerSm",
    "registers_per_sm": "maxRegistersPerSm",
    "shared_bytes_per_sm": "maxShmemPerSm",
}


def _enum(db: Database, table: str, column: str) -> dict[int, str]:
    if table not in db.tables or column not in db.columns(table):
        return {}
    return db.strings(table, "id", column)


def _version(db: Database) -> str | None:
    for table in _META_TABLES:
        if table in db.tables:
            rows = db.rows(
                f'SELECT "value" FROM "{table}" WHERE "name" = ? LIMIT 1',
                ("EXPORT_PRODUCT_VERSION",),
            )
            if rows and rows[0][0]:
                return str(rows[0][0])
    return None


def _string(db: Database, strings: Mapping[int, str], cell: object, what: str) -> str | None:
    return string_by_id(db, strings, cell, what, "StringIds")


def _api_name(db: Database, strings: Mapping[int, str], cell: object) -> str | None:
    """An API call's name without its CUPTI version suffix."""
    name = _string(db, strings, cell, "API name")
    return None if name is None else _VERSION_SUFFIX.sub("", name)


add_reader(
    SqliteReader(
        format=FORMAT,
        profiler=PROFILER,
        expects="StringIds with CUPTI_ACTIVITY_KIND_* or TARGET_INFO_* tables",
        claims=claims,
        read=read_nsys_sqlite,
    )
)
