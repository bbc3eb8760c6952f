"""An Nsight Compute report read, and its SASS disassembled, in a helper process.

Reading a report through NVIDIA's ``ncu_report`` module (every value of every result, then the
per-instruction counters of the kernels a report shows) and starting its disassembler (0.3–0.6 s
on the first ``IAction.sass_by_pc`` of a process) hold the interpreter lock throughout, so a
thread of the same process cannot overlap them with loading pandas (docs/locations.md, "cost").
``report`` therefore starts, before it loads its own modules, one helper process per Nsight
Compute report it is given (:func:`start`): ``python -m advisor.disassembly REPORT`` imports only
the standard library, :mod:`advisor.ncu_read` and ``ncu_report``, opens the report and writes
JSON lines on the second core while the command imports pandas:

1. ``{"action": ...}`` per result (:func:`advisor.ncu_read.action_json`), then
   ``{"launches": [[launch id, range, action, name], ...], "logged": [...], "version": ...}``
   (or ``{"failed": ...}``);
2. ``{"instructions": [range, action, ...]}`` (:func:`advisor.ncu_read.instructions_json`) for
   the first :data:`LAUNCHES` launches of each kernel with per-instruction counters, then
   ``{"instructions_end": true}``;
3. for the first launch of each such kernel, the SASS of every PC of its :data:`PC_METRICS`:
   ``[range, action, [[pc, sass], ...]]``.

The command takes each from the helper when it needs it (:func:`actions`,
:func:`instructions`, :func:`lookup`), waiting at most :data:`TIMEOUT` seconds in all; where
there is no helper for the report, it failed, was too slow, or did not write that item, the
command reads or disassembles in-process: the records are the same either way
(:mod:`advisor.ncu_read` reads them in both processes), and so is the output.  Nothing is
started without ``ncu_report``, on a single core, or for a file that is not an Nsight Compute
report; every helper is killed and waited for when the command ends (:func:`stop`, also
registered with :mod:`atexit`), and a helper whose parent is gone stops at its next launch.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded when a helper is read from (``report --help`` does not)
    from advisor.ncu_read import RawAction, RawInstructions, Read

#: seconds a command waits in all for one helper before disassembling in-process
TIMEOUT = 30.0
#: at most this many helpers per command (one per report, the first reports given)
MAX_HELPERS = 2
#: the helper stops after disassembling this many instructions (about 0.05 ms each), and
#: stops reading per-instruction counters after this many instructions
MAX_INSTRUCTIONS = 200_000
#: per-instruction counters read for the first launches of each kernel: the most a report
#: reads (advisor.report.locations.MAX_LAUNCHES, the criteria's instruction_sums.LAUNCHES_MAX)
LAUNCHES = 10
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
        self.launches: dict[tuple[int, int], dict[int, str]] = {}  # the SASS written
        self.read: Read | None = None
        self.read_failed = False
        self.counters: dict[tuple[int, int], dict[str, Any]] = {}  # per-instruction, as JSON
        self.counters_done = False
        self.finished = False  # the helper closed its output (done, failed or killed)
        self._actions: list[RawAction] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="sass-helper", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        try:
            for line in stream if stream is not None else ():
                try:
                    message = json.loads(line)
                    with self._changed:
                        self._take(message)
                        self._changed.notify_all()
                except (ValueError, TypeError, KeyError):
                    break  # not the helper's output: use none of the rest
        except (OSError, ValueError):  # the pipe closed under the reader (stop)
            pass
        finally:
            with self._changed:
                self.finished = True
                self._changed.notify_all()

    def _take(self, message: Any) -> None:
        """Keep one line the helper wrote (the module docstring)."""
        from advisor.ncu_read import Launch, Read, action_from_json

        if isinstance(message, list):
            r, a, pairs = message
            self.launches[(int(r), int(a))] = {int(pc): str(text) for pc, text in pairs}
        elif "action" in message:
            self._actions.append(action_from_json(message["action"]))
        elif "launches" in message:
            ends = message["launches"]
            launches = [Launch(int(i), int(r), int(a), str(n)) for i, r, a, n in ends]
            logged = [str(line) for line in message["logged"]]
            self.read = Read(self._actions, launches, logged, str(message["version"]))
        elif "failed" in message:
            self.read_failed = True
        elif "instructions" in message:
            r, a, data = message["instructions"]
            self.counters[(int(r), int(a))] = data
        elif "instructions_end" in message:
            self.counters_done = True
        else:
            raise KeyError("unknown message")

    def wait(self, ready: Callable[[], bool]) -> bool:
        """Wait until ``ready()`` (checked under the lock) or the helper has finished, at most
        until :data:`TIMEOUT` seconds after its start; a helper too slow is stopped, and the
        command reads in-process from then on.  Whether ``ready()`` holds."""
        with self._changed:
            while not ready() and not self.finished:
                left = self.started + TIMEOUT - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            done = ready()
            gave_up = not done and not self.finished
        if gave_up:
            self.stop()
        return done

    def lookup(self, range_index: int, action_index: int, pc: int) -> str | None:
        """The helper's SASS of ``pc`` in that launch, waiting for the launch if needed."""
        key = (range_index, action_index)
        if not self.wait(lambda: key in self.launches):
            return None
        return self.launches[key].get(pc)

    def actions(self) -> Read | None:
        """The results the helper read, waiting for them if needed."""
        if not self.wait(lambda: self.read is not None or self.read_failed):
            return None
        return self.read

    def instructions(self, range_index: int, action_index: int) -> RawInstructions | None:
        """The per-instruction counters of that launch as the helper read them, waiting for
        them if needed; None for a launch it did not read."""
        key = (range_index, action_index)
        if not self.wait(lambda: key in self.counters or self.counters_done):
            return None
        from advisor.ncu_read import instructions_from_json

        data = self.counters.get(key)
        return None if data is None else instructions_from_json(data)

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
        from advisor import ncu_read

        ncu_read.AHEAD = _AHEAD  # the readers ask the helpers first


