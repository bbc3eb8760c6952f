"""Source-level tables of an nvprof database (``.nvvp`` / ``.nvprof``), as instruction rows.

``nvprof --source-level-analysis global_access,shared_access,branch,instruction_execution,
pc_sampling`` (or the Visual Profiler's guided analysis) stores, per kernel launch
(``correlationId``) and per SASS instruction (``functionId``, ``pcOffset``), CUPTI activity
records in the tables below; ``sourceLocatorId`` points into
``CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR`` (``fileName``, a StringTable id, and ``lineNumber``; the
table is empty for code built without ``-lineinfo``).  Column names are CUPTI's
(``CUpti_ActivityInstructionExecution``, ``CUpti_ActivityGlobalAccess3``,
``CUpti_ActivitySharedAccess``, ``CUpti_ActivityBranch2``, ``CUpti_ActivityPCSampling3``), as
the real databases under ../shared hold them.

:func:`read` turns them into the rows of :mod:`parsers.ncu.source_counters` (docs/locations.md),
so the same ranking applies:

==================================  ==============================================================
column                              source
==================================  ==============================================================
``inst_executed``                   INSTRUCTION_EXECUTION ``executed`` (warp instructions)
``thread_inst_executed``            INSTRUCTION_EXECUTION ``threadsExecuted``
``thread_inst_executed_true``       INSTRUCTION_EXECUTION ``notPredOffThreadsExecuted``
``branch_targets_threads_divergent``  BRANCH ``diverged`` (divergent executions of the branch)
``l2_sectors_global``, ``_ideal``   GLOBAL_ACCESS ``l2_transactions``, ``theoreticalL2Transactions``
``l1_wavefronts_shared``, ``_ideal``  SHARED_ACCESS ``sharedTransactions``,
                                    ``theoreticalSharedTransactions``
``..._excessive``                   the requested minus the ideal, at least 0
``samples``, ``stall_<reason>``     PC_SAMPLING ``samples`` by ``stallReason``
==================================  ==============================================================

Stall reasons are CUPTI's ``CUpti_ActivityPCSamplingStallReason`` (:data:`STALLS`), named as
ncu names the nearest reason where one exists (``SYNC``, a wait at ``__syncthreads()`` or a
memory barrier, is ``barrier``, so DEVICESYNC's measure applies; ``NONE`` is ``selected``).
There is no SASS text (``sass`` and ``opcode`` empty) and no kernel total to check the rows
against: nvprof stores only the per-instruction records.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

#: the source-level tables (CUPTI_ACTIVITY_KIND_<name>)
TABLES = (
    "SOURCE_LOCATOR",
    "INSTRUCTION_EXECUTION",
    "GLOBAL_ACCESS",
    "SHARED_ACCESS",
    "BRANCH",
    "PC_SAMPLING",
)
#: CUpti_ActivityPCSamplingStallReason code -> the ``stall_`` column's reason
STALLS: dict[int, str] = {
    1: "selected",
    2: "inst_fetch",
    3: "exec_dependency",
    4: "memory_dependency",
    5: "texture",
    6: "barrier",
    7: "constant_memory_dependency",
    8: "pipe_busy",
    9: "memory_throttle",
    10: "not_selected",
    11: "other",
    12: "sleeping",
}
#: what a report says where the tables are absent or empty
HOW = (
    "record with `nvprof --source-level-analysis global_access,shared_access,branch,"
    "instruction_execution,pc_sampling` (and build with `nvcc -lineinfo` for source lines)"
)
#: (table, column) -> instruction-row column, summed per instruction
_SUMS: dict[tuple[str, str], str] = {
    ("INSTRUCTION_EXECUTION", "executed"): "inst_executed",
    ("INSTRUCTION_EXECUTION", "threadsExecuted"): "thread_inst_executed",
    ("INSTRUCTION_EXECUTION", "notPredOffThreadsExecuted"): "thread_inst_executed_true",
    ("BRANCH", "diverged"): "branch_targets_threads_divergent",
    ("GLOBAL_ACCESS", "l2_transactions"): "l2_sectors_global",
    ("GLOBAL_ACCESS", "theoreticalL2Transactions"): "l2_sectors_global_ideal",
    ("SHARED_ACCESS", "sharedTransactions"): "l1_wavefronts_shared",
    ("SHARED_ACCESS", "theoreticalSharedTransactions"): "l1_wavefronts_shared_ideal",
}
_KEY = ["correlationId", "functionId", "pcOffset"]


def present(path: str | Path) -> dict[str, int]:
    """Rows per source-level table of the database (0 for a table it lacks)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return {
            t: int(db.execute(f"SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_{t}").fetchone()[0])
            if f"CUPTI_ACTIVITY_KIND_{t}" in have
            else 0
            for t in TABLES
        }


