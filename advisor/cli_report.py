"""``cuda-advisor report`` and ``cuda-advisor metrics``: the criteria engine on the command line.

* ``report FILE... --json OUT.json [--device NAME|FILE] [--speedup-form amdahl|paper]`` reads
  every FILE, merges them as one application run (say an nsys timeline and an ncu report), scores
  every kernel on the nine criteria and writes the analysis as JSON (layout: docs/criteria.md).
  Only the JSON output exists so far; without ``--json`` the command says so (exit 2).
* ``metrics --tool ncu|nvprof`` prints the profiler command that collects every input the
  advisor uses, and the separate timeline command HOSTSYNC needs.

Registered on the ``cuda-advisor`` group by advisor/cli.py.
"""

from __future__ import annotations

import json
from typing import Any

import click

import parsers
from advisor.criteria import collect, evaluate
from advisor.criteria.analysis import to_json
from advisor.criteria.speedups import AMDAHL, SPEEDUP_FORMS
from advisor.devices import resolve_device
from advisor.errors import UsageError
from advisor.output import write_atomic
from advisor.profile import Profile, merge


@click.command(name="report")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Write the analysis as JSON to this file (the only output format so far).",
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
def report_cmd(
    files: tuple[str, ...], json_path: str | None, device: str | None, speedup_form: str
) -> None:
    """Score every kernel of the FILEs (one application run) on the nine optimization criteria."""
    if json_path is None:
        raise UsageError(
            "report: only JSON output exists so far; give --json OUT.json "
            "(the HTML report is not available yet)"
        )
    profile = merge([parsers.read(path) for path in files])
    characterization, note = _device(profile, device)
    if note:
        click.echo(f"cuda-advisor: note: {note}", err=True)
    analysis = evaluate(profile, characterization, speedup_form, device_note=note)
    data = to_json(analysis)
    text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
    write_atomic(json_path, text, inputs=files)
    hints = len(data["application"]["hints"])
    click.echo(f"wrote {json_path}: {len(data['kernels'])} kernels, {hints} hints")


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


COMMANDS: list[click.Command] = [report_cmd, metrics_cmd]
