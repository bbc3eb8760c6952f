"""Tuning steps derived from a tuning-families MANIFEST.tsv, for families without a steps row.

``benchmarks/speedup_steps.tsv`` holds the reviewed steps of the shared families.  A family it
does not list (a MANIFEST of other families, or a family added later) is not silently skipped:
its steps are derived here from the MANIFEST's own columns, and a family that yields none is
listed with the reason.  Nothing here looks at a profile or a measured time.

* ``paired_with`` names the baseline of each version:

  - ``FILE:KERNEL [(notes)]`` — a kernel step from ``FILE`` (a file of the same family, named by
    the end of its ``local_path``) to this row.  ``KERNEL`` may be ``A+B`` (summed kernels);
    text that is not a kernel of the baseline row (``(numba-mangled kernel)``) means the
    baseline row's only kernel.  When both rows label their kernels with a layer (``[L1]``,
    ``[L1 unroll]``), there is one step per layer; the note ``add ... to after-time`` sums every
    kernel of the layer on the after side.
  - ``FILE (compare gpu_span)`` — a span step (first to last GPU activity) between the files.
  - ``A -> B [-> C] [; A -> D] (within file)`` — kernel steps between kernels of this row's file.
  - ``companion of NAME`` — a metrics-only run merged into the analysis of ``NAME``'s file
    (``a|b`` in the steps' ``before``) wherever that file is a baseline.
  - ``-`` — a baseline; anything else is reported as not understood.

* ``kernel_names`` entries are ``NAME[tag]...`` separated by ``; ``; a tag ``#N`` is the launch
  id (used in the selector when a name occurs more than once in the row), a tag without ``=``
  is a layer label (its first word is the layer).

* ``addressed``: the criteria a step's change addresses, from keywords of the after version's
  ``change`` text (for a kernel inside a within-file chain, the clause that describes it):
  :data:`KEYWORDS`.  A change no keyword describes addresses ``none``.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

#: change-text keyword (regular expression, case-insensitive) -> criteria it addresses
KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"coalesc|unit-stride|contiguous index", ("L1_GRANULARITY", "L2_GRANULARITY")),
    (r"bank[- ]conflict|\bpad(ding|ded)?\b|swizzl", ("SHMEM_EFFICIENCY",)),
    (r"syncthreads|barrier|warp[- ]shuffle|__shfl|double[- ]buffer", ("DEVICESYNC",)),
    (r"diverge|branch", ("DIVERGENCE",)),
    (
        r"<<<|more threads|threads per block|block size|fills the gpu|occupancy",
        ("LOADBALANC_SM", "THROUGHPUT_OCCUPANCY"),
    ),
    (r"\bstreams?\b|memcpyasync|pinned|page-locked|overlap", ("HOSTSYNC",)),
    (r"memprefetchasync|prefetch\w* (managed|to (the )?device)|page fault", ("UM_MIGRATION",)),
)

#: the columns of a steps row, as in speedup_steps.tsv
COLUMNS = (
    "step_id",
    "family",
    "before",
    "before_kernel",
    "after",
    "after_kernel",
    "scope",
    "addressed",
    "reason",
)


@dataclasses.dataclass(frozen=True)
class Entry:
    """One kernel of a MANIFEST row's ``kernel_names``."""

    name: str
    launch_id: int | None
    layer: str | None


@dataclasses.dataclass
class Derived:
    steps: list[dict[str, str]]
    #: family -> why it gave no step (only families without any)
    not_derived: dict[str, str]


_TAGS = re.compile(r"\[([^\[\]]*)\]")


def parse_entries(text: str) -> list[Entry]:
    """The kernels of a ``kernel_names`` cell."""
    out = []
    for piece in (p.strip() for p in text.split(";")):
        if not piece:
            continue
        first = piece.find("[")
        name = (piece if first < 0 else piece[:first]).strip()
        launch_id, layer = None, None
        for tag in _TAGS.findall(piece[first:] if first >= 0 else ""):
            hit = re.search(r"#(\d+)", tag)
            if hit:
                launch_id = int(hit.group(1))
            elif "=" not in tag and tag.strip() and not tag.strip()[0].isdigit():
                layer = tag.split()[0]  # "L1", "L1 unroll"; not "2 launches"
        if name:
            out.append(Entry(name, launch_id, layer))
    return out


