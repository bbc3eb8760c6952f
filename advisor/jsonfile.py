"""Reading the JSON files a user gives beside the profiles (device characterizations, BSP
application and MAX/SUM kernel descriptions, saved analyses, raw microbenchmark samples), one way
everywhere.

:func:`load` reads the file as UTF-8, decodes it within fixed limits and, given a schema (a
:mod:`msgspec` type from :mod:`advisor.sideinputs`), checks the document against it.  Whatever
goes wrong is one :class:`~advisor.errors.InputError` naming the file (exit code 3): unreadable,
larger than :data:`MAX_FILE_BYTES`, not UTF-8, not JSON (with the line of the decoding error),
nested deeper than :data:`MAX_DEPTH`, more than :data:`MAX_VALUES` values, a number longer than
:data:`MAX_NUMBER_CHARS` characters or outside the range of a float, ``NaN``/``Infinity``, or a
document that breaks the schema (``file: kernels[3].blocks: expected a number >= 0, got a
string``).  What the schema cannot say (cross-field rules, expressions) stays each caller's
check.

The limits are checked before :func:`json.loads` can recurse or convert, on the document's
skeleton (its strings removed by one regular expression): the nesting depth and the value count
from its brackets and commas, the number sizes by searching it for a run of more than
:data:`MAX_NUMBER_CHARS` number characters and for exponents of three digits or more (only those
can overflow a float), all at C speed.  So neither a 100,000-deep ``[[[…`` nor a 5,000-digit
integer reaches the interpreter's recursion or integer-conversion limits; ``NaN`` and
``Infinity`` are refused by the decoder's ``parse_constant`` hook.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import types
import typing
from typing import Any

import msgspec
from msgspec import Struct

from advisor.errors import MalformedInput, UnreadableInput
from advisor.plausible import Range

#: largest side-input file read (a 145,000-kernel description is 43 MB)
MAX_FILE_BYTES = 64 * 1024 * 1024
#: deepest nesting of arrays and objects (the deepest side input, a saved analysis, uses 6)
MAX_DEPTH = 64
#: most values (array items and object members) in one document: 8 million commas' worth,
#: more than twice the 43 MB description above
MAX_VALUES = 8_000_000
#: longest number literal, sign and exponent included (a float's repr is at most 24 characters)
MAX_NUMBER_CHARS = 100

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_LONG_NUMBER = re.compile(f"[-+0-9.eE]{{{MAX_NUMBER_CHARS + 1},}}")
_BIG_EXPONENT = re.compile(r"[eE]\+?[0-9]{3,}")
_MANTISSA = re.compile(r"-?[0-9.]+$")
_TOO_LONG = f"a number longer than {MAX_NUMBER_CHARS} characters"


class _NumberError(ValueError):
    """A literal the decoder refuses (``NaN``, ``Infinity``)."""

    def __init__(self, literal: str, reason: str) -> None:
        super().__init__(reason)
        self.literal = literal


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """The file's text; an unreadable or too large file is an :class:`UnreadableInput` naming
    ``what``."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise UnreadableInput(where, f"no such file (the {what})") from None
    except IsADirectoryError:
        raise UnreadableInput(where, f"is a directory; give the {what}, a .json file") from None
    except OSError as exc:
        raise UnreadableInput(where, f"cannot read the {what} ({exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableInput(
            where, f"the {what} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableInput(where, f"cannot read the {what} ({exc})") from None


def check_shape(text: str, path: str | os.PathLike[str]) -> None:
    """Refuse a document nested deeper than :data:`MAX_DEPTH` or holding more than
    :data:`MAX_VALUES` values, without decoding it (linear in the text's length)."""
    skeleton = _STRING.sub('""', text)
    values = skeleton.count(",") + skeleton.count("[") + skeleton.count("{")
    if values > MAX_VALUES:
        raise MalformedInput(
            os.fspath(path), f"more than {MAX_VALUES:,} values (array items, object members)"
        )
    brackets = _NOT_BRACKET.sub("", skeleton)
    depth = max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)
    if depth > MAX_DEPTH:
        raise MalformedInput(
            os.fspath(path), f"arrays and objects nested deeper than {MAX_DEPTH} levels"
        )
    long_number = _LONG_NUMBER.search(skeleton)
    if long_number:
        raise _located(text, path, long_number.group(0), _TOO_LONG)
    for match in _BIG_EXPONENT.finditer(skeleton):  # only these can overflow a float
        start = match.start()
        mantissa = _MANTISSA.search(skeleton, max(0, start - MAX_NUMBER_CHARS), start)
        literal = (mantissa.group(0) if mantissa else "") + match.group(0)
        if not _finite(literal):
            raise _located(text, path, literal, f"number {literal} is outside the range of a float")


