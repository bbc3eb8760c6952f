"""nvprof output databases (``nvprof -o run.nvprof`` / ``run.nvvp``): SQLite, format ``nvprof-db``.

Detected through :mod:`parsers.sqlite.db` by the tables ``StringTable``, ``Version`` and
``CUPTI_ACTIVITY_KIND_*`` (the SQLite header alone cannot tell nvprof from nsys).  Schema
versions 8, 11 and 12 were read; columns are found by name and newer columns are optional.
Each table holds CUPTI activity records, one row per record (``cupti_activity.h``):

* ``CUPTI_ACTIVITY_KIND_KERNEL`` / ``CONCURRENT_KERNEL`` / ``CDP_KERNEL``: launches.  ``start``
  and ``end`` are absolute timestamps in ns; ``name`` is a ``StringTable`` id of the kernel's
  *mangled* name (there is no demangled copy and no demangler in the standard library, so names
  stay mangled and a provenance note says so; nvprof's CSV prints them demangled).
* ``MEMCPY`` / ``MEMCPY2`` (``copyKind``, ``srcKind``, ``dstKind`` CUPTI enums, ``bytes``) and
  ``MEMSET`` (``memoryKind`` from version 12): transfers.
* ``RUNTIME`` / ``DRIVER``: API calls stored by CUPTI callback id (``cbid``), not by name; ids are
  named from :mod:`parsers.sqlite.cupti_ids` and otherwise reported as ``runtime cbid N``.
* ``DEVICE``: GPUs (``coreClockRate`` in kHz, ``globalMemoryBandwidth`` in kB/s with k = 1000:
  a V100 stores 898,048,000, its published 898 GB/s) with their per-SM limits
  (``maxWarpsPerMultiprocessor``, ``maxBlocksPerMultiprocessor``,
  ``maxRegistersPerMultiprocessor``, ``maxSharedMemoryPerMultiprocessor`` in bytes).
* ``METRIC`` / ``EVENT``: values per launch (``correlationId``) under numeric CUPTI ids with no
  id-to-name table.  Events are integer counts and are kept as ``nvprof event id N``; a metric
  value is an 8-byte union whose type (double, integer, percent, level) depends on the unnamed
  metric, so it is kept undecoded (``raw:<hex bytes>`` in ``metrics.text``) as
  ``nvprof metric id N``.

``start_ns`` is made relative to the earliest activity in the database (a note says so), so
traces read from a database and from nvprof's CSV start near zero alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import pandas as pd

from advisor import schema
from advisor.errors import NoKernelData
from advisor.profile import Profile, Provenance
from parsers.frames import metric_record
from parsers.names import compute_capability
from parsers.registry import Selection
from parsers.sqlite import cupti_ids
from parsers.sqlite.columns import in_time_order, text_per_distinct
from parsers.sqlite.db import (
    Database,
    SqliteReader,
    add_reader,
    as_int,
    as_text,
    int_column,
    lookup,
    number_column,
    per_distinct,
    sm_limit,
    string_by_id,
)

FORMAT = "nvprof-db"
PROFILER = "nvprof"
_PREFIX = "CUPTI_ACTIVITY_KIND_"
KERNEL_TABLES = ("KERNEL", "CONCURRENT_KERNEL", "CDP_KERNEL")
_KERNEL_COLS = {
    "start": "start_ns", "end": "end_ns", "deviceId": "device_id", "contextId": "context",
    "streamId": "stream", "gridX": "grid_x", "gridY": "grid_y", "gridZ": "grid_z",
    "blockX": "block_x", "blockY": "block_y", "blockZ": "block_z",
    "registersPerThread": "registers_per_thread", "staticSharedMemory": "static_shared_bytes",
    "dynamicSharedMemory": "dynamic_shared_bytes", "correlationId": "correlation_id",
    "name": "name",
}  # fmt: skip
_TRANSFER_COLS = {
    "start": "start_ns", "end": "end_ns", "bytes": "bytes", "deviceId": "device_id",
    "contextId": "context", "streamId": "stream", "correlationId": "correlation_id",
}  # fmt: skip
_API_COLS = {
    "cbid": "cbid", "start": "start_ns", "end": "end_ns", "processId": "process_id",
    "threadId": "thread_id", "correlationId": "correlation_id", "returnValue": "result",
}  # fmt: skip
#: source-level and per-instance tables nvprof --analysis-metrics writes, named in a note
_UNREAD_TABLES = (
    "METRIC_INSTANCE", "EVENT_INSTANCE", "BRANCH", "GLOBAL_ACCESS", "SHARED_ACCESS",
    "INSTRUCTION_EXECUTION", "PC_SAMPLING", "UNIFIED_MEMORY_COUNTER",
)  # fmt: skip


def claims(tables: frozenset[str]) -> bool:
    """An nvprof database has a StringTable, a Version table and CUPTI activity tables."""
    return {"StringTable", "Version"} <= tables and any(t.startswith(_PREFIX) for t in tables)


def read_nvprof_db(db: Database, selected: Selection) -> Profile:
    """Read an nvprof database (see the module docstring); ``selected`` (the registry's metric
    selection) is not used: :func:`parsers.read` applies it to the rows read."""
    strings = db.strings("StringTable", "_id_", "value")
    devices = _devices(db, strings)
    device_names = dict(zip(devices["device_id"], devices["name"], strict=True))
    kernels = _activity(db, KERNEL_TABLES, _KERNEL_COLS, required=("start", "end", "name"))
    if kernels.empty:
        raise NoKernelData(
            db.path,
            "no kernel activity: the nvprof database has no rows in "
            + " or ".join(_PREFIX + t for t in KERNEL_TABLES[:2]),
        )
    notes: list[str] = []
    transfers = _transfers(db)
    api = _api_calls(db, notes)
    starts = pd.concat([kernels["start_ns"], transfers["start_ns"], api["start_ns"]])
    t0 = int(starts[starts > 0].min()) if (starts > 0).any() else 0
    launches = _launches(db, kernels, strings, device_names, t0)
    for frame in (transfers, api):
        _relative_times(frame, t0)
    transfers["device"] = transfers["device_id"].map(device_names)
    metrics = _metrics(db, launches, notes)
    modes = ["gpu-trace"] + (["api-trace"] if len(api) else [])
    for section, mode in (("metric", "metrics"), ("event", "events")):
        if (metrics["section"] == section).any():
            modes.append(mode)
    return Profile(
        provenance=(
            Provenance(
                path=db.path, format=FORMAT, profiler=PROFILER, modes=tuple(modes),
                notes=tuple(_notes(db, launches) + notes),
            ),
        ),
        launches=launches,
        transfers=transfers[[c for c in schema.TABLES["transfers"] if c in transfers.columns]],
        api_calls=api[[c for c in schema.TABLES["api_calls"] if c in api.columns]],
        metrics=metrics,
        devices=devices,
    )  # fmt: skip


def _activity(
    db: Database, tables: tuple[str, ...], columns: Mapping[str, str], required: tuple[str, ...]
) -> pd.DataFrame:
    """Rows of the ``CUPTI_ACTIVITY_KIND_<table>`` tables that exist, renamed, in file order."""
    frames = []
    for table in tables:
        if db.has_rows(_PREFIX + table):
            # exact integers: absolute ns (~1.6e18) lose precision in float64 (53-bit mantissa)
            frame = db.int_frame(_PREFIX + table, list(columns), required=required, keep=["name"])
            frames.append(frame.rename(columns=dict(columns)).assign(table=table))
    if not frames:
        return pd.DataFrame({c: pd.Series([], dtype="Int64") for c in [*columns.values()]})
    return pd.concat(frames, ignore_index=True)


def _launches(
    db: Database,
    kernels: pd.DataFrame,
    strings: Mapping[int, str],
    device_names: Mapping[object, object],
    t0: int,
) -> pd.DataFrame:
    out = in_time_order(kernels)
    out["name"] = text_per_distinct(out["name"], lambda v: _string(db, strings, v, "kernel name"))
    _relative_times(out, t0)
    out["device"] = out["device_id"].map(device_names)
    out["launch_id"] = range(len(out))
    return out[[c for c in schema.TABLES["launches"] if c in out.columns]]


def _relative_times(frame: pd.DataFrame, t0: int) -> None:
    """Integer ``start_ns``/``end_ns`` -> float ``start_ns`` since ``t0`` and ``duration_ns``."""
    frame["duration_ns"] = (frame.pop("end_ns") - frame["start_ns"]).astype("float64")
    frame["start_ns"] = (frame["start_ns"] - t0).astype("float64")


def _transfers(db: Database) -> pd.DataFrame:
    copies = _activity(
        db, ("MEMCPY", "MEMCPY2"),
        {**_TRANSFER_COLS, "copyKind": "kind_code", "srcKind": "src_code", "dstKind": "dst_code"},
        required=("start", "end"),
    )  # fmt: skip
    copies["kind"] = text_per_distinct(
        copies["kind_code"], lambda v: lookup(cupti_ids.MEMCPY_KINDS, v, "memcpy")
    )
    sets = _activity(
        db, ("MEMSET",), {**_TRANSFER_COLS, "memoryKind": "src_code"}, required=("start", "end")
    )
    sets["kind"] = "memset"
    out = pd.concat([f for f in (copies, sets) if len(f)] or [copies], ignore_index=True)
    for code, col in (("src_code", "src_kind"), ("dst_code", "dst_kind")):
        codes = out[code] if code in out.columns else pd.Series([None] * len(out))
        out[col] = text_per_distinct(codes, lambda v: lookup(cupti_ids.MEMORY_KINDS, v))
    return in_time_order(out)


def _api_calls(db: Database, notes: list[str]) -> pd.DataFrame:
    frames, unknown = [], 0
    for domain in ("runtime", "driver"):
        frame = _activity(db, (domain.upper(),), _API_COLS, required=("cbid", "start", "end"))
        names = text_per_distinct(frame["cbid"], partial(_api_name, domain))
        unknown += int(per_distinct(frame["cbid"], partial(_unknown_cbid, domain)).sum())
        frames.append(frame.assign(domain=domain, name=names))
    out = pd.concat([f for f in frames if len(f)] or frames[:1], ignore_index=True)
    for col in ("process_id", "thread_id"):  # uint32 in CUPTI, stored as signed 32-bit
        out[col] = int_column(out[col]) % 2**32
    if unknown:
        notes.append(
            f"{unknown} API calls have CUPTI callback ids outside the built-in table; "
            "they are named 'runtime cbid N' / 'driver cbid N'"
        )
    return in_time_order(out)


def _unknown_cbid(domain: str, cbid: object) -> bool:
    code = as_int(cbid)
    return code is None or cupti_ids.api_name(domain, code) is None


def _api_name(domain: str, cbid: object) -> str:
    """The function of a callback id; ``runtime cbid N`` (``<NA>`` when missing) if not listed."""
    code = as_int(cbid)
    name = None if code is None else cupti_ids.api_name(domain, code)
    return name or f"{domain} cbid {'<NA>' if code is None else code}"


def _devices(db: Database, strings: Mapping[int, str]) -> pd.DataFrame:
    table = _PREFIX + "DEVICE"
    cols = [
        "id", "name", "computeCapabilityMajor", "computeCapabilityMinor", "numMultiprocessors",
        "coreClockRate", "globalMemoryBandwidth", "l2CacheSize", *_SM_LIMITS.values(),
    ]  # fmt: skip
    raw = db.frame(table, cols, required=["id"] if table in db.tables else [])
    cc = [
        compute_capability(a, b)
        for a, b in zip(raw["computeCapabilityMajor"], raw["computeCapabilityMinor"], strict=True)
    ]
    return pd.DataFrame(
        {
            "device_id": int_column(raw["id"]),
            "name": [_string(db, strings, v, "device name") for v in raw["name"]],
            "compute_capability": cc,
            "sm_count": int_column(raw["numMultiprocessors"]),
            "sm_clock_hz": number_column(raw["coreClockRate"]) * 1e3,  # kHz
            "memory_bandwidth_bytes_per_s": number_column(raw["globalMemoryBandwidth"]) * 1e3,
            "l2_bytes": number_column(raw["l2CacheSize"]),
            **{c: sm_limit(raw[name]) for c, name in _SM_LIMITS.items()},
        }
    ).sort_values("device_id", kind="stable")


#: devices column <- CUPTI_ACTIVITY_KIND_DEVICE column (no threads per SM: CUPTI's device record
#: does not give it)
_SM_LIMITS = {
    "max_warps_per_sm": "maxWarpsPerMultiprocessor",
    "max_blocks_per_sm": "maxBlocksPerMultiprocessor",
    "registers_per_sm": "maxRegistersPerMultiprocessor",
    "shared_bytes_per_sm": "maxSharedMemoryPerMultiprocessor",
}


def _metrics(db: Database, launches: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Metric and event values of launches, under their numeric ids (see the module doc)."""
    by_corr: dict[int, tuple[int, str | None, str | None, int | None]] = {
        int(corr): (int(lid), as_text(name), as_text(device), as_int(dev_id))
        for corr, lid, name, device, dev_id in zip(
            launches["correlation_id"], launches["launch_id"], launches["name"],
            launches["device"], launches["device_id"], strict=True,
        )
        if pd.notna(corr)
    }  # fmt: skip
    records = []
    for table, section in (("METRIC", "metric"), ("EVENT", "event")):
        if not db.has_rows(_PREFIX + table):
            continue
        cols = ["id", "value", "correlationId"]
        frame = db.frame(_PREFIX + table, cols, required=cols)
        unmatched = 0
        for mid, value, corr in zip(
            frame["id"], frame["value"], frame["correlationId"], strict=True
        ):
            key = as_int(corr)
            launch = None if key is None else by_corr.get(key)
            if launch is None:
                unmatched += 1
                continue
            number, text = _metric_value(value)
            launch_id, kernel, device, device_id = launch
            records.append(
                metric_record(
                    tool="nvprof", tool_metric=f"nvprof {section} id {mid}", value=number,
                    unit="", kernel=kernel, launch_id=launch_id, device=device,
                    device_id=device_id, section=section, text=text,
                )
            )  # fmt: skip
        notes.append(_unnamed_note(section, len(frame), int(frame["id"].nunique())))
        if unmatched:
            notes.append(f"{unmatched} {section} values belong to no kernel launch in the file")
    if not records:
        return schema.empty("metrics")
    return pd.DataFrame.from_records(records)


