"""Where in the code, checked on real Nsight Compute reports (docs/locations.md).

Run: ``python benchmarks/location_check.py [FOLDER_OR_REPORT ...]`` (default: every
``.ncu-rep`` / ``.nsight-cuprof-report`` under ../shared/real_profiles and
../shared/tuning_families; needs the ``ncu_report`` module).

Per report it prints:

* ``conservation``: ``exact`` when, for every launch with per-instruction data, every counter
  summed over the instructions (and over the source lines) equals the kernel total the report
  stores; ``NOT exact`` names the first counter that differs; ``-`` for a report without the
  SourceCounters section;
* the data each report lacks (``no line info``, ``no stall samples``, ``no SourceCounters``);
* ``hints located``: how many of the report's kernel hints have a top location of their
  criterion's waste (a source line, or a function + PC offset without line info), out of the
  hints whose criterion has a per-instruction measure, and out of all hints;
* per located hint: the criterion, the kernel, the top location, its share of the waste and the
  opcodes there.

Reports it cannot read are listed with the reader's one-line error and skipped; the exit code
is 1 when any report's conservation is not exact, else 0.

**Acceptance on tuning steps** (``--families FOLDER``, a folder with a MANIFEST.tsv, by default
../shared/tuning_families when no report is named; ``--steps TSV``, by default
benchmarks/speedup_steps.tsv, the steps of families it does not list derived from the MANIFEST
as ``speedup_validation.py`` does).  For every kernel step whose two versions both hold
per-instruction data, it prints where the earlier version points — the top location of the
addressed criterion's waste (the step's ``addressed`` column, first criterion with a
per-instruction measure and some waste), else of the *limiter*, the stall reason with the most
PC samples — and whether that location lies in the *changed code*: the locations that moved
most between the two versions (``compare``'s per-line comparison,
:mod:`advisor.report.compare_locations`: at most 5, each moved by at least 5 % of a kernel
total or 5 points of the samples).  The last line gives the share of such steps.  A step whose
kernels differ in number (a kernel fused into another) compares the kernels of the same name;
one kernel on each side is compared whatever its name.  Every path may lie outside the
repository.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import parsers  # noqa: E402
from advisor import pipeline  # noqa: E402
from advisor.errors import InputError  # noqa: E402
from advisor.report import locations  # noqa: E402
from parsers.ncu import source_counters  # noqa: E402

SHARED = ROOT.parent / "shared"
DEFAULT = (SHARED / "real_profiles", SHARED / "tuning_families")
PATTERNS = ("*.ncu-rep", "*.nsight-cuprof-report")
STEPS = ROOT / "benchmarks" / "speedup_steps.tsv"


def reports(given: list[str]) -> list[Path]:
    """The reports of ``given`` (files, or folders searched recursively), in name order."""
    found: list[Path] = []
    for item in given or [str(p) for p in DEFAULT if p.is_dir()]:
        path = Path(item)
        if path.is_dir():
            for pattern in PATTERNS:
                found += path.rglob(pattern)
        elif path.is_file():
            found.append(path)
        else:
            print(f"{item}: not found", file=sys.stderr)
    return sorted(set(found))


def conservation(profile: parsers.Profile) -> str:
    """``exact`` / ``NOT exact (...)`` / ``-`` (see the module docstring)."""
    if not profile.instruction_sources:
        return "-"
    for ref in profile.instruction_sources.values():
        found = source_counters.read_instructions(ref)
        lines = source_counters.by_line(found.rows)
        for column, (summed, total) in source_counters.conservation(found).items():
            by_line = float(lines[column].sum()) if column in lines else 0.0
            if summed != total or by_line != total:
                return f"NOT exact ({ref.kernel}: {column} {summed:g} / {by_line:g} vs {total:g})"
    return "exact"


def check(path: Path) -> bool:
    """Print one report's lines; False when its conservation is not exact."""
    try:
        run = pipeline.analyse([str(path)])
    except InputError as exc:
        print(f"{path}: skipped: {exc}")
        return True
    verdict = conservation(run.profile)
    kernels = run.data["kernels"]
    hints = [(k, h) for k in kernels for h in k["hints"]]
    measured = [(k, h) for k, h in hints if h["criterion"] in locations.MEASURES]
    located = []
    lacking: dict[str, int] = {}
    for kernel, hint in measured:
        found = kernel.get("locations", {}).get("criteria", {}).get(hint["criterion"])
        if found and found["top"]:
            located.append((kernel, hint, found))
    for kernel in kernels:
        for key in kernel.get("locations", {}).get("missing", {}):
            lacking[key] = lacking.get(key, 0) + 1
    lacks = (
        "no SourceCounters"
        if not run.profile.instruction_sources
        else ", ".join(
            f"no {key.replace('_', ' ')} ({count} of {len(kernels)} kernels)"
            for key, count in sorted(lacking.items())
        )
        or "nothing missing"
    )
    print(f"{path}: conservation {verdict}; {lacks}; hints located {len(located)} of "
          f"{len(measured)} with a per-instruction measure ({len(hints)} hints)")  # fmt: skip
    for kernel, hint, found in located:
        top = found["top"][0]
        opcodes = f" ({top['opcodes']})" if top["opcodes"] else " (no SASS stored)"
        print(f"    {hint['criterion']:<17} {kernel['name'][:60]}: {top['location']} "
              f"{top['share']:.0%} of the {found['measure']}{opcodes}")  # fmt: skip
    return not verdict.startswith("NOT")


