"""An Nsight Compute report read through NVIDIA's ``ncu_report`` into plain records, with the
standard library only.

Two processes use it: the command itself (:mod:`parsers.ncu.rep`,
:mod:`parsers.ncu.source_counters`), and the helper process :mod:`advisor.disassembly` starts
before the command loads pandas, which reads the same records on the second core and hands
them over as JSON (:func:`action_json` / :func:`action_from_json`,
:func:`instructions_json` / :func:`instructions_from_json`).  Both build the report from the
same records, so the output is the same whoever read them (docs/locations.md, "cost").

* :func:`read_actions`: every result of every range as a :class:`RawAction` (the demangled
  name, every metric that has a value with its unit — instanced metrics: the aggregate —, the
  section showing each metric, the stored rule results with NVIDIA's estimates), and the
  launches that store per-instruction counters (:func:`has_source_counters`).
* :func:`raw_instructions`: one launch's per-instruction counters (:class:`RawInstructions`):
  per metric its aggregate and its value per program counter (PC), the start PCs of the
  launch's functions, the source file and line of each PC, and the embedded source files.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import warnings
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from advisor.errors import one_line
from advisor.text import printable

#: column -> instanced metric of the SourceCounters section (additive: per-instruction values
#: sum to the kernel total)
COUNTERS: dict[str, str] = {
    "inst_executed": "inst_executed",
    "thread_inst_executed": "thread_inst_executed",
    "thread_inst_executed_true": "thread_inst_executed_true",
    "branch_targets_threads_divergent": "smsp__branch_targets_threads_divergent",
    "l2_sectors_global": "memory_l2_theoretical_sectors_global",
    "l2_sectors_global_ideal": "memory_l2_theoretical_sectors_global_ideal",
    "l2_sectors_global_excessive": "derived__memory_l2_theoretical_sectors_global_excessive",
    "l1_wavefronts_shared": "memory_l1_wavefronts_shared",
    "l1_wavefronts_shared_ideal": "memory_l1_wavefronts_shared_ideal",
    "l1_wavefronts_shared_excessive": "derived__memory_l1_wavefronts_shared_excessive",
    "samples": "smsp__pcsamp_sample_count",
}
#: column -> instanced metric holding a code per instruction (not summed)
CODES: dict[str, str] = {
    "memory_access_size_type": "memory_access_size_type",
    "memory_type": "memory_type",
}
#: instanced code metrics read for the per-instruction sums only (not a column of the rows)
SUM_CODES = ("memory_access_type",)
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
#: the metric whose presence marks a launch as carrying per-instruction data
MARKER = "inst_executed"
#: NvRules message types (MsgType: NONE 0, OK 1, OPTIMIZATION 2, WARNING 3, ERROR 4) as ncu
#: prints them in CSV exports
RULE_TYPES = {1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
SPEEDUP_TYPES = {1: "local", 2: "global"}  # SpeedupType: UNKNOWN 0, LOCAL 1, GLOBAL 2


@dataclass(frozen=True)
class RawMetric:
    name: str
    unit: str  # as stored ("" when none)
    value: float | None = None  # numeric value (aggregate of an instanced metric)
    text: str | None = None  # string value


@dataclass(frozen=True)
class RawRule:
    section: str  # section identifier ("SpeedOfLight")
    rule: str  # rule identifier ("LaunchConfiguration")
    rule_type: str | None  # OPT, INF, WRN, ERR
    title: str
    message: str
    speedup_type: str | None = None  # local / global
    speedup_pct: float | None = None  # NVIDIA's estimated speedup in percent


@dataclass(frozen=True)
class RawAction:
    name: str
    metrics: tuple[RawMetric, ...] = ()
    sections: Mapping[str, str] = field(default_factory=dict)  # metric -> section name
    rules: tuple[RawRule, ...] = ()


@dataclass(frozen=True)
class Launch:
    """A result that stores per-instruction counters: its position among the results read
    (the launch id), its range and action indices, and its demangled name."""

    launch_id: int
    range_index: int
    action_index: int
    name: str


@dataclass(frozen=True)
class RawMetricInstances:
    """One instanced metric of a launch: its aggregate (None without one) and its value per
    PC; ``pcs`` and ``values`` are None where the aggregate of an additive counter is 0
    (counts are never negative: every instance is 0, and none is read)."""

    total: float | None
    pcs: tuple[int, ...] | None
    values: tuple[float, ...] | None


@dataclass(frozen=True)
class RawInstructions:
    """What one launch stores per instruction (the module docstring).  ``metrics``: by metric
    name, the instanced metrics of :data:`COUNTERS`, :data:`CODES`, :data:`SUM_CODES` and the
    stall reasons the launch has; ``where``: PC -> (file, line), ``("", 0)`` without line
    info; ``sources``: embedded source file name -> text (``ncu --import-source yes``)."""

    metrics: Mapping[str, RawMetricInstances]
    starts: tuple[int, ...]
    where: Mapping[int, tuple[str, int]]
    sources: Mapping[str, str]


@dataclass(frozen=True)
class Read:
    """A report's results as read (:func:`read_actions`) elsewhere, the module's log lines
    while it loaded and read the report, and the module's version."""

    actions: list[RawAction]
    launches: list[Launch]
    logged: list[str]
    module_version: str


