"""``cuda-advisor compare``: tuning versions of one application side by side.

Each ``--version NAME=FILES`` is analysed by :func:`advisor.pipeline.analyse` (or read from a
saved ``report --json`` output), then matched kernel by kernel (:mod:`advisor.report.compare`)
and written as HTML, Markdown and/or JSON (:mod:`advisor.render.compare`).  ``--max-regression``
is a CI gate (exit code 4).  Registered on the ``cuda-advisor`` group by advisor/cli/group.py.
"""

from __future__ import annotations

from collections.abc import Callable

import click

from advisor import pipeline
from advisor.cli import options
from advisor.cli.report import gate_exit
from advisor.errors import UsageError
from advisor.output import write_atomic


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
@options.quiet("No 'wrote' lines; errors and notes still print.")
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
    options.require_output("compare", html_path, markdown_path, json_path, html="OUT.html")
    if max_regression is not None and max_regression < 0:
        raise UsageError(f"--max-regression {max_regression:g}: must be at least 0")
    from advisor.criteria.engine.analysis import _clean
    from advisor.render import compare as render_compare  # loaded for this command only
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
            data = pipeline.analyse(files, device, speedup_form, on_note=_noting(name)).data
        analysed.append((name, files, data))
        inputs += files
    result = compare.compare(analysed)
    if json_path is not None:
        text = pipeline.json_text(_clean(compare.to_json(result)))
        write_atomic(json_path, text, inputs=inputs)
        options.say(quiet, f"wrote {json_path}")
    if html_path is not None:
        write_atomic(html_path, render_compare.html(result), inputs=inputs)
        options.say(quiet, f"wrote {html_path}")
    if markdown_path is not None:
        write_atomic(markdown_path, render_compare.markdown(result), inputs=inputs)
        options.say(quiet, f"wrote {markdown_path}")
    gate_exit([] if max_regression is None else compare.regressions(result, max_regression))


def _noting(version: str) -> Callable[[str], None]:
    """A note printer that names the version the note is about."""
    return lambda text: options.note(f"{version}: {text}")


COMMANDS: list[click.Command] = [compare_cmd]
