"""What the report says about what is missing: which criteria could not be computed, the commands
that collect their inputs (said once for the report, not once per kernel), and which notes apply
to the profiler the inputs come from.

* :func:`what_to_collect` gathers the engine's not-computable results over every kernel: per
  criterion the number of kernels, the missing inputs and the commands (``collect`` of the
  analysis JSON); the device facts the criteria lack when the device was not identified; and the
  one profiler run that collects every criterion's metrics
  (:func:`advisor.criteria.engine.collect.everything`) plus the timeline run for HOSTSYNC.
* Commands are given for the profilers that fit the inputs (:func:`metric_tools`): nvprof for an
  nvprof input, Nsight Compute otherwise (an nsys input comes from a current toolkit); the report
  says once that ``cuda-advisor metrics --tool nvprof`` prints the nvprof command for a GPU
  before Volta (:attr:`Collect.other_tool`).
* :func:`for_inputs` drops a note that speaks of a profiler the inputs do not come from (``nvprof
  gives per-SM active cycles only with --aggregate-mode off …`` on an nsys input).  A note speaks
  of a profiler when it starts with its name.  The JSON keeps every note.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.criteria import CRITERIA, SPECS
from advisor.criteria.engine.collect import NSYS_TIMELINE, NVPROF_TIMELINE, everything

#: the profilers a note can speak of, by the words it starts with
_TOOL_WORDS = (
    ("nvprof", "nvprof"),
    ("ncu", "ncu"),
    ("nsight compute", "ncu"),
    ("nsys", "nsys"),
    ("nsight systems", "nsys"),
)
#: the engine's note that a criterion lacks device facts (said once, under what to collect)
_DEVICE_FACTS_NOTE = "device facts missing ("
#: how the engine writes a profiler that cannot collect an input (``collect`` entries)
_NOT_AVAILABLE = "not available: "
TOOL_NAMES = {"ncu": "Nsight Compute", "nvprof": "nvprof", "nsys": "Nsight Systems"}
_TITLES = {s.name: s.title for s in SPECS}


@dataclass(frozen=True)
class CollectItem:
    """One criterion that is not computable for some kernels (or HOSTSYNC, for the run)."""

    criterion: str
    title: str  # what the criterion detects, in words
    kernels: int  # kernels it is not computable for (0: HOSTSYNC, the application's)
    missing: tuple[str, ...]  # the profile inputs it lacks (device facts apart)
    commands: tuple[tuple[str, str], ...]  # (profiler, command) for the inputs' profilers
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Collect:
    """What to collect for the criteria that are not computable, said once for the report."""

    items: tuple[CollectItem, ...]
    #: (what it collects, command): one profiler run for every criterion's metrics, and the
    #: timeline run when HOSTSYNC is missing
    commands: tuple[tuple[str, str], ...]
    device_facts: tuple[str, ...]  # device facts missing (the device was not identified)
    #: the metric profiler not given commands for (``nvprof`` beside ncu), or None
    other_tool: str | None = None

    @property
    def empty(self) -> bool:
        return not self.items and not self.device_facts


def profilers_of(data: Mapping[str, Any]) -> tuple[str, ...]:
    """The profilers of the analysis' inputs (``nvprof``, ``ncu``, ``nsys``), in input order."""
    names = (str(i.get("profiler") or "") for i in data.get("inputs", ()))
    return tuple(dict.fromkeys(n for n in names if n in TOOL_NAMES))


def for_inputs(notes: Iterable[str], profilers: Sequence[str]) -> tuple[str, ...]:
    """The notes that apply to the inputs: every note when the profilers are unknown."""
    notes = tuple(str(n) for n in notes)
    if not profilers:
        return notes
    return tuple(n for n in notes if _tool_of(n) in (None, *profilers))


def _tool_of(note: str) -> str | None:
    low = note.lower()
    for words, tool in _TOOL_WORDS:
        if low.startswith(words) and (len(low) == len(words) or not low[len(words)].isalnum()):
            return tool
    return None


#: nvprof collects no metrics from compute capability 7.5 (Turing) on, and profiles nothing at
#: all from 8.0 (Ampere) on (NVIDIA's nvprof documentation, "Profiling Tools"): Nsight Compute and
#: Nsight Systems are suggested there instead
NVPROF_METRICS_BELOW_CC = 7.5
NVPROF_TRACE_BELOW_CC = 8.0


