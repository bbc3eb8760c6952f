"""``compare`` per source line: what changed, location by location, between two versions of a
kernel (docs/locations.md, "compare per line").

For every pair of kernels that ``compare`` matched between consecutive versions and whose
profiles both hold per-instruction data (an Nsight Compute report with the SourceCounters
section, :mod:`parsers.ncu.source_counters`), the instruction rows of each side (at most
:data:`advisor.report.locations.MAX_LAUNCHES` launches, summed) are matched location by
location (:func:`match_rows`):

* **by source line** when both sides have line info: instructions fold into their source line
  and lines match by the file's base name and the line number (``conv.cu:54`` in both; the
  folder may differ between versions, as when each version lives in its own directory);
  instructions without line info are matched as below;
* **by function and SASS opcode sequence** otherwise: per function (the kernel's entry function
  with the entry function, called functions in order of their start), the two opcode
  sequences in PC order are aligned (:class:`difflib.SequenceMatcher`, no junk heuristic);
  aligned instructions pair up; inside a block whose opcodes differ, the opcodes are aligned
  again by mnemonic (``LDG.E`` with ``LDG.E.128``) and what still differs pairs in order; the
  rest exist in one version only.

A location present in one version only counts 0 in the other.  Per location it compares
(:data:`COUNTS`, :func:`measures`) the instructions executed, the excess global sectors, the
excess shared wavefronts and the inactive lanes (the wastes of docs/locations.md) as counts,
and the PC samples and the samples of the top stall reasons as shares of the kernel's samples
(sample counts grow with the kernel's duration, shares do not).  A location's *change* is the
largest, over its measures, of ``|after - before|`` divided by the larger kernel total of that
count (for a share: the difference of the shares); the :data:`TOP_CHANGED` locations whose
change is at least :data:`MIN_CHANGE` are listed, largest first (ties: the earlier version's
order, then the later's), each with the measures that moved by at least
:data:`MIN_MEASURE_CHANGE`.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

#: locations listed per kernel pair
TOP_CHANGED = 5
#: a location is listed when one of its measures moved by at least this (normalised) amount
MIN_CHANGE = 0.05
#: a measure of a listed location is printed when it moved by at least this much
MIN_MEASURE_CHANGE = 0.01
#: measures printed per location in the HTML and Markdown (the JSON keeps every one that moved)
SHOWN_MEASURES = 3
#: kernel pairs whose locations are read (the comparison's longest tracks first)
LOCATION_KERNELS = 10
#: stall reasons compared (the top ones by samples of either version)
TOP_STALLS = 3
LANES = 32
#: measure -> instruction-row column, compared as counts
COUNTS: tuple[tuple[str, str], ...] = (
    ("instructions executed", "inst_executed"),
    ("excess sectors", "l2_sectors_global_excessive"),
    ("excess shared wavefronts", "l1_wavefronts_shared_excessive"),
    ("inactive lanes", "inactive_lanes"),
)
BY_LINE = "source line"
BY_OPCODES = "function + SASS opcode sequence"


@dataclass(frozen=True)
class Rows:
    """One version's instruction rows of a kernel (summed over its launches by PC) and, for an
    Nsight Compute report, the :class:`~parsers.ncu.source_counters.Code` that disassembles
    the PCs whose SASS the opcode alignment needs (None: the rows' ``opcode`` is all there is)."""

    frame: pd.DataFrame
    code: Any = None


RowsOf = Callable[[int, str], "Rows | None"]  # (version index, kernel) -> rows or None


@dataclass(frozen=True)
class Change:
    """One measure of one location in both versions."""

    measure: str
    unit: str  # "count" or "share"
    before: float
    after: float
    change: float  # normalised (module docstring)


@dataclass(frozen=True)
class LocationChange:
    """One location matched between two versions (``before``/``after`` empty where absent)."""

    before: str
    after: str
    opcodes: str
    change: float
    changes: tuple[Change, ...]

    @property
    def label(self) -> str:
        """``conv.cu:54``; ``relu+0x0080 → relu+0x0070`` where the two places differ."""
        if not self.before or not self.after:
            return self.before or self.after
        return self.before if self.before == self.after else f"{self.before} → {self.after}"

    @property
    def only_in(self) -> str:
        """`` (only in the earlier version)`` / ``... later ...`` / empty."""
        if not self.before:
            return " (only in the later version)"
        return " (only in the earlier version)" if not self.after else ""


@dataclass(frozen=True)
class KernelLocations:
    """The location changes of one kernel pair; ``not_read`` says why there are none."""

    kernel: str
    to_kernel: str
    display_name: str
    from_version: str
    to_version: str
    matched_by: str = ""  # BY_LINE or BY_OPCODES
    locations: tuple[LocationChange, ...] = ()
    compared: int = 0  # locations matched or present on one side
    not_read: str = ""
    measures: tuple[str, ...] = field(default=())


def inactive_lanes(rows: pd.DataFrame) -> np.ndarray:
    """Lanes that issued nothing x instructions, per row (the DIVERGENCE waste,
    :func:`advisor.report.locations.waste`)."""
    executed = rows["inst_executed"].to_numpy(dtype=np.float64)
    true = rows["thread_inst_executed_true"].to_numpy(dtype=np.float64)
    return np.clip(LANES * executed - true, 0, None)


def stall_reasons(before: pd.DataFrame, after: pd.DataFrame) -> list[str]:
    """The stall columns among the top :data:`TOP_STALLS` by samples of either version."""
    out: list[str] = []
    for rows in (before, after):
        columns = [c for c in rows.columns if c.startswith("stall_")]
        sums = {c: float(rows[c].sum()) for c in columns}
        ranked = sorted((c for c in columns if sums[c] > 0), key=lambda c: (-sums[c], c))
        out += [c for c in ranked[:TOP_STALLS] if c not in out]
    return out


def measures(rows: pd.DataFrame, stalls: Sequence[str]) -> dict[str, tuple[str, np.ndarray]]:
    """measure -> (unit, per-row values) of instruction ``rows``: the counts of :data:`COUNTS`
    and, as shares of the kernel's PC samples, the samples and each of ``stalls``."""

    def col(name: str) -> np.ndarray:
        if name not in rows:
            return np.zeros(len(rows))
        return rows[name].to_numpy(dtype=np.float64)

    out: dict[str, tuple[str, np.ndarray]] = {}
    for name, column in COUNTS:
        if column == "inactive_lanes":
            out[name] = ("count", inactive_lanes(rows))
        elif column in rows:
            out[name] = ("count", col(column))
    samples = col("samples")
    total = float(samples.sum())
    if total > 0:
        out["samples"] = ("share", samples / total)
        for column in stalls:
            reason = column.removeprefix("stall_").replace("_", "-")
            out[f"{reason} samples"] = ("share", col(column) / total)
    return out


def _place(row: pd.Series, by_line: bool) -> str:
    if by_line and int(row["line"]) > 0:
        return f"{row['file']}:{int(row['line'])}"
    return f"{row['function']}+{int(row['pc_offset']):#06x}"


def _function_roles(rows: pd.DataFrame) -> list[str]:
    """Each row's function as a role shared across versions: ``entry`` for the kernel's own
    function, ``called N`` for the N-th called function by start PC."""
    functions = rows["function"].tolist()
    starts = (rows["pc"].astype(np.int64) - rows["pc_offset"].astype(np.int64)).tolist()
    called = sorted(
        {s for f, s in zip(functions, starts, strict=True) if f.startswith("function@")}
    )
    order = {s: i for i, s in enumerate(called)}
    return [
        f"called {order[s]}" if f.startswith("function@") else "entry"
        for f, s in zip(functions, starts, strict=True)
    ]


def match_rows(
    before: pd.DataFrame, after: pd.DataFrame, codes: tuple[Any, Any] = (None, None)
) -> tuple[str, list[tuple[list[int], list[int]]]]:
    """How the rows match (:data:`BY_LINE` or :data:`BY_OPCODES`) and the matched groups:
    (row indices in ``before``, row indices in ``after``) per location, one side empty for a
    location of one version only; in the earlier version's PC order, then the later's."""
    lined = bool((before["line"] > 0).any()) and bool((after["line"] > 0).any())
    groups: list[tuple[list[int], list[int]]] = []
    if lined:
        keys: dict[tuple[str, int], int] = {}
        for side, rows in enumerate((before, after)):
            names = [os.path.basename(str(f)) for f in rows["file"]]
            for i, (name, line) in enumerate(zip(names, rows["line"].tolist(), strict=True)):
                if line <= 0:
                    continue
                key = (name, int(line))
                if key not in keys:
                    keys[key] = len(groups)
                    groups.append(([], []))
                groups[keys[key]][side].append(i)
        rest_b = np.flatnonzero(before["line"].to_numpy() <= 0)
        rest_a = np.flatnonzero(after["line"].to_numpy() <= 0)
    else:
        rest_b, rest_a = np.arange(len(before)), np.arange(len(after))
    rest = ([int(i) for i in rest_b], [int(i) for i in rest_a])
    groups += _aligned(before, after, *rest, codes)
    return (BY_LINE if lined else BY_OPCODES), groups


def _aligned(
    before: pd.DataFrame,
    after: pd.DataFrame,
    rows_b: list[int],
    rows_a: list[int],
    codes: tuple[Any, Any] = (None, None),
) -> list[tuple[list[int], list[int]]]:
    """Instructions of each function role matched by aligning their opcode sequences."""
    roles_b, roles_a = _function_roles(before), _function_roles(after)
    pcs_b, pcs_a = [int(x) for x in before["pc"]], [int(x) for x in after["pc"]]
    out: list[tuple[list[int], list[int]]] = []
    for role in dict.fromkeys([roles_b[i] for i in rows_b] + [roles_a[i] for i in rows_a]):
        side_b = sorted((i for i in rows_b if roles_b[i] == role), key=lambda i: pcs_b[i])
        side_a = sorted((i for i in rows_a if roles_a[i] == role), key=lambda i: pcs_a[i])
        ops_b, ops_a = _opcodes(before, side_b, codes[0]), _opcodes(after, side_a, codes[1])
        out += _align(side_b, side_a, ops_b, ops_a)
    return out


def _align(
    side_b: list[int], side_a: list[int], ops_b: list[str], ops_a: list[str], exact: bool = True
) -> list[tuple[list[int], list[int]]]:
    """Rows paired by aligning their opcodes: equal opcodes pair; inside a replaced block the
    opcodes are aligned again by mnemonic (the opcode's first part, ``LDG`` of ``LDG.E.128``),
    and what still differs pairs in order."""
    out: list[tuple[list[int], list[int]]] = []
    keys_b = ops_b if exact else [o.split(".")[0] for o in ops_b]
    keys_a = ops_a if exact else [o.split(".")[0] for o in ops_a]
    matcher = difflib.SequenceMatcher(None, keys_b, keys_a, autojunk=False)
    for tag, b0, b1, a0, a1 in matcher.get_opcodes():
        if tag == "replace" and exact:
            out += _align(side_b[b0:b1], side_a[a0:a1], ops_b[b0:b1], ops_a[a0:a1], False)
            continue
        paired = min(b1 - b0, a1 - a0) if tag in ("equal", "replace") else 0
        out += [([side_b[b0 + k]], [side_a[a0 + k]]) for k in range(paired)]
        out += [([i], []) for i in side_b[b0 + paired : b1]]
        out += [([], [i]) for i in side_a[a0 + paired : a1]]
    return out


def _opcodes(rows: pd.DataFrame, indices: list[int], code: Any = None) -> list[str]:
    """The opcodes of ``rows[indices]``, disassembling those not read yet with ``code``
    (:class:`Rows`); the rows' ``opcode`` is filled in as it is read."""
    from parsers.ncu.source_counters import opcode

    ops, pcs = rows["opcode"].tolist(), rows["pc"].tolist()
    out = []
    for i in indices:
        op = str(ops[i])
        if not op and code is not None:
            op = opcode(code.sass(int(pcs[i])))
            rows.at[rows.index[i], "opcode"] = op
        out.append(op)
    return out


def compare_rows(
    before: pd.DataFrame, after: pd.DataFrame, codes: tuple[Any, Any] = (None, None)
) -> tuple[str, list[LocationChange]]:
    """Every matched location of two versions' instruction rows with its measures, largest
    change first (module docstring); how they were matched.  ``codes``: :attr:`Rows.code` of
    each side."""
    how, groups = match_rows(before, after, codes)
    by_line = how == BY_LINE
    stalls = stall_reasons(before, after)
    mb, ma = measures(before, stalls), measures(after, stalls)
    names = [n for n in mb if n in ma] + [n for n in ma if n not in mb]
    out = []
    for rows_b, rows_a in groups:
        changes = []
        for name in names:
            unit = (mb.get(name) or ma[name])[0]
            vb = float(mb[name][1][rows_b].sum()) if name in mb else 0.0
            va = float(ma[name][1][rows_a].sum()) if name in ma else 0.0
            if unit == "count":
                totals = [float(m[name][1].sum()) for m in (mb, ma) if name in m]
                scale = max(totals) if totals else 0.0
                moved = abs(va - vb) / scale if scale > 0 else 0.0
            else:
                moved = abs(va - vb)
            changes.append(Change(name, unit, vb, va, moved))
        if not any(c.before or c.after for c in changes):
            continue
        ops = [str(before["opcode"].iat[i]) for i in rows_b] + [
            str(after["opcode"].iat[i]) for i in rows_a
        ]
        out.append(
            LocationChange(
                before=_place(before.iloc[rows_b[0]], by_line) if rows_b else "",
                after=_place(after.iloc[rows_a[0]], by_line) if rows_a else "",
                opcodes=" ".join(dict.fromkeys(o for o in ops if o)),
                change=max((c.change for c in changes), default=0.0),
                changes=tuple(sorted(changes, key=lambda c: -c.change)),
            )
        )
    out.sort(key=lambda loc: -loc.change)  # stable: ties keep the groups' order
    return how, out


def kernel_pair(
    rows_before: Rows | None,
    rows_after: Rows | None,
    names: tuple[str, str, str, str, str],
) -> KernelLocations:
    """The :class:`KernelLocations` of one pair; ``names``: (kernel, to_kernel, display name,
    from version, to version)."""
    kernel, to_kernel, display_name, from_version, to_version = names
    base = KernelLocations(kernel, to_kernel, display_name, from_version, to_version)
    missing = [v for v, r in ((from_version, rows_before), (to_version, rows_after)) if r is None]
    if missing:
        return _with(base, not_read=f"no per-instruction data in {' and '.join(missing)}")
    assert rows_before is not None and rows_after is not None
    codes = (rows_before.code, rows_after.code)
    how, found = compare_rows(rows_before.frame, rows_after.frame, codes)
    listed = tuple(loc for loc in found if loc.change >= MIN_CHANGE)[:TOP_CHANGED]
    return _with(base, matched_by=how, locations=listed, compared=len(found))


def _with(base: KernelLocations, **kw: Any) -> KernelLocations:
    from dataclasses import replace

    return replace(base, **kw)


def fmt_value(unit: str, value: float) -> str:
    """``4.6 M`` / ``12,345`` for a count, ``70 %`` for a share."""
    if unit == "share":
        return f"{100 * value:.0f} %"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {suffix}"
    return f"{value:,.0f}"


def describe(location: LocationChange) -> str:
    """``conv.cu:54 (LDG.E): excess sectors 4.6 M → 0; long-scoreboard samples 70 % → 12 %``
    (the :data:`SHOWN_MEASURES` measures that moved most)."""
    shown = [c for c in location.changes if c.change >= MIN_MEASURE_CHANGE][:SHOWN_MEASURES]
    parts = [
        f"{c.measure} {fmt_value(c.unit, c.before)} → {fmt_value(c.unit, c.after)}" for c in shown
    ]
    ops = f" ({location.opcodes})" if location.opcodes else ""
    return f"{location.label}{ops}{location.only_in}: " + "; ".join(parts)


def to_json(pairs: Sequence[KernelLocations]) -> list[dict[str, Any]]:
    """The ``locations`` list of the comparison's JSON."""
    out = []
    for p in pairs:
        entry: dict[str, Any] = {
            "kernel": p.kernel,
            "to_kernel": p.to_kernel,
            "from": p.from_version,
            "to": p.to_version,
        }
        if p.not_read:
            entry["not_read"] = p.not_read
        else:
            entry["matched_by"] = p.matched_by
            entry["locations_compared"] = p.compared
            entry["locations"] = [
                {
                    "before": loc.before or None,
                    "after": loc.after or None,
                    "opcodes": loc.opcodes,
                    "change": loc.change,
                    "text": describe(loc),
                    "measures": [
                        {
                            "measure": c.measure,
                            "unit": c.unit,
                            "before": c.before,
                            "after": c.after,
                            "change": c.change,
                        }
                        for c in loc.changes
                        if c.change >= MIN_MEASURE_CHANGE
                    ],
                }
                for loc in p.locations
            ]
        out.append(entry)
    return out


def profile_rows(profile: Any, kernel: str) -> Rows | None:
    """The instruction rows of ``kernel``'s launches in a profile read from an Nsight Compute
    report (at most :data:`advisor.report.locations.MAX_LAUNCHES`, concatenated, SASS filled
    in for the opcode alignment), or None where it holds none."""
    from advisor.report.locations import MAX_LAUNCHES, _refs_by_kernel
    from parsers.ncu.source_counters import Code, joined_rows, read_instructions

    if profile is None or not getattr(profile, "instruction_sources", None):
        return None
    refs = _refs_by_kernel(profile).get(kernel, [])
    if not refs:
        return None
    from advisor import disassembly

    code = Code(lookup=disassembly.lookup)
    read = [read_instructions(ref, code, sass=False) for ref in refs[:MAX_LAUNCHES]]
    rows = summed_by_pc(joined_rows(read))
    return Rows(rows, code)  # SASS disassembled only where the opcode alignment needs it


def summed_by_pc(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of several launches of one kernel summed per PC (additive columns), in PC order."""
    from parsers.ncu.source_counters import additive_columns

    if not len(rows) or not rows["pc"].duplicated().any():
        return rows.sort_values("pc", kind="stable").reset_index(drop=True)
    grouped = rows.groupby("pc", sort=True)
    summed = grouped[additive_columns(rows)].sum()
    rest = [c for c in rows.columns if c not in summed.columns and c != "pc"]
    return grouped[rest].first().join(summed).reset_index()[list(rows.columns)]


def pairs(comparison: Any, rows_of: RowsOf) -> tuple[KernelLocations, ...]:
    """The :class:`KernelLocations` of the kernel pairs of the comparison's first
    :data:`LOCATION_KERNELS` tracks, pair of versions by pair of versions; ``rows_of(i,
    kernel)``: the instruction rows of ``kernel`` in version ``i`` (None: none)."""
    from advisor.report.compare import pair_display

    versions = [v.name for v in comparison.versions]
    out = []
    cache: dict[tuple[int, str], Rows | None] = {}

    def rows(i: int, name: str) -> Rows | None:
        if (i, name) not in cache:
            cache[(i, name)] = rows_of(i, name)
        return cache[(i, name)]

    for i in range(1, len(versions)):
        for track in comparison.kernels[:LOCATION_KERNELS]:
            b, a = track.names[i - 1], track.names[i]
            if b is None or a is None:
                continue
            before, after = rows(i - 1, b), rows(i, a)
            if before is None and after is None:  # neither profile has per-instruction data
                continue
            names = (b, a, pair_display(b, a), versions[i - 1], versions[i])
            out.append(kernel_pair(before, after, names))
    return tuple(out)


def for_profiles(comparison: Any, profiles: Sequence[Any]) -> tuple[KernelLocations, ...]:
    """:func:`pairs` with the rows of each version's profile (None for a saved analysis)."""

    def rows_of(i: int, kernel: str) -> Rows | None:
        return profile_rows(profiles[i], kernel) if i < len(profiles) else None

    return pairs(comparison, rows_of)


def any_read(found: Sequence[KernelLocations]) -> bool:
    return any(not p.not_read for p in found)