class ReadAhead(Protocol):
    """Where a report's records may already be read: the report command's helper process
    (:mod:`advisor.disassembly`, installed in :data:`AHEAD` when it starts one)."""

    def actions(self, path: str) -> Read | None: ...

    def instructions(
        self, path: str, range_index: int, action_index: int
    ) -> RawInstructions | None: ...


#: the records read ahead, if a helper process was started; None: the readers read here
AHEAD: ReadAhead | None = None


def actions_ahead(path: str) -> Read | None:
    """The results of the report ``path`` as read ahead; None: read them here."""
    return None if AHEAD is None else AHEAD.actions(path)


def instructions_ahead(path: str, range_index: int, action_index: int) -> RawInstructions | None:
    """One launch's per-instruction counters as read ahead; None: read them here."""
    return None if AHEAD is None else AHEAD.instructions(path, range_index, action_index)


def has_source_counters(action: Any) -> bool:
    """Whether an ``ncu_report`` action stores per-instruction counters (one metric look-up)."""
    metric = action.metric_by_name(MARKER)
    return bool(metric is not None and metric.has_correlation_ids() and metric.num_instances())


def module_version(module: Any) -> str:
    """The installed ncu-report's version (the module's own ``__version__`` where the package
    metadata is missing)."""
    import importlib.metadata  # only when a binary report is read

    try:
        return importlib.metadata.version("ncu-report")
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(module, "__version__", "(unknown version)"))


@contextmanager
def captured_stderr(lines: list[str]) -> Iterator[None]:
    """Collect what native code writes to file descriptor 2 (the module logs parse failures
    there), and the Python warnings it raises, instead of letting them reach the terminal."""
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.stderr.flush()  # what Python printed before goes to the terminal, not the sink
        saved = os.dup(2)
        try:
            os.dup2(sink.fileno(), 2)
            yield
        finally:
            sys.stderr.flush()  # and what the module printed through Python goes to the sink
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", errors="replace")
            lines.extend(ln.strip() for ln in text.splitlines() if ln.strip())
            lines.extend(one_line(str(w.message)) for w in caught)


# ----- results ------------------------------------------------------------------------------


def read_actions(module: Any, context: Any) -> tuple[list[RawAction], list[Launch], list[Any]]:
    """Every result of every range, in report order, as plain records; the results with
    per-instruction counters (:class:`Launch`); and the module's action object of each of
    those (kept by the caller to read their counters later)."""
    kinds = value_kinds(module)
    out: list[RawAction] = []
    launches: list[Launch] = []
    handles: list[Any] = []
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            raw = rng.action_by_idx(a)
            action = read_action(module, raw, kinds)
            if action is not None:
                if has_source_counters(raw):
                    launches.append(Launch(len(out), r, a, action.name))
                    handles.append(raw)
                out.append(action)
    return out, launches, handles


def value_kinds(module: Any) -> tuple[set[int], int]:
    """(numeric value kinds, the string kind) of the module's IMetric."""
    metric = module.IMetric
    numeric = {
        getattr(metric, f"ValueKind_{k}")
        for k in ("ANY", "FLOAT", "DOUBLE", "UINT32", "UINT64")
        if hasattr(metric, f"ValueKind_{k}")
    }
    return numeric, getattr(metric, "ValueKind_STRING", 2)


