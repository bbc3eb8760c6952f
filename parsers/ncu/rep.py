"""Nsight Compute binary reports: ``.ncu-rep`` (2020.x and later) and ``.nsight-cuprof-report``
(2019.x), read through NVIDIA's ``ncu_report`` module.

Format ``ncu-rep``, recognised by the magic ``NVR\\0`` at the start of the file (every report
of Nsight Compute 2019.x to 2025.x; the container is described in :mod:`parsers.ncu.rep_file`).
The module is the optional dependency ``ncu-report`` (``pip install 'cuda-advisor[ncu]'``);
without it the reader raises :class:`~advisor.errors.MissingDependency` saying how to install
it or how to export CSV instead (``ncu --import FILE --csv --page raw``, FORMATS.md §2.1 and
§2.3, read by :mod:`parsers.ncu.csv`).  Units and canonical names follow the CSV reader
(FORMATS.md §2.5).

Every result of every range (one per kernel launch) is copied out of the module into plain
records (:mod:`parsers.ncu.rep_frames` maps them to the normalised frames): the demangled name,
every metric that has a value with its unit (instanced metrics: the aggregate value), the
section each metric is shown in (module versions with ``IAction.sections``), and the stored
rule results with NVIDIA's estimated speedups (speedups are stored from ncu 2023.2 on).  ncu's
internal ``group:``/``breakdown:`` lists (metric names joined by commas) are skipped.

Launches whose result stores per-instruction counters (the SourceCounters section) are noted
in ``Profile.instruction_sources`` with the module's action, kept for
:mod:`parsers.ncu.source_counters` to read on demand (docs/locations.md); nothing of them is
read here beyond one metric look-up per launch.

Before loading, :func:`parsers.ncu.rep_file.scan` checks the container: a truncated or damaged
file is a :class:`~advisor.errors.MalformedInput`; it also gives the Nsight Compute version
(``profiler_version``, from the session's ``Nsight Compute Target``, recorded by 2020.3 and later)
and the number of results the file announces.  The module reports no errors of its own for an
unreadable file (it yields no results and logs to the process's stderr, which is captured), so a
report whose results the module does not return raises an :class:`~advisor.errors.InputError`
naming the module version, the Nsight Compute version that wrote the report and the CSV export
command.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from advisor.errors import InputError, MalformedInput, MissingDependency, UnreadableInput, one_line
from advisor.profile import Profile, Provenance, printable
from parsers.ncu.rep_file import MAGIC, ReportLayout, scan
from parsers.ncu.rep_frames import RawAction, RawMetric, RawRule, build_frames
from parsers.ncu.source_counters import SourceRef, has_source_counters
from parsers.registry import BinaryFormat, Selection, register

FORMAT = "ncu-rep"
MODULE = "ncu_report"
CSV_EXPORT = "ncu --import FILE --csv --page raw > FILE.csv"
MISSING = (
    "reading Nsight Compute reports needs the optional ncu-report package: "
    f"pip install 'cuda-advisor[ncu]' — or export CSV: {CSV_EXPORT}"
)
#: NvRules message types (MsgType: NONE 0, OK 1, OPTIMIZATION 2, WARNING 3, ERROR 4) as ncu
#: prints them in CSV exports
RULE_TYPES = {1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
SPEEDUP_TYPES = {1: "local", 2: "global"}  # SpeedupType: UNKNOWN 0, LOCAL 1, GLOBAL 2


class UnreadableReport(InputError):
    """A well-formed report whose results the installed ncu-report module does not return."""


def sniff_ncu_rep(head: bytes) -> bool:
    return head.startswith(MAGIC)


def read_ncu_rep(path: str, selected: Selection) -> Profile:
    """Read an Nsight Compute report (see the module docstring).

    ``selected`` (the registry's metric selection) is not used: every metric is copied out of
    the module, whose values are read one by one whatever is kept, and :func:`parsers.read`
    applies the selection to the rows."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UnreadableInput(path, f"cannot read: {exc.strerror or exc}") from exc
    layout = scan(data)
    if layout.problem:
        raise MalformedInput(
            path, f"{layout.problem} ({_written_by(layout)}): the file is incomplete, copy it "
            f"again — or export CSV where the complete report is: {CSV_EXPORT}",
        )  # fmt: skip
    if not layout.results:  # an intact report of no results: nothing the module could add
        return _profile(path, layout, [], None)
    module = _import_module(path)
    logged: list[str] = []
    try:
        with _captured_stderr(logged):
            context = module.load_report(str(path))
    except OSError as exc:  # its native library missing (the file itself was read above)
        raise MissingDependency(
            path, f"ncu-report {_module_version(module)} cannot load its library "
            f"({one_line(str(exc))}): pip install --force-reinstall ncu-report — or export "
            f"CSV: {CSV_EXPORT}",
        ) from exc  # fmt: skip
    try:
        with _captured_stderr(logged):
            actions, sources = _actions(module, context, path)
    except Exception as exc:  # the module's own errors on a file it cannot read
        raise UnreadableReport(
            path, f"ncu-report {_module_version(module)} failed reading the report "
            f"({type(exc).__name__}: {one_line(str(exc))}; {_written_by(layout)}){_advice()}",
        ) from exc  # fmt: skip
    if not actions:
        said = f"; it logged: {one_line(logged[0])}" if logged else ""
        raise UnreadableReport(
            path, f"ncu-report {_module_version(module)} could not read any of the "
            f"{layout.results} results in this report (damaged, or newer than the module{said}; "
            f"{_written_by(layout)}, report format version {layout.format_version}){_advice()}",
        )  # fmt: skip
    profile = _profile(path, layout, actions, _module_version(module), logged)
    profile.instruction_sources = sources  # read on demand (parsers.ncu.source_counters)
    return profile


def load_quietly(path: str) -> Any:
    """The ``ncu_report`` context of a report already read once, its log kept off the terminal
    (:mod:`parsers.ncu.source_counters` reads per-instruction data through it)."""
    module = _import_module(path)
    with _captured_stderr([]):
        return module.load_report(str(path))


def _profile(
    path: str,
    layout: ReportLayout,
    actions: list[RawAction],
    module_version: str | None,
    logged: Sequence[str] = (),
) -> Profile:
    frames = build_frames(actions)
    notes = list(frames.notes)
    if logged:  # the module's own log lines, kept off the terminal: the first one as a note
        more = f" (and {len(logged) - 1} more lines)" if len(logged) > 1 else ""
        notes.append(f"ncu-report {module_version} logged: {one_line(logged[0])}{more}")
    if layout.ncu_version is None:
        notes.append("the report does not record the Nsight Compute version that wrote it")
    if len(actions) < layout.results:
        notes.append(
            f"ncu-report {module_version} read {len(actions)} of the {layout.results} results "
            "the file announces (the others are damaged or newer than the module)"
        )
    provenance = Provenance(
        path=path, format=FORMAT, profiler="ncu", modes=("report",),
        profiler_version=layout.ncu_version, notes=tuple(notes),
    )  # fmt: skip
    return Profile(
        provenance=(provenance,), launches=frames.launches, metrics=frames.metrics,
        rules=frames.rules, devices=frames.devices,
    )  # fmt: skip


def _import_module(path: str) -> ModuleType:
    try:
        return importlib.import_module(MODULE)
    except ImportError as exc:
        raise MissingDependency(path, MISSING) from exc


def _module_version(module: ModuleType) -> str:
    import importlib.metadata  # only when a binary report is read

    try:
        return importlib.metadata.version("ncu-report")
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(module, "__version__", "(unknown version)"))


