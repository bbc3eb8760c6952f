"""Where in the code: the top source lines (or instructions) of each criterion's waste.

An Nsight Compute report with the SourceCounters section holds per-instruction counters
(:mod:`parsers.ncu.source_counters`).  For the kernels a report shows — every kernel with a hint
of a criterion below, the kernel with the most GPU time and any kernel over
:data:`HOT_SHARE` of it — this module reads them (at most :data:`MAX_LAUNCHES` launches per
kernel), folds them into source lines (:func:`parsers.ncu.source_counters.by_line`) and ranks
the lines by each criterion's own waste (docs/locations.md):

* DIVERGENCE: inactive lanes x instructions, ``32 * inst_executed - thread_inst_executed_true``
  (lanes that issued nothing: diverged or predicated off); where that is zero everywhere, the
  divergent branch targets ``smsp__branch_targets_threads_divergent``;
* L1_GRANULARITY and L2_GRANULARITY: excessive global sectors
  (``memory_l2_theoretical_sectors_global - _ideal``, ncu's
  ``derived__memory_l2_theoretical_sectors_global_excessive``);
* SHMEM_EFFICIENCY: excessive shared wavefronts
  (``derived__memory_l1_wavefronts_shared_excessive``);
* DEVICESYNC: PC samples stalled on a barrier or a memory barrier (``stall_barrier`` +
  ``stall_membar``, the stall reasons of the criterion's own formula, docs/criteria.md);

and gives the top stall reasons of PC sampling with their top lines.  :func:`top_locations`
and :func:`top_stalls` are pure functions over location rows; :func:`attach` adds the
``locations`` object to each kernel of the analysis JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

SassOf = Callable[[int], str]  # PC -> SASS text

#: criteria whose waste has a per-instruction measure, and that measure's name in the JSON
MEASURES: dict[str, str] = {
    "DIVERGENCE": "inactive lanes x instructions",
    "L1_GRANULARITY": "excessive global sectors",
    "L2_GRANULARITY": "excessive global sectors",
    "SHMEM_EFFICIENCY": "excessive shared wavefronts",
    "DEVICESYNC": "barrier and memory-barrier stall samples",
}
DIVERGENCE_FALLBACK = "divergent branch targets"
#: a kernel with at least this share of the GPU time gets its locations even without a hint
HOT_SHARE = 0.10
#: launches of one kernel read at most (in launch order)
MAX_LAUNCHES = 10
TOP = 3  # locations per criterion
TOP_STALLS = 3  # stall reasons per kernel
LANES = 32  # threads per warp
#: how to obtain each kind of data that a report can lack
HOW: dict[str, str] = {
    "instructions": "profile with `ncu --set full` or `ncu --section SourceCounters` "
    "(per-instruction counters)",
    "line_info": "build the code with `nvcc -lineinfo` so instructions map to source lines",
    "stall_samples": "profile with `ncu --set full` or `ncu --section SourceCounters "
    "--section WarpStateStats` (PC sampling)",
    "source_text": "profile with `ncu --import-source yes` to embed the source files",
}


def waste(rows: pd.DataFrame, criterion: str) -> tuple[np.ndarray, str]:
    """Per-row waste of ``criterion`` (module docstring) and the measure's name."""

    def col(name: str) -> np.ndarray:
        if name not in rows:
            return np.zeros(len(rows))
        return rows[name].to_numpy(dtype=np.float64)

    if criterion == "DIVERGENCE":
        lanes = np.clip(LANES * col("inst_executed") - col("thread_inst_executed_true"), 0, None)
        if lanes.sum() > 0:
            return lanes, MEASURES[criterion]
        return col("branch_targets_threads_divergent"), DIVERGENCE_FALLBACK
    if criterion in ("L1_GRANULARITY", "L2_GRANULARITY"):
        return col("l2_sectors_global_excessive"), MEASURES[criterion]
    if criterion == "SHMEM_EFFICIENCY":
        return col("l1_wavefronts_shared_excessive"), MEASURES[criterion]
    if criterion == "DEVICESYNC":
        return col("stall_barrier") + col("stall_membar"), MEASURES[criterion]
    raise ValueError(f"no per-instruction measure for {criterion}")