def _finite(literal: str) -> bool:
    try:
        return math.isfinite(float(literal))
    except ValueError:  # not a number: the decoder says where
        return True


def _located(text: str, path: str | os.PathLike[str], literal: str, reason: str) -> MalformedInput:
    """A :class:`MalformedInput` at the line of ``literal``'s first occurrence in ``text``."""
    at = text.find(literal)
    return MalformedInput(
        os.fspath(path), reason, line=text.count("\n", 0, at) + 1 if at >= 0 else None
    )


def _parse_constant(literal: str) -> float:
    raise _NumberError(literal, f"{literal} is not a JSON number (numbers must be finite)")


def decode(text: str, path: str | os.PathLike[str], *, shape_checked: bool = False) -> Any:
    """``text`` decoded as JSON within the limits; a bad document is a :class:`MalformedInput`
    (at its line when known).  ``shape_checked``: the caller has run :func:`check_shape` on
    this very text already (it is not scanned twice)."""
    where = os.fspath(path)
    if not shape_checked:
        check_shape(text, path)
    try:
        return json.loads(text, parse_constant=_parse_constant)
    except json.JSONDecodeError as exc:
        raise MalformedInput(where, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    except _NumberError as exc:
        raise _located(text, path, exc.literal, str(exc)) from None
    except RecursionError:  # unreachable after check_shape; kept as a last guard
        raise MalformedInput(where, f"nested deeper than {MAX_DEPTH} levels") from None


def validate(document: Any, schema: Any, path: str | os.PathLike[str]) -> None:
    """Check a decoded document against ``schema`` (a :mod:`msgspec` type); the first
    violation is a :class:`MalformedInput` ``path: key.path: what was expected``."""
    try:
        msgspec.convert(document, schema, strict=True)
    except msgspec.ValidationError as exc:
        text = str(exc)
        outside = _outside(document, schema, text)
        if outside is not None:
            raise MalformedInput(os.fspath(path), outside) from None
        if "[...]" in text:  # msgspec does not name the key of a mapping's bad value
            text = _AT.sub(lambda m: f" - at `${_name_keys(document, schema, m.group(1))}`", text)
        raise MalformedInput(os.fspath(path), schema_message(text)) from None


_BOUND = re.compile(r"^Expected `(?:float|int)` [<>]=? ")


def _outside(document: Any, schema: Any, text: str) -> str | None:
    """``key.path: value outside [lo, hi], got V`` when msgspec's ``text`` is a number beyond
    one of a range's bounds (both bounds are read from the key's ``Meta`` constraint: see
    :mod:`advisor.plausible`); None for any other error."""
    at = _AT.search(text)
    if not _BOUND.match(text) or at is None:
        return None
    walked = _walk(document, schema, at.group(1))
    if walked is None:
        return None
    where, value, tp = walked
    bounds = _range_of(tp, value)
    if bounds is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return f"{where.lstrip('.')}: {bounds.outside(value)}"


def _range_of(tp: Any, value: Any) -> Range | None:
    """The range of the ``Annotated`` alternative of ``tp`` whose ``Meta`` bounds a number."""
    alternatives = [tp]
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        alternatives = list(typing.get_args(tp))
    for alternative in alternatives:
        if typing.get_origin(alternative) is not typing.Annotated:
            continue
        base, *extras = typing.get_args(alternative)
        if base is int and not isinstance(value, int):
            continue
        for extra in extras:
            if not isinstance(extra, msgspec.Meta):
                continue
            lo = extra.ge if extra.ge is not None else extra.gt
            hi = extra.le if extra.le is not None else extra.lt
            if lo is not None and hi is not None:
                return Range(lo, hi, lo_open=extra.gt is not None)
    return None


_SEGMENT = re.compile(r"\.([A-Za-z_]\w*)|\[([0-9]+|\.\.\.)\]")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _members(tp: Any) -> list[Any]:
    """The alternatives of a type, ``Annotated`` constraints and unions unwrapped."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _members(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [m for arg in typing.get_args(tp) for m in _members(arg)]
    return [tp]


def _name_keys(document: Any, schema: Any, where: str) -> str:
    """msgspec's error path ``where`` with each ``[...]`` (a mapping's value) replaced by the
    first key whose value breaks the mapping's value type; ``where`` as it is when the walk
    does not fit."""
    walked = _walk(document, schema, where)
    return where if walked is None else walked[0]


def _walk(document: Any, schema: Any, where: str) -> tuple[str, Any, Any] | None:
    """(the path ``where`` with its mapping keys named, the value there, its declared type),
    following msgspec's error path ``where`` through ``document`` and ``schema``; None when the
    walk does not fit."""
    value, tp, out = document, schema, []
    for match in _SEGMENT.finditer(where):
        name, index = match.groups()
        members = _members(tp)
        try:
            if name is not None:
                struct = next(m for m in members if isinstance(m, type) and issubclass(m, Struct))
                field = next(f for f in msgspec.structs.fields(struct) if f.encode_name == name)
                value, tp = value[name], field.type
                out.append(f".{name}")
            elif index != "...":
                listed = next(m for m in members if typing.get_origin(m) is list)
                value, tp = value[int(index)], typing.get_args(listed)[0]
                out.append(f"[{index}]")
            else:
                mapping = next(m for m in members if typing.get_origin(m) is dict)
                tp = typing.get_args(mapping)[1]
                key = next(k for k, v in value.items() if not _fits(v, tp))
                value = value[key]
                out.append(f".{key}" if _IDENTIFIER.fullmatch(key) else f"[{key!r}]")
        except (StopIteration, LookupError, TypeError, AttributeError):
            return None
    return "".join(out), value, tp


def _fits(value: Any, tp: Any) -> bool:
    try:
        msgspec.convert(value, tp, strict=True)
    except msgspec.ValidationError:
        return False
    return True


_AT = re.compile(r" - at `\$(.*)`$")
_TYPE_WORDS = {
    "float": "a number",
    "int": "an integer",
    "str": "a string",
    "bool": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}
_TYPE = re.compile(r"`([a-z]+(?: \| [a-z]+)*)`")
_WHOLE = re.compile(r"(?<=[<>=] )(-?[0-9]+)\.0\b")  # ">= 0.0" as ">= 0"


def schema_message(text: str) -> str:
    """msgspec's ``Expected `float` >= 0, got `str` - at `$.kernels[3].blocks``` as
    ``kernels[3].blocks: expected a number >= 0, got a string``."""
    match = _AT.search(text)
    key = match.group(1).lstrip(".") if match else ""
    what = text[: match.start()] if match else text

    def word(m: re.Match[str]) -> str:
        return " or ".join(_TYPE_WORDS.get(t, t) for t in m.group(1).split(" | "))

    what = _TYPE.sub(word, what).replace("`", "'")
    what = _WHOLE.sub(r"\1", what)
    what = what.replace("Object missing required field", "missing required key")
    what = what.replace("Object contains unknown field", "unknown key")
    what = what[:1].lower() + what[1:]
    return f"{key}: {what}" if key else what


def load(path: str | os.PathLike[str], what: str, schema: Any = None) -> Any:
    """The decoded JSON document of ``path`` (``what`` names the kind of file in errors),
    checked against ``schema`` when given."""
    document = decode(read_text(path, what), path)
    if schema is not None:
        validate(document, schema, path)
    return document
