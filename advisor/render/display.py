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


#: (upper bound in ns, unit, ns per unit): a time is printed in the first unit it is below
_TIME_UNITS = ((1e3, "ns", 1.0), (1e6, "µs", 1e3), (1e9, "ms", 1e6), (float("inf"), "s", 1e9))


def duration(value_ns: float | None) -> str:
    """A time with the unit its magnitude calls for and three significant digits:
    ``850 ns``, ``5.25 µs``, ``9.58 ms``, ``1.20 s``; ``—`` when unknown."""
    if value_ns is None or value_ns != value_ns or value_ns < 0:
        return "—"
    for bound, unit, scale in _TIME_UNITS:
        if value_ns < bound * 0.9995 or unit == "s":
            number = float(f"{value_ns / scale:.3g}")  # three significant digits
            digits = 0 if number >= 100 or number == 0 else 1 if number >= 10 else 2
            return f"{number:.{digits}f} {unit}"
    return "—"  # unreachable: the last unit takes every value


__all__ = ["DISPLAY_NAME_CHARS", "duration", "shorten"]