def short(name: str) -> str:
    """A kernel name up to its argument list or template arguments."""
    return name.split("(", 1)[0].split("<", 1)[0].strip().removeprefix("void ").strip()


def addressed(change: str) -> str:
    """The criteria the change text addresses, comma-separated, or ``none``."""
    found: list[str] = []
    for pattern, criteria in KEYWORDS:
        if re.search(pattern, change, re.IGNORECASE):
            found += [c for c in criteria if c not in found]
    return ",".join(found) or "none"


def clause(change: str, kernel: str) -> str:
    """The part of a change text that describes ``kernel`` (``NAME = ...``, ``NAME (...`` or
    ``NAME -> paired BASE``, without the baseline's name) up to the next ``;``; the whole text
    when none does."""
    text = _clause(change, kernel)
    return change if text is None else text


def _clause(change: str, kernel: str) -> str | None:
    hit = re.search(rf"(?<![\w]){re.escape(kernel)}\s*(=|\(|->)", change)
    if not hit:
        return None
    text = change[hit.start() :].split(";", 1)[0]
    return re.sub(r"->\s*paired\s+\w+", "", text)  # the baseline's name is not the change


def _family_clause(row: dict[str, str], members: Sequence[dict[str, str]], kernel: str) -> str:
    """:func:`clause` of this row, else of the family's first row that describes ``kernel``
    (a row that says "same three kernels at N=..." describes them elsewhere)."""
    for r in (row, *members):
        text = _clause(r["change"], kernel)
        if text is not None:
            return text
    return row["change"]


def _selector(entries: Sequence[Entry], chosen: Iterable[Entry]) -> str:
    names = [short(e.name) for e in entries]
    parts = []
    for e in chosen:
        s = short(e.name)
        if names.count(s) > 1 and e.launch_id is not None:
            s += f"#{e.launch_id}"
        parts.append(s)
    return "+".join(parts)


#: the MANIFEST columns the derivation reads
REQUIRED = ("family_id", "local_path", "kernel_names", "change", "paired_with")


def read_manifest(manifest: Path) -> list[dict[str, str]]:
    """The rows of a MANIFEST.tsv (a byte-order mark, short rows and empty cells read as "");
    ValueError naming the file when a column the derivation needs is missing."""
    with manifest.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh, delimiter="\t", restval="")
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{manifest}: no column {', '.join(missing)}")
        return [{k: v or "" for k, v in row.items() if k is not None} for row in reader]


def derive(manifest: Path, families: Iterable[str] | None = None) -> Derived:
    """Steps of every family of ``manifest`` (or of ``families`` only)."""
    rows = read_manifest(manifest)
    wanted = None if families is None else set(families)
    by_family: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        if wanted is None or row["family_id"] in wanted:
            by_family.setdefault(row["family_id"], []).append(row)
    companions, notes = _companions(rows)
    steps: list[dict[str, str]] = []
    not_derived: dict[str, str] = {}
    for family, members in by_family.items():
        got, problems = _family_steps(family, members, rows, companions)
        problems = [*notes.get(family, []), *problems]
        for n, step in enumerate(got, start=1):
            step["step_id"] = f"{family}-m{n}"
        steps += got
        if not got:
            not_derived[family] = "; ".join(problems) or "no version names a baseline"
    return Derived(steps, not_derived)


def _find(members: Sequence[dict[str, str]], name: str) -> dict[str, str] | None:
    name = name.strip()
    hits = [
        r
        for r in members
        if r["local_path"] == name or r["local_path"].endswith("/" + name.lstrip("/"))
    ]
    return hits[0] if len(hits) == 1 else None


