"""``cuda-advisor inspect`` (what each profile holds) and ``cuda-advisor formats`` (the input
formats).  Registered on the ``cuda-advisor`` group by advisor/cli/group.py."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from advisor.cli import loading, options
from advisor.errors import EXIT_INPUT, AdvisorError, one_line

if TYPE_CHECKING:  # pandas loads when the command runs, not for --help
    from advisor.profile import Profile


@click.command(name="inspect")
@click.argument("files", nargs=-1, required=True, type=options.INPUT_PATH)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per input.")
@click.option(
    "--merge", "merge_inputs", is_flag=True, help="Treat all inputs as one application run."
)
def inspect_cmd(files: tuple[str, ...], as_json: bool, merge_inputs: bool) -> None:
    """Show what each profile FILE holds: format, devices, launches, kernels, metrics."""
    with loading.modules():
        import parsers
        from advisor.profile import merge
        from advisor.report.inspect import render_text, summarize

    profiles: list[Profile] = []
    failed = 0
    for path in files:
        try:
            profiles.append(parsers.read(path))
        except AdvisorError as exc:
            if exc.exit_code != EXIT_INPUT:
                raise
            failed += 1
            click.echo(f"cuda-advisor: error: {one_line(str(exc))}", err=True)
    if merge_inputs and profiles:
        profiles = [merge(profiles)]
    summaries = [summarize(p) for p in profiles]
    if as_json:
        click.echo(json.dumps(summaries, indent=2, sort_keys=True, allow_nan=False))
    elif summaries:
        click.echo(render_text(summaries), nl=False)
    if failed:
        sys.exit(EXIT_INPUT)


@click.command(name="formats")
def formats_cmd() -> None:
    """List the input formats cuda-advisor reads."""
    from parsers.registry import known_formats

    for name, description in known_formats():
        click.echo(f"{name:<16} {description}")


COMMANDS: list[click.Command] = [inspect_cmd, formats_cmd]
