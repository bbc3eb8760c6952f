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
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="reports or folders (default: ../shared)")
    args = parser.parse_args(argv)
    found = reports(args.paths)
    if not found:
        print("no Nsight Compute reports found", file=sys.stderr)
        return 2
    exact = [check(path) for path in found]
    print(f"{sum(exact)} of {len(found)} reports: conservation exact or not applicable")
    return 0 if all(exact) else 1


if __name__ == "__main__":
    sys.exit(main())
