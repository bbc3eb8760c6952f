"""``cuda-advisor report DIR... --per-file``: one report per profile, in parallel, plus an index.

Every file under the folders (recursively, hidden files and folders and the output folders left
out) is analysed on its own, exactly as ``report FILE`` would analyse it (same reader, device
resolution, criteria engine and renderers, so the per-profile files are byte-identical to those
``report FILE`` writes).  Each profile runs in its own worker process
(:class:`concurrent.futures.ProcessPoolExecutor`, ``jobs`` workers; ``jobs=1`` runs in this
process), and writes its own outputs; the index is written last, from the results sorted by path,
so the same inputs give byte-identical outputs whatever ``jobs`` is.

Output names: the profile's path relative to the folder given (several folders: relative to their
common parent), with ``/`` replaced by ``__``, plus ``.html`` / ``.md`` / ``.json``; a name that
clashes with another (case-insensitively) or with ``index`` gets ``-2``, ``-3``... in path order.

A file that no reader accepts (unrecognised, malformed, no kernel data: an
:class:`~advisor.errors.InputError`) is *skipped*: listed in the index with its one-line reason
and on stderr, never fatal.  A bug met while analysing one profile marks it *failed* and the
others still run.  Rendering of the index: :mod:`advisor.render.batch_index`.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor import pipeline
from advisor.errors import AdvisorError, InputError, UnreadableInput, UsageError
from advisor.output import write_atomic
from advisor.render import report as render
from advisor.render.display import shorten
from advisor.report import gates, local_paths
from advisor.report.build import verdict_json

#: a path's folder separator is replaced by this in output file names
NAME_SEPARATOR = "__"
#: the stem of the index files (reserved: no report is given this name)
INDEX_STEM = "index"
#: file name suffix of each output kind
SUFFIXES = {"html": ".html", "markdown": ".md", "json": ".json"}

STATUS_REPORTED = "reported"
STATUS_SKIPPED = "skipped"
STATUS_FAILED = "failed"


@dataclass(frozen=True)
class Settings:
    """What every profile is analysed with and where its outputs go (folders; None: not written)."""

    device: str | None
    speedup_form: str
    fail_if: tuple[str, ...]
    html_dir: str | None
    markdown_dir: str | None
    json_dir: str | None
    allow_missing: bool = False  # gates that cannot be evaluated pass (report --allow-missing)

    def folders(self) -> dict[str, str]:
        """The output folders asked for, by output kind."""
        asked = {"html": self.html_dir, "markdown": self.markdown_dir, "json": self.json_dir}
        return {kind: folder for kind, folder in asked.items() if folder is not None}


@dataclass(frozen=True)
class Job:
    """One profile to analyse."""

    path: str  # as handed to the reader: the folder as given joined with the path inside it
    rel: str  # shown in the index: relative to the common folder, "/"-separated
    name: str  # output file stem


@dataclass(frozen=True)
class Entry:
    """One row of the index: the outcome of one profile."""

    rel: str
    name: str
    status: str  # STATUS_REPORTED | STATUS_SKIPPED | STATUS_FAILED
    reason: str | None = None
    format: str | None = None
    kernels: int | None = None
    launches: int | None = None
    gpu_time_ns: float | None = None
    potential_speedup: float | None = None
    hints: int | None = None
    top_hint: str | None = None
    gate_failures: tuple[str, ...] = ()
    device_note: str | None = None
    usage_error: bool = False  # the reason is a usage error meant for the whole command


def find_profiles(paths: Sequence[str], exclude: Sequence[str] = ()) -> list[Job]:
    """The files under ``paths`` (folders, searched recursively, or files), sorted by path.

    Hidden files and folders (name starting with ``.``) and the ``exclude`` folders (the output
    folders) are left out; a file reached twice is listed once.  A path that does not exist is an
    :class:`UnreadableInput`; folders with no file at all are one too.
    """
    excluded = {os.path.realpath(p) for p in exclude}
    found: dict[str, str] = {}  # real path -> path as handed to the reader
    roots: list[str] = []
    for arg in paths:
        if os.path.isdir(arg):
            if os.path.realpath(arg) in excluded:
                raise UsageError(f"{arg}: is also an output folder; choose another output folder")
            roots.append(os.path.abspath(arg))
            for full in _walk(arg, excluded):
                found.setdefault(os.path.realpath(full), full)
        elif os.path.exists(arg):
            roots.append(os.path.dirname(os.path.abspath(arg)))
            found.setdefault(os.path.realpath(arg), arg)
        else:
            raise UnreadableInput(arg, "no such file or folder")
    if not found:
        raise UnreadableInput(", ".join(paths), "no files found (hidden files are left out)")
    base = os.path.commonpath(roots)
    rels = {path: os.path.relpath(os.path.abspath(path), base) for path in found.values()}
    ordered = sorted(found.values(), key=lambda p: (rels[p].replace(os.sep, "/"), p))
    names = _unique_names([rels[p].replace(os.sep, NAME_SEPARATOR) for p in ordered])
    return [
        Job(path=p, rel=rels[p].replace(os.sep, "/"), name=n)
        for p, n in zip(ordered, names, strict=True)
    ]


def _walk(folder: str, excluded: set[str]) -> list[str]:
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and os.path.realpath(os.path.join(dirpath, d)) not in excluded
        )
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if not name.startswith(".") and os.path.isfile(full):
                files.append(full)
    return files


def _unique_names(stems: list[str]) -> list[str]:
    """``stems`` with case-insensitive clashes (and the index's name) suffixed -2, -3, ..."""
    taken = {INDEX_STEM}
    names = []
    for stem in stems:
        name, n = stem, 1
        while name.casefold() in taken:
            n += 1
            name = f"{stem}-{n}"
        taken.add(name.casefold())
        names.append(name)
    return names


def check_outputs(jobs: Sequence[Job], settings: Settings) -> None:
    """Create the output folders; refuse any output that would replace an input file."""
    inputs = {os.path.realpath(job.path) for job in jobs}
    for kind, folder in settings.folders().items():
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise UsageError(f"{folder}: not a folder; with --per-file the outputs are folders")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{folder}: cannot create the output folder: {exc.strerror}") from exc
        real = os.path.realpath(folder)
        for stem in [INDEX_STEM, *(job.name for job in jobs)]:
            target = os.path.join(real, stem + SUFFIXES[kind])
            if target in inputs:
                raise UsageError(
                    f"{os.path.join(folder, stem + SUFFIXES[kind])}: refusing to overwrite an "
                    "input file; choose another output folder"
                )


def analyse_one(job: Job, settings: Settings) -> Entry:
    """Analyse one profile and write its outputs; never raises (the outcome is the Entry).

    The same calls as ``report FILE`` (advisor/cli/report.py), so the files are the same bytes.
    """
    try:
        run = pipeline.analyse([job.path], settings.device, settings.speedup_form)
        data, note = run.data, run.device_note
        folders = settings.folders()
        pages = "html" in folders or "markdown" in folders
        built = pipeline.build(run, pages=pages)  # as report FILE (no --app/--kernels here)
        if "json" in folders:
            verdict = {"verdict": verdict_json(built)}  # as report FILE --json
            _write(folders["json"], job, "json", pipeline.json_text({**data, **verdict}))
        if "html" in folders or "markdown" in folders:
            if "html" in folders:
                _write(folders["html"], job, "html", render.html(built))
            if "markdown" in folders:
                _write(folders["markdown"], job, "markdown", render.markdown(built))
        conditions = [gates.parse(e) for e in settings.fail_if]
        failed = gates.failures(conditions, data, allow_missing=settings.allow_missing)
    except InputError as exc:
        where = f"line {exc.line}: " if exc.line is not None else ""
        return Entry(job.rel, job.name, STATUS_SKIPPED, reason=_one_line(where + exc.detail))
    except AdvisorError as exc:
        usage = isinstance(exc, UsageError)
        return Entry(job.rel, job.name, STATUS_FAILED, _one_line(str(exc)), usage_error=usage)
    except Exception as exc:
        reason = f"internal error: {type(exc).__name__}: {exc} (rerun it alone with --debug)"
        return Entry(job.rel, job.name, STATUS_FAILED, reason=_one_line(reason))
    return _entry(job, data, tuple(failed), note)


def _write(folder: str, job: Job, kind: str, text: str) -> None:
    text = local_paths.hide(text, (job.path,))  # no directory of this machine in the output
    write_atomic(os.path.join(folder, job.name + SUFFIXES[kind]), text, inputs=(job.path,))


def _entry(job: Job, data: Mapping[str, Any], failed: tuple[str, ...], note: str | None) -> Entry:
    app = data["application"]
    formats = sorted({str(i.get("format")) for i in data["inputs"]})
    modes = sorted({str(m) for i in data["inputs"] for m in i.get("modes") or ()})
    fmt = ", ".join(formats) + (f" ({', '.join(modes)})" if modes else "")
    top = app["hints"][0] if app["hints"] else None
    return Entry(
        job.rel,
        job.name,
        STATUS_REPORTED,
        format=fmt,
        kernels=app["kernels"],
        launches=app["launches"],
        gpu_time_ns=app["gpu_time_ns"],
        potential_speedup=app["potential_speedup"],
        hints=len(app["hints"]),
        top_hint=None if top is None else _hint_text(top),
        gate_failures=failed,
        device_note=note,
    )


def _hint_text(hint: Mapping[str, Any]) -> str:
    count = hint.get("kernel_count") or 0
    if count > 1:
        where = f"{count} kernels ({shorten(hint['kernel'])}, …): "
    else:
        where = f"{shorten(hint['kernel'])}: " if hint.get("kernel") else ""
    value = hint.get("value")
    shown = "n/a" if value is None else f"{value:.2f}"
    return f"{where}{hint['title']} [{hint['criterion']} = {shown}]"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def run(
    jobs: Sequence[Job],
    settings: Settings,
    workers: int,
    on_done: Callable[[Job, Entry, int], None] | None = None,
) -> list[Entry]:
    """Every job's Entry, in ``jobs`` order; ``on_done(job, entry, count)`` after each, in order.

    ``workers == 1`` runs in this process; otherwise a pool of ``min(workers, len(jobs))``
    processes.  A worker process that dies (killed for memory, say) fails its profile only.
    A usage error (say an unknown ``--device``) stops the run and is raised.
    """
    entries: list[Entry] = []

    def collect(job: Job, entry: Entry) -> None:
        if entry.usage_error:
            raise UsageError(entry.reason or "usage error")
        entries.append(entry)
        if on_done is not None:
            on_done(job, entry, len(entries))

    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            collect(job, analyse_one(job, settings))
        return entries
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        futures = [pool.submit(analyse_one, job, settings) for job in jobs]
        try:
            for job, future in zip(jobs, futures, strict=True):
                collect(job, _result(job, future))
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return entries


def _result(job: Job, future: concurrent.futures.Future[Entry]) -> Entry:
    try:
        return future.result()
    except concurrent.futures.process.BrokenProcessPool:
        reason = "the worker process died (out of memory?); rerun with --jobs 1 or alone"
    except Exception as exc:
        reason = f"internal error: {type(exc).__name__}: {exc}"
    return Entry(job.rel, job.name, STATUS_FAILED, reason=_one_line(reason))