def top_locations(
    rows: pd.DataFrame,
    criterion: str,
    top: int = TOP,
    sass_of: SassOf | None = None,
    keys: np.ndarray | None = None,
) -> dict[str, Any]:
    """The ``top`` source lines of the instruction ``rows`` by ``criterion``'s waste (module
    docstring): ``{"measure", "total", "top": [entry...]}``.  Each entry has the line's
    ``share`` of the kernel's total waste, its place (:func:`place`) and the opcodes of the
    line's instructions that carry waste (from the rows' ``sass``, or ``sass_of(pc)`` where
    given: SASS disassembled on demand).  Lines with no waste are never listed; ties keep the
    order of first appearance, so the result is deterministic.  ``keys``: the rows'
    :func:`~parsers.ncu.source_counters.line_keys`, where already at hand."""
    values, measure = waste(rows, criterion)
    total = float(values.sum())
    ranked = _ranked(rows, values, total, top, "waste", sass_of, keys)
    return {"measure": measure, "total": total, "top": ranked}


def top_stalls(
    rows: pd.DataFrame,
    reasons: int = TOP_STALLS,
    top: int = TOP,
    sass_of: SassOf | None = None,
    keys: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """The stall reasons with the most PC samples (``stall_*`` columns of the instruction
    ``rows``), each with its share of all stall samples and its ``top`` source lines:
    ``[{"reason", "samples", "share", "top"}]``."""
    from parsers.ncu.source_counters import column_sum

    columns = [c for c in rows.columns if c.startswith("stall_")]
    sums = {c: column_sum(rows, c) for c in columns}
    everything = sum(sums.values())
    if everything <= 0:
        return []
    ranked = sorted((c for c in columns if sums[c] > 0), key=lambda c: (-sums[c], c))
    out = []
    for column in ranked[:reasons]:
        values = rows[column].to_numpy(dtype=np.float64)
        where = _ranked(rows, values, sums[column], top, "samples", sass_of, keys)
        out.append({"reason": column.removeprefix("stall_"), "samples": sums[column],
                    "share": sums[column] / everything, "top": where})  # fmt: skip
    return out


def _ranked(
    rows: pd.DataFrame,
    values: np.ndarray,
    total: float,
    top: int,
    label: str,
    sass_of: SassOf | None = None,
    keys: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """The ``top`` source lines of ``rows`` by ``values`` summed per line (``keys``: the
    rows' line keys, where already at hand)."""
    from parsers.ncu.source_counters import line_keys

    if total <= 0 or not len(rows):
        return []
    hits = np.flatnonzero(values > 0)
    hit_keys = line_keys(rows.iloc[hits]) if keys is None else keys[hits]
    per_line: dict[str, float] = {}
    members: dict[str, list[int]] = {}
    for key, i in zip(hit_keys, hits, strict=True):
        per_line[key] = per_line.get(key, 0.0) + float(values[i])
        members.setdefault(key, []).append(int(i))
    ranked = sorted(per_line.items(), key=lambda kv: -kv[1])[:top]  # stable: first seen first
    from parsers.ncu.source_counters import opcode as opcode_of

    pcs = rows["pc"].tolist()
    texts = rows["sass"].tolist()

    def sass(i: int) -> str:
        return sass_of(int(pcs[i])) if sass_of is not None else str(texts[i])

    out = []
    for key, value in ranked:
        # the line's opcodes by their share of its value (summed over the opcode's
        # instructions), largest first, PC order on ties: a line of a dozen instructions names
        # first the ones that stall or waste
        weight: dict[str, float] = {}
        for member in members[key]:
            op = opcode_of(sass(member))
            if op:
                weight[op] = weight.get(op, 0.0) + float(values[member])
        opcodes = " ".join(sorted(weight, key=lambda op: -weight[op]))  # stable: PC order
        first = members[key][0]
        where = place(rows.iloc[first], opcodes)
        if "sass" in where:
            where["sass"] = sass(first)
        out.append({**where, label: value, "share": value / total})
    return out


def place(row: pd.Series, opcodes: str) -> dict[str, Any]:
    """Where an instruction row is: ``file:line`` when known, else ``function+0xOFFSET`` with
    its SASS."""
    line = int(row.get("line", 0) or 0)
    if line > 0:
        return {"location": f"{row['file']}:{line}", "file": str(row["file"]), "line": line,
                "function": str(row["function"]), "opcodes": opcodes}  # fmt: skip
    offset = int(row.get("pc_offset", 0))
    return {"location": f"{row['function']}+{offset:#06x}", "file": None, "line": None,
            "function": str(row["function"]), "pc_offset": offset,
            "sass": str(row.get("sass", "")), "opcodes": opcodes}  # fmt: skip


def kernel_locations(
    reader: Callable[[Any, Any], Any],
    refs: list[Any],
    criteria: Iterable[str],
    launches: int,
    how: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``locations`` object of one kernel from its launches' :class:`SourceRef` ``refs``
    (read with ``reader(ref, code)``, :func:`parsers.ncu.source_counters.read_instructions`
    with a :class:`~parsers.ncu.source_counters.Code` shared by the launches)."""
    from advisor import disassembly
    from parsers.ncu.source_counters import Code, conservation, joined_rows, line_keys

    # the launches of one kernel share their code's lines and SASS; the report command's
    # helper process may have disassembled it already
    code = Code(lookup=disassembly.lookup)
    read = [reader(ref, code) for ref in refs[:MAX_LAUNCHES]]
    rows = joined_rows(read)
    keys = line_keys(rows)  # each instruction's source line, for every ranking below
    with_line = rows[rows["line"] > 0]
    checked = [pair for r in read for pair in conservation(r).values()]
    # None: the profile stores no kernel totals to check the rows against (nvprof databases)
    exact = all(a == b for a, b in checked) if checked else None
    has_lines = any(r.has_line_info for r in read)
    has_samples = any(r.has_stall_samples for r in read)
    embedded = any(r.source_files for r in read)
    available = ["instructions"]
    available += ["line_info"] if has_lines else []
    available += ["stall_samples"] if has_samples else []
    available += ["source_text"] if embedded else []
    how = HOW if how is None else how
    missing = {k: how[k] for k in how if k not in available}
    located = {
        c: top_locations(rows, c, sass_of=code.sass, keys=keys)
        for c in sorted(set(criteria))
        if c in MEASURES
    }
    if "DIVERGENCE" in located:  # what the divergent branches test (advisor/report/branches.py)
        from advisor.report.branches import branch_kind

        lanes = np.clip(
            LANES * _col(rows, "inst_executed") - _col(rows, "thread_inst_executed_true"), 0, None
        )
        kind = branch_kind(rows, lanes, code.sass)
        if kind is not None:
            located["DIVERGENCE"]["branch"] = kind
    stalls = top_stalls(rows, sass_of=code.sass, keys=keys)
    if embedded:  # the source lines' text, where the report embeds the files
        texts = _source_texts(read)
        for entry in [e for c in located.values() for e in c["top"]] + [
            e for s in stalls for e in s["top"]
        ]:
            _add_source(entry, texts)
    return {
        "available": available,
        "missing": missing,
        "launches_read": len(read),
        "launches": launches,
        "instructions": len(rows),
        "lines": len(set(zip(with_line["file"], with_line["line"], strict=True))),
        "conservation_exact": exact,
        "criteria": located,
        "stalls": stalls,
    }


def _col(rows: pd.DataFrame, name: str) -> np.ndarray:
    return rows[name].to_numpy(dtype=np.float64) if name in rows else np.zeros(len(rows))


def _source_texts(read: list[Any]) -> dict[str, list[str]]:
    """The source files the launches' report embeds (``ncu --import-source yes``), by name, as
    lists of lines (``IAction.source_files()``: file name -> text, kept with each launch's
    :class:`~parsers.ncu.source_counters.Instructions`)."""
    out: dict[str, list[str]] = {}
    for instructions in read:
        for name, text in instructions.source_texts.items():
            out.setdefault(name, text.splitlines())
    return out


def _add_source(entry: dict[str, Any], texts: Mapping[str, list[str]]) -> None:
    """``entry["source"]``: the text of its line (stripped), where its file is embedded."""
    lines = texts.get(str(entry.get("file")))
    line = entry.get("line")
    if lines is not None and isinstance(line, int) and 0 < line <= len(lines):
        entry["source"] = lines[line - 1].strip()


def absent(reason: str = "instructions") -> dict[str, Any]:
    """The ``locations`` object of a kernel whose report holds no per-instruction data."""
    return {"available": [], "missing": {k: HOW[k] for k in HOW}, "not_read": reason}


def attach(
    data: dict[str, Any],
    profile: Any,
    reader: Callable[[Any, Any], Any] | None = None,
) -> None:
    """Add ``locations`` to every kernel of the analysis JSON ``data`` of a profile read from
    an Nsight Compute report (other inputs get no key: they carry no per-instruction data).

    Kernels with a hint of a criterion of :data:`MEASURES`, the kernel with the most GPU time
    and those over :data:`HOT_SHARE` are read; the others say ``"not_read": "not shown"``."""
    if not any(p.format == "ncu-rep" for p in profile.provenance):
        _attach_nvprof(data, profile)
        return
    read = reader if reader is not None else _read_without_sass

    kernels = data.get("kernels", [])
    refs = _refs_by_kernel(profile)
    shares = [k.get("share_of_gpu_time") or 0.0 for k in kernels]
    hottest = max(range(len(kernels)), key=lambda i: shares[i], default=None)
    counts = _launch_counts(profile)
    for i, kernel in enumerate(kernels):
        name = kernel.get("name")
        wanted = [h["criterion"] for h in kernel.get("hints", []) if h.get("criterion") in MEASURES]
        shown = bool(wanted) or i == hottest or shares[i] >= HOT_SHARE
        found = refs.get(name, [])
        if not found:
            kernel["locations"] = absent()
        elif not shown:
            kernel["locations"] = {"available": ["instructions"], "not_read": "not shown"}
        else:
            kernel["locations"] = kernel_locations(read, found, wanted, counts.get(name, 0))


#: how to get what an nvprof database lacks (its source-level tables, docs/locations.md)
HOW_NVPROF: dict[str, str] = {
    "instructions": "record with `nvprof --source-level-analysis global_access,shared_access,"
    "branch,instruction_execution,pc_sampling -o FILE.nvvp` (per-instruction records)",
    "line_info": HOW["line_info"],
    "stall_samples": "record with `nvprof --source-level-analysis pc_sampling` (PC sampling)",
}


def _attach_nvprof(data: dict[str, Any], profile: Any) -> None:
    """``locations`` from an nvprof database's source-level tables
    (:mod:`parsers.sqlite.nvprof_source`), for a profile read from one database (the records
    are keyed by the launch's correlation id, which only one database numbers); where the
    database holds none, each kernel says how to record them."""
    dbs = [p.path for p in profile.provenance if p.format == "nvprof-db"]
    if len(dbs) != 1 or "correlation_id" not in profile.launches:
        return
    from parsers.ncu.source_counters import Instructions
    from parsers.sqlite import nvprof_source

    by_launch = nvprof_source.read(dbs[0])
    kernels = data.get("kernels", [])
    if not by_launch:
        for kernel in kernels:
            kernel["locations"] = {
                "available": [],
                "missing": dict(HOW_NVPROF),
                "not_read": "instructions",
            }
        return
    launches = profile.launches.dropna(subset=["correlation_id"])
    refs: dict[str, list[int]] = {}
    for name, corr in zip(launches["name"], launches["correlation_id"].astype(int), strict=True):
        if corr in by_launch:
            refs.setdefault(str(name), []).append(corr)
    shares = [k.get("share_of_gpu_time") or 0.0 for k in kernels]
    hottest = max(range(len(kernels)), key=lambda i: shares[i], default=None)
    counts = _launch_counts(profile)

    def read(corr: int, code: Any) -> Any:
        return Instructions(rows=by_launch[corr])

    for i, kernel in enumerate(kernels):
        name = kernel.get("name")
        wanted = [h["criterion"] for h in kernel.get("hints", []) if h.get("criterion") in MEASURES]
        found = refs.get(str(name), [])
        if not found:
            kernel["locations"] = {
                "available": [],
                "missing": {"instructions": HOW_NVPROF["instructions"]},
                "not_read": "instructions",
            }
        elif not (wanted or i == hottest or shares[i] >= HOT_SHARE):
            kernel["locations"] = {"available": ["instructions"], "not_read": "not shown"}
        else:
            kernel["locations"] = kernel_locations(
                read, sorted(found), wanted, counts.get(name, 0), HOW_NVPROF
            )


def _read_without_sass(ref: Any, code: Any) -> Any:
    """A launch's instructions, SASS left to be disassembled for the printed ones only."""
    from parsers.ncu.source_counters import read_instructions

    return read_instructions(ref, code, sass=False)


def _refs_by_kernel(profile: Any) -> dict[str, list[Any]]:
    launches = profile.launches
    names = dict(zip(launches["launch_id"].astype(int), launches["name"], strict=True))
    out: dict[str, list[Any]] = {}
    for launch_id in sorted(profile.instruction_sources):
        name = names.get(launch_id)
        if name is not None:
            out.setdefault(str(name), []).append(profile.instruction_sources[launch_id])
    return out


def _launch_counts(profile: Any) -> Mapping[str, int]:
    counts = profile.launches["name"].value_counts()
    return {str(k): int(v) for k, v in counts.items()}