def _written_by(layout: ReportLayout) -> str:
    if layout.ncu_version:
        return f"written by Nsight Compute {layout.ncu_version}"
    return "Nsight Compute version not recorded"


def _advice() -> str:
    return (
        ": a report needs an ncu-report at least as new as the Nsight Compute that wrote it "
        f"(pip install -U ncu-report) — or export CSV with that Nsight Compute: {CSV_EXPORT}"
    )


@contextmanager
def _captured_stderr(lines: list[str]) -> Iterator[None]:
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


def _actions(
    module: ModuleType, context: Any, path: str
) -> tuple[list[RawAction], dict[int, SourceRef]]:
    """Every result of every range, in report order, as plain records; and, by launch id (the
    position in that list), where the results with per-instruction counters are."""
    kinds = _value_kinds(module)
    out: list[RawAction] = []
    sources: dict[int, SourceRef] = {}
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            raw = rng.action_by_idx(a)
            action = _action(module, raw, kinds)
            if action is not None:
                if has_source_counters(raw):
                    sources[len(out)] = SourceRef(path, r, a, action.name, (context, raw))
                out.append(action)
    return out, sources


def _value_kinds(module: ModuleType) -> tuple[set[int], int]:
    """(numeric value kinds, the string kind) of the module's IMetric."""
    metric = module.IMetric
    numeric = {
        getattr(metric, f"ValueKind_{k}")
        for k in ("ANY", "FLOAT", "DOUBLE", "UINT32", "UINT64")
        if hasattr(metric, f"ValueKind_{k}")
    }
    return numeric, getattr(metric, "ValueKind_STRING", 2)


def _action(module: ModuleType, action: Any, kinds: tuple[set[int], int]) -> RawAction | None:
    """One result as a plain record; None for a result the module could not decode (no name,
    no metrics)."""
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
        rules=tuple(_rules(module, action)),
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


def _rules(module: ModuleType, action: Any) -> Iterator[RawRule]:
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
    """A string the module returned, as the profile keeps text (:func:`advisor.values.printable`:
    a damaged report's lone surrogates written as ``\\udcff`` escapes); None is empty."""
    return printable(str(value or ""))


register(
    BinaryFormat(
        name=FORMAT,
        profiler="ncu",
        description="Nsight Compute report (.ncu-rep, .nsight-cuprof-report), needs ncu-report",
        sniff=sniff_ncu_rep,
        read=read_ncu_rep,
        priority=20,
    )
)
