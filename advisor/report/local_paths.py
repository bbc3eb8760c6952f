"""No directory of the machine that made a report in the report (docs/report.md, "Input paths").

A report is shared (a pull-request comment, a CI artifact), so it names each input as the user
gave it on the command line when that path is relative, and by its base name when it is
absolute: ``/home/me/runs/v2/profile.ncu-rep`` is written ``profile.ncu-rep``.  Readers and the
analysis keep the real path (they open the file, and the terminal's notes and errors name it in
full); the outputs are made from the finished text of each artifact by :func:`hide`, so every
place a path reaches (the inputs list, a reader's note ``/abs/trace.csv: kernel launch row 3
...``, ``compare``'s version files) is covered, in each output's escaping (JSON, HTML,
Markdown).

Paths a profile itself holds (the source files of the profiled program, recorded on the machine
that ran the profiler) are data of the profile and are kept.
"""

from __future__ import annotations

import json
import os.path
from collections.abc import Callable, Iterable

from markupsafe import escape


def shown_path(path: str) -> str:
    """An input path as a report shows it: as given when relative, its base name when absolute
    (a folder given as ``/abs/runs/`` shows as ``runs``)."""
    if not os.path.isabs(path):
        return path
    return os.path.basename(path.rstrip("/")) or path


def replacements(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(local spelling, shown spelling) pairs for the inputs ``paths``, longest first (a folder
    given on the command line and a file inside it are both replaced by their own rule).

    An absolute path is replaced by its base name, under each of its spellings (as given,
    normalized, resolved through links); a relative path's absolute spellings (``compare``
    resolves its version files) are replaced by the path as given."""
    pairs: dict[str, str] = {}
    for path in paths:
        path = str(path)
        shown = shown_path(path)
        spellings = {os.path.abspath(path), os.path.realpath(path)}
        if os.path.isabs(path):
            spellings.add(path)
        for local in spellings:
            local = local.rstrip("/") or local
            if local != shown and os.path.isabs(local) and local != "/":
                pairs.setdefault(local, shown)
    return sorted(pairs.items(), key=lambda p: (-len(p[0]), p[0]))


def _json(text: str) -> str:
    return json.dumps(text)[1:-1]


def _html(text: str) -> str:
    return str(escape(text))


def _markdown(text: str) -> str:
    from advisor.render.markdown import md_escape

    return md_escape(text)


#: the escapings a path may have in an output: as is, in a JSON string, in HTML text, in
#: Markdown prose (backslash-escaped punctuation)
_ESCAPINGS: tuple[Callable[[str], str], ...] = (str, _json, _html, _markdown)


def hide(text: str, paths: Iterable[str]) -> str:
    """``text`` (a finished JSON, HTML, Markdown or SARIF document) with every local spelling
    of the inputs ``paths`` replaced by its shown spelling (:func:`replacements`)."""
    for local, shown in replacements(paths):
        for escaped in _ESCAPINGS:
            spelled = escaped(local)
            if spelled in text:
                text = text.replace(spelled, escaped(shown))
    return text


__all__ = ["hide", "replacements", "shown_path"]
