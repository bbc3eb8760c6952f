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
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from advisor.errors import InputError, MalformedInput, MissingDependency, UnreadableInput, one_line
from advisor.ncu_read import actions_ahead, module_version, read_actions
from advisor.ncu_read import captured_stderr as _captured_stderr
from advisor.profile import Profile, Provenance
from parsers.ncu.rep_file import MAGIC, ReportLayout, scan
from parsers.ncu.rep_frames import RawAction, build_frames
from parsers.ncu.source_counters import SourceRef
from parsers.registry import BinaryFormat, Selection, register

FORMAT = "ncu-rep"
MODULE = "ncu_report"
CSV_EXPORT = "ncu --import FILE --csv --page raw > FILE.csv"
MISSING = (
    "reading Nsight Compute reports needs the optional ncu-report package: "
    f"pip install 'cuda-advisor[ncu]' — or export CSV: {CSV_EXPORT}"
)


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
    helped = _from_helper(path, layout)
    if helped is not None:
        return helped
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
    return module_version(module)


def _written_by(layout: ReportLayout) -> str:
    if layout.ncu_version:
        return f"written by Nsight Compute {layout.ncu_version}"
    return "Nsight Compute version not recorded"


def _advice() -> str:
    return (
        ": a report needs an ncu-report at least as new as the Nsight Compute that wrote it "
        f"(pip install -U ncu-report) — or export CSV with that Nsight Compute: {CSV_EXPORT}"
    )


def _actions(
    module: ModuleType, context: Any, path: str
) -> tuple[list[RawAction], dict[int, SourceRef]]:
    """Every result of every range, in report order, as plain records; and, by launch id (the
    position in that list), where the results with per-instruction counters are (with the
    module's context and action kept to read them)."""
    actions, launches, handles = read_actions(module, context)
    return actions, {
        launch.launch_id: SourceRef(
            path, launch.range_index, launch.action_index, launch.name, (context, handle)
        )
        for launch, handle in zip(launches, handles, strict=True)
    }


def _from_helper(path: str, layout: ReportLayout) -> Profile | None:
    """The profile from the results the report command's helper process read
    (:mod:`advisor.disassembly`, through :data:`advisor.ncu_read.AHEAD`), if it read them;
    None to read them here (also where the helper read none: the reading here then says
    why)."""
    read = actions_ahead(path)
    if read is None or not read.actions:
        return None
    profile = _profile(path, layout, read.actions, read.module_version, read.logged)
    profile.instruction_sources = {
        launch.launch_id: SourceRef(path, launch.range_index, launch.action_index, launch.name)
        for launch in read.launches
    }
    return profile


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
