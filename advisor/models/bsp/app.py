"""Application description files for the BSP model (seed 000 §V; MODELS.md §3).

The paper derives each kernel's per-thread counts from its source code as functions of the input
size N (§V: "Comp ... ld0/st0, ld1/st1 ... extracted from the application source codes") and the
cache hit rates from a profile.  An application description file writes exactly that down, as
JSON whose values are numbers or expressions of ``N``::

    {
      "name": "matMul-Gm-Un-SP",
      "threads": "N**2",
      "comp": "N",
      "ld0": 0, "st0": 0,
      "ld1": "2*N", "st1": 1,
      "l1_hit_rate": 0, "l2_hit_rate": 0.02
    }

Required: ``threads``, ``comp``, ``ld1``, ``st1``.  Optional (default 0): ``ld0``, ``st0``,
``l1_hit_rate``, ``l2_hit_rate``.  Optional text: ``name``, ``description``, ``source``; optional
``version`` (1); optional ``latency_cycles`` (numbers for ``g_sm``, ``g_gm``, ``g_l1``,
``g_l2``, overriding the paper's 5 / 500 / 5 / 250).  Any other key is an error (a typo would
otherwise silently count as 0).

Expressions are parsed with :mod:`ast` and evaluated by walking the tree; nothing is ever passed
to ``eval``.  Allowed: numbers, the name ``N``, ``+ - * / // % **``, unary ``-``/``+``,
parentheses and the functions in :data:`FUNCTIONS`.  Everything else (other names, attribute
access, subscripts, strings, lambdas, comprehensions, keyword arguments) is rejected with a
message naming it.  Arithmetic is done in floats, so ``10**10**10`` overflows instead of
building a huge integer.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor import jsonfile, sideinputs
from advisor.errors import MalformedInput
from advisor.models.bsp import DEFAULT_LATENCIES, Latencies, ThreadCounts

#: the only name an expression may use: the input size
SIZE_NAME = "N"
#: longest expression accepted: a description is a short formula; this bounds parser recursion
MAX_EXPRESSION_CHARS = 400
#: the functions an expression may call (all of one or two float arguments)
FUNCTIONS: dict[str, Callable[..., float]] = {
    "log2": math.log2,
    "log10": math.log10,
    "log": math.log,
    "sqrt": math.sqrt,
    "ceil": lambda x: float(math.ceil(x)),
    "floor": lambda x: float(math.floor(x)),
    "abs": abs,
    "min": min,
    "max": max,
}
_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: float(a // b),
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: float(a**b),
}
_UNARY: dict[type, Callable[[float], float]] = {
    ast.USub: lambda a: -a,
    ast.UAdd: lambda a: a,
}

REQUIRED_FIELDS = ("threads", "comp", "ld1", "st1")
OPTIONAL_FIELDS = ("ld0", "st0", "l1_hit_rate", "l2_hit_rate")
TEXT_FIELDS = ("name", "description", "source")
LATENCY_KEYS = {
    "g_sm": "shared_cycles",
    "g_gm": "global_cycles",
    "g_l1": "l1_cycles",
    "g_l2": "l2_cycles",
}
APP_FORMAT_VERSION = 1


class ExpressionError(ValueError):
    """An expression of N is not allowed or cannot be evaluated."""


@dataclass(frozen=True)
class SizeExpression:
    """A checked arithmetic expression of the input size N; call it with a value of N."""

    text: str
    tree: ast.expr = field(repr=False, compare=False)

    def __call__(self, n: float) -> float:
        try:
            value = _evaluate(self.tree, float(n))
        except OverflowError:
            raise ExpressionError(f"{self.text!r} at N={n:g}: result too large") from None
        except (ZeroDivisionError, ValueError, TypeError) as exc:
            raise ExpressionError(f"{self.text!r} at N={n:g}: {exc}") from None
        if not math.isfinite(value):
            raise ExpressionError(f"{self.text!r} at N={n:g} is not finite")
        return value


def parse_expression(source: str | int | float) -> SizeExpression:
    """Check ``source`` (a number, or an expression of N as text) and return it callable."""
    if isinstance(source, bool):
        raise ExpressionError("expected a number or an expression of N, got a boolean")
    if isinstance(source, int | float):
        if not math.isfinite(source):
            raise ExpressionError(f"{source!r} is not a finite number")
        return SizeExpression(repr(source), ast.Constant(value=float(source)))
    if not isinstance(source, str):
        raise ExpressionError(
            f"expected a number or an expression of N, got {type(source).__name__}"
        )
    text = source.strip()
    if not text:
        raise ExpressionError("empty expression")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{text!r} is not a valid expression ({exc.msg})") from None
    except ValueError as exc:  # e.g. a NUL character
        raise ExpressionError(f"{text!r} is not a valid expression ({exc})") from None
    _check(tree.body, text)
    return SizeExpression(text, tree.body)


def _check(node: ast.AST, text: str) -> None:
    """Reject every node that is not a number, N, an allowed operator or an allowed call."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"{text!r}: only numbers may appear as constants")
        return
    if isinstance(node, ast.Name):
        if node.id != SIZE_NAME:
            raise ExpressionError(
                f"{text!r}: unknown name {node.id!r}; only {SIZE_NAME} (the input size) may appear"
            )
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise ExpressionError(f"{text!r}: operator {type(node.op).__name__} is not allowed")
        _check(node.left, text)
        _check(node.right, text)
        return
    if isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise ExpressionError(f"{text!r}: operator {type(node.op).__name__} is not allowed")
        _check(node.operand, text)
        return
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            _check(node.func, text)  # names the attribute
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            called = node.func.id if isinstance(node.func, ast.Name) else "an expression"
            raise ExpressionError(
                f"{text!r}: calling {called!r} is not allowed "
                f"(allowed functions: {', '.join(sorted(FUNCTIONS))})"
            )
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not node.args:
            raise ExpressionError(f"{text!r}: {node.func.id}() takes plain positional arguments")
        for arg in node.args:
            _check(arg, text)
        return
    if isinstance(node, ast.Attribute):
        raise ExpressionError(f"{text!r}: attribute access (.{node.attr}) is not allowed")
    raise ExpressionError(f"{text!r}: {type(node).__name__} is not allowed in an expression")


