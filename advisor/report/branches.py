"""What a kernel's divergent branches test: the thread's index or the data it reads.

DIVERGENCE's remedy depends on it: a branch on ``threadIdx`` (``if (threadIdx.x % 2)``) is fixed
by restructuring the work so a whole warp takes the same side (branch on ``threadIdx.x / 32``),
while a branch on loaded data (``if (a[i] > 0)``) is fixed by reordering, sorting or binning the
data so neighbouring threads see alike values.

The heuristic (docs/locations.md, "DIVERGENCE: thread index or data"), on the SASS of the
instructions the report holds, in PC order per function:

1. the branches: the guarded ``BRA``/``BRX``/``JMP`` instructions with divergent branch targets
   (``smsp__branch_targets_threads_divergent``); without that counter, the guarded instructions
   with the most inactive lanes;
2. for each, the instruction that last writes its guard predicate before it (``ISETP``,
   ``FSETP``, ``PLOP3``...), and backwards from that the last writer of each source register
   or predicate, up to :data:`DEPTH` steps: a value read from ``SR_TID``/``SR_LANEID``
   (``S2R``) is the thread's index; one loaded from memory (``LDG``, ``LDS``, ``LD``, ``LDL``,
   atomics, texture, shuffles) is data; block indices, constants (``c[...]``, ``LDC``) and
   uniform registers are the same for the whole warp and end the walk;
3. each branch is ``thread_index``, ``data``, ``mixed`` (both) or ``unknown`` (no origin found:
   a loop-carried value whose writer lies after the branch, or instructions never executed);
   the kernel's kind is that of the largest weight (divergent targets, or inactive lanes).

Straight-line and approximate: it follows the last writer in PC order, not the control flow, so
a value set on one side of an earlier branch counts as written; it reads only executed
instructions.  It names the evidence (the branch, the comparison and the origin) so a reader can
check it on Nsight Compute's Source page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

#: backward steps followed from a branch's predicate
DEPTH = 16
#: guarded instructions examined when the report has no divergent-branch counter
FALLBACK_INSTRUCTIONS = 10
_GUARD = re.compile(r"^\s*@!?(P[0-6])\s+")
_REG = re.compile(r"\b(R\d+|P[0-6])(?:\.64)?\b")
_BRANCHES = ("BRA", "BRX", "JMP", "JMX")
_THREAD = ("SR_TID", "SR_LANEID", "SR_LTMASK", "SR_LEMASK", "SR_GTMASK", "SR_GEMASK")
_LOADS = ("LDG", "LDS", "LD", "LDL", "LDSM", "ATOM", "ATOMS", "ATOMG", "RED", "TEX", "TLD",
          "TLD4", "SULD", "SHFL", "MATCH", "VOTE")  # fmt: skip


def _split(sass: str) -> tuple[str | None, str, list[str]]:
    """(guard predicate, opcode, operands) of one SASS instruction."""
    text = sass.strip().rstrip(";").strip()
    guard = None
    m = _GUARD.match(text)
    if m:
        guard, text = m.group(1), text[m.end() :]
    head, _, rest = text.partition(" ")
    operands = [o.strip() for o in rest.split(",")] if rest.strip() else []
    return guard, head, operands


def _destinations(opcode: str, operands: list[str]) -> set[str]:
    """The registers and predicates an instruction writes: its first operand, the second too for
    a ``*SETP`` (two predicate results) and a predicate right after the first (a carry out)."""
    if not operands:
        return set()
    out = {r for r in _REG.findall(operands[0])}
    if len(operands) > 1 and (opcode.split(".")[0].endswith("SETP") or
                              re.fullmatch(r"P[0-6]", operands[1])):  # fmt: skip
        out |= set(_REG.findall(operands[1]))
    first = _REG.findall(operands[0])
    if first and first[0].startswith("R") and operands[0].endswith(".64"):
        out.add(f"R{int(first[0][1:]) + 1}")
    return out


def _sources(opcode: str, operands: list[str], guard: str | None) -> list[str]:
    skip = 2 if opcode.split(".")[0].endswith("SETP") else 1
    regs = [r for o in operands[skip:] if not o.startswith("c[") for r in _REG.findall(o)]
    return regs + ([guard] if guard else [])


def _origin(opcode: str, operands: list[str]) -> str | None:
    """thread | data | uniform for an instruction that ends the walk; None to go on."""
    base = opcode.split(".")[0]
    if base in ("S2R", "CS2R"):
        return "thread" if any(t in " ".join(operands) for t in _THREAD) else "uniform"
    if base in _LOADS:
        return "data"
    if base in ("LDC", "ULDC", "S2UR") or base.startswith("U"):
        return "uniform"
    return None


def classify_branch(
    code: list[tuple[str, str | None, str, list[str]]], at: int
) -> tuple[set[str], str]:
    """The origins (``thread``, ``data``) of the guard predicate of instruction ``at`` of
    ``code`` (one function's instructions in PC order: (sass, guard, opcode, operands)), and the
    evidence: the comparison and the first origin found."""
    guard = code[at][1]
    if guard is None:
        return set(), ""
    origins: set[str] = set()
    evidence: list[str] = []
    seen: set[tuple[str, int]] = set()
    todo: list[tuple[str, int, int]] = [(guard, at, 0)]  # (register, before index, depth)
    while todo:
        reg, before, depth = todo.pop()
        if depth > DEPTH or (reg, before) in seen or reg in ("RZ", "PT"):
            continue
        seen.add((reg, before))
        for j in range(before - 1, -1, -1):
            sass, g, opcode, operands = code[j]
            if reg not in _destinations(opcode, operands):
                continue
            if depth == 0:
                evidence.append(sass)
            origin = _origin(opcode, operands)
            if origin in ("thread", "data"):
                if origin not in origins:
                    evidence.append(sass)
                origins.add(origin)
            elif origin is None:
                todo.extend((s, j, depth + 1) for s in _sources(opcode, operands, g))
            break
    return origins, " <- ".join(dict.fromkeys(evidence))


def _shown(sass: str) -> str:
    """An instruction as the evidence names it: one space between words, a branch's target
    address left out (it differs from run to run of the same code)."""
    text = " ".join(sass.split())
    return re.sub(r"^((?:@!?P\d )?(?:BRA|BRX|JMP|JMX)\S*) 0x[0-9a-f]+", r"\1", text)


def _kind(origins: set[str]) -> str:
    if origins == {"thread"}:
        return "thread_index"
    if origins == {"data"}:
        return "data"
    return "mixed" if origins else "unknown"


def branch_kind(
    rows: pd.DataFrame, lanes: np.ndarray, sass_of: Callable[[int], str]
) -> dict[str, Any] | None:
    """``{"kind", "branches", "evidence", "by_kind"}`` for the divergent branches of the
    instruction ``rows`` (module docstring), ``lanes`` the inactive lanes of each row; None
    where no guarded instruction is a candidate."""
    if not len(rows):
        return None
    frame = pd.DataFrame(
        {
            "function": rows["function"].to_numpy(),
            "pc": rows["pc"].to_numpy(),
            "pc_offset": rows["pc_offset"].to_numpy(),
            "divergent": (
                rows["branch_targets_threads_divergent"].to_numpy(dtype=np.float64)
                if "branch_targets_threads_divergent" in rows
                else np.zeros(len(rows))
            ),
            "lanes": lanes,
        }
    )
    frame = (
        frame.groupby(["function", "pc"], sort=False, as_index=False)
        .agg({"pc_offset": "first", "divergent": "sum", "lanes": "sum"})
        .sort_values(["function", "pc_offset"], kind="stable")
    )
    by_diverging = frame["divergent"].sum() > 0
    weights: dict[str, float] = {}
    best: dict[str, tuple[float, str]] = {}  # kind -> (weight, evidence) of its heaviest branch
    branches = 0
    for _, part in frame.groupby("function", sort=True):
        code = [(s, *_split(s)) for s in (sass_of(int(pc)) for pc in part["pc"])]
        parsed = [(s, g, op, ops) for s, g, op, ops in code]
        if by_diverging:
            candidates = [
                i for i, w in enumerate(part["divergent"].tolist())
                if w > 0 and parsed[i][1] is not None
                and parsed[i][2].split(".")[0] in _BRANCHES
            ]  # fmt: skip
            weight = part["divergent"].tolist()
        else:
            weight = part["lanes"].tolist()
            guarded = [i for i, c in enumerate(parsed) if c[1] is not None and weight[i] > 0]
            candidates = sorted(guarded, key=lambda i: -weight[i])[:FALLBACK_INSTRUCTIONS]
        for i in candidates:
            origins, evidence = classify_branch(parsed, i)
            kind = _kind(origins)
            branches += 1
            weights[kind] = weights.get(kind, 0.0) + float(weight[i])
            if kind not in best or weight[i] > best[kind][0]:
                best[kind] = (
                    float(weight[i]),
                    _shown(f"{parsed[i][0]} <- {evidence}".rstrip(" <-")),
                )
    if not branches:
        return None
    known = {k: w for k, w in weights.items() if k != "unknown"}
    kind = max(sorted(known), key=lambda k: known[k]) if known else "unknown"
    return {
        "kind": kind,
        "branches": branches,
        "by": "divergent branch targets" if by_diverging else "inactive lanes",
        "weights": {k: weights[k] for k in sorted(weights)},
        "evidence": best[kind][1] if kind in best else "",
    }
