"""Kineto trace events -> compact columns.

:class:`Collector` takes the events of :func:`parsers.kineto.stream.iter_events` and keeps, per
category, only the fields the profile needs, in ``array`` columns (8 bytes a value) with every
repeated text (kernel, operator and API names, thread keys) stored once and referred to by a
code: a trace of millions of events keeps a few dozen distinct names.  The codes are given as
the events come; the other fields are kept as they came, a tuple per event, and converted a
column at a time every :data:`ROWS_KEPT` events of a category (numpy, when every value of the
column is a plain int or ``Decimal``; one value at a time through :func:`integer`, :func:`ns`
and :func:`number` otherwise, so both give the same columns).

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

import gc
import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from itertools import chain
from typing import Any

import numpy as np

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


class EndBeyondInt64(OverflowError):
    """An operator's start plus duration beyond the 64-bit nanosecond columns."""


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
        self._kernel_rows: list[tuple[Any, ...]] = []  # rows not yet in the columns
        self._transfer_rows: list[tuple[Any, ...]] = []
        self._runtime_rows: list[tuple[Any, ...]] = []
        self._op_rows: list[tuple[Any, ...]] = []

    def add_all(self, events: Iterable[Mapping[str, Any]]) -> Collector:
        """:meth:`add` every event, then :meth:`finish`.

        The cyclic garbage collector is paused meanwhile: the events and rows make no cycles
        (each is freed by its reference count), and its passes over the millions of objects
        made and freed took about a sixth of the read."""
        paused = gc.isenabled()
        gc.disable()
        try:
            for event in events:
                self.add(event)
            return self.finish()
        finally:
            if paused:
                gc.enable()

    def finish(self) -> Collector:
        """Move the rows :meth:`add` keeps as they came into the columns."""
        self._flush_kernels()
        self._flush_transfers()
        self._flush_runtime()
        self._flush_ops()
        return self

    def add(self, event: Mapping[str, Any]) -> None:
        """Take one event.  The name and thread codes are given here, in event order; the
        other fields of the timed categories are kept as they came, one tuple per event, and
        converted a column at a time when :data:`ROWS_KEPT` have come (and by :meth:`finish`)."""
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
        get = args.get
        if cat == KERNEL:
            code = self.names.code(str(event.get("name", "")))
            collective = get("Collective name")  # a communication kernel (record_param_comms)
            rows = self._kernel_rows
            rows.append(
                (
                    code, get("device"), get("context"), get("stream"), event.get("ts"),
                    get("correlation"), get("grid"), get("block"), get("registers per thread"),
                    self.names.code(collective)
                    if isinstance(collective, str) and collective
                    else MISSING,
                    event.get("dur"), get("shared memory"),
                )
            )  # fmt: skip
            if len(rows) >= ROWS_KEPT:
                self._flush_kernels()
        elif cat in (MEMCPY, MEMSET):
            rows = self._transfer_rows
            rows.append(
                (
                    self.names.code(str(event.get("name", ""))), get("device"), get("context"),
                    get("stream"), event.get("ts"), get("correlation"), event.get("dur"),
                    get("bytes"),
                )
            )  # fmt: skip
            if len(rows) >= ROWS_KEPT:
                self._flush_transfers()
        elif cat == RUNTIME:
            name = str(event.get("name", ""))
            self.runtime_names[name] += 1
            pid, tid = event.get("pid"), event.get("tid")
            rows = self._runtime_rows
            rows.append(
                (
                    self.names.code(name), self.threads.code(_thread(pid, tid)), pid, tid,
                    event.get("ts"), get("correlation"), event.get("dur"),
                )
            )  # fmt: skip
            if len(rows) >= ROWS_KEPT:
                self._flush_runtime()
        elif cat == CPU_OP:
            start = ns(event.get("ts"))
            if start != MISSING:  # (the codes only of the operators kept)
                rows = self._op_rows
                rows.append(
                    (
                        self.names.code(str(event.get("name", ""))),
                        self.threads.code(_thread(event.get("pid"), event.get("tid"))),
                        start, event.get("dur"),
                    )
                )  # fmt: skip
                if len(rows) >= ROWS_KEPT:
                    self._flush_ops()
        elif cat == SYNC:
            corr = integer(get("correlation"))
            kind = get("cuda_sync_kind", event.get("name"))
            if corr != MISSING and isinstance(kind, str):
                self.syncs[corr] = kind
        elif cat == COUNTERS:
            values = {k: float(v) for k, v in args.items() if _is_number(v)}
            device = integer(get("device", event.get("pid")))  # GPU rows: pid = device
            self.counters.append((str(event.get("name", "")), device, values))

    def _flush_kernels(self) -> None:
        rows, self._kernel_rows = self._kernel_rows, []
        if not rows:
            return
        cols = self.kernels
        (name, device, context, stream, ts, corr, grid, block, registers, collective, dur,
         shared) = zip(*rows, strict=True)  # fmt: skip
        del rows
        _extend(cols["name"], name)
        _place(cols, device, context, stream, ts, corr)
        for values, (x, y, z) in zip((grid, block), (col for _, col in _DIMS), strict=True):
            dims = _dims(values)
            _extend(cols[x], dims[:, 0])
            _extend(cols[y], dims[:, 1])
            _extend(cols[z], dims[:, 2])
        _extend(cols["registers"], integers(registers))
        _extend(cols["collective"], collective)
        _extend(self.kernel_floats["duration"], numbers(dur) * 1000.0)  # duration_ns
        _extend(self.kernel_floats["shared"], numbers(shared))

    def _flush_transfers(self) -> None:
        rows, self._transfer_rows = self._transfer_rows, []
        if not rows:
            return
        cols = self.transfers
        name, device, context, stream, ts, corr, dur, size = zip(*rows, strict=True)
        del rows
        _extend(cols["name"], name)
        _place(cols, device, context, stream, ts, corr)
        _extend(self.transfer_floats["duration"], numbers(dur) * 1000.0)
        _extend(self.transfer_floats["bytes"], numbers(size))

    def _flush_runtime(self) -> None:
        rows, self._runtime_rows = self._runtime_rows, []
        if not rows:
            return
        cols = self.runtime
        name, thread, pid, tid, ts, corr, dur = zip(*rows, strict=True)
        del rows
        _extend(cols["name"], name)
        _extend(cols["thread"], thread)
        _extend(cols["pid"], integers(pid))
        _extend(cols["tid"], integers(tid))
        _extend(cols["start"], nanoseconds(ts))
        _extend(cols["corr"], integers(corr))
        _extend(self.runtime_floats["duration"], numbers(dur) * 1000.0)

    def _flush_ops(self) -> None:
        rows, self._op_rows = self._op_rows, []
        if not rows:
            return
        ops = self.ops
        name, thread, start, dur = zip(*rows, strict=True)
        del rows
        starts = np.array(start, dtype=np.int64)  # each a 64-bit value (ns)
        lengths = np.maximum(nanoseconds(dur), 0)
        if np.any(starts > INT64_MAX - lengths):  # an end no 64-bit column holds
            raise EndBeyondInt64("int too big to convert")  # the message array("q") gave
        _extend(ops["name"], name)
        _extend(ops["thread"], thread)
        _extend(ops["start"], starts)
        _extend(ops["end"], starts + lengths)


