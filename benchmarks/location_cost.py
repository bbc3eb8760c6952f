"""What reading per-instruction data adds to ``report`` (docs/locations.md).

Run: ``python benchmarks/location_cost.py [REPORT.ncu-rep ...] [--repeat N]`` (default: four
full-set reports with the SourceCounters section under ../shared; needs ``ncu_report``).

For each report it times, with and without the locations of the analysis JSON
(:func:`advisor.report.locations.attach` replaced by a no-op for "without"):

* ``command``: ``python -m advisor report FILE --json OUT -o OUT.html --markdown OUT.md`` in a
  fresh process, as a user runs it (start-up and imports included); "without" also starts no
  disassembly helper (:mod:`advisor.disassembly`), and a third time, "in-process SASS", runs
  the command with the locations but without that helper (the SASS disassembled in the
  command's own process);
* ``in-process``: read + analyse + build + render HTML and Markdown + JSON text in this
  process, after one warm-up run (imports excluded: the strictest ratio).

Runs alternate (without, with, in-process SASS) ``--repeat`` times (default 3) and the fastest
of each counts: on a shared machine one run can take half as long again as the next.  It prints
the times and the ratios to "without"; the target is a ratio of at most 1.25 for the command.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared"
DEFAULT = (
    SHARED / "real_profiles/reports/CUDA_Learning/shared_report.ncu-rep",
    SHARED / "real_profiles/reports/hpca-gpu-memory-profiling/naive.ncu-rep",
    SHARED / "real_profiles/reports/seq_align/profile.ncu-rep",
    SHARED / "tuning_families/ece408fa23/Project/nv_nsight_cu_cli/"
    "m3_5_1fp16_kernel_fusion_based_analysis_file.ncu-rep",
)
TARGET = 1.25
#: the command with the locations switched off (everything else as ``python -m advisor``)
_WITHOUT = (
    "import sys; import advisor.report.locations as l; l.attach = lambda *a, **k: None; "
    "import advisor.disassembly as d; d.start = lambda *a, **k: None; "
    "from advisor.cli import main; sys.exit(main())"
)
#: the command with the locations, its SASS disassembled in-process (no helper process)
_NO_HELPER = (
    "import sys; import advisor.disassembly as d; d.start = lambda *a, **k: None; "
    "from advisor.cli import main; sys.exit(main())"
)


def command_seconds(path: Path, out: Path, with_locations: bool, helper: bool = True) -> float:
    args = ["report", str(path), "--quiet", "--json", str(out / "r.json"),
            "-o", str(out / "r.html"), "--markdown", str(out / "r.md")]  # fmt: skip
    if not with_locations:
        prefix = ["-c", _WITHOUT]
    else:
        prefix = ["-m", "advisor"] if helper else ["-c", _NO_HELPER]
    start = time.perf_counter()
    subprocess.run([sys.executable, *prefix, *args], cwd=ROOT, check=True)
    return time.perf_counter() - start


def in_process_seconds(path: Path, with_locations: bool) -> float:
    from advisor import pipeline
    from advisor.render import report as render
    from advisor.report import locations

    saved = locations.attach
    if not with_locations:
        locations.attach = lambda *args, **kwargs: None
    try:
        start = time.perf_counter()
        run = pipeline.analyse([str(path)])
        built = pipeline.build(run)
        render.html(built)
        render.markdown(built)
        pipeline.json_text(run.data)
        return time.perf_counter() - start
    finally:
        locations.attach = saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    paths = args.paths or [p for p in DEFAULT if p.is_file()]
    if not paths:
        print("no reports found (needs ../shared)", file=sys.stderr)
        return 2
    worst = 0.0
    print(f"{'report':<60} {'command without/with':>22} {'ratio':>6} "
          f"{'in-process SASS':>16} {'ratio':>6} "
          f"{'in-process without/with':>24} {'ratio':>6}")  # fmt: skip
    for path in paths:
        in_process_seconds(path, True)  # warm-up: imports, caches
        cmd = {False: [], True: []}  # type: dict[bool, list[float]]
        no_helper: list[float] = []
        inproc = {False: [], True: []}  # type: dict[bool, list[float]]
        with tempfile.TemporaryDirectory() as folder:
            for _ in range(args.repeat):
                for flag in (False, True):
                    cmd[flag].append(command_seconds(path, Path(folder), flag))
                    inproc[flag].append(in_process_seconds(path, flag))
                no_helper.append(command_seconds(path, Path(folder), True, helper=False))
        c0, c1, c2 = min(cmd[False]), min(cmd[True]), min(no_helper)
        p0, p1 = min(inproc[False]), min(inproc[True])
        worst = max(worst, c1 / c0)
        name = str(path.relative_to(SHARED)) if path.is_relative_to(SHARED) else str(path)
        print(f"{name[-60:]:<60} {c0:9.2f}s / {c1:6.2f}s {c1 / c0:6.2f} "
              f"{c2:15.2f}s {c2 / c0:6.2f} "
              f"{p0:11.2f}s / {p1:6.2f}s {p1 / p0:6.2f}")  # fmt: skip
    verdict = "within" if worst <= TARGET else "OVER"
    print(f"largest command ratio {worst:.2f}: {verdict} the {TARGET:.2f} target")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
