"""Kernel names as the reports, the index and the gate messages show them.

C++ kernel names run to hundreds of characters of template arguments; every place that shows a
name in a line or a table cell shortens it the same way (the full name stays in the report's
tooltips and in the JSON output).

:func:`distinct_names` gives every kernel of a report a display name of its own: Itanium-mangled
names demangled (:func:`demangle`, with the optional ``cpp-demangle`` package), the return type
dropped, shortened to a limit, and kernels that would still read the same (``k<int>`` and
``k<float>`` both ``k<…>``) told apart by the template arguments that differ, else by a ``#2``.
:func:`visible_text` writes the characters that show nothing (zero-width, direction marks and
overrides, controls) as ``\\u200b``-style escapes, so a name shows what it holds.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

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


def significant(value: float, digits: int) -> str:
    """``value`` with at most ``digits`` significant digits, written out positionally, trailing
    zeros dropped (``0.125``, ``4.19``, ``1.5``, ``0.0000982``; never ``9.8e-05``)."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - exponent)
    rounded = round(value, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:  # 9.996 -> 10.0
        decimals = max(0, decimals - 1)
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def speedup_text(value: float | None) -> str:
    """A speedup: ``1.96x``; from 100x on without decimals (``1,208x``: a bound of that size
    is no measurement to the hundredth); ``n/a`` when unknown."""
    if value is None:
        return "n/a"
    return f"{value:,.0f}x" if round(value, 2) >= 100 else f"{value:.2f}x"  # 99.999...: 100x


def criterion_value(value: float, threshold: float | None, digits: int = 2) -> str:
    """A criterion's value with ``digits`` decimals, or more where that would print a value
    below its threshold as the threshold itself (0.797 below 0.80 reads ``0.797``, never
    ``0.80``): at most four decimals."""
    text = f"{value:.{digits}f}"
    if threshold is None or not value < threshold:
        return text
    for more in range(digits, 5):
        text = f"{value:.{more}f}"
        if text != f"{threshold:.{more}f}":
            return text
    return text


def share(value: float | None) -> str:
    """A share as a percentage: one decimal, two significant digits under 0.1 % written out
    (``0.0071%``, ``0.00007%``), never 0.0 % for a share above 0 and never an exponent."""
    if value is None:
        return "n/a"
    if 0 < value < 0.001:
        return f"{significant(100 * value, 2)}%"
    return f"{100 * value:.1f}%"


def counted(n: int, word: str, plural: str = "") -> str:
    """``n`` with thousands separators and ``word`` agreeing with it: ``1 kernel``,
    ``1,154 launches`` (``plural``: the plural when it is not ``word`` + ``s``, or + ``es``
    after ``s``, ``x``, ``ch``, ``sh``)."""
    if n == 1:
        return f"{n:,} {word}"
    suffix = "es" if word.endswith(("s", "x", "ch", "sh")) else "s"
    return f"{n:,} {plural or word + suffix}"


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


# --- characters that show nothing --------------------------------------------------------------

#: letters and marks that show nothing though they are no format character: the Hangul fillers,
#: the combining grapheme joiner, the variation selectors
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u3164\uffa0" + "".join(chr(c) for c in range(0xFE00, 0xFE10))
)
#: controls, format characters (zero-width spaces and joiners, direction marks, embeddings,
#: overrides and isolates, U+061C, U+FEFF ...), private use, surrogates, line and paragraph
#: separators
_INVISIBLE_CATEGORIES = frozenset(("Cc", "Cf", "Co", "Cs", "Zl", "Zp"))
#: the line breaks and tab callers keep (each renderer folds white space its own way)
_KEPT = frozenset("\t\n\r")


def _shown(ch: str) -> str:
    if ch in _KEPT or (
        ch not in _INVISIBLE and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES
    ):
        return ch
    return ascii(ch)[1:-1]