# -- acceptance on tuning steps --


def plan(families: Path, table: Path) -> list[dict[str, str]]:
    """The kernel steps of ``families``: the rows of ``table`` whose earlier file is a version
    of its MANIFEST, then steps derived from the MANIFEST for the families no row covers."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import manifest_steps

    rows = manifest_steps.read_manifest(families / "MANIFEST.tsv")
    versions = {row["local_path"] for row in rows}
    reviewed: list[dict[str, str]] = []
    if table.is_file():
        with table.open(newline="") as handle:
            reviewed = list(csv.DictReader(handle, delimiter="\t"))
    steps = [s for s in reviewed if s["before"].split("|")[0] in versions]
    covered = {s["family"] for s in steps}
    missing = [f for f in dict.fromkeys(r["family_id"] for r in rows) if f not in covered]
    steps += manifest_steps.derive(families / "MANIFEST.tsv", missing).steps
    return [s for s in steps if s.get("scope") == "kernel"]


def _short(name: str) -> str:
    return name.split("(", 1)[0].split("<", 1)[0].removeprefix("void ").strip()


def _parts(profile: parsers.Profile, selector: str) -> list[tuple[str, list[Any]]]:
    """(kernel short name, its launches' SourceRefs) per part of a step's kernel selector
    (``NAME[#LAUNCH][+...]``); a part without per-instruction data has no refs."""
    launches = profile.launches
    names = dict(zip(launches["launch_id"].astype(int), launches["name"].astype(str), strict=True))
    out = []
    for piece in selector.split("+"):
        text, _, index = piece.partition("#")
        text = text.strip()
        ids = [int(index)] if index else _named(names, text)
        held = profile.instruction_sources
        refs = [held[i] for i in sorted(ids) if i in held]
        out.append((text, refs[: locations.MAX_LAUNCHES]))
    return out


def _named(names: dict[int, str], text: str) -> list[int]:
    """The launches of the kernel named ``text``: the same name, else the same short name,
    else a name holding ``text``."""
    for same in (lambda n: n == text, lambda n: _short(n) == text, lambda n: text in n):
        ids = [i for i, n in names.items() if same(n)]
        if ids:
            return ids
    return []


def _rows(refs: list[Any]) -> Any:
    from advisor.report import compare_locations

    if not refs:
        return None
    code = source_counters.Code()
    frames = [source_counters.read_instructions(ref, code, sass=False).rows for ref in refs]
    import pandas as pd

    return compare_locations.Rows(compare_locations.summed_by_pc(pd.concat(frames)), code)


def pointed(rows: Any, addressed: str) -> tuple[str, dict[str, Any]] | None:
    """(what, top location) the earlier version points to: the addressed criterion's top
    location, else the top location of the stall reason with the most samples."""
    for criterion in addressed.split(","):
        if criterion in locations.MEASURES:
            found = locations.top_locations(rows.frame, criterion, sass_of=rows.code.sass)
            if found["top"]:
                return criterion, found["top"][0]
    stalls = locations.top_stalls(rows.frame, sass_of=rows.code.sass)
    if stalls and stalls[0]["top"]:
        return f"limiter {stalls[0]['reason']}", stalls[0]["top"][0]
    return None


def step_check(families: Path, step: dict[str, str]) -> tuple[str, bool | None]:
    """One step's line and whether its pointed location lies in the changed code (None: the
    step has no per-instruction data on both sides, or nothing to point to)."""
    from advisor.report import compare_locations

    name = step["step_id"]
    try:
        before = parsers.read(str(families / step["before"].split("|")[0]))
        after = parsers.read(str(families / step["after"].split("|")[0]))
    except (InputError, ModuleNotFoundError) as exc:
        return f"{name}: skipped: {exc}", None
    parts_b = _parts(before, step["before_kernel"])
    parts_a = _parts(after, step["after_kernel"])
    if len(parts_b) == 1 and len(parts_a) == 1:
        pairs = [(parts_b[0], parts_a[0])]
    else:
        by_name = {n: refs for n, refs in parts_a}
        pairs = [((n, refs), (n, by_name[n])) for n, refs in parts_b if n in by_name]
    lines, hits = [], []
    for (kernel, refs_b), (_, refs_a) in pairs:
        rows_b, rows_a = _rows(refs_b), _rows(refs_a)
        if rows_b is None or rows_a is None:
            continue
        where = pointed(rows_b, step.get("addressed", "none"))
        if where is None:
            continue
        what, top = where
        names = (kernel, kernel, kernel, "before", "after")
        moved = compare_locations.kernel_pair(rows_b, rows_a, names)
        changed = [loc.before for loc in moved.locations if loc.before]
        hit = top["location"] in changed
        hits.append(hit)
        shown = ", ".join(changed[:3]) or "none"
        lines.append(f"    {kernel}: {what} at {top['location']} ({top['share']:.0%}); "
                     f"{'in' if hit else 'NOT in'} the changed code [{shown}]")  # fmt: skip
    if not hits:
        return f"{name}: no per-instruction data in both versions", None
    verdict = all(hits)
    return f"{name} ({step['reason'][:60]}):\n" + "\n".join(lines), verdict


def acceptance(families: Path, table: Path) -> None:
    """Print every step's line and the share of located steps in the changed code."""
    checked = []
    for step in plan(families, table):
        line, hit = step_check(families, step)
        if hit is not None:
            print(line)
            checked.append(hit)
    share = f" ({sum(checked) / len(checked):.0%})" if checked else ""
    print(f"top location in the changed code: {sum(checked)} of {len(checked)} steps with "
          f"per-instruction data in both versions{share}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="reports or folders (default: ../shared)")
    parser.add_argument("--families", type=Path, help="tuning families folder (MANIFEST.tsv)")
    parser.add_argument("--steps", type=Path, default=STEPS, help="steps table (TSV)")
    parser.add_argument("--steps-only", action="store_true", help="only the acceptance")
    args = parser.parse_args(argv)
    families = args.families
    if families is None and not args.paths and (SHARED / "tuning_families").is_dir():
        families = SHARED / "tuning_families"
    exact = [True]
    if not args.steps_only:
        found = reports(args.paths)
        if not found:
            print("no Nsight Compute reports found", file=sys.stderr)
            return 2
        exact = [check(path) for path in found]
        print(f"{sum(exact)} of {len(found)} reports: conservation exact or not applicable")
    if families is not None:
        if not (families / "MANIFEST.tsv").is_file():
            print(f"{families}: no MANIFEST.tsv", file=sys.stderr)
            return 2
        acceptance(families, args.steps)
    return 0 if all(exact) else 1


if __name__ == "__main__":
    sys.exit(main())