def metric_tools(profilers: Sequence[str], cc: float | None = None) -> tuple[str, ...]:
    """The profilers whose metric commands fit the inputs: their own, else Nsight Compute; never
    nvprof on a device of compute capability ``cc`` >= 7.5, where it collects no metrics."""
    own = tuple(t for t in ("ncu", "nvprof") if t in profilers)
    if cc is not None and cc >= NVPROF_METRICS_BELOW_CC:
        own = tuple(t for t in own if t != "nvprof")
    return own or ("ncu",)


def timeline_tools(profilers: Sequence[str], cc: float | None = None) -> tuple[str, ...]:
    """The profilers whose timeline commands fit the inputs (nsys unless the input is nvprof's);
    never nvprof on a device of compute capability ``cc`` >= 8.0, which it cannot profile."""
    own = tuple(t for t in ("nsys", "nvprof") if t in profilers)
    if cc is not None and cc >= NVPROF_TRACE_BELOW_CC:
        own = tuple(t for t in own if t != "nvprof")
    return own or ("nsys",)


def what_to_collect(
    kernels: Sequence[Mapping[str, Any]],
    hostsync: Mapping[str, Any],
    profilers: Sequence[str],
    cc: float | None = None,
) -> Collect:
    """The criteria not computable for some kernels, in paper order, HOSTSYNC first; the
    commands of the profilers that fit the inputs and the device's compute capability ``cc``."""
    items: list[CollectItem] = []
    facts: dict[str, None] = {}
    if hostsync.get("status") == "not_computable":
        tools = timeline_tools(profilers, cc)
        items.append(_item("HOSTSYNC", [hostsync], 0, tools, profilers, facts))
    for name in CRITERIA:
        results = [
            k["criteria"][name]
            for k in kernels
            if name in k["criteria"]
            and k["criteria"][name]["status"] == "not_computable"
            and k["criteria"][name].get("scope") != "application"
        ]
        if results:
            tools = metric_tools(profilers, cc)
            items.append(_item(name, results, len(results), tools, profilers, facts))
    commands: list[tuple[str, str]] = []
    if any(i.kernels and i.missing for i in items):
        for tool in metric_tools(profilers, cc):
            what = f"every criterion's metrics ({TOOL_NAMES[tool]}"
            what += ", Volta and later)" if tool == "ncu" else ", up to Volta)"
            commands.append((what, everything(tool)[0]))
    if any(i.criterion == "HOSTSYNC" for i in items):
        for tool in timeline_tools(profilers, cc):
            timeline = NSYS_TIMELINE if tool == "nsys" else NVPROF_TIMELINE
            commands.append((f"the timeline for HOSTSYNC ({TOOL_NAMES[tool]})", timeline))
    own = any(t in profilers for t in ("ncu", "nvprof"))
    modern = cc is not None and cc >= NVPROF_METRICS_BELOW_CC  # nvprof collects nothing there
    other = commands and not own and not modern and "ncu" in metric_tools(profilers, cc)
    return Collect(
        items=tuple(items),
        commands=tuple(commands),
        device_facts=tuple(facts),
        other_tool="nvprof" if other else None,
    )


def _item(
    name: str,
    results: Sequence[Mapping[str, Any]],
    kernels: int,
    tools: Sequence[str],
    profilers: Sequence[str],
    facts: dict[str, None],
) -> CollectItem:
    """One criterion's entry from its not-computable results (the device facts they lack are
    added to ``facts``)."""
    missing: dict[str, None] = {}
    notes: dict[str, None] = {}
    for r in results:
        for m in r.get("missing", ()):
            if str(m).startswith("device."):
                facts[str(m)] = None
            else:
                missing[str(m)] = None
        for n in for_inputs(r.get("notes", ()), profilers):
            if not n.startswith(_DEVICE_FACTS_NOTE):
                notes[n] = None
    commands = []
    for tool, command in sorted(results[0].get("collect", {}).items()):
        if tool not in tools:
            continue
        if command.startswith(_NOT_AVAILABLE):
            notes.update(dict.fromkeys(for_inputs([command[len(_NOT_AVAILABLE) :]], profilers)))
        else:
            commands.append((tool, command))
    return CollectItem(
        criterion=name,
        title=_TITLES.get(name, name),
        kernels=kernels,
        missing=tuple(missing),
        commands=tuple(commands) if missing else (),
        notes=tuple(notes),
    )


__all__ = [
    "TOOL_NAMES",
    "Collect",
    "CollectItem",
    "for_inputs",
    "metric_tools",
    "profilers_of",
    "timeline_tools",
    "what_to_collect",
]
