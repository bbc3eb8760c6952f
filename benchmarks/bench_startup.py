"""Fixed cost of the command line: start-up, help and a small report, against their floors.

Each case runs in a fresh process, each alone; the cases run ``--repeat`` times interleaved
(default 3) after one warm-up run each, and the fastest run of each counts (one run on a shared
machine can take half as long again as the next).  Peak RSS is the child's ``ru_maxrss``
(``os.wait4``).  The children may cache bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped and
the cache goes to a temporary ``PYTHONPYCACHEPREFIX``), as an installed package has its
``.pyc`` files: compiling the project's modules at every start would add about 0.17 s.

* ``python``: an interpreter that imports nothing (the floor of every command);
* ``--help`` and ``report --help``: target 0.2 s (they import click and the option
  declarations only; tests/cli/test_startup.py checks which modules they load);
* ``import pandas`` and ``ncu_report`` (NVIDIA's module loading the report and reading every
  value of every result, as :mod:`parsers.ncu.rep` does): the floors of ``report`` on an Nsight
  Compute report;
* ``report --json``: ``report FILE --json OUT``; target: at most 0.1 s above ``import pandas``
  plus ``ncu_report`` (and 0.5 s).

Usage: ``python benchmarks/bench_startup.py [REPORT.ncu-rep] [--repeat N]``; without a report,
the largest-values full-set report of ../shared that is found (docs: benchmarks/README.md).
The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: full-set Nsight Compute reports of ../shared tried in order when none is given
DEFAULT_REPORTS = (
    "tuning_families/ece408fa23/Project/nv_nsight_cu_cli/"
    "m3_3_2matrix_mul_w_gpu_unrolling_analysis_file.ncu-rep",
    "real_profiles/reports/CUDA_Learning/shared_report.ncu-rep",
)
HELP_TARGET_S = 0.2
REPORT_TARGET_S = 0.5
REPORT_ABOVE_FLOORS_S = 0.1

#: NVIDIA's module reading every value, the way parsers/ncu/rep.py walks a report
NCU_READ_ALL = """
import sys, ncu_report
ctx = ncu_report.load_report(sys.argv[1])
n = 0
for r in range(ctx.num_ranges()):
    rng = ctx.range_by_idx(r)
    for a in range(rng.num_actions()):
        act = rng.action_by_idx(a)
        act.name()
        for name in act.metric_names():
            m = act.metric_by_name(name)
            if m is None or not m.has_value():
                continue
            m.as_string() if m.kind() == ncu_report.IMetric.ValueKind_STRING else m.as_double()
            n += 1
print(n)
"""


def child_env(cache: str) -> dict[str, str]:
    """The environment of the children: bytecode cached under ``cache``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds, peak RSS MiB) of one child process run to its end; a failure stops the run."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        err = child.stderr.read().decode(errors="replace") if child.stderr else ""
        sys.exit(f"{' '.join(argv)}: exit {code}: {err.strip()}")
    return seconds, usage.ru_maxrss / 1024


def find_report(given: str | None) -> Path | None:
    if given:
        return Path(given)
    shared = ROOT.parent / "shared"
    for rel in DEFAULT_REPORTS:
        if (shared / rel).is_file():
            return shared / rel
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", nargs="?", help="an Nsight Compute .ncu-rep (full set)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    py = sys.executable
    report = find_report(args.report)
    work = Path(tempfile.mkdtemp(prefix="bench_startup_"))
    out = work / "out.json"
    env = child_env(str(work / "pycache"))
    cases: dict[str, list[str]] = {
        "python": [py, "-c", "pass"],
        "--help": [py, "-m", "advisor", "--help"],
        "report --help": [py, "-m", "advisor", "report", "--help"],
        "import pandas": [py, "-c", "import pandas"],
    }
    if report is not None:
        cases["ncu_report reads every value"] = [py, "-c", NCU_READ_ALL, str(report)]
        cases["report --json"] = [py, "-m", "advisor", "report", str(report), "--json", str(out),
                                  "--quiet"]  # fmt: skip
    for argv in cases.values():  # warm-up: the bytecode cache, the file in the page cache
        timed(argv, env)
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.repeat):
        for name, argv in cases.items():
            seconds, rss = timed(argv, env)
            old = best.get(name)
            best[name] = (min(seconds, old[0]) if old else seconds, max(rss, old[1] if old else 0))
    print(f"load average {os.getloadavg()[0]:.2f}; fastest of {args.repeat}; report: {report}")
    print(f"{'case':<30} {'s':>6} {'RSS MiB':>8}")
    for name, (seconds, rss) in best.items():
        print(f"{name:<30} {seconds:6.3f} {rss:8.0f}")
    missed = []
    for name in ("--help", "report --help"):
        if best[name][0] > HELP_TARGET_S:
            missed.append(f"{name} {best[name][0]:.3f} s > {HELP_TARGET_S} s")
    if report is not None:
        floors = best["import pandas"][0] + best["ncu_report reads every value"][0]
        took = best["report --json"][0]
        print(f"report --json above import pandas + ncu_report: {took - floors:+.3f} s "
              f"(target <= {REPORT_ABOVE_FLOORS_S} s)")  # fmt: skip
        if took > max(REPORT_TARGET_S, floors + REPORT_ABOVE_FLOORS_S):
            missed.append(f"report --json {took:.3f} s")
    for line in missed:
        print(f"missed: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
