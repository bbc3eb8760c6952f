"""The SASS of an Nsight Compute report's instructions, disassembled in a helper process.

NVIDIA's ``ncu_report`` module spends 0.3–0.6 s starting its disassembler on the first
``IAction.sass_by_pc`` of a process, holding the interpreter lock throughout, so a thread of the
same process cannot hide it (docs/locations.md, "cost").  ``report`` therefore starts, before
it loads its own modules, one helper process per Nsight Compute report it is given
(:func:`start`): ``python -m advisor.disassembly REPORT`` opens the report itself and writes, for
the first launch of each kernel with per-instruction data (the launch whose lines and SASS
:class:`parsers.ncu.source_counters.Code` keeps for the kernel), the SASS of every PC of its
:data:`PC_METRICS`, one JSON line per launch: ``[range, action, [[pc, sass], ...]]``.
The helper imports only the standard library and ``ncu_report``, so it runs on the second core
while the command imports pandas and reads the report.

:func:`lookup` gives the helper's text for one PC, waiting (at most :data:`TIMEOUT` seconds in
all) until the helper has written that launch; None where there is no helper for the report, it
failed, was too slow, or did not write that PC: the caller then disassembles in-process, so the
output is the same either way.  Nothing is started without ``ncu_report``, on a single core, or
for a file that is not an Nsight Compute report; every helper is killed and waited for when the
command ends (:func:`stop`, also registered with :mod:`atexit`), and a helper whose parent is
gone stops at its next launch.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

#: seconds a command waits in all for one helper before disassembling in-process
TIMEOUT = 30.0
#: at most this many helpers per command (one per report, the first reports given)
MAX_HELPERS = 2
#: the helper stops after disassembling this many instructions (about 0.05 ms each)
MAX_INSTRUCTIONS = 200_000
MODULE = "ncu_report"
#: the metrics whose PCs the helper disassembles: every executed instruction, and those PC
#: sampling caught (a sampled branch to itself can have no executed count), with the first
#: stall-reason metric (``STALL_PREFIX``; they share their PCs) for reports without the sample
#: count; the other counters of the SourceCounters section share the PCs of ``inst_executed``
PC_METRICS = ("inst_executed", "smsp__pcsamp_sample_count")
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
#: the magic at the start of every Nsight Compute report (parsers.ncu.rep_file.MAGIC)
_MAGIC = b"NVR\0"


class Helper:
    """One helper process and what it has written so far (read by a thread of its own)."""

    def __init__(self, path: str, process: subprocess.Popen[bytes]) -> None:
        self.path = path
        self.process = process
        self.started = time.monotonic()
        self.launches: dict[tuple[int, int], dict[int, str]] = {}
        self.finished = False  # the helper closed its output (done, failed or killed)
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="sass-helper", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        try:
            for line in stream if stream is not None else ():
                try:
                    r, a, pairs = json.loads(line)
                    launch = {int(pc): str(text) for pc, text in pairs}
                except (ValueError, TypeError):
                    break  # not the helper's output: use none of the rest
                with self._changed:
                    self.launches[(int(r), int(a))] = launch
                    self._changed.notify_all()
        except (OSError, ValueError):  # the pipe closed under the reader (stop)
            pass
        finally:
            with self._changed:
                self.finished = True
                self._changed.notify_all()

    def lookup(self, range_index: int, action_index: int, pc: int) -> str | None:
        """The helper's SASS of ``pc`` in that launch, waiting for the launch if needed."""
        key = (range_index, action_index)
        with self._changed:
            while key not in self.launches and not self.finished:
                left = self.started + TIMEOUT - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            launch = self.launches.get(key)
        if launch is None and not self.finished:  # too slow: disassemble in-process from now on
            self.stop()
        return None if launch is None else launch.get(pc)

    def stop(self) -> None:
        """Kill the helper (if still running) and wait for it, so that no zombie is left."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        with self._changed:
            self.finished = True
            self._changed.notify_all()
        if self.process.stdout is not None:
            self._reader.join(timeout=1.0)
            self.process.stdout.close()


_HELPERS: dict[str, Helper] = {}
_registered = False  # stop() registered with atexit


def available() -> bool:
    """Whether a helper could run: ``ncu_report`` importable (without importing it) and at
    least two cores for this process."""
    import importlib.util

    try:
        if importlib.util.find_spec(MODULE) is None:
            return False
    except (ImportError, ValueError):
        return False
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return (len(cores) if cores is not None else os.cpu_count() or 1) >= 2


def start(paths: Iterable[str]) -> None:
    """Start a helper for each Nsight Compute report among ``paths`` (files only, at most
    :data:`MAX_HELPERS` in all); nothing when :func:`available` says no."""
    reports = [p for p in _reports(paths) if _key(p) not in _HELPERS]
    reports = reports[: MAX_HELPERS - len(_HELPERS)]
    if not reports or not available():
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    global _registered
    if not _registered:
        atexit.register(stop)
        _registered = True
    for path in reports:
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "advisor.disassembly", path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError:
            return
        _HELPERS[_key(path)] = Helper(path, process)


def lookup(path: str, range_index: int, action_index: int, pc: int) -> str | None:
    """The SASS of ``pc`` in that launch of the report ``path`` as its helper wrote it; None
    where there is no helper or it has no text for that PC (the module docstring)."""
    if not _HELPERS:
        return None
    helper = _HELPERS.get(path) or _HELPERS.get(_key(path))
    return helper.lookup(range_index, action_index, pc) if helper is not None else None


def stop() -> None:
    """Kill and wait for every helper (registered with :mod:`atexit` by :func:`start`)."""
    while _HELPERS:
        _HELPERS.popitem()[1].stop()


def _key(path: str) -> str:
    return os.path.realpath(path)


def _reports(paths: Iterable[str]) -> Iterator[str]:
    """The paths that are files starting with the report magic."""
    for path in paths:
        try:
            with open(path, "rb") as file:
                if file.read(len(_MAGIC)) == _MAGIC:
                    yield path
        except OSError:
            continue


# ----- the helper process -------------------------------------------------------------------


def disassemble(path: str, out: Any) -> None:
    """Write the SASS of the first launch of each kernel with per-instruction data (the module
    docstring) to ``out``, one JSON line per launch, flushed as each is done."""
    import importlib

    ncu_report = importlib.import_module(MODULE)
    parent = os.getppid()
    context = ncu_report.load_report(path)
    seen: set[str] = set()
    count = 0
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            base = getattr(action, "NameBase_DEMANGLED", None)
            name = str(action.name(base) if base is not None else action.name())
            metric = action.metric_by_name("inst_executed")
            if name in seen or not (metric is not None and metric.has_correlation_ids()):
                continue
            if os.getppid() != parent:  # the command is gone
                return
            if not metric.num_instances():
                continue
            seen.add(name)
            stalls = [n for n in action.metric_names() if n.startswith(STALL_PREFIX)]
            names = (*PC_METRICS, *sorted(stalls)[:1])
            pcs = sorted(set().union(*(_pcs(action, m) for m in names)))
            pairs = [[pc, str(action.sass_by_pc(pc) or "").strip()] for pc in pcs]
            out.write(json.dumps([r, a, pairs], separators=(",", ":")) + "\n")
            out.flush()
            count += len(pcs)
            if count >= MAX_INSTRUCTIONS:
                return


def _pcs(action: Any, name: str) -> set[int]:
    """The PCs (correlation ids) of one instanced metric of ``action``; none where absent."""
    metric = action.metric_by_name(name)
    if metric is None or not metric.has_correlation_ids():
        return set()
    ids = metric.correlation_ids()
    return {int(ids.as_uint64(i)) for i in range(metric.num_instances())}


def main(argv: list[str] | None = None) -> int:
    """``python -m advisor.disassembly REPORT``: :func:`disassemble` to stdout."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m advisor.disassembly REPORT.ncu-rep", file=sys.stderr)
        return 2
    try:
        disassemble(args[0], sys.stdout)
    except (KeyboardInterrupt, BrokenPipeError):
        return 1
    except Exception as exc:  # the module's own errors: the command disassembles in-process
        print(f"advisor.disassembly: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