def _companions(
    rows: Sequence[dict[str, str]],
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Metrics-only runs (``companion of NAME``): baseline file -> companion file, and per
    family the companions that name no file or several."""
    companions: dict[str, str] = {}
    problems: dict[str, list[str]] = {}
    for row in rows:
        text = row["paired_with"].strip()
        if not text.lower().startswith("companion of "):
            continue
        target = text[len("companion of ") :].strip()
        hits = [
            r
            for r in rows
            if r["family_id"] == row["family_id"]
            and target in Path(r["local_path"]).name
            and r is not row
        ]
        if len(hits) == 1:
            companions[hits[0]["local_path"]] = row["local_path"]
        else:
            problems.setdefault(row["family_id"], []).append(
                f"{row['local_path']}: companion of {target!r} names {len(hits)} files; not merged"
            )
    return companions, problems


def _family_steps(
    family: str,
    members: Sequence[dict[str, str]],
    everyone: Sequence[dict[str, str]],
    companions: dict[str, str],
) -> tuple[list[dict[str, str]], list[str]]:
    """The steps of one family; a baseline is looked up in the family first, then in the
    whole MANIFEST (a version may improve on another family's file); ``companions`` as
    :func:`_companions` gives them."""
    problems: list[str] = []

    def find(name: str) -> dict[str, str] | None:
        return _find(members, name) or _find(everyone, name)

    def merged(path: str) -> str:
        return f"{path}|{companions[path]}" if path in companions else path

    steps: list[dict[str, str]] = []

    def add(before: str, bk: str, after: str, ak: str, scope: str, change: str) -> None:
        steps.append(
            {
                "family": family,
                "before": before,
                "before_kernel": bk,
                "after": after,
                "after_kernel": ak,
                "scope": scope,
                "addressed": addressed(change),
                "reason": change,
            }
        )

    for row in members:
        text = row["paired_with"].strip()
        low = text.lower()
        path = row["local_path"]
        if text in ("", "-") or low.startswith("companion of "):
            continue
        entries = parse_entries(row["kernel_names"])
        if "change column" in low:
            # "B -> paired A" pairs written in the change text, one per kernel
            found = re.findall(r"(\w+)(?:\s*\([^)]*\))?\s*->\s*paired\s+(\w+)", row["change"])
            chains = [f"{a} -> {b}" for b, a in found]
            if not chains:
                problems.append(f"{path}: no 'B -> paired A' in the change column")
        elif low.endswith("(within file)"):
            chains = text[: -len("(within file)")].split(";")
        else:
            chains = None
        if chains is not None:
            for chain in chains:
                names = [n.strip() for n in chain.split("->") if n.strip()]
                for a, b in itertools.pairwise(names):
                    ea = [e for e in entries if short(e.name) == a]
                    eb = [e for e in entries if short(e.name) == b]
                    if len(ea) != 1 or len(eb) != 1:
                        problems.append(f"{path}: {a} -> {b} not in kernel_names")
                        continue
                    add(
                        merged(path),
                        _selector(entries, ea),
                        path,
                        _selector(entries, eb),
                        "kernel",
                        _family_clause(row, members, b),
                    )
            continue
        if "(compare gpu_span)" in low:
            base = find(text[: low.rindex("(compare gpu_span)")])
            if base is None:
                problems.append(f"{path}: baseline {text!r} not found")
            else:
                add(merged(base["local_path"]), "*", path, "*", "span", row["change"])
            continue
        file_part, sep, spec = text.partition(":")
        base = find(file_part) if sep else None
        if base is row:
            problems.append(f"{path}: paired with itself")
            continue
        if base is None:
            problems.append(f"{path}: paired_with {text!r} not understood")
            continue
        spec_names, _, notes = spec.partition("(")
        wanted = {n.strip() for n in spec_names.split("+") if n.strip()}
        base_entries = parse_entries(base["kernel_names"])
        if not any(short(e.name) in wanted for e in base_entries):
            wanted = {short(e.name) for e in base_entries} if len(base_entries) == 1 else set()
        layers = sorted({e.layer for e in entries if e.layer})
        sum_after = "after-time" in notes
        pairs: list[tuple[list[Entry], list[Entry]]] = []  # (baseline's kernels, this row's)
        if layers and all(e.layer for e in base_entries):
            for layer in layers:
                eb = [e for e in base_entries if e.layer == layer and short(e.name) in wanted]
                ea = [
                    e
                    for e in entries
                    if e.layer == layer and (sum_after or short(e.name) in wanted)
                ]
                if not eb or not ea:
                    problems.append(f"{path}: layer {layer} has no kernel to pair")
                    continue
                pairs.append((eb, ea))
        else:
            eb = [e for e in base_entries if short(e.name) in wanted]
            ea = entries if len(entries) == 1 else [e for e in entries if short(e.name) in wanted]
            if len(eb) != 1 or len(ea) != 1:
                problems.append(f"{path}: cannot tell which kernels {text!r} pairs")
            else:
                pairs.append((eb, ea))
        for eb, ea in pairs:
            add(
                merged(base["local_path"]),
                _selector(base_entries, eb),
                path,
                _selector(entries, ea),
                "kernel",
                row["change"],
            )
    return steps, problems
