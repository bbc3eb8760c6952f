"""Cost of ``cuda-advisor report`` on large generated inputs, against the cost of reading them.

Run: ``python benchmarks/bench_scale.py [--only KEY] [--n N] [--scale F] [--keep DIR] [--html]
[--repeat K]``.

For every generator (``gen_nvprof``, ``gen_nsys`` and, when present, ``gen_ncu``) it writes the
input at n/10 and at n rows (seeded, into a temporary folder unless ``--keep``) and times, each in
a fresh Python process that runs alone:

* (a) getting the bytes into memory: ``pandas.read_csv(path, engine="pyarrow")`` on the file as
  is, skipping the profiler's leading ``==PID==`` lines with ``skiprows`` (pandas cannot read
  them otherwise; nvprof's units row is then read as a data row); for a SQLite export, reading
  the kernel table with ``sqlite3`` + ``pandas.read_sql``;
  for a Kineto trace (``gen_kineto``), ``json.load`` of the whole document; for the plain-text
  nvprof trace, pandas' fixed-width reader ``pandas.read_fwf``; for an Nsight Compute details
  page, ``pandas.read_csv`` with its C engine (pyarrow refuses the page: ncu ends a metric row
  after its value, five fields short of the header, as the real exports do);
* (b) ``python -m advisor report FILE --json OUT`` end to end;
* (c) with ``--html``: ``report FILE -o OUT.html`` at n, for the size of the HTML report.

Each timing is the fastest of ``--repeat`` runs (default 3; (a) and (b) interleaved, so both
see the same machine: on a shared machine one run can take half as long again as the next).
Peak memory is the largest ``ru_maxrss`` (``os.wait4``) of the report runs, printed raw and net
of a process that only imports ``advisor, parsers, pandas, pyarrow``; the memory target uses the
net figure.  The inputs are written by child processes too, so this process stays small (on
Linux a child's ``ru_maxrss`` starts from its parent's size at ``fork``).
The children cache bytecode (in a temporary folder, after one warm-up run), as an installed
package does, even where the environment sets ``PYTHONDONTWRITEBYTECODE``.
Targets (ratios <= 1.00 meet them): (b)/(a) <= 1.3 for the text inputs (printed without a
target for the many-distinct-names trace, :data:`NO_RATIO_TARGET`), net peak RSS <= 2x the
file size, time(n) / time(n/10) <= 11 for (b), HTML report under 5 MB (the budget of a report
run on every pull request; they were 2 and 4x before).  Exit status 1 when any
target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import gen_kineto, gen_nsys, gen_nvprof  # noqa: E402

TARGET_RATIO = 1.3
TARGET_RSS_PER_BYTE = 2.0
TARGET_GROWTH = 11.0
TARGET_HTML_BYTES = 5_000_000
BASELINE_IMPORTS = "import advisor, parsers, pandas, pyarrow"
#: inputs whose b/a is printed but has no target: the many-distinct-names trace (every kernel
#: row its own name) shows what the cost per distinct name is; its report scores the 500
#: kernels with the most GPU time and folds the rest (advisor.criteria.engine.folding), a fixed
#: cost of about a second beside a read of well under a second
NO_RATIO_TARGET = frozenset({"nsys-distinct-names-csv"})

Generator = tuple[Callable[[Path, int, int], None], int, bool]


def generators() -> dict[str, Generator]:
    found: dict[str, Generator] = {
        **gen_nvprof.GENERATORS,
        **gen_nsys.GENERATORS,
        **gen_kineto.GENERATORS,
    }
    try:
        from benchmarks import gen_ncu  # type: ignore[attr-defined]
    except ImportError:
        return found
    found.update(gen_ncu.GENERATORS)
    return found


@dataclass(frozen=True)
class Run:
    seconds: float
    max_rss_bytes: int
    returncode: int
    stderr: str


#: the children's environment: bytecode caching on (an installed package has its .pyc files; a
#: PYTHONDONTWRITEBYTECODE environment would recompile every module on every run), the cache
#: kept in a temporary folder instead of the checkout (set by :func:`main`)
CHILD_ENV: dict[str, str] = {}


def run_alone(argv: list[str]) -> Run:
    """Run ``argv`` in a fresh process; wall time and its own peak RSS (``os.wait4``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=CHILD_ENV or None,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, usage.ru_maxrss * 1024, proc.returncode, err[-2000:])


