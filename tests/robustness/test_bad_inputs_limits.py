"""Bad inputs that could hang or exhaust memory, run in a child process with limits.

A FIFO instead of a file, 10 MB single lines (plain, in a CSV field, as a kernel name) and a
million columns (in a header, in a row, tab-separated) for each text reader.  The child runs
``cuda-advisor inspect FILE`` on each case under

* a time limit of :data:`CASE_SECONDS` seconds (``signal.alarm``; the whole child has
  :data:`CHILD_SECONDS`), and
* a memory bound: the address space (``RLIMIT_AS``) may grow by at most
  :data:`BYTES_PER_INPUT_BYTE` times the input's size plus :data:`ALLOWANCE_BYTES` over what the
  interpreter had mapped before the case.

Each case must end like every bad input (exit code 3, one stderr line naming the file; exit code
0 for the one case whose damage leaves a valid file) within those limits; running out of memory
would print "out of memory" with exit code 1 and fail.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: per-case wall-clock limit in the child, and for the whole child
CASE_SECONDS = 20
CHILD_SECONDS = 240
#: memory bound: growth of the address space allowed per byte of input, plus a fixed allowance
BYTES_PER_INPUT_BYTE = 50
ALLOWANCE_BYTES = 256 << 20

TEN_MB = 10_000_000
MILLION = 1_000_000
REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_profiles"


def _sample(name: str) -> list[bytes]:
    """The table lines of a sample profile (its "# " comment lines and ==PROF== lines dropped)."""
    lines = (SAMPLES / name).read_bytes().split(b"\n")
    return [line for line in lines if not line.startswith((b"#", b"=="))]


def _with_line(name: str, index: int, line: bytes) -> bytes:
    lines = _sample(name)
    return b"\n".join([*lines[:index], line, *lines[index + 1 :]])


def _wide_header(name: str) -> bytes:
    lines = _sample(name)
    return _with_line(name, 0, lines[0] + b"".join(b',"c%d"' % i for i in range(MILLION)))


def _wide_row(name: str, index: int) -> bytes:
    return _with_line(name, index, _sample(name)[index] + b",1" * MILLION)


def _long_name(name: str, old: bytes) -> bytes:
    return b"\n".join(_sample(name)).replace(old, b"k" * TEN_MB, 1)


KERNEL = b"transposeNaive"

#: name -> content (a FIFO is made by the child's setup)
BUILDERS: dict[str, Callable[[], bytes]] = {
    "line-10mb-letters.csv": lambda: b"a" * TEN_MB,
    "line-10mb-commas.csv": lambda: b"," * TEN_MB,
    "line-10mb-open-quote.csv": lambda: b'"' + b"a" * TEN_MB,
    "line-10mb-in-nvprof-text.txt": lambda: _long_name("synthetic_nvprof_gputrace.txt", KERNEL),
    "name-10mb-nvprof-trace.csv": lambda: _long_name("synthetic_nvprof_gputrace.csv", KERNEL),
    "name-10mb-nvprof-metrics.csv": lambda: _long_name("synthetic_nvprof_metrics.csv", KERNEL),
    "name-10mb-ncu-details.csv": lambda: _long_name("synthetic_ncu_details.csv", KERNEL),
    "name-10mb-nsys-trace.csv": lambda: _long_name("synthetic_nsys_cuda_gpu_trace.csv", KERNEL),
    "columns-1m-nvprof-header.csv": lambda: _wide_header("synthetic_nvprof_gputrace.csv"),
    "columns-1m-nvprof-row.csv": lambda: _wide_row("synthetic_nvprof_gputrace.csv", 3),
    "columns-1m-ncu-details-header.csv": lambda: _wide_header("synthetic_ncu_details.csv"),
    "columns-1m-ncu-raw-row.csv": lambda: _wide_row("synthetic_ncu_raw.csv", 2),
    "columns-1m-nsys-header.csv": lambda: _wide_header("synthetic_nsys_cuda_gpu_trace.csv"),
    "columns-1m-tabs.txt": lambda: b"1.5\t" * MILLION + b"\n" + b"2.5\t" * 3 + b"\n",
}
FIFO = "fifo.csv"
#: cases whose damage leaves a valid file: a 10 MB kernel name in a text summary is a name
VALID = {"line-10mb-in-nvprof-text.txt"}


def limit_cases() -> list[str]:
    return [FIFO, *BUILDERS]


# --- the child ---------------------------------------------------------------------------------


def _mapped_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


class _CaseTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise _CaseTimeout


def child(folder: Path) -> None:
    """Build every case in ``folder``, run it under the limits, print one JSON line per case."""
    from click.testing import CliRunner

    from advisor.cli import main

    signal.signal(signal.SIGALRM, _on_alarm)
    # the command's modules (loaded when the command is first named) are a fixed cost, not the
    # input's: load them before the limits, as a sample does
    CliRunner().invoke(main, ["inspect", str(REPO / "sample_profiles" / "synthetic_ncu_raw.csv")])
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    for name in limit_cases():
        path = folder / name
        if name == FIFO:
            os.mkfifo(path)
        else:
            path.write_bytes(BUILDERS[name]())
        size = path.stat().st_size
        bound = _mapped_bytes() + BYTES_PER_INPUT_BYTE * size + ALLOWANCE_BYTES
        start = time.monotonic()
        resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
        signal.alarm(CASE_SECONDS)
        try:
            result = CliRunner().invoke(main, ["inspect", str(path)])
            code, stderr = result.exit_code, result.stderr
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                code, stderr = -1, f"raised {type(result.exception).__name__}"
        except _CaseTimeout:
            code, stderr = -2, f"no answer within {CASE_SECONDS} s"
        finally:
            signal.alarm(0)
            resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        seconds = round(time.monotonic() - start, 2)
        path.unlink()
        report = {"name": name, "path": str(path), "code": code, "stderr": stderr}
        print(json.dumps({**report, "seconds": seconds, "size": size}), flush=True)


# --- the test ----------------------------------------------------------------------------------


def test_hangs_and_memory_are_bounded(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, __file__, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=CHILD_SECONDS,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["name"] for r in results] == limit_cases()
    failures = []
    for r in results:
        lines = r["stderr"].splitlines()
        if r["name"] in VALID and r["code"] == 0 and not lines:
            continue
        ok = r["code"] == 3 and len(lines) == 1
        if not ok or not lines[0].startswith(f"cuda-advisor: error: {r['path']}:"):
            failures.append(f"{r['name']}: exit {r['code']}, {r['stderr'][:300]!r}")
    assert failures == []
    by_name = {r["name"]: r["stderr"] for r in results}
    assert "is not a regular file (a FIFO)" in by_name[FIFO]
    assert "1,000,001 fields, more than any profiler export" in by_name["columns-1m-tabs.txt"]


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    child(Path(sys.argv[1]))