def visible_text(text: str) -> str:
    """``text`` with every character that shows nothing or changes how the text around it reads
    written as its Python escape: controls (``\\x1b``), zero-width characters (``\\u200b``),
    direction marks and overrides (``\\u200f``, ``\\u061c``, ``\\u202e``), the byte-order mark,
    private-use characters, invisible fillers. Tab and line breaks stay; printable text (any
    script) is unchanged."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_shown(ch) for ch in text)


# --- C++ names: demangled, without return type, told apart ------------------------------------

#: the optional Itanium demangler (PyPI ``cpp-demangle``); without it :func:`demangle` reads the
#: mangled name's leading (qualified) function name itself
DEMANGLER_MODULE = "cpp_demangle"
#: the anonymous namespace, as the demangler writes it and as the mangled name holds it
ANONYMOUS = "(anonymous namespace)"
_MANGLED_ANONYMOUS = re.compile(r"^_GLOBAL__N(_\w*)?$")


def demangle(name: str) -> str:
    """An Itanium-mangled name (``_Z...``) demangled with the optional ``cpp-demangle`` package
    (``void fft2d_c2r_32x32<float, false, ...>(float*, ...)``); without it, or where it fails,
    the mangled name's outline (``fft2d_c2r_32x32<…>(…)``); any other name as it is."""
    if not name.startswith("_Z"):
        return name
    try:
        module: Any = importlib.import_module(DEMANGLER_MODULE)
    except ImportError:
        module = None
    if module is not None:
        try:
            text = str(module.demangle(name))
            if text:
                return text
        except Exception:  # any failure of the optional package: fall back
            pass
    return _mangled_outline(name) or name


def _mangled_outline(name: str) -> str | None:
    """The qualified function name at the start of a mangled name, with ``<…>`` when template
    arguments follow it and ``(…)`` (``()`` for none) for the parameters; None when it does not
    start with one."""
    text = name[2:]
    if text.startswith("L"):
        text = text[1:]
    nested = text.startswith("N")
    if nested:
        text = text[1:].lstrip("rVK")
    parts: list[str] = []
    while True:
        if text.startswith("St"):
            parts.append("std")
            text = text[2:]
            continue
        digits = re.match(r"\d+", text)
        if digits is None:
            break
        size, text = int(digits.group(0)), text[digits.end() :]
        if size <= 0 or size > len(text):
            return None
        part = text[:size]
        parts.append(ANONYMOUS if _MANGLED_ANONYMOUS.match(part) else part)
        text = text[size:]
        if not nested:
            break
    if not parts or parts[-1] == "std":
        return None
    outline = "::".join(parts)
    if text.startswith("I"):  # template arguments, then (somewhere after them) the parameters
        return outline + "<…>(…)"
    rest = text[1:] if nested and text.startswith("E") else text
    return outline + ("" if not rest else "()" if rest == "v" else "(…)")


@functools.lru_cache(maxsize=4096)
def _without_return_type(name: str) -> str:
    """``void k<int>(int*)`` -> ``k<int>(int*)``: a kernel returns nothing, the return type (all
    before the last space outside brackets ahead of the parameter list) is noise. A name without
    a parameter list is kept as it is.  Remembered for the last names asked (a report asks for
    each kernel's name from several places)."""
    depth, last_space, i = 0, -1, 0
    while i < len(name):
        ch = name[i]
        if ch in _OPAQUE_FIRSTS:
            word = next((w for w in _OPAQUE if name.startswith(w, i)), None)
            if word is not None:
                i += len(word)
                continue
        if ch in "<[":
            depth += 1
        elif ch in ">]" and depth:
            depth -= 1
        elif ch == "(":
            if depth == 0:
                break
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif ch == " " and depth == 0:
            last_space = i
        i += 1
    else:
        return name
    return name[last_space + 1 :] if last_space > 0 else name


def readable_name(name: str) -> str:
    """A kernel's name as a person reads it: demangled (:func:`demangle`), white space folded,
    the return type dropped."""
    return _without_return_type(" ".join(demangle(name).split()))


def compact(name: str, limit: int = DISPLAY_NAME_CHARS) -> str:
    """:func:`shorten` that drops the namespaces before cutting: template arguments collapsed to
    ``<…>``, then parameter lists to ``(…)``, then the qualifiers to ``…::``, then the name cut
    at ``limit`` characters. A name within ``limit`` is kept as it is; ``(anonymous namespace)``
    and ``<unnamed>`` are names, not brackets."""
    if len(name) <= limit:
        return name
    text = _protect(name)
    steps = (
        lambda t: _collapse(t, "<", ">"),
        lambda t: _collapse(t, "(", ")"),
        _unqualified,
    )
    for step in steps:
        text = step(text)
        if len(_restore(text)) <= limit:
            return _restore(text)
    return _restore(text)[: max(limit - 1, 0)] + "…"