def read(path: str | Path) -> dict[int, pd.DataFrame]:
    """Instruction rows per kernel launch (``correlationId``) of the database; empty where it
    holds no per-instruction record (:data:`HOW` says how to record them)."""
    counts = present(path)
    if not any(counts[t] for t in TABLES if t != "SOURCE_LOCATOR"):
        return {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        strings = dict(db.execute("SELECT _id_, value FROM StringTable"))
        functions = dict(db.execute("SELECT id, name FROM CUPTI_ACTIVITY_KIND_FUNCTION"))
        lines = {
            int(i): (str(strings.get(f, "")), int(n))
            for i, n, f in db.execute(
                "SELECT id, lineNumber, fileName FROM CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR"
            )
        }
        frames = []
        for table in TABLES[1:]:
            if not counts[table]:
                continue
            frame = pd.read_sql_query(f"SELECT * FROM CUPTI_ACTIVITY_KIND_{table}", db)
            frames.append((table, frame))
    keyed: dict[tuple[int, int, int], int] = {}
    locator: dict[tuple[int, int, int], int] = {}
    for _, frame in frames:
        for key, loc in zip(
            frame[_KEY].itertuples(index=False, name=None), frame["sourceLocatorId"], strict=True
        ):
            keyed.setdefault(key, len(keyed))
            locator.setdefault(key, int(loc))
    keys = sorted(keyed)
    index = {k: i for i, k in enumerate(keys)}
    columns: dict[str, np.ndarray] = {}
    for table, frame in frames:
        rows = [index[k] for k in frame[_KEY].itertuples(index=False, name=None)]
        if table == "PC_SAMPLING":
            samples = frame["samples"].to_numpy(dtype=np.float64)
            total = columns.setdefault("samples", np.zeros(len(keys)))
            np.add.at(total, rows, samples)
            for code, reason in STALLS.items():
                hit = (frame["stallReason"] == code).to_numpy()
                if hit.any():
                    stall = columns.setdefault(f"stall_{reason}", np.zeros(len(keys)))
                    np.add.at(stall, np.asarray(rows)[hit], samples[hit])
            continue
        for (source, name), column_name in _SUMS.items():
            if source == table and name in frame:
                summed = columns.setdefault(column_name, np.zeros(len(keys)))
                np.add.at(summed, rows, frame[name].to_numpy(dtype=np.float64))
    for requested in ("l2_sectors_global", "l1_wavefronts_shared"):
        if requested in columns:
            ideal = columns.get(f"{requested}_ideal", np.zeros(len(keys)))
            columns[f"{requested}_excessive"] = np.clip(columns[requested] - ideal, 0, None)
    from parsers.ncu.source_counters import COUNTERS

    out: dict[int, pd.DataFrame] = {}
    correlation = np.array([k[0] for k in keys])
    for launch in sorted(set(correlation.tolist())):
        mine = np.flatnonzero(correlation == launch)
        where = [lines.get(locator[keys[i]], ("", 0)) for i in mine]
        frame = pd.DataFrame(
            {
                "function": [str(strings.get(functions.get(keys[i][1]), "")) for i in mine],
                "pc": np.array([keys[i][2] for i in mine], dtype=np.uint64),
                "pc_offset": np.array([keys[i][2] for i in mine], dtype=np.int64),
                "sass": [""] * len(mine),
                "opcode": [""] * len(mine),
                "file": [w[0] for w in where],
                "line": np.array([w[1] for w in where], dtype=np.int64),
            }
        )
        for name in COUNTERS:
            frame[name] = columns.get(name, np.zeros(len(keys)))[mine]
        for name in sorted(c for c in columns if c.startswith("stall_")):
            frame[name] = columns[name][mine]
        out[int(launch)] = frame
    return out