def read_action(module: Any, action: Any, kinds: tuple[set[int], int]) -> RawAction | None:
    """One result as a plain record; None for a result the module could not decode (no name,
    no metrics).  ncu's internal ``group:``/``breakdown:`` lists are skipped."""
    numeric, string = kinds
    base = getattr(action, "NameBase_DEMANGLED", None)
    name = action.name(base) if base is not None else action.name()
    metrics = []
    for metric_name in action.metric_names():
        if ":" in metric_name:  # group:/breakdown: lists of metric names
            continue
        m = action.metric_by_name(metric_name)
        if m is None or not m.has_value():
            continue
        kind, unit = m.kind(), m.unit() or ""
        if kind == string:
            text = _text(m.as_string())
            metrics.append(RawMetric(printable(metric_name), printable(unit), text=text))
        elif kind in numeric:
            value = float(m.as_double())
            metrics.append(RawMetric(printable(metric_name), printable(unit), value=value))
    if not name and not metrics:
        return None
    return RawAction(
        name=_text(name), metrics=tuple(metrics), sections=_sections(action),
        rules=tuple(_rules(action)),
    )  # fmt: skip


def _sections(action: Any) -> dict[str, str]:
    """metric name -> display name of the first section showing it (empty when the module
    has no ``IAction.sections``)."""
    if not hasattr(action, "sections"):
        return {}
    out: dict[str, str] = {}
    for section in action.sections():
        title = _text(section.name())
        for m in (*(section.header_metrics() or ()), *(section.body_metrics() or ())):
            out.setdefault(_text(m.name()), title)
    return out


def _rules(action: Any) -> Iterator[RawRule]:
    if not hasattr(action, "rule_results"):
        return
    for result in action.rule_results():
        message = result.rule_message() if result.has_rule_message() else {}
        speedup_type, speedup = None, None
        if result.has_speedup_estimation():
            estimate = result.speedup_estimation()
            speedup_type = SPEEDUP_TYPES.get(int(estimate["type"]))
            value = float(estimate["speedup"])
            speedup = value if math.isfinite(value) else None
        yield RawRule(
            section=_text(result.section_identifier()), rule=_text(result.rule_identifier()),
            rule_type=RULE_TYPES.get(int(message.get("type", 0))),
            title=_text(message.get("title")), message=_text(message.get("message")),
            speedup_type=speedup_type, speedup_pct=speedup,
        )  # fmt: skip


def _text(value: Any) -> str:
    """A string the module returned, as the profile keeps text (:func:`printable`: a damaged
    report's lone surrogates written as ``\\udcff`` escapes); None is empty."""
    return printable(str(value or ""))


# ----- per-instruction counters -------------------------------------------------------------


def raw_instructions(
    action: Any,
    where: dict[int, tuple[str, int]] | None = None,
    only: Collection[str] | None = None,
) -> RawInstructions:
    """One launch's per-instruction counters (:class:`RawInstructions`).  ``where``: the
    (file, line) of PCs already located for another launch of the same kernel (they run the
    same code), extended with this launch's other PCs.  ``only``: read just these metrics,
    and locate no PC (the per-instruction sums of the criteria)."""
    names = set(action.metric_names())
    if only is None:
        wanted = [*COUNTERS.values(), *CODES.values(), *SUM_CODES]
        wanted += [
            n for n in sorted(names) if n.startswith(STALL_PREFIX) and not n.endswith("_not_issued")
        ]
    else:
        wanted = sorted(only)
    known: dict[int, list[tuple[int, ...]]] = {}
    metrics: dict[str, RawMetricInstances] = {}
    for name in wanted:
        if name not in names or name in metrics:
            continue
        metric = action.metric_by_name(name)
        if metric is None or not metric.has_correlation_ids():
            continue
        total = float(metric.as_double()) if metric.has_value() else None
        code = name in CODES.values() or name in SUM_CODES
        if total == 0.0 and not code:  # counts are never negative: all zero
            metrics[name] = RawMetricInstances(total, None, None)
            continue
        pcs = _pcs(metric, known)
        value = metric.as_double
        metrics[name] = RawMetricInstances(total, pcs, tuple(value(i) for i in range(len(pcs))))
    located = {} if where is None else where
    seen = sorted({pc for lists in known.values() for pcs in lists for pc in pcs})
    if only is not None:
        seen = []
    for pc in seen:
        if pc not in located:
            info = action.source_info(pc)
            located[pc] = (str(info.file_name() or ""), int(info.line() or 0)) if info else ("", 0)
    return RawInstructions(
        metrics=metrics,
        starts=tuple(_function_starts(action)) if only is None else (),
        where={pc: located[pc] for pc in seen},
        sources=_embedded(action) if only is None else {},
    )


