"""Options shared by several commands, declared once.

Each entry is a decorator (or a factory of one) that adds the option with the same flags,
destination name, type and help wherever it appears: the output trio ``-o/--markdown/--json`` of
``report`` and ``compare``, ``--device``, ``--speedup-form``, ``-q/--quiet`` and ``--json`` as a
print-JSON flag.  A command states what is particular to it (``report --per-file`` takes folders
as outputs) through the factory's arguments, never by copying an option block.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

from advisor.errors import UsageError, one_line
from advisor.output import same_file
from advisor.speedup_forms import AMDAHL, SPEEDUP_FORMS

F = TypeVar("F", bound=Callable[..., Any])


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """The decorators applied in the order given (the first is the first option in --help)."""

    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


#: the type of an option or argument naming an input file: click checks nothing (its errors are
#: usage errors, exit 2), the reader reports a missing, unreadable or wrong file on one line with
#: exit code 3
INPUT_PATH = click.Path(readable=False)
#: the type of an output file name: :func:`advisor.output.write_atomic` checks it (exit 2)
OUTPUT_PATH = click.Path(dir_okay=False, readable=False)


def outputs(what: str, json_what: str, folders: bool = False) -> Callable[[F], F]:
    """``-o/--output`` (HTML of ``what``), ``--markdown`` and ``--json`` (``json_what``).

    With ``folders``, each may also name a folder (``report --per-file``)."""
    kind = click.Path(readable=False) if folders else OUTPUT_PATH
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
    help="How the potential speedups of L1/L2 granularity, shared-memory efficiency and device "
    "synchronization are computed: amdahl (Amdahl's law: only the share of the kernel's time "
    "spent at that memory level, or waiting at the barrier, gets faster) or paper (the "
    "formulas as published).",
)


def quiet(help_text: str) -> Callable[[F], F]:
    """``-q/--quiet``: fewer lines on the terminal; errors and notes still print."""
    return click.option("-q", "--quiet", "quiet", is_flag=True, help=help_text)


def print_json(help_text: str = "Print JSON instead of text.") -> Callable[[F], F]:
    """``--json`` as a flag: print the result as JSON on stdout."""
    return click.option("--json", "as_json", is_flag=True, help=help_text)


def run_inputs(files: Iterable[str], *side: str | None) -> list[str]:
    """Every file a run reads, which no output may replace: ``files`` and the side files given
    (``--app``, ``--kernels``, ``--device FILE``; a ``--device NAME`` that names no file is no
    input)."""
    return [*files, *(path for path in side if path is not None and os.path.lexists(path))]


def gpu_names(values: Iterable[str], option: str) -> list[str]:
    """The GPU names of a repeatable ``NAME[,NAME...]`` option (``--gpu``, ``--predict-gpu``),
    stripped, each once in the order given; an empty name is a usage error."""
    names = [name.strip() for value in values for name in value.split(",")]
    if any(not name for name in names):
        raise UsageError(f"{option}: empty GPU name; give NAME[,NAME...]")
    return list(dict.fromkeys(names))


def say(quiet_flag: bool, line: str) -> None:
    """An informational line on stdout, silenced by --quiet."""
    if not quiet_flag:
        click.echo(line)


def note(text: str) -> None:
    """A ``cuda-advisor: note:`` line on stderr (one line, escaped)."""
    click.echo(f"cuda-advisor: note: {one_line(text)}", err=True)


def warning(text: str) -> None:
    """A ``cuda-advisor: warning:`` line on stderr (one line, escaped): the run goes on, but its
    result may not mean what the user expects."""
    click.echo(f"cuda-advisor: warning: {one_line(text)}", err=True)


def require_output(
    command: str,
    html_path: str | None,
    markdown_path: str | None,
    json_path: str | None,
    html: str = "REPORT.html",
    files: bool = True,
) -> None:
    """At least one of the output trio must be given, and with ``files`` (outputs that are file
    names, not ``--per-file`` folders) no name may end in the suffix of another option's format
    (:func:`check_suffixes`); both are usage errors (exit 2)."""
    if html_path is None and markdown_path is None and json_path is None:
        raise UsageError(
            f"{command}: give at least one output: -o {html}, --markdown OUT.md or --json OUT.json"
        )
    if files:
        check_suffixes(html_path, markdown_path, json_path)
        check_distinct_outputs(html_path, markdown_path, json_path)


def check_distinct_outputs(*paths: str | None) -> None:
    """Refuse two output options naming one file (``-o out --markdown out``, also through ``..``
    or a link): the second would replace the first, which would be lost (exit 2)."""
    given = [(option, path) for (option, _, _), path in zip(OUTPUT_SUFFIXES, paths, strict=True)
             if path is not None]  # fmt: skip
    for i, (option, path) in enumerate(given):
        for other, other_path in given[i + 1 :]:
            if same_file(Path(path), Path(other_path)):
                raise UsageError(
                    f"{other_path}: {option} and {other} name the same file; give each output "
                    "its own name"
                )


#: the output options and the file-name suffixes of the format each writes
OUTPUT_SUFFIXES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("-o", "HTML report", (".html", ".htm")),
    ("--markdown", "Markdown summary", (".md", ".markdown")),
    ("--json", "JSON analysis", (".json",)),
)


def check_suffixes(html_path: str | None, markdown_path: str | None, json_path: str | None) -> None:
    """Refuse an output whose suffix names another option's format (``-o x.md`` would write
    HTML into a ``.md`` file): exit 2, naming the path and the option that writes that format.

    A suffix no option claims (``.txt``, ``.out``) or no suffix at all is accepted."""
    for (option, what, _), path in zip(
        OUTPUT_SUFFIXES, (html_path, markdown_path, json_path), strict=True
    ):
        if path is None:
            continue
        suffix = os.path.splitext(path)[1].lower()
        for other, other_what, suffixes in OUTPUT_SUFFIXES:
            if other != option and suffix in suffixes:
                raise UsageError(
                    f"{path}: {option} writes the {what}, but the name ends in {suffix}, the "
                    f"suffix of the {other_what}; use {other} {path} for that, or give {option} "
                    "a name with another suffix"
                )
