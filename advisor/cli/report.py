"""``cuda-advisor report`` and ``cuda-advisor metrics``: the criteria engine on the command line.

* ``report FILE... [-o REPORT.html] [--markdown OUT.md] [--json OUT.json] [--device NAME|FILE]
  [--speedup-form amdahl|paper] [--fail-if EXPR ...]`` reads every FILE, merges them as one
  application run (say an nsys timeline and an ncu report), scores every kernel on the nine
  criteria and writes the analysis as JSON (layout: docs/criteria.md), the self-contained HTML
  report and the Markdown summary (docs/report.md); at least one output is required (exit 2).
  ``--fail-if`` conditions that hold exit with code 4 (advisor/report/gates.py).  ``--per-file``
  analyses every profile in the FILE folders on its own, in ``--jobs`` processes, into the
  output folders with an index (advisor/cli/batch.py, docs/batch.md); ``--quiet`` drops the
  progress display (advisor/progress.py) and the ``wrote`` lines.
* ``metrics --tool ncu|nvprof`` prints the profiler command that collects every input the
  advisor uses, and the separate timeline command HOSTSYNC needs.

Registered on the ``cuda-advisor`` group by advisor/cli/group.py.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import click

import parsers
from advisor import progress
from advisor.criteria import evaluate
from advisor.criteria.engine import collect
from advisor.criteria.engine.analysis import _clean, to_json
from advisor.criteria.engine.needed import is_needed
from advisor.criteria.engine.speedups import AMDAHL, SPEEDUP_FORMS
from advisor.devices.resolve import resolve_device
from advisor.errors import EXIT_GATE, UnreadableInput, UsageError, one_line
from advisor.models.bsp.app import read_app
from advisor.models.maxsum import description as maxsum_input
from advisor.output import write_atomic
from advisor.profile import Profile, merge
from advisor.report import gates
from advisor.report.predictions import ModelInputs


@click.command(name="report")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option(
    "-o",
    "--output",
    "html_path",
    type=click.Path(),
    help="Write the report as one self-contained HTML file (with --per-file: a folder).",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(),
    help="Write a GitHub-flavoured Markdown summary (for a pull-request comment; with "
    "--per-file: a folder).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(),
    help="Write the analysis as JSON to this file (layout: docs/criteria.md; with --per-file: "
    "a folder).",
)
@click.option(
    "--device",
    "device",
    metavar="NAME|FILE",
    help="GPU name from the database or a device characterization JSON file "
    "(default: the GPU the profile names).",
)
@click.option(
    "--speedup-form",
    type=click.Choice(SPEEDUP_FORMS),
    default=AMDAHL,
    show_default=True,
    help="Potential speedups of L1/L2 granularity, shared memory and device sync: the Amdahl "
    "form (Decisions 3-4) or the paper's literal formula.",
)
@click.option(
    "--fail-if",
    "fail_if",
    multiple=True,
    metavar="EXPR",
    help="CI gate, repeatable: NAME OP NUMBER, e.g. potential_speedup>2 or "
    "SHMEM_EFFICIENCY<0.5 (any kernel); exit code 4 when a condition holds.",
)
# -- batch mode and progress (docs/batch.md) --
@click.option(
    "--per-file",
    "per_file",
    is_flag=True,
    help="Analyse every profile in the FILE folders (recursively) on its own, in parallel, "
    "writing one report per profile and an index into the -o/--markdown/--json folders.",
)
@click.option(
    "--jobs",
    "jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --per-file: worker processes (default: one per CPU core; 1 runs in-process).",
)
@click.option(
    "-q",
    "--quiet",
    "quiet",
    is_flag=True,
    help="No progress display and no 'wrote' lines; errors, notes and gate failures still print.",
)
# -- model inputs of the report's predictions (docs/report.md) --
@click.option(
    "--app",
    "app_path",
    type=click.Path(dir_okay=False),
    help="BSP application description (as predict bsp --app takes); needs --app-size.",
)
@click.option(
    "--app-size",
    "app_size",
    type=float,
    metavar="N",
    help="The input size N of the profiled run, for --app's expressions.",
)
@click.option(
    "--kernels",
    "kernels_path",
    type=click.Path(dir_okay=False),
    help="MAX/SUM kernel description (as predict maxsum --kernel takes).",
)
def report_cmd(
    files: tuple[str, ...],
    html_path: str | None,
    markdown_path: str | None,
    json_path: str | None,
    device: str | None,
    speedup_form: str,
    fail_if: tuple[str, ...],
    per_file: bool,
    jobs: int | None,
    quiet: bool,
    app_path: str | None = None,
    app_size: float | None = None,
    kernels_path: str | None = None,
) -> None:
    """Score every kernel of the FILEs (one application run) on the nine optimization criteria
    and write the report as HTML (-o), Markdown (--markdown) and/or JSON (--json).

    With --per-file, every profile in the FILE folders gets its own report, plus an index."""
    if html_path is None and markdown_path is None and json_path is None:
        raise UsageError(
            "report: give at least one output: -o REPORT.html, --markdown OUT.md or --json OUT.json"
        )
    conditions = [gates.parse(expr) for expr in fail_if]
    models = _model_inputs(app_path, app_size, kernels_path, per_file)
    if per_file:
        from advisor.cli import batch as cli_batch
        from advisor.report import batch

        outs = (html_path, markdown_path, json_path)
        settings = batch.Settings(device, speedup_form, fail_if, *outs)
        code = cli_batch.report_folder(files, settings, jobs or cli_batch.default_jobs(), quiet)
        raise click.exceptions.Exit(code)
    _check_single(files, jobs, html_path, markdown_path, json_path)
    renders = sum(out is not None for out in (html_path, markdown_path))
    bar = progress.for_inputs(files, len(files) + 1 + renders + (renders > 0), quiet)
    profile = merge(
        [
            bar.call(f"parsing {progress.describe(p)}", parsers.read, p, metrics=is_needed)
            for p in files
        ]
    )
    characterization, note = _device(profile, device)
    if note:
        click.echo(f"cuda-advisor: note: {one_line(note)}", err=True)
    analysis = bar.call(
        f"analysing {len(profile.launches):,} launches",
        evaluate,
        profile,
        characterization,
        speedup_form,
        device_note=note,
    )
    data = to_json(analysis)
    hints = len(data["application"]["hints"])
    if json_path is not None:
        text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
        write_atomic(json_path, text, inputs=files)
        _say(quiet, f"wrote {json_path}: {len(data['kernels'])} kernels, {hints} hints")
    if html_path is not None or markdown_path is not None:
        from advisor.render import report as render
        from advisor.report import build as report

        built = bar.call(
            "building the report",
            report.build,
            analysis,
            profile,
            model_inputs=models.on(characterization),
        )
        if html_path is not None:
            html = bar.call(f"rendering {html_path}", render.html, built)
            write_atomic(html_path, html, inputs=files)
            _say(quiet, f"wrote {html_path}: {len(data['kernels'])} kernels, {hints} hints")
        if markdown_path is not None:
            text = bar.call(f"rendering {markdown_path}", render.markdown, built)
            write_atomic(markdown_path, text, inputs=files)
            _say(quiet, f"wrote {markdown_path}")
    failed = gates.failures(conditions, data)
    for line in failed:
        click.echo(f"cuda-advisor: {one_line(line)}", err=True)
    if failed:
        raise click.exceptions.Exit(EXIT_GATE)


def _model_inputs(
    app_path: str | None, app_size: float | None, kernels_path: str | None, per_file: bool
) -> ModelInputs:
    """The descriptions given for the predictions, read and checked (bad files: exit 3)."""
    if per_file and (app_path or kernels_path):
        raise UsageError("report: --app and --kernels describe one run; not with --per-file")
    if (app_path is None) != (app_size is None):
        raise UsageError("report: --app FILE and --app-size N go together")
    if app_size is not None and not (math.isfinite(app_size) and app_size > 0):
        raise UsageError(f"--app-size {app_size:g}: must be > 0")
    app = read_app(app_path) if app_path is not None else None
    if app is not None and app_size is not None:
        app.counts(app_size)  # an expression that fails at N is an input error now
    description = maxsum_input.load(kernels_path) if kernels_path is not None else None
    return ModelInputs(app=app, app_size=app_size, kernel_description=description)


def _check_single(files: tuple[str, ...], jobs: int | None, *outputs: str | None) -> None:
    """Without --per-file: FILEs are files and outputs are file names (exit 3 / exit 2)."""
    if jobs is not None:
        raise UsageError("report: --jobs works with --per-file only")
    for path in files:
        if os.path.isdir(path):
            raise UnreadableInput(
                path, "is a folder; give its profile files, or --per-file for one report per file"
            )
    for out in outputs:
        if out is not None and os.path.isdir(out):
            raise UsageError(f"{out}: is a folder; give a file name (folders go with --per-file)")


def _say(quiet: bool, line: str) -> None:
    """An informational line on stdout, silenced by --quiet."""
    if not quiet:
        click.echo(line)


def _device(profile: Profile, option: str | None) -> tuple[Any, str | None]:
    """The characterization to use, and a note when the profile's GPU could not be identified.

    An explicit ``--device`` that cannot be resolved is an error (exit 2); a profile that names
    no GPU, or one the database lacks, is analysed without device facts and the JSON says so.
    """
    if option is not None:
        return resolve_device(profile, option), None
    try:
        return resolve_device(profile, None), None
    except UsageError as exc:
        return None, f"device not identified ({exc}); device-dependent inputs are missing"


@click.command(name="compare")
@click.option(
    "--version",
    "versions",
    multiple=True,
    required=True,
    metavar="NAME=FILES",
    help="One tuning version, repeatable, in order: NAME=FILE[,FILE...] or NAME=FOLDER, or "
    "NAME=ANALYSIS.json (a saved report --json output).",
)
@click.option(
    "-o",
    "--output",
    "html_path",
    type=click.Path(dir_okay=False),
    help="Write the comparison as one self-contained HTML file.",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False),
    help="Write a GitHub-flavoured Markdown summary.",
)
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), help="Write the comparison as JSON."
)
@click.option(
    "--device",
    "device",
    metavar="NAME|FILE",
    help="GPU name or characterization file for every version.",
)
@click.option(
    "--speedup-form",
    type=click.Choice(SPEEDUP_FORMS),
    default=AMDAHL,
    show_default=True,
    help="As for report.",
)
@click.option(
    "--max-regression",
    "max_regression",
    type=float,
    metavar="PCT",
    help="CI gate: exit code 4 when a kernel is slower than in the previous version "
    "by more than PCT percent.",
)
@click.option(
    "-q", "--quiet", "quiet", is_flag=True, help="No 'wrote' lines; errors and notes still print."
)
def compare_cmd(
    versions: tuple[str, ...],
    html_path: str | None,
    markdown_path: str | None,
    json_path: str | None,
    device: str | None,
    speedup_form: str,
    max_regression: float | None,
    quiet: bool = False,
) -> None:
    """Compare tuning versions of one application: kernels matched by name, measured speedups,
    criteria across versions and the prediction ledger."""
    if html_path is None and markdown_path is None and json_path is None:
        raise UsageError(
            "compare: give at least one output: -o OUT.html, --markdown OUT.md or --json OUT.json"
        )
    if max_regression is not None and max_regression < 0:
        raise UsageError(f"--max-regression {max_regression:g}: must be at least 0")
    from advisor.render import compare as render_compare
    from advisor.report import compare

    analysed = []
    inputs: list[str] = []
    for text in versions:
        name, files = compare.parse_version(text)
        saved = [path for path in files if compare.looks_like_json(path)]
        if saved and len(files) > 1:
            raise UsageError(
                f"--version {name}: {saved[0]} is a saved analysis; it must be the version's "
                "only file (give either one report --json output or profiler files)"
            )
        if saved:
            data = compare.read_analysis(saved[0], speedup_form)
        else:
            profile = merge([parsers.read(path, metrics=is_needed) for path in files])
            characterization, note = _device(profile, device)
            if note:
                click.echo(f"cuda-advisor: note: {one_line(f'{name}: {note}')}", err=True)
            data = to_json(evaluate(profile, characterization, speedup_form, device_note=note))
        analysed.append((name, files, data))
        inputs += files
    result = compare.compare(analysed)
    if json_path is not None:
        text = json.dumps(
            _clean(compare.to_json(result)), indent=2, sort_keys=True, allow_nan=False
        )
        write_atomic(json_path, text + "\n", inputs=inputs)
        _say(quiet, f"wrote {json_path}")
    if html_path is not None:
        write_atomic(html_path, render_compare.html(result), inputs=inputs)
        _say(quiet, f"wrote {html_path}")
    if markdown_path is not None:
        write_atomic(markdown_path, render_compare.markdown(result), inputs=inputs)
        _say(quiet, f"wrote {markdown_path}")
    failed = [] if max_regression is None else compare.regressions(result, max_regression)
    for line in failed:
        click.echo(f"cuda-advisor: {one_line(line)}", err=True)
    if failed:
        raise click.exceptions.Exit(EXIT_GATE)


@click.command(name="metrics")
@click.option(
    "--tool",
    type=click.Choice(("ncu", "nvprof")),
    default="ncu",
    show_default=True,
    help="Nsight Compute (Volta and later) or nvprof (Kepler to Volta).",
)
def metrics_cmd(tool: str) -> None:
    """Print the profiler command that collects everything the advisor uses."""
    main, timeline = collect.everything(tool)
    click.echo("# every metric the advisor uses, in one profiler run (./APP is your program):")
    click.echo(main)
    click.echo("# HOSTSYNC needs a timeline from a second run without kernel replay:")
    click.echo(timeline)


COMMANDS: list[click.Command] = [report_cmd, compare_cmd, metrics_cmd]
