"""The one place the steps of an analysis are chained: read → resolve the device → evaluate →
(build the report → render it).

``report``, ``report --per-file`` and ``compare`` all call :func:`analyse`, so a profile gives the
same analysis, the same JSON and the same report bytes whichever command reads it::

    run = analyse(["trace.csv", "metrics.csv"], device=None, speedup_form="amdahl")
    run.data                      # the JSON document report --json writes
    built = build(run)            # the report's values (advisor.report.build)

Each step can run through a progress display (:class:`advisor.progress.Progress` ``.call``);
the default runs it directly.  The renderers are imported by :func:`build` only, so an analysis
for ``--json`` never loads jinja2 or matplotlib.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import parsers
from advisor import progress
from advisor.criteria import evaluate
from advisor.criteria.engine import needed
from advisor.criteria.engine.analysis import Analysis, to_json
from advisor.criteria.engine.speedups import AMDAHL
from advisor.devices.database import find_device, normalize_name
from advisor.devices.resolve import profile_device_names, resolve_device
from advisor.errors import UsageError
from advisor.profile import Profile, merge
from parsers import heap

if TYPE_CHECKING:
    from advisor.report.build import Report
    from advisor.report.host_view import HostView
    from advisor.report.predictions import ModelInputs

T = TypeVar("T")


def _report_metrics() -> tuple[str, ...]:
    """The metric names the report reads outside the criteria: the roofline's FLOP and DRAM
    counts and the BSP counts of the predictions."""
    from advisor.models.bsp import profile as bsp_profile
    from advisor.report import roofline

    return (*roofline.METRICS, *bsp_profile.METRICS)


#: the metric selection every analysis reads with: the criteria's names and the report's
is_needed = needed.selection(_report_metrics())


class Steps(Protocol):
    """Runs one named step: ``call(label, function, *args, **kwargs) -> result``."""

    def call(self, label: str, function: Callable[..., T], *args: Any, **kwargs: Any) -> T: ...


class _Direct:
    """Runs each step as it is, showing nothing."""

    def call(self, label: str, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return function(*args, **kwargs)


DIRECT: Steps = _Direct()


@dataclass(frozen=True)
class Run:
    """One analysed application run: the merged profile, the device it was analysed with (None
    when it could not be identified, with ``device_note`` saying why) and the analysis."""

    profile: Profile
    characterization: Any
    device_note: str | None
    analysis: Analysis
    #: the analysis as the JSON document ``report --json`` writes
    data: dict[str, Any]
    #: the host view of a PyTorch profiler trace (None for other inputs), built once for the
    #: JSON and the report
    host: HostView | None = None


def read(paths: Sequence[str], steps: Steps = DIRECT) -> Profile:
    """Every path read (only the metrics the analysis uses) and merged as one application run.

    The same file given twice (also as another spelling, a symbolic or a hard link) is a usage
    error (exit 2): merged twice, every launch and every total would count double."""
    check_distinct(paths)
    return merge(
        [
            steps.call(f"parsing {progress.describe(p)}", parsers.read, p, metrics=is_needed)
            for p in paths
        ]
    )


def check_distinct(paths: Sequence[str]) -> None:
    """Refuse a file named twice in ``paths``: the same resolved path (``os.path.realpath``) or
    the same file (device and inode, as ``os.path.samefile``).  A path that cannot be looked up
    is left to the reader, which reports it (exit 3)."""
    seen: dict[object, str] = {}
    for path in paths:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            continue
        for key in (os.path.realpath(path), (info.st_dev, info.st_ino)):
            first = seen.get(key)
            if first is not None:
                also = "" if first == path else f" (as {first} and {path})"
                raise UsageError(
                    f"{path}: the same file is given twice{also}; every input is merged into "
                    "one run, so a repeat would count each launch twice: give it once"
                )
        seen[os.path.realpath(path)] = path
        seen[(info.st_dev, info.st_ino)] = path


def several_gpus(profile: Profile, characterization: Any, option: str | None) -> str | None:
    """The warning for a merged profile that names more than one GPU board (traces of different
    machines given as one run?), else None.  Names the boards and the device every kernel is
    scored with; the same board under two spellings, or two GPUs of one model, is one board."""
    boards: dict[str, str] = {}
    for name in profile_device_names(profile):
        try:
            board = find_device(name).name
        except UsageError:
            board = name
        boards.setdefault(normalize_name(board), board)
    if len(boards) < 2:
        return None
    if characterization is None:
        used = "no GPU could be chosen for them"
    else:
        how = "--device" if option is not None else "the one with the most GPU time"
        used = f"every kernel is scored as running on {characterization.device.name} ({how})"
    return (
        f"the inputs name several GPUs ({', '.join(boards.values())}); {used}; give the traces "
        "of one GPU per report"
    )


def device_for(profile: Profile, option: str | None) -> tuple[Any, str | None]:
    """The characterization to use, and a note when the profile's GPU could not be identified.

    An explicit ``--device`` that cannot be resolved is an error (exit 2); a profile that names
    no GPU, or one the database lacks, is analysed without device facts and the note says so.
    """
    if option is not None:
        return resolve_device(profile, option), None
    try:
        return resolve_device(profile, None), None
    except UsageError as exc:
        return None, f"device not identified ({exc}); device-dependent inputs are missing"


def analyse(
    paths: Sequence[str],
    device: str | None = None,
    speedup_form: str = AMDAHL,
    steps: Steps = DIRECT,
    on_note: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Run:
    """Read ``paths`` as one application run, resolve its device (``--device`` value or the GPU
    the profile names) and score every kernel (:func:`advisor.criteria.evaluate`).

    ``on_note`` receives the device note (if any) as soon as it is known, before the analysis;
    ``on_warning`` (default: ``on_note``) the warning of a profile naming several GPUs
    (:func:`several_gpus`).
    """
    return analyse_profile(read(paths, steps), device, speedup_form, steps, on_note, on_warning)


def analyse_profile(
    profile: Profile,
    device: str | None = None,
    speedup_form: str = AMDAHL,
    steps: Steps = DIRECT,
    on_note: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Run:
    """:func:`analyse` of a profile already read (a benchmark that keeps some launches only)."""
    characterization, note = device_for(profile, device)
    if note and on_note is not None:
        on_note(note)
    warn = on_warning if on_warning is not None else on_note
    if warn is not None:
        warning = several_gpus(profile, characterization, device)
        if warning:
            warn(warning)
    analysis = steps.call(
        f"analysing {len(profile.launches):,} launches",
        evaluate,
        profile,
        characterization,
        speedup_form,
        device_note=note,
    )
    heap.give_back()  # the analysis' freed pages, before the host view and the report
    data = to_json(analysis)
    if any(p.format in ("ncu-rep", "nvprof-db") for p in profile.provenance):  # where, or why not
        from advisor.report.locations import attach

        attach(data, profile)
    from advisor.report.host_view import host_json, host_view

    host = host_view(profile)
    if host is not None:  # a PyTorch profiler trace: its host side (idle split, syncs, operators)
        data["host"] = host_json(host)
    from advisor.communication import communication

    comm = host.communication if host is not None else communication(profile)
    if comm is not None:  # NCCL/RCCL kernels with a timeline, any format: overlap, exposed time
        data["communication"] = comm.to_json()
    return Run(profile, characterization, note, analysis, data, host)


def build(
    run: Run, model_inputs: ModelInputs | None = None, steps: Steps = DIRECT, pages: bool = True
) -> Report:
    """The report's values for ``run`` (:func:`advisor.report.build.build`), with the
    predictions' inputs (``--app``, ``--kernels``) on the run's device.  ``pages``: False
    leaves out what only the HTML and Markdown show (``report --json`` alone)."""
    from advisor.report import build as report
    from advisor.report.predictions import ModelInputs

    inputs = model_inputs if model_inputs is not None else ModelInputs()
    return steps.call(
        "building the report",
        report.build,
        run.analysis,
        run.profile,
        model_inputs=inputs.on(run.characterization),
        locations={
            k["name"]: k["locations"] for k in run.data.get("kernels", ()) if "locations" in k
        },
        host=run.host,
        pages=pages,
    )


def json_text(data: Any) -> str:
    """A JSON document as every output file holds it: sorted keys, two-space indent, no NaN."""
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