#: bracketed words that are names: the anonymous namespace (the demangler's and nsys' spelling)
_OPAQUE = (ANONYMOUS, "<unnamed>")
#: the characters those words start with
_OPAQUE_FIRSTS = frozenset(w[0] for w in _OPAQUE)


def _protect(name: str) -> str:
    for i, word in enumerate(_OPAQUE):
        name = name.replace(word, f"\x00{i}")
    return name


def _restore(name: str) -> str:
    for i, word in enumerate(_OPAQUE):
        name = name.replace(f"\x00{i}", word)
    return name


def _unqualified(name: str) -> str:
    """``a::b::k<…>(…)`` -> ``…::k<…>(…)``: the qualifiers before the function's own name (``::``
    outside brackets, ahead of the parameter list) replaced by ``…``."""
    depth, cut = 0, -1
    for i, ch in enumerate(name):
        if ch in "<[{":
            depth += 1
        elif ch in ">]}" and depth:
            depth -= 1
        elif ch == "(":
            if depth == 0:
                break
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif ch == ":" and depth == 0 and name.startswith("::", i):
            cut = i
    return "…" + name[cut:] if cut > 1 else name


def distinct_names(names: Iterable[str], limit: int = DISPLAY_NAME_CHARS) -> dict[str, str]:
    """Every name -> a display name of at most ``limit`` characters, distinct names getting
    distinct display names.

    Each name is made readable (:func:`readable_name`: demangled, no return type) and compacted
    (:func:`compact`). Names that still read the same keep the template (or parameter)
    arguments in which they differ, the rest collapsed (``k<int>(…)`` and ``k<float>(…)``;
    ``fft2d_r2c<…, 0, false>(…)`` and ``fft2d_r2c<…, 5, true>(…)``); where that does not tell
    them apart within ``limit``, the second and later (in the order given: give the largest
    first) get `` #2``, `` #3``, ..."""
    order = list(dict.fromkeys(names))
    readable = {n: readable_name(n) for n in order}
    shown = {n: compact(readable[n], limit) for n in order}
    alike: dict[str, list[str]] = {}
    for n in order:
        alike.setdefault(shown[n], []).append(n)
    for members in alike.values():
        if len(members) > 1:
            told = _tell_apart([readable[m] for m in members], limit)
            if told is not None:
                shown.update(zip(members, told, strict=True))
    alike = {}
    for n in order:
        alike.setdefault(shown[n], []).append(n)
    for members in alike.values():
        if len(members) > 1:  # numbered: all on the same (shorter) base, the first without suffix
            room = max(limit - len(f" #{len(members)}"), 1)
            for number, n in enumerate(members, start=1):
                base = compact(readable[n], room)
                shown[n] = base if number == 1 else f"{base} #{number}"
    taken: set[str] = set()
    out: dict[str, str] = {}
    for n in order:  # a numbered name that reads like another name: the next free number
        text, number = shown[n], 1
        while text in taken:
            number += 1
            suffix = f" #{number}"
            text = compact(readable[n], max(limit - len(suffix), 1)) + suffix
        taken.add(text)
        out[n] = text
    return out


#: a parsed name: text, or a bracketed group (opening bracket, inside, closing bracket)
_Segment = tuple[str, str, str]
_PAIRS = {"<": ">", "(": ")"}
_INTEGER_CAST = re.compile(r"^\((?:unsigned |signed )?(?:char|short|int|long|long long)\)(-?\d+)$")
_BOOL_CAST = {"(bool)0": "false", "(bool)1": "true"}
#: a differing template argument longer than this shows its own template arguments as ``<…>``
_ARGUMENT_CHARS = 24


def _segments(name: str) -> list[_Segment]:
    """``ns::k<int, 2>::run(float*)`` -> text ``ns::k``, group ``<int, 2>``, text ``::run``,
    group ``(float*)``: the outermost bracket groups; ``(anonymous namespace)`` is text, and an
    unclosed group is text to the end."""
    out: list[_Segment] = []
    text, i = [], 0
    while i < len(name):
        word = next((w for w in _OPAQUE if name.startswith(w, i)), None)
        if word is not None:
            text.append(word)
            i += len(word)
            continue
        ch = name[i]
        if ch in _PAIRS:
            end = _closing(name, i)
            if end is None:
                text.append(name[i:])
                break
            out.append(("", "".join(text), ""))
            out.append((ch, name[i + 1 : end], name[end]))
            text, i = [], end + 1
            continue
        text.append(ch)
        i += 1
    out.append(("", "".join(text), ""))
    return [s for s in out if s[0] or s[1]]


