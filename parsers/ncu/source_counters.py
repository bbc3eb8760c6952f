"""Per-instruction data of an Nsight Compute report: the SourceCounters section, read lazily.

An ``.ncu-rep`` profiled with ``--set full`` (or ``--section SourceCounters``, and
``--section WarpStateStats`` / PC sampling for the stall samples) stores, per kernel launch,
*instanced* metrics whose correlation ids are program counters (PCs): one value per SASS
instruction.  NVIDIA's ``ncu_report`` module gives them as ``IMetric.num_instances()`` /
``as_double(i)`` with ``correlation_ids().as_uint64(i)`` the PC, and per PC the SASS text
(``IAction.sass_by_pc``) and, for code built with ``-lineinfo``, the source file and line
(``IAction.source_info``).  The aggregate value of each of these metrics (``as_double()``) is
the kernel total; the per-instruction values sum to it (checked by :func:`conservation`).

The reader of the report (:mod:`parsers.ncu.rep`) only notes *which* launches carry the section
(:func:`has_source_counters`, one look-up per launch) and records a :class:`SourceRef` per such
launch in :attr:`advisor.profile.Profile.instruction_sources`; :func:`read_instructions` reads
one launch's instructions when a report asks for them (docs/locations.md), so a report pays for
the kernels it shows only.

Columns of :func:`read_instructions` (one row per PC that has a value in any counter below):

* ``function`` (the kernel's name for PCs of its entry function, ``function@0x<start>`` for a
  called function that was not inlined, ``function@0x<pc>`` with offset 0 for a PC before
  every function the launch lists: sampled code outside them, whose start is not known),
  ``pc_offset`` (bytes from the start of that function, as the Source page prints it),
  ``sass`` (the disassembled instruction), ``opcode`` (its first word after any predicate,
  e.g. ``LDG.E.128``), ``file`` and ``line`` (``""`` and 0 without line info);
* the additive counters of :data:`COUNTERS`, 0 where the report has no value for that PC;
* the enumerations ``memory_access_size_type`` and ``memory_type`` as the report encodes them
  (codes, not decoded; -1 where absent);
* ``stall_<reason>``: PC-sampling samples of each ``smsp__pcsamp_warps_issue_stalled_<reason>``
  (the ``_not_issued`` variants are left out), and ``samples`` (``smsp__pcsamp_sample_count``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

# defined without pandas for the helper process (advisor/disassembly.py)
from advisor.ncu_read import CODES as CODES
from advisor.ncu_read import COUNTERS as COUNTERS
from advisor.ncu_read import MARKER as MARKER
from advisor.ncu_read import STALL_PREFIX as STALL_PREFIX
from advisor.ncu_read import RawInstructions, instructions_ahead, raw_instructions
from advisor.ncu_read import has_source_counters as has_source_counters

_OPCODE = re.compile(r"^\s*(?:@!?U?P\w+\s+)?([A-Za-z_]\S*)")


@dataclass(frozen=True)
class SourceRef:
    """Where one launch's per-instruction data is: the report and the result's position."""

    path: str
    range_index: int
    action_index: int
    kernel: str  # the demangled kernel name (labels the entry function)
    #: (the module's report context, its action object), kept from the first read: decoding
    #: the action again costs more than reading its counters, and the action lives only as
    #: long as its context.  None: looked up again through the path
    handle: tuple[Any, Any] | None = field(default=None, compare=False, repr=False)


class Instructions:
    """One launch's instruction rows (module docstring), with the kernel totals of every column
    the report aggregates (``totals``: column -> ``IMetric.as_double()``).  The rows are given
    as a frame, or as ``columns`` (name -> array, in the frame's column order) of which the
    frame is built when first asked for: a report joins the launches of a kernel into one
    frame (:func:`joined_rows`) without building one per launch."""

    def __init__(
        self,
        rows: pd.DataFrame | None = None,
        totals: dict[str, float] | None = None,
        source_files: tuple[str, ...] = (),
        source_texts: dict[str, str] | None = None,
        code: Code | None = None,
        columns: dict[str, Any] | None = None,
    ) -> None:
        if (rows is None) == (columns is None):
            raise ValueError("Instructions takes rows or columns")
        self._rows = rows
        self.columns = columns
        self.totals = {} if totals is None else totals
        #: source files the report embeds (``ncu --import-source yes``), by name
        self.source_files = source_files
        #: their text, by name
        self.source_texts = {} if source_texts is None else source_texts
        #: the lines and SASS by PC (:class:`Code`), for SASS read on demand
        self.code = code

    @property
    def rows(self) -> pd.DataFrame:
        if self._rows is None:
            self._rows = _frame(self.columns or {})
        return self._rows

    def column(self, name: str) -> np.ndarray | None:
        """One column as an array (None where absent), without building the frame."""
        if self.columns is not None:
            values = self.columns.get(name)
            return None if values is None else np.asarray(values)
        return self.rows[name].to_numpy() if name in self.rows else None

    def names(self) -> list[str]:
        """The column names, in order."""
        return list(self.columns) if self.columns is not None else list(self.rows.columns)

    @property
    def has_line_info(self) -> bool:
        lines = self.column("line")
        return lines is not None and bool(len(lines)) and bool((lines > 0).any())

    @property
    def has_stall_samples(self) -> bool:
        samples = self.column("samples")
        return (
            any(c.startswith("stall_") for c in self.names())
            and samples is not None
            and bool(np.nansum(samples.astype(np.float64)) > 0)
        )


def _frame(columns: dict[str, Any]) -> pd.DataFrame:
    """The rows from :func:`instructions_from`'s columns: texts as Python strings (object
    columns: a few hundred rows are indexed one by one), PCs unsigned, offsets and lines
    64-bit integers."""
    frame = {
        name: pd.Series(values, dtype=object) if name in _TEXT_COLUMNS else values
        for name, values in columns.items()
    }
    rows = pd.DataFrame(frame)
    rows["pc"] = rows["pc"].astype(np.uint64)
    rows["pc_offset"] = rows["pc_offset"].astype(np.int64)
    rows["line"] = rows["line"].astype(np.int64)
    return rows


def joined_rows(read: list[Instructions]) -> pd.DataFrame:
    """The rows of several launches (of one kernel) in one frame, renumbered: what
    ``pd.concat`` of their frames gives, built once where all have the same columns."""
    names = [r.names() for r in read]
    if not read or any(r.columns is None for r in read) or any(n != names[0] for n in names):
        return pd.concat([r.rows for r in read], ignore_index=True)
    columns: dict[str, Any] = {}
    for name in names[0]:
        parts = [r.columns[name] for r in read if r.columns is not None]
        if isinstance(parts[0], np.ndarray):
            columns[name] = np.concatenate(parts)
        else:
            columns[name] = [v for part in parts for v in part]
    return _frame(columns)


_TEXT_COLUMNS = frozenset({"function", "sass", "opcode", "file"})


def additive_columns(rows: pd.DataFrame) -> list[str]:
    """The columns of ``rows`` whose per-instruction values sum to a kernel total."""
    return [c for c in rows.columns if c in COUNTERS or c.startswith("stall_")]


class Code:
    """The source lines and the SASS of the PCs of one kernel's launches, looked up once per PC
    (the launches of one kernel run the same code at the same PCs).  SASS is disassembled on
    demand: the module's first disassembly in a process costs 0.3 to 0.6 s, so a report asks
    only for the instructions it prints."""

    def __init__(self, lookup: Callable[[str, int, int, int], str | None] | None = None) -> None:
        """``lookup(report path, range, action, pc)``: SASS disassembled elsewhere (the report
        command's helper process, :mod:`advisor.disassembly`), or None to disassemble here."""
        self._lookup = lookup
        #: PC -> (file, line), shared with :func:`advisor.ncu_read.raw_instructions`
        self.where: dict[int, tuple[str, int]] = {}
        self._sass: dict[int, str] = {}
        self._action: dict[int, Any] = {}
        self._launch: dict[int, tuple[str, int, int]] = {}

    def locate(
        self, action: Any, pc: int, launch: tuple[str, int, int] | None = None
    ) -> tuple[str, int]:
        """(file, line) of ``pc``; ``("", 0)`` without line info.  ``launch``: (report path,
        range, action) of ``action``, where the ``lookup`` given to this object may hold its
        SASS."""
        if pc not in self.where:
            info = action.source_info(pc)
            file, line = (info.file_name(), info.line()) if info else ("", 0)
            self.where[pc] = (str(file or ""), int(line or 0))
        return self.place(pc, self.where[pc], action, launch)

    def place(
        self,
        pc: int,
        where: tuple[str, int],
        action: Any = None,
        launch: tuple[str, int, int] | None = None,
    ) -> tuple[str, int]:
        """Note ``pc`` at ``where`` (the first launch that has it wins) with the launch, and the
        module's action when at hand (else looked up again through ``launch`` to disassemble
        in-process); its (file, line)."""
        if pc not in self._launch and pc not in self._action:
            self.where.setdefault(pc, where)
            if action is not None:
                self._action[pc] = action
            if launch is not None:
                self._launch[pc] = launch
        return self.where.get(pc, where)

    def sass(self, pc: int) -> str:
        """The SASS text of ``pc`` (empty for a PC never located): the disassembly helper's
        text where it has one, else disassembled here."""
        if pc not in self._sass:
            text = None
            launch = self._launch.get(pc)
            if launch is not None and self._lookup is not None:
                text = self._lookup(*launch, pc)
            if text is None:
                action = self._action.get(pc)
                if action is None and launch is not None:
                    action = _load(launch[0]).range_by_idx(launch[1]).action_by_idx(launch[2])
                text = str(action.sass_by_pc(pc) or "").strip() if action is not None else ""
            self._sass[pc] = text
        return self._sass[pc]


def read_instructions(ref: SourceRef, code: Code | None = None, sass: bool = True) -> Instructions:
    """The instruction rows of one launch (module docstring): as the report command's helper
    process read them (:mod:`advisor.disassembly`), else read here through ``ncu_report``.
    ``code``: the lines and SASS of the other launches of the same kernel, shared; ``sass``:
    False leaves the ``sass`` and ``opcode`` columns empty (``Instructions.code.sass(pc)``
    disassembles one PC when needed)."""
    launch = (ref.path, ref.range_index, ref.action_index)
    raw = _helper_instructions(launch)
    if raw is None:
        return instructions_of(_action_of(ref), ref.kernel, code, sass, launch)
    return instructions_from(raw, ref.kernel, Code() if code is None else code, sass, launch)


def instructions_of(
    action: Any,
    kernel: str,
    code: Code | None = None,
    sass: bool = True,
    launch: tuple[str, int, int] | None = None,
) -> Instructions:
    """:func:`read_instructions` of an ``ncu_report`` action already at hand (``launch``: its
    report path, range and action, for :meth:`Code.locate`)."""
    code = Code() if code is None else code
    raw = raw_instructions(action, code.where)
    return instructions_from(raw, kernel, code, sass, launch, action)


def instructions_from(
    raw: RawInstructions,
    kernel: str,
    code: Code,
    sass: bool = True,
    launch: tuple[str, int, int] | None = None,
    action: Any = None,
) -> Instructions:
    """The instruction rows of one launch from its counters as read
    (:func:`advisor.ncu_read.raw_instructions`); ``action``: the module's, where at hand."""
    columns: dict[str, dict[int, float]] = {}
    totals: dict[str, float] = {}
    wanted = {**COUNTERS, **CODES}
    for name in sorted(raw.metrics):
        if name.startswith(STALL_PREFIX) and not name.endswith("_not_issued"):
            wanted["stall_" + name[len(STALL_PREFIX) :]] = name
    for column, name in wanted.items():
        metric = raw.metrics.get(name)
        if metric is None:
            continue
        if column not in CODES and metric.total is not None:
            totals[column] = metric.total
        if metric.pcs is None or metric.values is None:  # an additive counter of total 0
            columns.setdefault(column, {})
            continue
        columns[column] = dict(zip(metric.pcs, metric.values, strict=True))
    pcs = sorted(set().union(*columns.values())) if columns else []
    starts = list(raw.starts)
    frame: dict[str, Iterable[Any]] = {}
    functions, offsets, files, lines = [], [], [], []
    for pc in pcs:
        start = _start_of(pc, starts)
        index = starts.index(start) if start in starts else -1
        functions.append(kernel if index == 0 or not starts else f"function@{start:#x}")
        offsets.append(pc - start)
        file, line = code.place(pc, raw.where.get(pc, ("", 0)), action, launch)
        files.append(file)
        lines.append(line)
    texts = [code.sass(pc) for pc in pcs] if sass else [""] * len(pcs)
    frame["function"] = functions
    frame["pc"] = pcs
    frame["pc_offset"] = offsets
    frame["sass"] = texts
    frame["opcode"] = [opcode(s) for s in texts]
    frame["file"] = files
    frame["line"] = lines
    at = np.array(pcs, dtype=np.uint64)
    for column, by_pc in columns.items():
        values = np.full(len(pcs), -1.0 if column in CODES else 0.0)
        if by_pc:  # each PC's place in the sorted union of all columns' PCs
            where = np.searchsorted(at, np.fromiter(by_pc, dtype=np.uint64, count=len(by_pc)))
            values[where] = np.fromiter(by_pc.values(), dtype=np.float64, count=len(by_pc))
        frame[column] = values
    for column in (*COUNTERS, *CODES):
        if column not in frame:
            frame[column] = np.full(len(pcs), -1.0 if column in CODES else 0.0)
    return Instructions(
        totals=totals, source_files=tuple(raw.sources), source_texts=dict(raw.sources),
        code=code, columns=frame,
    )  # fmt: skip


def _helper_instructions(launch: tuple[str, int, int]) -> RawInstructions | None:
    """The launch's counters as the report command's helper process read them, if it did."""
    return instructions_ahead(*launch)


#: the prefix of the per-instruction sums :func:`criterion_sums` gives (the criteria's
#: per-instruction recipes read them, docs/criteria.md "Per-instruction recipes")
SUM_PREFIX = "source."
#: ``memory_type`` code of global memory (observed in the reports: 4 global, 8 local, 16 shared;
#: 0 for an instruction that never executed)
MEMORY_GLOBAL = 4
#: ``memory_access_type`` codes of loads and stores (observed: 2 load, 4 store; atomics and
#: reductions, which the global load / store sector counters leave out, are left out too)
ACCESS_LOAD = 2
ACCESS_STORE = 4
#: per-instruction sums -> the instanced metric summed
SUMMED: dict[str, str] = {
    "inst_executed": "inst_executed",
    "thread_inst_executed_true": "thread_inst_executed_true",
    "memory_l1_wavefronts_shared": "memory_l1_wavefronts_shared",
    "memory_l1_wavefronts_shared_ideal": "memory_l1_wavefronts_shared_ideal",
}


#: the requested-byte sums of :func:`criterion_sums` and the metrics they read
REQUESTED_SUMS = ("global_load_requested_bytes", "global_store_requested_bytes")
_REQUESTED_READS = (
    "thread_inst_executed_true",
    "memory_type",
    "memory_access_type",
    "memory_access_size_type",
)


def criterion_sums(ref: SourceRef, wanted: Collection[str] | None = None) -> dict[str, float]:
    """Kernel totals computed from one launch's per-instruction counters, for the criteria
    whose kernel-level counters the report lacks (names with :data:`SUM_PREFIX`; a name is
    absent where the report has no value for it):

    * ``source.<metric>`` for each metric of :data:`SUMMED`: the sum over its instructions;
    * ``source.global_load_requested_bytes`` / ``source.global_store_requested_bytes``: over
      the global (``memory_type`` :data:`MEMORY_GLOBAL`) loads / stores, the predicated-on
      lanes (``thread_inst_executed_true``) x the access width (``memory_access_size_type``,
      in bits) / 8 -- the bytes the instructions asked for, from each instruction's own width
      instead of an assumed 4 B word.

    ``wanted``: the names to give (all by default); only the metrics they need are read (no
    line info, no SASS)."""
    asked = {SUM_PREFIX + c for c in (*SUMMED, *REQUESTED_SUMS)} if wanted is None else wanted
    reads = {SUMMED[n[len(SUM_PREFIX) :]] for n in asked if n[len(SUM_PREFIX) :] in SUMMED}
    if any(n[len(SUM_PREFIX) :] in REQUESTED_SUMS for n in asked):
        reads.update(_REQUESTED_READS)
    if not reads:
        return {}
    launch = (ref.path, ref.range_index, ref.action_index)
    raw = _helper_instructions(launch) or raw_instructions(_action_of(ref), only=reads)
    by_pc: dict[str, dict[int, float]] = {}
    for name in sorted(reads & set(raw.metrics)):
        metric = raw.metrics[name]
        # an additive counter of total 0 was not read: each instruction's value is 0
        pairs = zip(metric.pcs or (), metric.values or (), strict=True)
        by_pc[name] = {pc: float(value) for pc, value in pairs}
    out = {
        SUM_PREFIX + column: float(sum(by_pc[metric].values()))
        for column, metric in SUMMED.items()
        if metric in by_pc and SUM_PREFIX + column in asked
    }
    lanes = by_pc.get("thread_inst_executed_true")
    kinds, access, width = (
        by_pc.get(n) for n in ("memory_type", "memory_access_type", "memory_access_size_type")
    )
    if lanes is None or kinds is None or access is None or width is None:
        return out
    if any(n[len(SUM_PREFIX) :] in REQUESTED_SUMS for n in asked):
        loads = stores = 0.0
        for pc, kind in kinds.items():
            bits = width.get(pc, 0.0)
            if kind != MEMORY_GLOBAL or not bits > 0:
                continue
            requested = lanes.get(pc, 0.0) * bits / 8
            if access.get(pc) == ACCESS_LOAD:
                loads += requested
            elif access.get(pc) == ACCESS_STORE:
                stores += requested
        out[SUM_PREFIX + "global_load_requested_bytes"] = loads
        out[SUM_PREFIX + "global_store_requested_bytes"] = stores
    return out


def _action_of(ref: SourceRef) -> Any:
    """The ``ncu_report`` action of ``ref``: the one kept with it, else looked up again."""
    if ref.handle is not None:
        return ref.handle[1]
    return _load(ref.path).range_by_idx(ref.range_index).action_by_idx(ref.action_index)


def opcode(sass: str) -> str:
    """The opcode of a SASS line (``@!P0 LDG.E.128 R4, [R2.64]`` -> ``LDG.E.128``); empty where
    the report holds no disassembly (ncu stores ``???`` for code it could not disassemble)."""
    match = _OPCODE.match(sass)
    return match.group(1) if match else ""


def line_keys(rows: pd.DataFrame) -> np.ndarray:
    """The source line of each instruction row as ``file:line``; ``function+0xOFFSET`` for a
    row without line info (line 0)."""
    if not len(rows):
        return np.array([], dtype=object)
    with_line = rows["file"] + ":" + rows["line"].astype(str)
    without = rows["function"] + "+" + rows["pc_offset"].map("{:#06x}".format)
    return np.where(rows["line"].to_numpy() > 0, with_line, without)


def by_line(rows: pd.DataFrame) -> pd.DataFrame:
    """Instruction rows folded into source lines (file, line; :func:`line_keys`): additive
    columns summed, the opcodes of the line joined in PC order, ``instructions`` counted.
    Rows without line info stay one per instruction, so the sums still equal the kernel
    totals."""
    if not len(rows):
        return rows.copy()
    keyed = rows.assign(_key=line_keys(rows))
    grouped = keyed.groupby("_key", sort=False)
    out = grouped[additive_columns(rows)].sum()
    first = grouped[["function", "file", "line", "pc_offset", "sass"]].first()
    out = first.join(out)
    out["opcodes"] = grouped["opcode"].agg(lambda ops: " ".join(dict.fromkeys(o for o in ops if o)))
    out["instructions"] = grouped.size()
    return out.reset_index(drop=True)


def conservation(instructions: Instructions) -> dict[str, tuple[float, float]]:
    """column -> (sum over instructions, kernel total) for every column with a total."""
    out = {}
    for column, total in sorted(instructions.totals.items()):
        values = instructions.column(column)
        summed = float(np.nansum(values.astype(np.float64))) if values is not None else 0.0
        out[column] = (summed, total)
    return out


def column_sum(rows: pd.DataFrame, column: str) -> float:
    """The sum of a float column, missing values left out: ``Series.sum`` (the same pairwise
    sum over the same array, NaN as 0), without its per-call overhead."""
    return float(np.nansum(rows[column].to_numpy(dtype=np.float64)))


def _start_of(pc: int, starts: list[int]) -> int:
    """The start of the function holding ``pc``: the greatest start not after it; ``pc`` itself
    when the list is empty or every start is after it (code outside the launch's functions,
    named by its own address: an offset from a later function's start would be negative)."""
    before = [s for s in starts if s <= pc]
    return max(before) if before else pc


#: loaded reports by path, newest last (at most :data:`KEEP` kept)
_LOADED: dict[str, Any] = {}
KEEP = 4


def remember(path: str, context: Any) -> None:
    """Keep an ``ncu_report`` context loaded for :func:`read_instructions` of a
    :class:`SourceRef` without a handle (the oldest of more than :data:`KEEP` is let go)."""
    _LOADED.pop(path, None)
    _LOADED[path] = context
    while len(_LOADED) > KEEP:
        _LOADED.pop(next(iter(_LOADED)))


def forget() -> None:
    """Let go of every loaded report (a benchmark measuring a cold read)."""
    _LOADED.clear()


def _load(path: str) -> Any:
    """The report's context: the one the reader kept, else loaded again (the module is
    imported only here, when asked)."""
    if path not in _LOADED:
        from parsers.ncu.rep import load_quietly

        remember(path, load_quietly(path))
    return _LOADED[path]