def preamble_lines(path: Path) -> int:
    """Leading profiler status lines (``==PID==``) before the CSV header."""
    count = 0
    with open(path, "rb") as fh:
        for line in fh:
            if not line.startswith(b"=="):
                break
            count += 1
    return count


def write_argv(write: Callable[[Path, int, int], None], path: Path, n: int) -> list[str]:
    """A child process that writes one input: a generator's memory in this process would be the
    starting peak of every child forked after it (``ru_maxrss`` survives ``fork`` and ``exec``)."""
    code = (
        f"from pathlib import Path; from {write.__module__} import {write.__name__} as write; "
        f"write(Path({str(path)!r}), {n}, 0)"
    )
    return [sys.executable, "-c", code]


def read_bytes_argv(path: Path, is_csv: bool) -> list[str]:
    if path.suffix == ".json":  # a Kineto trace: the whole document as Python objects
        code = f"import json; json.load(open({str(path)!r}, 'rb'))"
        return [sys.executable, "-c", code]
    if path.suffix == ".txt":  # nvprof's plain-text trace: fixed-width columns
        code = f"import pandas; pandas.read_fwf({str(path)!r}, skiprows={preamble_lines(path)})"
        return [sys.executable, "-c", code]
    if path.name.startswith("ncu-details"):  # ragged rows: the C engine fills them
        code = f"import pandas; pandas.read_csv({str(path)!r}, skiprows={preamble_lines(path)})"
        return [sys.executable, "-c", code]
    if is_csv:
        code = (
            "import pandas; pandas.read_csv("
            f"{str(path)!r}, engine='pyarrow', skiprows={preamble_lines(path)})"
        )
    else:
        code = (
            "import sqlite3, pandas; con = sqlite3.connect("
            f"{str(path)!r}); pandas.read_sql('SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL', con)"
        )
    return [sys.executable, "-c", code]


def report_argv(path: Path, out: Path, html: bool = False) -> list[str]:
    dest = ["-o", str(out)] if html else ["--json", str(out)]
    return [sys.executable, "-m", "advisor", "report", str(path), *dest]


def checked(run: Run, what: str) -> Run:
    if run.returncode != 0:
        raise SystemExit(f"{what} failed (exit {run.returncode}):\n{run.stderr}")
    return run


@dataclass
class Row:
    key: str
    n: int
    mib: float
    read_s: float
    report_s: float
    small_report_s: float
    rss_raw: int
    rss_net: int
    size: int
    is_csv: bool
    html_bytes: int | None

    def ratios(self) -> dict[str, float]:
        out = {
            "rss": self.rss_net / self.size / TARGET_RSS_PER_BYTE,
            "growth": self.report_s / self.small_report_s / TARGET_GROWTH,
        }
        if self.is_csv and self.key not in NO_RATIO_TARGET:
            out["b/a"] = self.report_s / self.read_s / TARGET_RATIO
        if self.html_bytes is not None:
            out["html"] = self.html_bytes / TARGET_HTML_BYTES
        return out