def _evaluate(node: ast.expr, n: float) -> float:
    """Value of a tree accepted by :func:`_check`, with N = n (float arithmetic)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name):
        return n
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, n), _evaluate(node.right, n))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, n))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return float(FUNCTIONS[node.func.id](*(_evaluate(a, n) for a in node.args)))
    raise ExpressionError(f"{type(node).__name__} is not allowed")  # unreachable after _check


@dataclass(frozen=True)
class AppDescription:
    """Per-thread counts of one kernel as expressions of N (seed 000 §IV-V)."""

    name: str
    path: str
    threads: SizeExpression
    comp: SizeExpression
    ld0: SizeExpression
    st0: SizeExpression
    ld1: SizeExpression
    st1: SizeExpression
    l1_hit_rate: SizeExpression
    l2_hit_rate: SizeExpression
    latencies: Latencies = DEFAULT_LATENCIES
    description: str = ""
    source: str = ""

    def counts(self, n: float) -> ThreadCounts:
        """The per-thread counts at input size ``n``; an :class:`InputError` names the field."""
        values: dict[str, float] = {}
        for name in (*REQUIRED_FIELDS, *OPTIONAL_FIELDS):
            try:
                values[name] = getattr(self, name)(n)
            except ExpressionError as exc:
                raise MalformedInput(self.path, f"field {name!r}: {exc}") from None
        try:
            return ThreadCounts(
                threads=values["threads"],
                comp_cycles=values["comp"],
                shared_loads=values["ld0"],
                shared_stores=values["st0"],
                global_loads=values["ld1"],
                global_stores=values["st1"],
                l1_hit_rate=values["l1_hit_rate"],
                l2_hit_rate=values["l2_hit_rate"],
            )
        except ValueError as exc:
            raise MalformedInput(self.path, f"at N={n:g}: {exc}") from None

    def expressions(self) -> dict[str, str]:
        """Field name -> expression text, in file order of the paper's terms."""
        return {name: getattr(self, name).text for name in (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)}


def read_app(path: str | Path) -> AppDescription:
    """Read and check an application description file (format in the module docstring)."""
    return app_from_mapping(jsonfile.load(path, "application file"), str(path))


def app_from_mapping(data: Any, path: str) -> AppDescription:
    """Build an :class:`AppDescription` from decoded JSON; ``path`` names it in errors."""
    if not isinstance(data, dict):
        raise MalformedInput(path, "expected a JSON object of per-thread counts")
    jsonfile.validate(data, sideinputs.APP, path)
    known = {*REQUIRED_FIELDS, *OPTIONAL_FIELDS, *TEXT_FIELDS, "version", "latency_cycles"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise MalformedInput(
            path,
            f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(known))}",
        )
    missing = [name for name in REQUIRED_FIELDS if name not in data]
    if missing:
        raise MalformedInput(path, f"missing required key(s) {', '.join(map(repr, missing))}")
    version = data.get("version", APP_FORMAT_VERSION)
    if version != APP_FORMAT_VERSION:
        raise MalformedInput(path, f"version {version!r} is not supported (expected 1)")
    expressions: dict[str, SizeExpression] = {}
    for name in (*REQUIRED_FIELDS, *OPTIONAL_FIELDS):
        try:
            expressions[name] = parse_expression(data.get(name, 0))
        except ExpressionError as exc:
            raise MalformedInput(path, f"field {name!r}: {exc}") from None
    texts = {name: data.get(name, "") for name in TEXT_FIELDS}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise MalformedInput(path, f"field {name!r} must be text")
    return AppDescription(
        name=texts["name"] or Path(path).stem,
        path=path,
        latencies=_latencies(data.get("latency_cycles", {}), path),
        description=texts["description"],
        source=texts["source"],
        **expressions,
    )


def _latencies(data: Any, path: str) -> Latencies:
    if not isinstance(data, dict):
        raise MalformedInput(path, 'latency_cycles must be an object like {"g_gm": 500}')
    unknown = sorted(set(data) - set(LATENCY_KEYS))
    if unknown:
        raise MalformedInput(
            path,
            f"latency_cycles: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(LATENCY_KEYS)}",
        )
    values: dict[str, float] = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MalformedInput(path, f"latency_cycles.{key} must be a number of cycles")
        values[LATENCY_KEYS[key]] = float(value)
    try:
        return Latencies(**values)
    except ValueError as exc:
        raise MalformedInput(path, f"latency_cycles: {exc}") from None
