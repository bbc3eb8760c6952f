"""``cuda-advisor report`` and ``cuda-advisor metrics``: the criteria engine on the command line.

* ``report FILE... [-o REPORT.html] [--markdown OUT.md] [--json OUT.json] [--device NAME|FILE]
  [--speedup-form amdahl|paper] [--fail-if EXPR ...]`` reads every FILE, merges them as one
  application run (say an nsys timeline and an ncu report), scores every kernel on every
  optimization criterion and writes the analysis as JSON (layout: docs/criteria.md), the
  self-contained HTML report and the Markdown summary (docs/report.md); at least one output is
  required (exit 2).
  The steps are :func:`advisor.pipeline.analyse` and :func:`advisor.pipeline.build`.
  ``--fail-if`` conditions that hold exit with code 4 (advisor/report/gates.py), and so do
  conditions whose value could not be computed unless ``--allow-missing`` is given.  ``--per-file``
  analyses every profile in the FILE folders on its own, in ``--jobs`` processes, into the
  output folders with an index (advisor/cli/batch.py, docs/batch.md); ``--quiet`` drops the
  progress display (advisor/progress.py) and the ``wrote`` lines.
* ``metrics --tool ncu|nvprof`` prints the profiler command that collects every input the
  advisor uses, and the separate timeline command HOSTSYNC needs.

Registered on the ``cuda-advisor`` group by advisor/cli/group.py.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from advisor import disassembly, progress, readahead
from advisor.cli import loading, options
from advisor.devices.database import find_device
from advisor.errors import EXIT_GATE, UnreadableInput, UsageError, one_line
from advisor.output import refuse_inputs, write_atomic
from advisor.report import local_paths

if TYPE_CHECKING:  # the modules that import pandas load when a command runs, not for --help
    from advisor.report.predictions import ModelInputs


@click.command(name="report")
@click.argument("files", nargs=-1, required=True, type=options.INPUT_PATH)
@options.outputs("the report", "the analysis (layout: docs/criteria.md)", folders=True)
@options.device(
    "GPU name from the database or a device characterization JSON file "
    "(default: the GPU the profile names)."
)
@options.speedup_form
@click.option(
    "--fail-if",
    "fail_if",
    multiple=True,
    metavar="EXPR",
    help="CI gate, repeatable: NAME OP NUMBER, e.g. potential_speedup>2 or "
    "SHMEM_EFFICIENCY<0.5 (any kernel); exit code 4 when a condition holds, and also when it "
    "cannot be checked because its value could not be computed (see --allow-missing).",
)
@click.option(
    "--allow-missing",
    "allow_missing",
    is_flag=True,
    help="Let a --fail-if condition pass when its value could not be computed (metrics missing "
    "from the profile, no timeline, no kernel estimate) instead of exiting with code 4; a note "
    "names each condition left unchecked.",
)
@click.option(
    "--sarif",
    "sarif_path",
    type=options.OUTPUT_PATH,
    help="Write the hints as a SARIF 2.1.0 log (GitHub code scanning): one result per hint at "
    "the source line of its waste, where the profile has per-instruction data (docs/locations.md).",
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
@options.quiet(
    "No progress display and no 'wrote' lines; errors, notes and gate failures still print."
)
# -- model inputs of the report's predictions (docs/report.md) --
@click.option(
    "--app",
    "app_path",
    type=options.INPUT_PATH,
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
    type=options.INPUT_PATH,
    help="MAX/SUM kernel description (as predict maxsum --kernel takes).",
)
@click.option(
    "--predict-gpu",
    "predict_gpus",
    multiple=True,
    metavar="NAME[,NAME...]",
    help="Also predict every kernel's time on these GPUs (BSP, calibrated on this run; "
    "as predict bsp --profile).",
)
def report_cmd(
    files: tuple[str, ...],
    html_path: str | None,
    markdown_path: str | None,
    json_path: str | None,
    device: str | None,
    speedup_form: str,
    fail_if: tuple[str, ...],
    allow_missing: bool,
    per_file: bool,
    jobs: int | None,
    quiet: bool,
    app_path: str | None = None,
    app_size: float | None = None,
    kernels_path: str | None = None,
    predict_gpus: tuple[str, ...] = (),
    sarif_path: str | None = None,
) -> None:
    """Score every kernel of the FILEs (one application run) on every optimization criterion
    (docs/criteria.md) and write the report as HTML (-o), Markdown (--markdown) and/or JSON
    (--json).

    With --per-file, every profile in the FILE folders gets its own report, plus an index."""
    if not per_file:
        # SASS disassembled, and a page read, on the other core while the modules load
        disassembly.start(files)
        click.get_current_context().call_on_close(disassembly.stop)
        readahead.start(files)
        click.get_current_context().call_on_close(readahead.drop)
    with loading.modules():
        from advisor import pipeline
        from advisor.report import gates
        from advisor.report.build import verdict_json
        from advisor.report.predictions import other_gpus_json

    _check_sarif(sarif_path, per_file, html_path, markdown_path, json_path)
    if sarif_path is None or any(out is not None for out in (html_path, markdown_path, json_path)):
        options.require_output("report", html_path, markdown_path, json_path, files=not per_file)
    conditions = [gates.parse(expr) for expr in fail_if]
    models = _model_inputs(app_path, app_size, kernels_path, per_file, predict_gpus)
    if per_file:
        from advisor.cli import batch as cli_batch  # modules a single report does not load
        from advisor.report import batch

        outs = (html_path, markdown_path, json_path)
        settings = batch.Settings(device, speedup_form, fail_if, *outs, allow_missing=allow_missing)
        code = cli_batch.report_folder(files, settings, jobs or cli_batch.default_jobs(), quiet)
        raise click.exceptions.Exit(code)
    _check_single(files, jobs, html_path, markdown_path, json_path, sarif_path)
    inputs = options.run_inputs(files, app_path, kernels_path, device)
    refuse_inputs((html_path, markdown_path, json_path, sarif_path), inputs)
    renders = sum(out is not None for out in (html_path, markdown_path))
    bar = progress.for_inputs(files, len(files) + 1 + renders + (renders > 0), quiet)
    run = pipeline.analyse(
        files,
        device,
        speedup_form,
        steps=bar,
        on_note=lambda text: _echo(bar, options.note, text),
        on_warning=lambda text: _echo(bar, options.warning, text),
    )
    data = run.data
    hints = len(data["application"]["hints"])
    folded = data["application"].get("other_kernels") or {}
    kernels = len(data["kernels"]) + int(folded.get("kernels", 0))  # scored + folded
    from advisor.render.display import counted  # (loaded by the report's build anyway)

    tally = f"{counted(kernels, 'kernel')}, {counted(hints, 'hint')}"
    built = None  # the Report, built once for the JSON's carried predictions and the pages
    pages = html_path is not None or markdown_path is not None
    if json_path is not None:
        built = pipeline.build(run, models, steps=bar, pages=pages)
        if models.predict_gpus:  # the carried predictions join the JSON only when asked for
            data = {**data, "bsp_other_gpus": other_gpus_json(built.predictions)}
        # the verdict the HTML and the Markdown render, with each figure named (docs/report.md)
        out = {**data, "verdict": verdict_json(built)}
        text = local_paths.hide(pipeline.json_text(out), inputs)  # no local directory
        write_atomic(json_path, text, inputs=inputs)
        options.say(quiet, f"wrote {json_path}: {tally}")
    if sarif_path is not None:
        from advisor.report.sarif import sarif_log

        log = sarif_log(run.data)
        write_atomic(sarif_path, local_paths.hide(pipeline.json_text(log), inputs), inputs=inputs)
        options.say(quiet, f"wrote {sarif_path}: {len(log['runs'][0]['results'])} results")
    if html_path is not None or markdown_path is not None:
        from advisor.render import report as render  # not loaded for --json alone

        if built is None:
            built = pipeline.build(run, models, steps=bar)
        if html_path is not None:
            html = bar.call(f"rendering {html_path}", render.html, built)
            write_atomic(html_path, local_paths.hide(html, inputs), inputs=inputs)
            options.say(quiet, f"wrote {html_path}: {tally}")
        if markdown_path is not None:
            text = bar.call(f"rendering {markdown_path}", render.markdown, built)
            write_atomic(markdown_path, local_paths.hide(text, inputs), inputs=inputs)
            options.say(quiet, f"wrote {markdown_path}")
    failed, unevaluated = gates.check(conditions, data)
    if allow_missing:
        for line in unevaluated:
            options.note(f"{line}; passed (--allow-missing)")
    else:
        failed += [f"{line}; {gates.ADVICE}" for line in unevaluated]
    gate_exit(failed)


def _echo(bar: progress.Progress, echo: Callable[[str], None], text: str) -> None:
    """A note or warning line, with the progress line erased first."""
    bar.clear()
    echo(text)


def gate_exit(failed: list[str]) -> None:
    """One stderr line per failed CI gate, then exit code 4 if any failed."""
    for line in failed:
        click.echo(f"cuda-advisor: {one_line(line)}", err=True)
    if failed:
        raise click.exceptions.Exit(EXIT_GATE)


def _model_inputs(
    app_path: str | None,
    app_size: float | None,
    kernels_path: str | None,
    per_file: bool,
    predict_gpus: tuple[str, ...] = (),
) -> ModelInputs:
    """The descriptions given for the predictions, read and checked (bad files: exit 3)."""
    from advisor.report.predictions import ModelInputs

    if per_file and (app_path or kernels_path or predict_gpus):
        raise UsageError(
            "report: --app, --kernels and --predict-gpu describe one run; not with --per-file"
        )
    names = options.gpu_names(predict_gpus, "--predict-gpu")
    try:
        gpus = tuple(find_device(n) for n in names)
    except UsageError as exc:
        raise UsageError(f"--predict-gpu: {exc}") from None
    if (app_path is None) != (app_size is None):
        raise UsageError("report: --app FILE and --app-size N go together")
    if app_size is not None and not (math.isfinite(app_size) and app_size > 0):
        raise UsageError(f"--app-size {app_size:g}: must be > 0")
    app = description = None
    if app_path is not None:  # the description readers load only when a description is given
        from advisor.models.bsp.app import read_app

        app = read_app(app_path)
        if app_size is not None:
            app.counts(app_size)  # an expression that fails at N is an input error now
    if kernels_path is not None:
        from advisor.models.maxsum import description as maxsum_input

        description = maxsum_input.load(kernels_path)
    return ModelInputs(
        app=app, app_size=app_size, kernel_description=description, predict_gpus=gpus
    )


def _check_sarif(sarif_path: str | None, per_file: bool, *others: str | None) -> None:
    """``--sarif`` names one file, not a folder of a ``--per-file`` run nor another output
    (exit 2)."""
    if sarif_path is None:
        return
    if per_file:
        raise UsageError(
            "report: --sarif writes one log for one run; it does not go with --per-file"
        )
    for other in others:
        if other is not None and os.path.realpath(other) == os.path.realpath(sarif_path):
            raise UsageError(
                f"{sarif_path}: named for --sarif and for another output; give each its own file"
            )


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
    from advisor.criteria.engine import collect

    main, timeline = collect.everything(tool)
    click.echo("# every metric the advisor uses, in one profiler run (./APP is your program):")
    click.echo(main)
    click.echo("# HOSTSYNC needs a timeline from a second run without kernel replay:")
    click.echo(timeline)


COMMANDS: list[click.Command] = [report_cmd, metrics_cmd]
