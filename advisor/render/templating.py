"""The jinja environments, loading ``templates/`` from a checkout or from the installed wheel,
and the filters that write the report's numbers.

The wheel ships the repository's ``templates/`` folder as ``advisor/templates`` (see
``pyproject.toml``); a checkout or an editable install finds it beside the package.

Numbers in the HTML are written for a reader, never in exponent notation: a time in the unit its
magnitude calls for (:func:`advisor.render.display.duration`: ``850 ns``, ``5.25 µs``, ``1.23 s``),
a count with thousands separators, a large quantity with an SI prefix (``4.19 M``, ``1.71 T``), a
small one with its significant digits (``0.0000982``).  Texts of the engine that cite the project's
sources by their internal names (``seed 000``, ``Decision A1``) are written with the sources'
names (:func:`in_words`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import jinja2

from advisor.render.display import counted, criterion_value, duration, share, significant

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # advisor/

#: SI prefixes of large quantities (FLOP, bytes, FLOP/s, threads), from a million up
_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"))
#: the sources the engine's texts cite by the project's seed numbers (docs/MODELS.md)
SOURCES = {
    "000": "the BSP model paper",
    "001": "the MAX/SUM model paper",
    "002": "the fine-grained performance model paper",
    "003": "the model comparison paper",
    "004": "the CUDA streams paper",
}
_SEED = re.compile(r"\bseeds? (\d{3})(?:,? ((?:section|Table|Fig\.|§) ?[\w.–-]+))?")
#: a time an engine text writes in milliseconds (``t_sc 0.01 ms``), rewritten by magnitude
_MS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) ms\b")
_DECISION = re.compile(r"\s*\(Decision [A-Z]*\d*(?: \([^)]*\))?\)|\bDecision [A-Z]*\d+:?\s*")


def template_dir() -> Path:
    """The folder holding the templates, installed or in a checkout."""
    for candidate in (_PACKAGE_DIR / "templates", _PACKAGE_DIR.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("cuda-advisor templates folder not found (broken installation)")


@cache
def html_environment() -> jinja2.Environment:
    """Environment for HTML/Markdown output: everything from a profile is escaped."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


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


def fmt_duration(value_ns: float | None) -> str:
    """A time in ns with the unit its magnitude calls for; ``n/a`` when unknown."""
    return "n/a" if value_ns is None else duration(value_ns)


def fmt_duration_ms(value_ms: float | None) -> str:
    """A time given in milliseconds (the models' unit) written like :func:`fmt_duration`."""
    return "n/a" if value_ms is None else duration(value_ms * 1e6)


def fmt_count(value: float | None) -> str:
    """A count with thousands separators (``1,695,983``)."""
    return "n/a" if value is None else f"{int(value):,}"


def fmt_counted(value: float | None, word: str, plural: str = "") -> str:
    """A count and the word agreeing with it (``1 kernel``, ``1,154 launches``)."""
    return "n/a" if value is None else counted(int(value), word, plural)


def fmt_quantity(value: float | None, unit: str = "") -> str:
    """A quantity without exponent: an SI prefix from a million (``4.19 M``, ``1.71 TFLOP/s``),
    whole numbers below it with separators (``131,072``), others with four significant digits
    (``1008``, ``0.125``, ``0.0000982``)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    sep = " " if unit else ""
    magnitude = abs(value)
    for scale, prefix in _SI:
        if magnitude >= scale * 0.9995:
            return f"{significant(value / scale, 3)} {prefix}{unit}"
    if float(value).is_integer():
        return f"{int(value):,}{sep}{unit}"
    if magnitude >= 1000:
        return f"{value:,.0f}{sep}{unit}"
    return f"{significant(value, 4)}{sep}{unit}"


def fmt_value(value: float | None, digits: int = 2) -> str:
    """A criterion or ratio with ``digits`` decimals; a small one with two significant digits
    instead of an exponent (``0.0031``)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if value != 0 and abs(value) < 10 ** (-digits):
        return significant(value, 2)
    return f"{value:,.{digits}f}" if abs(value) >= 1000 else f"{value:.{digits}f}"


def fmt_share(value: float | None) -> str:
    """A share as a percentage (:func:`advisor.render.display.share`)."""
    return share(value)


def fmt_input(value: float | None, name: str) -> str:
    """A criterion's input value, by the unit its name carries (``*_ns``: a time, ``*_frac``: a
    share, ``*_bytes``, ``*_bytes_per_s``)."""
    if name.endswith("_ns"):
        return fmt_duration(value)
    if name.endswith("_frac"):
        return fmt_share(value)
    if name.endswith("_bytes_per_s"):
        return fmt_quantity(value, "B/s")
    if name.endswith("_bytes"):
        return fmt_quantity(value, "B")
    return fmt_quantity(value)


def in_words(text: str) -> str:
    """An engine text with its internal citations written out (``seed 004 Table 3`` becomes
    ``the CUDA streams paper (Table 3)``; ``(Decision A1)`` is dropped) and its times in
    milliseconds in the unit their magnitude calls for (``t_sc 0.01 ms`` becomes ``10.0 µs``)."""
    text = _DECISION.sub("", str(text))
    text = _MS.sub(lambda m: duration(float(m.group(1)) * 1e6), text)

    def cite(m: re.Match[str]) -> str:
        name = SOURCES.get(m.group(1), "the source paper")
        return f"{name} ({m.group(2)})" if m.group(2) else name

    return _SEED.sub(cite, text)


def fmt_criterion(value: float | None, threshold: float | None) -> str:
    """:func:`fmt_value`, with the decimals :func:`advisor.render.display.criterion_value`
    adds where a value below its threshold would print as the threshold."""
    text = fmt_value(value)
    if value is None or threshold is None or not value < threshold:
        return text
    return criterion_value(value, threshold) if text == fmt_value(threshold) else text


#: the report's number and text filters (``{{ t | duration }}``, ``{{ n | quantity("B") }}``)
FILTERS: dict[str, Callable[..., str]] = {
    "duration": fmt_duration,
    "duration_ms": fmt_duration_ms,
    "count": fmt_count,
    "counted": fmt_counted,
    "quantity": fmt_quantity,
    "value": fmt_value,
    "criterion": fmt_criterion,
    "share": fmt_share,
    "input": fmt_input,
    "words": in_words,
}
