"""Kineto trace events -> compact columns, one event at a time.

:class:`Collector` takes the events of :func:`parsers.kineto.stream.iter_events` and keeps, per
category, only the fields the profile needs, in ``array`` columns (8 bytes a value) with every
repeated text (kernel, operator and API names, thread keys) stored once and referred to by a
code: a trace of millions of events keeps a few dozen distinct names.

Categories read (``cat``, compared in lower case; Kineto's older spellings in parentheses):

=========================== ===========================================================
``kernel``                  a kernel launch: name, device, context, stream, start,
                            duration, grid, block, registers per thread, shared memory,
                            correlation id, ``Collective name`` (communication kernels)
``gpu_memcpy`` (``memcpy``) ``gpu_memset`` (``memset``): a transfer, with its bytes
``cuda_runtime``            ``cuda_driver`` (``runtime``): a CUDA API call (name, thread,
                            start, duration, correlation id)
``cpu_op`` (``operator``)   a PyTorch operator: thread, start, end, name
``cuda_sync``               a synchronization (``cuda_sync_kind``), tied to its API call by
                            the correlation id
``cuda_profiler_range``     the CUPTI range profiler's counters of one kernel (the
                            counters are Nsight Compute metric names)
=========================== ===========================================================

Every other category (annotations, flows, Python functions, ``mtia_*``, metadata events) is
only counted, for the message of a trace without NVIDIA GPU activity.  Times are kept as
integer nanoseconds since the epoch (``ts`` is in microseconds; ``Decimal`` values keep their
three decimals exactly).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from parsers.codes import FirstSeen

KERNEL = "kernel"
MEMCPY = "gpu_memcpy"
MEMSET = "gpu_memset"
RUNTIME = "cuda_runtime"
CPU_OP = "cpu_op"
SYNC = "cuda_sync"
COUNTERS = "cuda_profiler_range"
#: older and alternative category names -> the ones above
_ALIASES = {
    "memcpy": MEMCPY,
    "memset": MEMSET,
    "runtime": RUNTIME,
    "cuda_driver": RUNTIME,
    "operator": CPU_OP,
}
MISSING = -1
#: a kernel's ``grid`` / ``block`` arg -> its x, y, z columns (named once, not per event)
_DIMS = (("grid", ("grid_x", "grid_y", "grid_z")), ("block", ("block_x", "block_y", "block_z")))


def _ints(*names: str) -> dict[str, array]:
    return {n: array("q") for n in names}


def _floats(*names: str) -> dict[str, array]:
    return {n: array("d") for n in names}


class Collector:
    """The columns of every category the profile uses, filled by :meth:`add`."""

    def __init__(self) -> None:
        self.names = FirstSeen()  # kernel, API, operator, transfer names
        self.threads = FirstSeen()  # (pid, tid) of host events
        self.kernels = _ints(
            "name", "device", "context", "stream", "start", "corr",
            "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers",
            "collective",
        )  # fmt: skip
        self.kernel_floats = _floats("duration", "shared")
        self.transfers = _ints("name", "device", "context", "stream", "start", "corr")
        self.transfer_floats = _floats("duration", "bytes")
        self.runtime = _ints("name", "thread", "pid", "tid", "start", "corr")
        self.runtime_floats = _floats("duration")
        self.ops = _ints("name", "thread", "start", "end")
        self.syncs: dict[int, str] = {}  # correlation id -> cuda_sync_kind
        self.counters: list[tuple[str, int, dict[str, float]]] = []  # (kernel, device, values)
        self.categories: Counter[str] = Counter()
        self.runtime_names: Counter[str] = Counter()  # for the non-NVIDIA check (hip*, mtia*)
        self._spelled: dict[str, str] = {}  # a category as written -> its name above

    def add_all(self, events: Iterable[Mapping[str, Any]]) -> Collector:
        for event in events:
            self.add(event)
        return self

    def add(self, event: Mapping[str, Any]) -> None:
        if not isinstance(event, dict):
            return
        cat = event.get("cat")
        if not isinstance(cat, str):
            return
        known = self._spelled.get(cat)  # the few spellings a trace uses, each looked at once
        if known is None:
            known = self._spelled[cat] = _ALIASES.get(cat.lower(), cat.lower())
        cat = known
        self.categories[cat] += 1
        if event.get("ph") != "X":
            return
        args = event.get("args")
        if not isinstance(args, dict):
            args = {}
        if cat == KERNEL:
            self._kernel(event, args)
        elif cat in (MEMCPY, MEMSET):
            self._transfer(event, args)
        elif cat == RUNTIME:
            self._runtime(event, args)
        elif cat == CPU_OP:
            start = ns(event.get("ts"))
            if start != MISSING:
                ops = self.ops
                ops["name"].append(self.names.code(str(event.get("name", ""))))
                ops["thread"].append(self.threads.code(_thread(event.get("pid"), event.get("tid"))))
                ops["start"].append(start)
                ops["end"].append(start + max(0, ns(event.get("dur"))))
        elif cat == SYNC:
            corr = integer(args.get("correlation"))
            kind = args.get("cuda_sync_kind", event.get("name"))
            if corr != MISSING and isinstance(kind, str):
                self.syncs[corr] = kind
        elif cat == COUNTERS:
            values = {k: float(v) for k, v in args.items() if _is_number(v)}
            device = integer(args.get("device", event.get("pid")))  # GPU rows: pid = device
            self.counters.append((str(event.get("name", "")), device, values))

    def _place(self, cols: Any, event: Mapping[str, Any], args: Mapping[str, Any]) -> None:
        """What a kernel and a copy both record: name, device, context, stream, start and
        correlation id."""
        cols["name"].append(self.names.code(str(event.get("name", ""))))
        cols["device"].append(integer(args.get("device")))
        cols["context"].append(integer(args.get("context")))
        cols["stream"].append(integer(args.get("stream")))
        cols["start"].append(ns(event.get("ts")))
        cols["corr"].append(integer(args.get("correlation")))

    def _kernel(self, event: Mapping[str, Any], args: Mapping[str, Any]) -> None:
        cols = self.kernels
        self._place(cols, event, args)
        for key, (x, y, z) in _DIMS:
            dims = args.get(key)
            if isinstance(dims, list) and len(dims) == 3:
                cols[x].append(integer(dims[0]))
                cols[y].append(integer(dims[1]))
                cols[z].append(integer(dims[2]))
            else:
                cols[x].append(MISSING)
                cols[y].append(MISSING)
                cols[z].append(MISSING)
        cols["registers"].append(integer(args.get("registers per thread")))
        collective = args.get("Collective name")  # a communication kernel (record_param_comms)
        cols["collective"].append(
            self.names.code(collective) if isinstance(collective, str) and collective else MISSING
        )
        floats = self.kernel_floats
        floats["duration"].append(number(event.get("dur")) * 1000.0)  # duration_ns, inlined
        floats["shared"].append(number(args.get("shared memory")))

    def _transfer(self, event: Mapping[str, Any], args: Mapping[str, Any]) -> None:
        cols = self.transfers
        self._place(cols, event, args)
        self.transfer_floats["duration"].append(duration_ns(event.get("dur")))
        self.transfer_floats["bytes"].append(number(args.get("bytes")))

    def _runtime(self, event: Mapping[str, Any], args: Mapping[str, Any]) -> None:
        name = str(event.get("name", ""))
        self.runtime_names[name] += 1
        cols = self.runtime
        pid, tid = event.get("pid"), event.get("tid")
        cols["name"].append(self.names.code(name))
        cols["thread"].append(self.threads.code(_thread(pid, tid)))
        cols["pid"].append(integer(pid))
        cols["tid"].append(integer(tid))
        cols["start"].append(ns(event.get("ts")))
        cols["corr"].append(integer(args.get("correlation")))
        self.runtime_floats["duration"].append(duration_ns(event.get("dur")))


def _thread(pid: Any, tid: Any) -> tuple[Any, Any]:
    """The (pid, tid) of a host event as a key: numbers and texts as they are (a trace may name
    its threads), anything else (a damaged trace's list or object) by its repr."""
    return (_scalar(pid), _scalar(tid))


def _scalar(value: Any) -> Any:
    return value if value is None or isinstance(value, str | int | float | Decimal) else repr(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


#: the largest magnitude the integer columns (64-bit) hold; a value beyond is missing
INT64_MAX = 2**63 - 1


def _in_int64(value: int) -> int:
    return value if -INT64_MAX <= value <= INT64_MAX else MISSING


def ns(value: Any) -> int:
    """A ``ts`` (microseconds, int or Decimal) as integer nanoseconds; :data:`MISSING` when it
    is not a number or not one a 64-bit column holds (``1e999`` in a damaged trace)."""
    kind = type(value)
    if kind is Decimal or kind is int:  # what the JSON parser gives: the common case first
        try:
            whole = int(value * 1000)
        except (ValueError, OverflowError, ArithmeticError):
            return MISSING
        return whole if -INT64_MAX <= whole <= INT64_MAX else MISSING
    if not _is_number(value):
        return MISSING
    try:
        whole = round(Decimal(value) * 1000) if isinstance(value, float) else int(value * 1000)
    except (ValueError, OverflowError, ArithmeticError):
        return MISSING
    return _in_int64(whole)


def duration_ns(value: Any) -> float:
    """A ``dur`` (microseconds) in nanoseconds; NaN when it is not a number (an infinite or
    negative one is dropped with a note where the profile is built)."""
    return number(value) * 1000.0


def number(value: Any) -> float:
    kind = type(value)
    if kind is Decimal or kind is int:  # what the JSON parser gives: the common case first
        try:
            return float(value)
        except (OverflowError, ValueError, ArithmeticError):
            return math.nan
    if not _is_number(value):
        return math.nan
    try:
        return float(value)
    except (OverflowError, ValueError, ArithmeticError):
        return math.nan


def integer(value: Any) -> int:
    """A whole number (an int, or a float/Decimal without a fraction) a 64-bit column holds,
    else :data:`MISSING` (Kineto's ids are never negative except the stream -1 of a
    device-wide sync, which is not read from here)."""
    if type(value) is int:  # the common case first (a bool is not one: its type is bool)
        return value if -INT64_MAX <= value <= INT64_MAX else MISSING
    if isinstance(value, bool):
        return MISSING
    if isinstance(value, int):
        return _in_int64(value)
    try:
        if isinstance(value, float | Decimal) and value == value and value % 1 == 0:
            return _in_int64(int(value))
    except (OverflowError, ValueError, ArithmeticError):  # inf, or beyond Decimal's precision
        pass
    return MISSING
