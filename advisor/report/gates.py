"""CI gates: ``report --fail-if EXPR`` conditions on the analysis, checked without ``eval``.

Grammar (one condition per option)::

    EXPR   := NAME OP NUMBER
    NAME   := potential_speedup | gpu_time_ms | hints | HOSTSYNC | <criterion name>
    OP     := > | >= | < | <= | == | !=

``potential_speedup``, ``gpu_time_ms``, ``hints`` and ``HOSTSYNC`` are application values; a
per-kernel criterion (``SHMEM_EFFICIENCY<0.5``) fails when ANY kernel's computed value meets the
condition (a criterion that is not computable never fails a gate).  Each failed condition gives
one line; the command then exits with code 4 (:data:`advisor.errors.EXIT_GATE`).
"""

from __future__ import annotations

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
_EXPR = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|==|!=|>|<)\s*"
    r"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$"
)


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
    match = _EXPR.match(text)
    if match is None:
        raise UsageError(
            f"--fail-if {text!r}: expected NAME OP NUMBER, e.g. potential_speedup>2 or "
            "SHMEM_EFFICIENCY<0.5"
        )
    name, op, number = match.groups()
    if name not in APPLICATION_NAMES and name not in CRITERIA:
        known = ", ".join((*APPLICATION_NAMES, *CRITERIA))
        raise UsageError(f"--fail-if {text!r}: unknown name {name!r}; use one of {known}")
    return Condition(name, op, float(number), text.strip())


def failures(conditions: list[Condition], data: Mapping[str, Any]) -> list[str]:
    """One line per condition that holds on the analysis JSON ``data`` (``to_json`` output)."""
    lines = []
    for cond in conditions:
        for subject, value in _values(cond.name, data):
            if value is not None and cond.holds(value):
                lines.append(f"gate failed: {cond.text} ({subject}: {cond.name} = {value:.4g})")
    return lines


def _values(name: str, data: Mapping[str, Any]) -> list[tuple[str, float | None]]:
    app = data["application"]
    if name == "potential_speedup":
        return [("application", app["potential_speedup"])]
    if name == "gpu_time_ms":
        ns = app["gpu_time_ns"]
        return [("application", None if ns is None else ns / 1e6)]
    if name == "hints":
        return [("application", float(len(app["hints"])))]
    if name == "HOSTSYNC":
        return [("application", app["HOSTSYNC"]["value"])]
    return [
        (f"kernel {shorten(k['name'])}", k["criteria"][name]["value"])
        for k in data["kernels"]
        if name in k["criteria"]
    ]