def measure(
    key: str, gen: Generator, n: int, folder: Path, baseline: int, html: bool, repeat: int
) -> Row:
    write, _, is_csv = gen
    suffix = ".csv" if is_csv else ".pt.trace.json" if key.startswith("kineto") else ".sqlite"
    suffix = ".txt" if key.endswith("-text") else suffix
    small, large = folder / f"{key}-small{suffix}", folder / f"{key}{suffix}"
    for path, rows in ((small, max(1, n // 10)), (large, n)):
        checked(run_alone(write_argv(write, path, rows)), f"{key}: writing {path.name}")
    checked(run_alone(report_argv(small, folder / "warm.json")), f"{key}: report (warm-up)")
    small_runs, reads, reports = [], [], []
    for _ in range(repeat):  # interleaved, so that (a) and (b) see the same machine
        small_runs.append(checked(run_alone(report_argv(small, folder / "small.json")), key))
        reads.append(checked(run_alone(read_bytes_argv(large, is_csv)), f"{key}: read"))
        reports.append(checked(run_alone(report_argv(large, folder / f"{key}.json")), key))
    small_run, read, report = (
        min(runs, key=lambda r: r.seconds) for runs in (small_runs, reads, reports)
    )
    peak = max(r.max_rss_bytes for r in reports)
    html_bytes = None
    if html:
        page = folder / f"{key}.html"
        checked(run_alone(report_argv(large, page, html=True)), f"{key}: html report")
        html_bytes = page.stat().st_size
    size = large.stat().st_size
    return Row(
        key=key, n=n, mib=size / 2**20, read_s=read.seconds, report_s=report.seconds,
        small_report_s=small_run.seconds, rss_raw=peak,
        rss_net=max(0, peak - baseline), size=size, is_csv=is_csv,
        html_bytes=html_bytes,
    )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="format key (repeatable)")
    ap.add_argument("--n", type=int, help="rows/launches at full size (default per generator)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every default n")
    ap.add_argument("--keep", type=Path, help="write the inputs into this folder and keep them")
    ap.add_argument("--html", action="store_true", help="also write the HTML report at full n")
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of each timing; the fastest counts (default 3)"
    )
    args = ap.parse_args()
    gens = generators()
    unknown = [k for k in args.only if k not in gens]
    if unknown:
        ap.error(f"unknown format {', '.join(unknown)}; known: {', '.join(sorted(gens))}")
    keys = args.only or sorted(gens)
    pycache = tempfile.TemporaryDirectory(prefix="bench-scale-pycache-")
    CHILD_ENV.update(os.environ, PYTHONPYCACHEPREFIX=pycache.name)
    CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    checked(run_alone([sys.executable, "-m", "advisor", "--help"]), "warm-up")  # writes the .pyc
    baseline = checked(run_alone([sys.executable, "-c", BASELINE_IMPORTS]), "baseline")
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  import baseline RSS: "
          f"{baseline.max_rss_bytes / 2**20:.0f} MiB")  # fmt: skip
    print(
        f"{'format':<22} {'n':>9} {'MiB':>7} {'read s':>7} {'report s':>8} {'b/a':>5} "
        f"{'RSS MiB':>8} {'net MiB':>8} {'net/size':>8} {'x10 time':>8} {'html MB':>7}  ratios"
    )
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for key in keys:
            gen = gens[key]
            n = args.n or max(10, int(gen[1] * args.scale))
            row = measure(key, gen, n, folder, baseline.max_rss_bytes, args.html, args.repeat)
            ratios = row.ratios()
            worst = max(worst, *ratios.values())
            html = f"{row.html_bytes / 1e6:7.2f}" if row.html_bytes is not None else f"{'-':>7}"
            shown = " ".join(f"{k}={v:.2f}" for k, v in ratios.items())
            print(
                f"{key:<22} {row.n:>9} {row.mib:7.1f} {row.read_s:7.2f} {row.report_s:8.2f} "
                f"{row.report_s / row.read_s:5.2f} {row.rss_raw / 2**20:8.0f} "
                f"{row.rss_net / 2**20:8.0f} {row.rss_net / row.size:8.2f} "
                f"{row.report_s / row.small_report_s:8.2f} {html}  {shown}",
                flush=True,
            )
    print(f"worst ratio {worst:.2f} (<= 1.00 meets every target)")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
