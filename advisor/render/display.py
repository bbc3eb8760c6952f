"""Kernel names as the reports, the index and the gate messages show them.

C++ kernel names run to hundreds of characters of template arguments; every place that shows a
name in a line or a table cell shortens it the same way (the full name stays in the report's
tooltips and in the JSON output).
"""

from __future__ import annotations

#: longest name shown before it is shortened (the full name stays in the report)
DISPLAY_NAME_CHARS = 80


def shorten(name: str, limit: int = DISPLAY_NAME_CHARS) -> str:
    """A C++ name short enough to read: template arguments and parameter lists collapsed to
    ``…`` when the name is longer than ``limit``, then cut at ``limit`` characters."""
    if len(name) <= limit:
        return name
    short = _collapse(name, "<", ">")
    if len(short) > limit:
        short = _collapse(short, "(", ")")
    if len(short) > limit:
        short = short[: limit - 1] + "…"
    return short


def _collapse(name: str, left: str, right: str) -> str:
    """Replace every outermost ``left … right`` group by ``left…right``."""
    out, depth = [], 0
    for ch in name:
        if ch == left:
            if depth == 0:
                out.append(left + "…")
            depth += 1
        elif ch == right and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(right)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


__all__ = ["DISPLAY_NAME_CHARS", "shorten"]