def _pcs(metric: Any, known: dict[int, list[tuple[int, ...]]]) -> tuple[int, ...]:
    """The PCs (correlation ids) of an instanced metric.  The metrics of one group share their
    ids, so a list already read whose first, middle and last ids match is reused (``known``:
    instance count -> the lists read so far); else the ids are read one by one."""
    ids = metric.correlation_ids()
    count = metric.num_instances()
    probes = sorted({0, count // 2, count - 1}) if count else []
    for candidate in known.get(count, []):
        if all(candidate[i] == ids.as_uint64(i) for i in probes):
            return candidate
    read = tuple(int(ids.as_uint64(i)) for i in range(count))
    known.setdefault(count, []).append(read)
    return read


def _function_starts(action: Any) -> list[int]:
    """Start PCs of the launch's functions (``launch__function_pcs``), entry function first."""
    metric = action.metric_by_name("launch__function_pcs")
    if metric is None:
        return []
    count = metric.num_instances()
    if count:
        return [int(metric.as_uint64(i)) for i in range(count)]
    return [int(metric.as_uint64())] if metric.has_value() else []


def _embedded(action: Any) -> dict[str, str]:
    """The source files embedded in the report, name -> text (none without ``--import-source
    yes``, or where the module has no ``source_files``)."""
    files = action.source_files() if hasattr(action, "source_files") else {}
    if not hasattr(files, "keys"):
        return {}
    return {str(k): str(files[k]) for k in sorted(files.keys(), key=str)}


# ----- the helper's JSON --------------------------------------------------------------------


def action_json(action: RawAction) -> list[Any]:
    """A :class:`RawAction` as JSON values (floats round-trip exactly, NaN included)."""
    return [
        action.name,
        [[m.name, m.unit, m.value, m.text] for m in action.metrics],
        dict(action.sections),
        [[r.section, r.rule, r.rule_type, r.title, r.message, r.speedup_type, r.speedup_pct]
         for r in action.rules],
    ]  # fmt: skip


def action_from_json(data: list[Any]) -> RawAction:
    name, metrics, sections, rules = data
    return RawAction(
        name=str(name),
        metrics=tuple(RawMetric(str(n), str(u), _float(v), _str(t)) for n, u, v, t in metrics),
        sections={str(k): str(v) for k, v in sections.items()},
        rules=tuple(
            RawRule(str(s), str(r), _str(k), str(t), str(m), _str(st), _float(sp))
            for s, r, k, t, m, st, sp in rules
        ),
    )


def instructions_json(raw: RawInstructions) -> dict[str, Any]:
    """A :class:`RawInstructions` as JSON values; the PC lists the metrics share, and the file
    names the PCs share, written once."""
    lists: dict[tuple[int, ...], int] = {}
    metrics = {}
    for name, m in raw.metrics.items():
        index = None if m.pcs is None else lists.setdefault(m.pcs, len(lists))
        metrics[name] = [m.total, index, _list(m.values)]
    files: dict[str, int] = {}
    where = [
        [pc, files.setdefault(file, len(files)), line] for pc, (file, line) in raw.where.items()
    ]
    return {
        "pcs": [list(pcs) for pcs in lists],
        "metrics": metrics,
        "starts": list(raw.starts),
        "files": list(files),
        "where": where,
        "sources": dict(raw.sources),
    }


def instructions_from_json(data: Mapping[str, Any]) -> RawInstructions:
    lists = [tuple(pcs) for pcs in data["pcs"]]  # JSON gives back ints and floats as written
    metrics = {
        str(name): RawMetricInstances(
            _float(total),
            None if index is None else lists[index],
            None if values is None else tuple(values),
        )
        for name, (total, index, values) in data["metrics"].items()
    }
    files = [str(file) for file in data["files"]]
    return RawInstructions(
        metrics=metrics,
        starts=tuple(int(s) for s in data["starts"]),
        where={int(pc): (files[file], int(line)) for pc, file, line in data["where"]},
        sources={str(k): str(v) for k, v in data["sources"].items()},
    )


def _list(values: tuple[Any, ...] | None) -> list[Any] | None:
    return None if values is None else list(values)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