#: rows of a category kept as tuples before their columns are converted (bounded memory)
ROWS_KEPT = 1 << 16
_INT64_MIN = -(2**63)


def _extend(column: array, values: Any) -> None:
    """Append ``values`` (a tuple of ints, or an array of the column's type) to ``column``."""
    if isinstance(values, np.ndarray):
        dtype = np.int64 if column.typecode == "q" else np.float64
        column.frombytes(values.astype(dtype).tobytes())
    else:
        column.extend(values)


def _place(
    cols: dict[str, array], device: Any, context: Any, stream: Any, ts: Any, corr: Any
) -> None:
    """What a kernel and a copy both record: device, context, stream, start and correlation
    id."""
    _extend(cols["device"], integers(device))
    _extend(cols["context"], integers(context))
    _extend(cols["stream"], integers(stream))
    _extend(cols["start"], nanoseconds(ts))
    _extend(cols["corr"], integers(corr))


def integers(values: Sequence[Any]) -> np.ndarray:
    """:func:`integer` of each value: at once when every one is an int, else one by one."""
    if set(map(type, values)) == {int}:
        try:
            out = np.array(values, dtype=np.int64)
        except OverflowError:  # one beyond 64 bits: missing, as integer() says
            pass
        else:
            out[out == _INT64_MIN] = MISSING  # -2**63: outside the columns' range
            return out
    return np.array([integer(v) for v in values], dtype=np.int64)


def nanoseconds(values: Sequence[Any]) -> np.ndarray:
    """:func:`ns` of each value: every int or Decimal times 1000 (exact), at once checked to
    fit 64 bits; one by one otherwise."""
    if set(map(type, values)) <= {Decimal, int}:
        try:
            out = np.array([int(v * 1000) for v in values], dtype=np.int64)
        except (ValueError, OverflowError, ArithmeticError):
            pass
        else:
            out[out == _INT64_MIN] = MISSING
            return out
    return np.array([ns(v) for v in values], dtype=np.int64)


def numbers(values: Sequence[Any]) -> np.ndarray:
    """:func:`number` of each value (float64): at once when every one is an int or a
    Decimal, one by one otherwise."""
    if set(map(type, values)) <= {Decimal, int}:
        try:
            return np.array(values, dtype=np.float64)
        except (ValueError, OverflowError, ArithmeticError, TypeError):
            pass
    return np.array([number(v) for v in values], dtype=np.float64)


def _dims(values: Sequence[Any]) -> np.ndarray:
    """A kernel's ``grid`` / ``block`` values as (n, 3) int64: :func:`integer` of each of a
    3-list's items, missing for anything else."""
    if set(map(type, values)) == {list} and set(map(len, values)) == {3}:
        return integers(list(chain.from_iterable(values))).reshape(-1, 3)
    out = np.full((len(values), 3), MISSING, dtype=np.int64)
    for i, dims in enumerate(values):
        if isinstance(dims, list) and len(dims) == 3:
            out[i] = [integer(v) for v in dims]
    return out


def _thread(pid: Any, tid: Any) -> tuple[Any, Any]:
    """The (pid, tid) of a host event as a key: numbers and texts as they are (a trace may name
    its threads), anything else (a damaged trace's list or object) by its repr."""
    return (_scalar(pid), _scalar(tid))


#: the types a thread key keeps as they are (the common case, tested first by exact type)
_SCALARS = (str, int, float, Decimal)


def _scalar(value: Any) -> Any:
    if value is None or type(value) in _SCALARS or isinstance(value, _SCALARS):
        return value
    return repr(value)


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