def lookup(path: str, range_index: int, action_index: int, pc: int) -> str | None:
    """The SASS of ``pc`` in that launch of the report ``path`` as its helper wrote it; None
    where there is no helper or it has no text for that PC (the module docstring)."""
    helper = _helper(path)
    return helper.lookup(range_index, action_index, pc) if helper is not None else None


def actions(path: str) -> Read | None:
    """The results of the report ``path`` as its helper read them; None where there is no
    helper, or it failed or was too slow (the command then reads them in-process)."""
    helper = _helper(path)
    return helper.actions() if helper is not None else None


def instructions(path: str, range_index: int, action_index: int) -> RawInstructions | None:
    """The per-instruction counters of that launch of the report ``path`` as its helper read
    them; None where it did not (the command then reads them in-process)."""
    helper = _helper(path)
    return helper.instructions(range_index, action_index) if helper is not None else None


class _ReadAhead:
    """The helpers as :class:`advisor.ncu_read.ReadAhead`."""

    def actions(self, path: str) -> Read | None:
        return actions(path)

    def instructions(
        self, path: str, range_index: int, action_index: int
    ) -> RawInstructions | None:
        return instructions(path, range_index, action_index)


_AHEAD = _ReadAhead()


def _helper(path: str) -> Helper | None:
    if not _HELPERS:
        return None
    return _HELPERS.get(path) or _HELPERS.get(_key(path))


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
    """Write what the module docstring lists to ``out``, one JSON line each, flushed as each
    part is done: the results, the per-instruction counters, then the SASS."""
    import importlib

    from advisor import ncu_read

    ncu_report = importlib.import_module(MODULE)
    parent = os.getppid()
    logged: list[str] = []
    try:
        with ncu_read.captured_stderr(logged):
            context = ncu_report.load_report(path)
        with ncu_read.captured_stderr(logged):
            actions, launches, handles = ncu_read.read_actions(ncu_report, context)
    except Exception as exc:  # the command reads in-process and says what is wrong
        _write(out, {"failed": f"{type(exc).__name__}: {exc}"})
        return
    for action in actions:
        _write(out, {"action": ncu_read.action_json(action)}, flush=False)
    ends = [[x.launch_id, x.range_index, x.action_index, x.name] for x in launches]
    version = ncu_read.module_version(ncu_report)
    _write(out, {"launches": ends, "logged": logged, "version": version})
    if os.getppid() != parent:  # the command is gone
        return
    count = 0
    read: dict[str, int] = {}
    where: dict[str, dict[int, tuple[str, int]]] = {}
    for launch, action in zip(launches, handles, strict=True):
        if read.get(launch.name, 0) >= LAUNCHES or count >= MAX_INSTRUCTIONS:
            continue
        if os.getppid() != parent:
            return
        read[launch.name] = read.get(launch.name, 0) + 1
        raw = ncu_read.raw_instructions(action, where.setdefault(launch.name, {}))
        count += len(raw.where)
        data = ncu_read.instructions_json(raw)
        _write(out, {"instructions": [launch.range_index, launch.action_index, data]})
    _write(out, {"instructions_end": True})
    seen: set[str] = set()
    count = 0
    for launch, action in zip(launches, handles, strict=True):
        if launch.name in seen:
            continue
        if os.getppid() != parent:
            return
        seen.add(launch.name)
        stalls = [n for n in action.metric_names() if n.startswith(STALL_PREFIX)]
        names = (*PC_METRICS, *sorted(stalls)[:1])
        pcs = sorted(set().union(*(_pcs(action, m) for m in names)))
        pairs = [[pc, str(action.sass_by_pc(pc) or "").strip()] for pc in pcs]
        _write(out, [launch.range_index, launch.action_index, pairs])
        count += len(pcs)
        if count >= MAX_INSTRUCTIONS:
            return


def _write(out: Any, message: Any, flush: bool = True) -> None:
    out.write(json.dumps(message, separators=(",", ":")) + "\n")
    if flush:
        out.flush()


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
