"""Report invariants on every input of one or more folders: each profile is reported on its own
(HTML, Markdown and JSON, with predictions for other GPUs) and the report is checked against the
properties of :mod:`advisor.report.invariants`.

    python benchmarks/report_invariants.py [FOLDER|FILE ...] [--gpu "H100 PCIe,RTX 4090"]

Without arguments it walks ``../shared/real_profiles``, ``../shared/tuning_families`` and
``sample_profiles``.  It prints one line per input (``ok``, ``input refused (exit 3)`` or the
violated properties) and a summary, and exits 1 when any report breaks a property or any input
ends in an internal error.  The same walker and checks run in ``tests/invariants/``, so folders
that are not in this repository (say ``/data/profiles``) are checked the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from advisor.report import invariants  # noqa: E402

DEFAULT_FOLDERS = (
    REPO.parent / "shared" / "real_profiles",
    REPO.parent / "shared" / "tuning_families",
    REPO / "sample_profiles",
)

#: GPUs every report predicts for (one of each generation the device database knows well)
DEFAULT_GPUS = "H100 PCIe,RTX 4090,A100-SXM4-40GB"

#: files that describe a folder rather than hold a profile
_NOT_PROFILES = {".md", ".tsv", ".py", ".json5"}


def profile_files(folders: Iterable[Path]) -> list[Path]:
    """Every file under ``folders`` that may be a profile (documentation and manifests left out),
    sorted so the walk is the same on every machine; a file given directly is kept as it is."""
    found: list[Path] = []
    for folder in folders:
        if folder.is_file():
            found.append(folder)
            continue
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.suffix.lower() in _NOT_PROFILES:
                continue
            if path.name.upper().startswith(("README", "MANIFEST", "SOURCES")):
                continue
            if path.parent.name in ("apps", "kernels") and path.suffix == ".json":
                continue  # sample model inputs (--app/--kernels), not profiles
            found.append(path)
    return found


@dataclass
class Outcome:
    """One input's report: the exit code, the analysis JSON and the Markdown (when written), the
    error line, and the properties it breaks."""

    path: Path
    exit_code: int
    data: dict[str, Any] | None = None
    markdown: str | None = None
    error: str = ""
    violations: list[str] = field(default_factory=list)


def report(paths: Sequence[Path], gpus: str = DEFAULT_GPUS) -> Outcome:
    """Run ``cuda-advisor report`` on ``paths`` in this process and check the result."""
    from click.testing import CliRunner

    from advisor.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        args = [
            "report",
            *map(str, paths),
            "--json",
            str(out / "a.json"),
            "--markdown",
            str(out / "a.md"),
            "-o",
            str(out / "a.html"),
            "--quiet",
        ]
        if gpus:
            args += ["--predict-gpu", gpus]
        result = CliRunner().invoke(main, args, catch_exceptions=True)
        outcome = Outcome(paths[0], result.exit_code, error=result.output.strip()[-400:])
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            outcome.exit_code = 1
            outcome.error = f"{type(result.exception).__name__}: {result.exception}"
        if (out / "a.json").exists():
            outcome.data = json.loads((out / "a.json").read_text(encoding="utf-8"))
        if (out / "a.md").exists():
            outcome.markdown = (out / "a.md").read_text(encoding="utf-8")
    if outcome.exit_code == 0 and outcome.data is not None:
        outcome.violations = invariants.check(outcome.data, outcome.markdown)
    elif outcome.exit_code not in (0, 3):
        outcome.violations = [f"exit {outcome.exit_code}: {outcome.error}"]
    return outcome


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "inputs", nargs="*", type=Path, help="folders or files (default: ../shared and samples)"
    )
    parser.add_argument("--gpu", default=DEFAULT_GPUS, help="GPUs to predict for ('' for none)")
    args = parser.parse_args(argv)
    folders = args.inputs or [f for f in DEFAULT_FOLDERS if f.exists()]
    missing = [f for f in folders if not f.exists()]
    if missing:
        print(f"report_invariants: error: {missing[0]}: no such file or folder", file=sys.stderr)
        return 2
    files = profile_files(folders)
    broken = refused = 0
    for path in files:
        outcome = report([path], args.gpu)
        if outcome.exit_code == 3:
            refused += 1
            print(f"{path}: input refused (exit 3)")
        elif outcome.violations:
            broken += 1
            print(f"{path}: " + "; ".join(outcome.violations))
        else:
            print(f"{path}: ok")
    checked = len(files) - refused
    print(
        f"\n{len(files)} inputs, {refused} refused, {checked} reported, {broken} break a property"
    )
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