def _unnamed_note(section: str, values: int, ids: int) -> str:
    how = (
        "integer counts"
        if section == "event"
        else "raw 8-byte values kept undecoded in text, as their type depends on the metric"
    )
    return (
        f"{values} {section} values under {ids} numeric CUPTI {section} ids: the database "
        f"stores no {section} names, so they are named 'nvprof {section} id N' ({how})"
    )


def _metric_value(value: object) -> tuple[float, str | None]:
    if isinstance(value, bytes | bytearray | memoryview):
        return float("nan"), "raw:" + bytes(value).hex()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), None
    return float("nan"), None if value is None else str(value)


def _notes(db: Database, launches: pd.DataFrame) -> list[str]:
    version = _schema_version(db)
    notes = [f"nvprof database schema version {version}"] if version else []
    notes += [
        "start_ns is relative to the earliest kernel, transfer or API call in the database "
        "(nvprof stores absolute timestamps)"
    ]
    if launches["name"].str.startswith("_Z").any():
        notes.append(
            "kernel names are mangled as the database stores them (nvprof's CSV prints them "
            "demangled)"
        )
    unread = [f"{t} ({db.count(_PREFIX + t)} rows)" for t in _UNREAD_TABLES
              if db.has_rows(_PREFIX + t)]  # fmt: skip
    if unread:
        notes.append("not read (per-instance and source-level tables): " + ", ".join(unread))
    return notes


def _schema_version(db: Database) -> str | None:
    rows = db.rows('SELECT "version" FROM "Version" LIMIT 1')
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


def _string(db: Database, strings: Mapping[int, str], cell: object, what: str) -> str | None:
    return string_by_id(db, strings, cell, what, "StringTable")


add_reader(
    SqliteReader(
        format=FORMAT,
        profiler=PROFILER,
        expects="StringTable, Version and CUPTI_ACTIVITY_KIND_* tables",
        claims=claims,
        read=read_nvprof_db,
    )
)
