"""The jinja environments, loading ``templates/`` from a checkout or from the installed wheel.

The wheel ships the repository's ``templates/`` folder as ``advisor/templates`` (see
``pyproject.toml``); a checkout or an editable install finds it beside the package.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # advisor/


def template_dir() -> Path:
    """The folder holding the templates, installed or in a checkout."""
    for candidate in (_PACKAGE_DIR / "templates", _PACKAGE_DIR.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("cuda-advisor templates folder not found (broken installation)")


@cache
def html_environment() -> jinja2.Environment:
    """Environment for HTML/Markdown output: everything from a profile is escaped."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


@cache
def text_environment() -> jinja2.Environment:
    """Environment for terminal text: nothing is markup, so nothing is escaped."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
