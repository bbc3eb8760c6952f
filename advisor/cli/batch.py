"""``cuda-advisor report DIR... --per-file``: the command-line side of :mod:`advisor.report.batch`.

Prints on stderr one line per skipped or failed profile and per failed ``--fail-if`` gate, on
stdout one ``wrote`` line per index (silenced by ``--quiet``), shows progress on large inputs
(:mod:`advisor.progress`) and decides the exit code:

==== ==================================================================================
code when
==== ==================================================================================
0    every profile was reported, or some were and the rest were skipped (listed in the index)
1    a profile failed with an internal error (the others are still reported)
3    no profile could be reported (every file skipped)
4    a ``--fail-if`` condition holds for at least one profile
==== ==================================================================================

When several apply, the first in the order 1, 3, 4 wins.  Usage errors (exit 2) stop the run
before any profile is analysed, except an unusable ``--device``, which stops it at the first
profile.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import click

from advisor import progress
from advisor.cli import options
from advisor.errors import EXIT_GATE, EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, one_line
from advisor.output import write_atomic
from advisor.render import batch_index
from advisor.report import batch


def report_folder(paths: Sequence[str], settings: batch.Settings, jobs: int, quiet: bool) -> int:
    """Analyse every profile under ``paths``, write the reports and indexes; the exit code."""
    folders = settings.folders()
    todo = batch.find_profiles(paths, exclude=list(folders.values()))
    batch.check_outputs(todo, settings)
    bar = progress.for_inputs([job.path for job in todo], len(todo), quiet)

    def done(job: batch.Job, entry: batch.Entry, count: int) -> None:
        if entry.status != batch.STATUS_REPORTED:
            bar.clear()
            line = f"cuda-advisor: {entry.status} {job.path}: {entry.reason}"
            click.echo(one_line(line), err=True)
        for line in entry.gate_failures:
            bar.clear()
            click.echo(one_line(f"cuda-advisor: {job.path}: {line}"), err=True)
        bar.advance(f"analysed {progress.describe(job.path)}")

    bar.show(f"analysing {len(todo)} profiles")
    try:
        entries = batch.run(todo, settings, jobs, on_done=done)
    finally:
        bar.clear()
    inputs = options.run_inputs([job.path for job in todo], settings.device)
    counts = batch_index.counts(entries)
    texts = {
        "html": lambda: batch_index.html(entries, settings.speedup_form),
        "markdown": lambda: batch_index.markdown(entries, settings.speedup_form),
        "json": lambda: batch_index.to_json(entries, settings.speedup_form, settings.device),
    }
    for kind, folder in folders.items():
        target = os.path.join(folder, batch.INDEX_STEM + batch.SUFFIXES[kind])
        write_atomic(target, texts[kind](), inputs=inputs)
        if not quiet:
            click.echo(f"wrote {target}: {counts.sentence}")
    if counts.failed:
        return EXIT_INTERNAL
    if not counts.reported:
        return EXIT_INPUT
    if any(e.gate_failures for e in entries):
        return EXIT_GATE
    return EXIT_OK


def default_jobs() -> int:
    """One worker per CPU core."""
    return os.cpu_count() or 1
