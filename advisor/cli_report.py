"""``cuda-advisor report`` and ``cuda-advisor metrics``: the criteria engine on the command line.

* ``report FILE... [-o REPORT.html] [--markdown OUT.md] [--json OUT.json] [--device NAME|FILE]
  [--speedup-form amdahl|paper] [--fail-if EXPR ...]`` reads every FILE, merges them as one
  application run (say an nsys timeline and an ncu report), scores every kernel on the nine
  criteria and writes the analysis as JSON (layout: docs/criteria.md), the self-contained HTML
  report and the Markdown summary (docs/report.md); at least one output is required (exit 2).
  ``--fail-if`` conditions that hold exit with code 4 (advisor/gates.py).
* ``metrics --tool ncu|nvprof`` prints the profiler command that collects every input the
  advisor uses, and the separate timeline command HOSTSYNC needs.

Registered on the ``cuda-advisor`` group by advisor/cli.py.
"""

from __future__ import annotations

import json
from typing import Any

import click

import parsers
from advisor import compare, gates, render, render_compare, report
from advisor.criteria import collect, evaluate
from advisor.criteria.analysis import _clean, to_json
from advisor.criteria.speedups import AMDAHL, SPEEDUP_FORMS
from advisor.devices import resolve_device
from advisor.errors import EXIT_GATE, UsageError
from advisor.output import write_atomic
from advisor.profile import Profile, merge


@click.command(name="report")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option(
    "-o",
    "--output",
    "html_path",
    type=click.Path(dir_okay=False),
    help="Write the report as one self-contained HTML file.",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False),
    help="Write a GitHub-flavoured Markdown summary (for a pull-request comment).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Write the analysis as JSON to this file (layout: docs/criteria.md).",
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
def report_cmd(
    files: tuple[str, ...],
    html_path: str | None,
    markdown_path: str | None,
    json_path: str | None,
    device: str | None,
    speedup_form: str,
    fail_if: tuple[str, ...],
) -> None:
    """Score every kernel of the FILEs (one application run) on the nine optimization criteria
    and write the report as HTML (-o), Markdown (--markdown) and/or JSON (--json)."""
    if html_path is None and markdown_path is None and json_path is None:
        raise UsageError(
            "report: give at least one output: -o REPORT.html, --markdown OUT.md or --json OUT.json"
        )
    conditions = [gates.parse(expr) for expr in fail_if]
    profile = merge([parsers.read(path) for path in files])
    characterization, note = _device(profile, device)
    if note:
        click.echo(f"cuda-advisor: note: {note}", err=True)
    analysis = evaluate(profile, characterization, speedup_form, device_note=note)
    data = to_json(analysis)
    hints = len(data["application"]["hints"])
    if json_path is not None:
        text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
        write_atomic(json_path, text, inputs=files)
        click.echo(f"wrote {json_path}: {len(data['kernels'])} kernels, {hints} hints")
    if html_path is not None or markdown_path is not None:
        built = report.build(analysis, profile)
        if html_path is not None:
            write_atomic(html_path, render.html(built), inputs=files)
            click.echo(f"wrote {html_path}: {len(data['kernels'])} kernels, {hints} hints")
        if markdown_path is not None:
            write_atomic(markdown_path, render.markdown(built), inputs=files)
            click.echo(f"wrote {markdown_path}")
    failed = gates.failures(conditions, data)
    for line in failed:
        click.echo(f"cuda-advisor: {line}", err=True)
    if failed:
        raise click.exceptions.Exit(EXIT_GATE)


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
    help="One tuning version, repeatable, in order: NAME=FILE[,FILE...] or NAME=FOLDER.",
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
def compare_cmd(
    versions: tuple[str, ...],
    html_path: str | None,
    markdown_path: str | None,
    json_path: str | None,
    device: str | None,
    speedup_form: str,
    max_regression: float | None,
) -> None:
    """Compare tuning versions of one application: kernels matched by name, measured speedups,
    criteria across versions and the prediction ledger."""
    if html_path is None and markdown_path is None and json_path is None:
        raise UsageError(
            "compare: give at least one output: -o OUT.html, --markdown OUT.md or --json OUT.json"
        )
    if max_regression is not None and max_regression < 0:
        raise UsageError(f"--max-regression {max_regression:g}: must be at least 0")
    analysed = []
    inputs: list[str] = []
    for text in versions:
        name, files = compare.parse_version(text)
        profile = merge([parsers.read(path) for path in files])
        characterization, note = _device(profile, device)
        if note:
            click.echo(f"cuda-advisor: note: {name}: {note}", err=True)
        data = to_json(evaluate(profile, characterization, speedup_form, device_note=note))
        analysed.append((name, files, data))
        inputs += files
    result = compare.compare(analysed)
    if json_path is not None:
        text = json.dumps(
            _clean(compare.to_json(result)), indent=2, sort_keys=True, allow_nan=False
        )
        write_atomic(json_path, text + "\n", inputs=inputs)
        click.echo(f"wrote {json_path}")
    if html_path is not None:
        write_atomic(html_path, render_compare.html(result), inputs=inputs)
        click.echo(f"wrote {html_path}")
    if markdown_path is not None:
        write_atomic(markdown_path, render_compare.markdown(result), inputs=inputs)
        click.echo(f"wrote {markdown_path}")
    failed = [] if max_regression is None else compare.regressions(result, max_regression)
    for line in failed:
        click.echo(f"cuda-advisor: {line}", err=True)
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
