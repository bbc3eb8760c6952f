"""``cuda-advisor compare``: tuning versions of one application side by side.

The versions are given in order, either positionally (``compare A.ncu-rep B.ncu-rep ...``, each
``FILE[,FILE...]``, a FOLDER or a saved analysis, labelled by ``--label`` or by the file's name)
or as ``--version NAME=FILES`` (not both).  Each is analysed by :func:`advisor.pipeline.analyse`
(or read from a saved ``report --json`` output), then the kernels of consecutive versions are
matched (:mod:`advisor.report.compare`: forced by ``--match OLD=NEW``, exact name, base name,
launch order and configuration), every kernel left unmatched is a ``cuda-advisor: warning:``
line on stderr, and the comparison is written as HTML, Markdown and/or JSON
(:mod:`advisor.render.compare`).  ``--max-regression`` is a CI gate (exit code 4).  Registered on
the ``cuda-advisor`` group by advisor/cli/group.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from advisor.cli import loading, options
from advisor.cli.report import gate_exit
from advisor.errors import UsageError, one_line
from advisor.output import write_atomic
from advisor.report import local_paths


@click.command(name="compare")
@click.argument("paths", nargs=-1, metavar="[VERSION]...")
@click.option(
    "--version",
    "versions",
    multiple=True,
    metavar="NAME=FILES",
    help="One tuning version, repeatable, in order: NAME=FILE[,FILE...] or NAME=FOLDER, or "
    "NAME=ANALYSIS.json (a saved report --json output).  Instead of positional VERSIONs.",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="NAME",
    help="The name of a positional VERSION, repeatable, in order (default: the file's name "
    "without its suffix).",
)
@click.option(
    "--match",
    "matches",
    multiple=True,
    metavar="OLD=NEW",
    help="Pair kernel OLD of a version with kernel NEW of the next one (full names or base "
    "names), repeatable; before any pairing by name, order or configuration.",
)
@options.outputs("the comparison", "the comparison")
@options.device("GPU name or characterization file for every version.")
@options.speedup_form
@click.option(
    "--max-regression",
    "max_regression",
    type=float,
    metavar="PCT",
    help="CI gate: exit code 4 when a kernel is slower than in the previous version "
    "by more than PCT percent.",
)
@options.quiet("No 'wrote' lines; errors, warnings and notes still print.")
def compare_cmd(
    paths: tuple[str, ...],
    versions: tuple[str, ...],
    labels: tuple[str, ...],
    matches: tuple[str, ...],
    html_path: str | None,
    markdown_path: str | None,
    json_path: str | None,
    device: str | None,
    speedup_form: str,
    max_regression: float | None,
    quiet: bool = False,
) -> None:
    """Compare tuning versions of one application, the first being the baseline:
    VERSION... are profiles (FILE[,FILE...] or FOLDER) or saved analyses, in order.  Kernels
    are matched by name, base name, then launch order and configuration; per kernel and in total,
    measured speedups, criteria across versions and the prediction ledger."""
    options.require_output("compare", html_path, markdown_path, json_path, html="OUT.html")
    if max_regression is not None and not (math.isfinite(max_regression) and max_regression >= 0):
        raise UsageError(f"--max-regression {max_regression:g}: must be a finite number >= 0")
    with loading.modules():
        from advisor import pipeline
        from advisor.criteria.engine.analysis import _clean
        from advisor.render import compare as render_compare  # loaded for this command only
        from advisor.report import compare

    given = _versions(paths, versions, labels)
    forced = [compare.parse_match(text) for text in matches]
    analysed = []
    launches: list[Any] = []
    profiles: list[Any] = []  # per version: its profile, None for a saved analysis
    inputs: list[str] = []
    for name, files in given:
        saved = [path for path in files if compare.looks_like_json(path)]
        if saved and len(files) > 1:
            raise UsageError(
                f"version {name}: {saved[0]} is a saved analysis; it must be the version's "
                "only file (give either one report --json output or profiler files)"
            )
        if saved:
            data = compare.read_analysis(saved[0], speedup_form)
            launches.append(None)  # a saved analysis keeps no launches
            profiles.append(None)
        else:
            run = pipeline.analyse(
                files, device, speedup_form, on_note=_noting(name), on_warning=_warning(name)
            )
            data = run.data
            launches.append(compare.launch_facts(run.profile.launches))
            profiles.append(run.profile)
        analysed.append((name, files, data))
        inputs += files
    inputs = options.run_inputs(inputs, device)
    result = compare.compare(analysed, launches, forced)
    if any(getattr(p, "instruction_sources", None) for p in profiles):
        from dataclasses import replace

        from advisor.report import compare_locations

        result = replace(result, locations=compare_locations.for_profiles(result, profiles))
    for line in compare.unmatched_warnings(result):
        click.echo(f"cuda-advisor: warning: {one_line(line)}", err=True)
    if json_path is not None:
        text = pipeline.json_text(_clean(compare.to_json(result)))
        write_atomic(json_path, local_paths.hide(text, inputs), inputs=inputs)
        options.say(quiet, f"wrote {json_path}")
    if html_path is not None:
        page = local_paths.hide(render_compare.html(result), inputs)
        write_atomic(html_path, page, inputs=inputs)
        options.say(quiet, f"wrote {html_path}")
    if markdown_path is not None:
        comment = local_paths.hide(render_compare.markdown(result), inputs)
        write_atomic(markdown_path, comment, inputs=inputs)
        options.say(quiet, f"wrote {markdown_path}")
    gate_exit([] if max_regression is None else compare.regressions(result, max_regression))


def _versions(
    paths: tuple[str, ...], versions: tuple[str, ...], labels: tuple[str, ...]
) -> list[tuple[str, list[str]]]:
    """(name, files) of every version, from the positional VERSIONs or the --version options."""
    from advisor.report import compare

    if paths and versions:
        raise UsageError(
            "compare: give the versions either positionally (A.ncu-rep B.ncu-rep ...) or as "
            "--version NAME=FILES, not both"
        )
    if versions:
        if labels:
            raise UsageError("compare: --label names positional versions; --version has NAME=")
        return [compare.parse_version(text) for text in versions]
    if not paths:
        raise UsageError(
            "compare: give the versions to compare, in order: A.ncu-rep B.ncu-rep ... "
            "(or --version NAME=FILES ...)"
        )
    files = [compare.parse_paths(text) for text in paths]
    return list(zip(compare.version_labels(paths, labels), files, strict=True))


def _noting(version: str) -> Callable[[str], None]:
    """A note printer that names the version the note is about."""
    return lambda text: options.note(f"{version}: {text}")


def _warning(version: str) -> Callable[[str], None]:
    """A warning printer that names the version the warning is about."""
    return lambda text: options.warning(f"{version}: {text}")


COMMANDS: list[click.Command] = [compare_cmd]