def _closing(name: str, start: int) -> int | None:
    """The index of the bracket that closes the one at ``start`` (any of ``<>``, ``()``, ``[]``
    nested inside), or None."""
    depth = 0
    for i in range(start, len(name)):
        ch = name[i]
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
            if depth == 0:
                return i if ch == _PAIRS.get(name[start]) else None
    return None


def top_level(text: str, sep: str) -> list[int]:
    """The positions of ``sep`` in ``text`` outside ``<>``, ``()`` and ``[]`` (a C++ name holds
    commas and ``=`` inside its template and parameter lists)."""
    depth, found = 0, []
    for i, ch in enumerate(text):
        if ch in "<([":
            depth += 1
        elif ch in ">)]" and depth:
            depth -= 1
        elif ch == sep and depth == 0:
            found.append(i)
    return found


def _arguments(inside: str) -> list[str]:
    """A group's arguments: split at the commas outside brackets."""
    cuts = [-1, *top_level(inside, ","), len(inside)]
    return [inside[a + 1 : b].strip() for a, b in itertools.pairwise(cuts)]


def _argument(arg: str) -> str:
    """A template argument as the told-apart name shows it: ``(int)7`` -> ``7``, ``(bool)1`` ->
    ``true``, a long one with its own template arguments collapsed."""
    arg = _BOOL_CAST.get(arg, arg)
    arg = _INTEGER_CAST.sub(r"\1", arg)
    return _collapse(arg, "<", ">") if len(arg) > _ARGUMENT_CHARS else arg


def _differing(insides: list[str]) -> list[str]:
    """The inside of one bracket group of several names, showing only the arguments in which
    they differ (runs of equal arguments as ``…``)."""
    split = [_arguments(s) for s in insides]
    if len({len(a) for a in split}) > 1:
        return [_collapse(s, "<", ">") for s in insides]
    differs = [len({a[j] for a in split}) > 1 for j in range(len(split[0]))]
    out = []
    for args in split:
        shown: list[str] = []
        for arg, differ in zip(args, differs, strict=True):
            if differ:
                shown.append(_argument(arg))
            elif not shown or shown[-1] != "…":
                shown.append("…")
        out.append(", ".join(shown))
    return out


def _tell_apart(names: list[str], limit: int) -> list[str] | None:
    """Display names for ``names`` (readable names that compact to the same text) that keep only
    the arguments in which they differ; None when they are not built alike, when the result is
    longer than ``limit`` even without qualifiers, or when it does not tell them apart."""
    parsed = [_segments(n) for n in names]
    shape = [(s[0], s[1] if not s[0] else "") for s in parsed[0]]
    if any([(s[0], s[1] if not s[0] else "") for s in p] != shape for p in parsed[1:]):
        return None
    differing = {
        j: _differing([p[j][1] for p in parsed])
        for j, s in enumerate(parsed[0])
        if s[0] and len({p[j][1] for p in parsed}) > 1
    }
    # every group in which they differ, else only the first such group (the others collapsed)
    for shown in (list(differing), list(differing)[:1]):
        out = []
        for i, segments in enumerate(parsed):
            parts = []
            for j, (bracket, text, close) in enumerate(segments):
                if not bracket:
                    parts.append(text)
                elif j in shown:
                    parts.append(f"{bracket}{differing[j][i]}{close}")
                else:
                    parts.append(f"{bracket}{'…' if text else ''}{close}")
            name = "".join(parts)
            out.append(name if len(name) <= limit else _unqualified(name))
        if all(len(t) <= limit for t in out) and len(set(out)) == len(out):
            return out
    return None


__all__ = [
    "DISPLAY_NAME_CHARS",
    "compact",
    "counted",
    "demangle",
    "distinct_names",
    "duration",
    "readable_name",
    "shorten",
    "visible_text",
]
