"""CI gates: ``report --fail-if EXPR`` conditions on the analysis, checked without ``eval``.

Grammar (one condition per option, spaces allowed around OP)::

    EXPR   := NAME OP NUMBER
    NAME   := potential_speedup | gpu_time_ms | hints | HOSTSYNC | <criterion name>
    OP     := > | >= | < | <= | == | !=
    NUMBER := [+-] (DIGITS [. DIGITS?] | . DIGITS) [(e|E) [+-] DIGITS], a finite value

An expression is at most :data:`MAX_EXPRESSION_CHARS` characters and is read by a small
tokenizer in one pass (no backtracking regular expression), so its cost is linear in its length;
a longer one, a NaN or infinite threshold, or anything off the grammar is a usage error.

``potential_speedup``, ``gpu_time_ms``, ``hints`` and ``HOSTSYNC`` are application values; a
per-kernel criterion (``SHMEM_EFFICIENCY<0.5``) fails when ANY kernel's computed value meets the
condition.  A kernel for which the criterion does not apply (status ``not_applicable``: a kernel
without shared-memory accesses has no SHMEM_EFFICIENCY) cannot fail it.

A condition that cannot be evaluated -- an application value that is null, or a criterion that
is not computable for some kernel (its inputs are missing) while no kernel fails it -- is not
silently true: :func:`check` returns it with the reason, and :func:`failures` counts it as a
failure unless ``allow_missing`` (``report --allow-missing``).  Each failed or unevaluated
condition gives one line; the command then exits with code 4 (:data:`advisor.errors.EXIT_GATE`).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from advisor.criteria import CRITERIA
from advisor.errors import UsageError
from advisor.render.display import shorten

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
APPLICATION_NAMES = ("potential_speedup", "gpu_time_ms", "hints")
#: longest --fail-if expression: a condition is a name, an operator and a number
MAX_EXPRESSION_CHARS = 4096
# each token pattern has one way to match a given text (no nested or adjacent repeats of the
# same characters), and each is tried once, at one position
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OP = re.compile(r">=|<=|==|!=|>|<")
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_NOT_FINITE = {"nan", "inf", "infinity"}


@dataclass(frozen=True)
class Condition:
    name: str
    op: str
    limit: float
    text: str

    def holds(self, value: float) -> bool:
        return _OPS[self.op](value, self.limit)


def parse(text: str) -> Condition:
    """One ``--fail-if`` expression; a bad one is a usage error (exit 2)."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise UsageError(
            f"--fail-if: expression of {len(text):,} characters; "
            f"at most {MAX_EXPRESSION_CHARS:,} (NAME OP NUMBER)"
        )
    name, op, number = _tokens(text)
    if name not in APPLICATION_NAMES and name not in CRITERIA:
        known = ", ".join((*APPLICATION_NAMES, *CRITERIA))
        raise UsageError(f"--fail-if {text!r}: unknown name {name!r}; use one of {known}")
    limit = float(number)
    if not math.isfinite(limit):
        raise UsageError(f"--fail-if {text!r}: the threshold {number} is not a finite number")
    return Condition(name, op, limit, text.strip())


def _tokens(text: str) -> tuple[str, str, str]:
    """NAME, OP and NUMBER of an expression, each matched once at its position."""
    body = text.strip()
    name = _NAME.match(body)
    op = _OP.match(body, name.end() + _spaces(body, name.end())) if name else None
    start = op.end() + _spaces(body, op.end()) if op else 0
    number = _NUMBER.match(body, start) if op else None
    if name is None or op is None or number is None or number.end() != len(body):
        rest = body[start:].strip().lower().lstrip("+-")
        if op is not None and rest in _NOT_FINITE:
            raise UsageError(f"--fail-if {text!r}: the threshold must be a finite number")
        raise UsageError(
            f"--fail-if {text!r}: expected NAME OP NUMBER, e.g. potential_speedup>2 or "
            "SHMEM_EFFICIENCY<0.5"
        )
    return name.group(0), op.group(0), number.group(0)


