"""Options shared by several commands, declared once.

Each entry is a decorator (or a factory of one) that adds the option with the same flags,
destination name, type and help wherever it appears: the output trio ``-o/--markdown/--json`` of
``report`` and ``compare``, ``--device``, ``--speedup-form``, ``-q/--quiet`` and ``--json`` as a
print-JSON flag.  A command states what is particular to it (``report --per-file`` takes folders
as outputs) through the factory's arguments, never by copying an option block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from advisor.criteria.engine.speedups import AMDAHL, SPEEDUP_FORMS
from advisor.errors import UsageError, one_line

F = TypeVar("F", bound=Callable[..., Any])


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """The decorators applied in the order given (the first is the first option in --help)."""

    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def outputs(what: str, json_what: str, folders: bool = False) -> Callable[[F], F]:
    """``-o/--output`` (HTML of ``what``), ``--markdown`` and ``--json`` (``json_what``).

    With ``folders``, each may also name a folder (``report --per-file``)."""
    kind = click.Path() if folders else click.Path(dir_okay=False)
    also = " (with --per-file: a folder)" if folders else ""
    return _stack(
        click.option(
            "-o",
            "--output",
            "html_path",
            type=kind,
            help=f"Write {what} as one self-contained HTML file{also}.",
        ),
        click.option(
            "--markdown",
            "markdown_path",
            type=kind,
            help=f"Write a GitHub-flavoured Markdown summary (for a pull-request comment){also}.",
        ),
        click.option(
            "--json",
            "json_path",
            type=kind,
            help=f"Write {json_what} as JSON to this file{also}.",
        ),
    )


def device(help_text: str) -> Callable[[F], F]:
    """``--device NAME|FILE``: a GPU of the database or a characterization file."""
    return click.option("--device", "device", metavar="NAME|FILE", help=help_text)


speedup_form: Callable[[F], F] = click.option(
    "--speedup-form",
    type=click.Choice(SPEEDUP_FORMS),
    default=AMDAHL,
    show_default=True,
    help="Potential speedups of L1/L2 granularity, shared memory and device sync: the Amdahl "
    "form (Decisions 3-4) or the paper's literal formula.",
)


def quiet(help_text: str) -> Callable[[F], F]:
    """``-q/--quiet``: fewer lines on the terminal; errors and notes still print."""
    return click.option("-q", "--quiet", "quiet", is_flag=True, help=help_text)


def print_json(help_text: str = "Print JSON instead of text.") -> Callable[[F], F]:
    """``--json`` as a flag: print the result as JSON on stdout."""
    return click.option("--json", "as_json", is_flag=True, help=help_text)


def say(quiet_flag: bool, line: str) -> None:
    """An informational line on stdout, silenced by --quiet."""
    if not quiet_flag:
        click.echo(line)


def note(text: str) -> None:
    """A ``cuda-advisor: note:`` line on stderr (one line, escaped)."""
    click.echo(f"cuda-advisor: note: {one_line(text)}", err=True)


def require_output(command: str, *paths: str | None, html: str = "REPORT.html") -> None:
    """At least one of the output trio must be given (exit 2)."""
    if all(path is None for path in paths):
        raise UsageError(
            f"{command}: give at least one output: -o {html}, --markdown OUT.md or --json OUT.json"
        )