def _spaces(text: str, start: int) -> int:
    """How many whitespace characters follow ``start``."""
    return len(text[start:]) - len(text[start:].lstrip())


_NA = "not computable: "
#: what a "gate not evaluated" failure tells the user to do
ADVICE = "collect the missing data, or give --allow-missing to let it pass"
#: how many missing inputs a "not evaluated" line names before "…"
MISSING_SHOWN = 3


@dataclass(frozen=True)
class _Value:
    """One value a condition is checked on: ``number``, else ``reason`` says why it is missing
    (None: the value does not apply to this subject, which cannot fail the condition)."""

    subject: str
    number: float | None
    reason: str | None = None


def check(conditions: list[Condition], data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The conditions on the analysis JSON ``data`` (``to_json`` output): one line per condition
    that holds (``gate failed: …``), and one per condition that could not be evaluated
    (``gate not evaluated: …``, with what is missing)."""
    failed: list[str] = []
    unevaluated: list[str] = []
    for cond in conditions:
        values = _values(cond.name, data)
        lines = [
            f"gate failed: {cond.text} ({v.subject}: {cond.name} = {v.number:.4g})"
            for v in values
            if v.number is not None and cond.holds(v.number)
        ]
        missing = [v for v in values if v.number is None and v.reason is not None]
        failed += lines
        if missing and not lines:  # a value that holds decides; else a missing one might
            unevaluated.append(_not_evaluated(cond, missing, len(values)))
    return failed, unevaluated


def failures(
    conditions: list[Condition], data: Mapping[str, Any], allow_missing: bool = False
) -> list[str]:
    """One line per condition that holds on the analysis JSON ``data`` (``to_json`` output), and
    one per condition that could not be evaluated unless ``allow_missing``."""
    failed, unevaluated = check(conditions, data)
    return failed if allow_missing else failed + [f"{u}; {ADVICE}" for u in unevaluated]


def _not_evaluated(cond: Condition, missing: list[_Value], subjects: int) -> str:
    first = missing[0]
    if first.subject == "application":
        where = first.reason
    else:
        where = f"for {len(missing)} of {subjects} kernels; {first.subject}: {first.reason}"
    return f"gate not evaluated: {cond.name} is not computable ({where}) for --fail-if {cond.text}"


def _values(name: str, data: Mapping[str, Any]) -> list[_Value]:
    app = data["application"]
    if name == "potential_speedup":
        basis = str(app.get("potential_speedup_basis") or "no kernel estimate")
        return [_Value("application", app["potential_speedup"], basis.removeprefix(_NA))]
    if name == "gpu_time_ms":
        ns = app["gpu_time_ns"]
        return [
            _Value(
                "application",
                None if ns is None else ns / 1e6,
                "the profile has no kernel durations",
            )
        ]
    if name == "hints":
        return [_Value("application", float(len(app["hints"])))]
    tools = {str(i.get("profiler")) for i in data.get("inputs") or ()}
    tool = tools.pop() if len(tools) == 1 else None
    if name == "HOSTSYNC":
        return [_criterion_value("application", app["HOSTSYNC"], tool)]
    return [
        _criterion_value(f"kernel {shorten(k['name'])}", k["criteria"][name], tool)
        for k in data["kernels"]
        if name in k["criteria"]
    ]


def _criterion_value(subject: str, result: Mapping[str, Any], tool: str | None) -> _Value:
    """A criterion's value, or why it is missing: the missing metrics under the names of
    ``tool`` (the profiler of every input) when known, else the advisor's names, else the
    criterion's first note."""
    value = result.get("value")
    if value is not None:
        return _Value(subject, value)
    if result.get("status") == "not_applicable":
        return _Value(subject, None)
    by_tool = (result.get("missing_tool_metrics") or {}).get(tool) if tool else None
    missing = [str(m) for m in by_tool or result.get("missing") or ()]
    if missing:
        shown = ", ".join(missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
        reason = f"missing {shown}{more}"
    else:
        notes = [str(n) for n in result.get("notes") or ()]
        reason = notes[0] if notes else "its inputs are missing"
    return _Value(subject, None, reason)
