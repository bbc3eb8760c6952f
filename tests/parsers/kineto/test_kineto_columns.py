"""The collector's columns, converted a column at a time, against the per-value conversions
(:func:`~parsers.kineto.events.integer`, :func:`~parsers.kineto.events.ns`,
:func:`~parsers.kineto.events.number`) applied event by event: equal for plain events and for
every kind of odd value, whichever batch a row falls in."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from parsers.kineto import events
from parsers.kineto.events import MISSING, Collector, integer, ns, number

#: odd values a damaged or unusual trace may hold where a number is expected
ODD: list[Any] = [
    None, True, "7", 2**63, -(2**63), 2**63 - 1, 10**400, Decimal("1E+999"), Decimal("2.0"),
    Decimal("2.5"), 1.5, [1], {"a": 1}, -3, 0,
]  # fmt: skip


def _event(i: int, odd: Any) -> list[dict[str, Any]]:
    """Four timed events (operator, call, kernel, copy); every fourth set takes ``odd`` in
    the fields numbered ``i % 7``."""
    ts = Decimal(f"1700000000000{i:03d}.125")
    value = odd if i % 4 == 3 else None

    def pick(field: int, plain: Any) -> Any:
        return value if value is not None and i % 7 == field else plain

    kernel_args = {
        "device": pick(0, 0), "context": pick(1, 1), "stream": pick(2, 7),
        "correlation": pick(3, i), "registers per thread": pick(4, 32),
        "shared memory": pick(5, 1024), "grid": pick(6, [i + 1, 1, 1]),
        "block": [256, pick(0, 1), 1],
    }  # fmt: skip
    return [
        {"ph": "X", "cat": "cpu_op", "name": f"op{i % 3}", "pid": 1, "tid": pick(1, 1),
         "ts": pick(2, ts), "dur": pick(3, Decimal("9.5"))},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pick(4, 1),
         "tid": 1, "ts": pick(5, ts + 1), "dur": pick(6, 2), "args": {"correlation": i}},
        {"ph": "X", "cat": "kernel", "name": f"k{i % 5}", "pid": 0, "tid": 7,
         "ts": pick(0, ts + 3), "dur": pick(1, Decimal("4.250")), "args": kernel_args},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0,
         "tid": 7, "ts": ts + 9, "dur": pick(2, 1), "args": {"device": 0, "context": 1,
         "stream": pick(3, 7), "correlation": i, "bytes": pick(4, 4096)}},
    ]  # fmt: skip


def _reference(trace: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The columns by the per-value conversions, event by event."""
    keys = "k_dev k_start k_grid k_regs k_dur k_shared t_bytes r_pid r_start r_dur o_start o_end"
    out: dict[str, list[Any]] = {k: [] for k in keys.split()}
    for e in trace:
        a = e.get("args", {})
        if e["cat"] == "kernel":
            out["k_dev"].append(integer(a["device"]))
            out["k_start"].append(ns(e["ts"]))
            grid = a["grid"]
            ok = isinstance(grid, list) and len(grid) == 3
            out["k_grid"].append([integer(v) for v in grid] if ok else [MISSING] * 3)
            out["k_regs"].append(integer(a["registers per thread"]))
            out["k_dur"].append(number(e["dur"]) * 1000.0)
            out["k_shared"].append(number(a["shared memory"]))
        elif e["cat"] == "gpu_memcpy":
            out["t_bytes"].append(number(a["bytes"]))
        elif e["cat"] == "cuda_runtime":
            out["r_pid"].append(integer(e["pid"]))
            out["r_start"].append(ns(e["ts"]))
            out["r_dur"].append(number(e["dur"]) * 1000.0)
        elif ns(e["ts"]) != MISSING:
            out["o_start"].append(ns(e["ts"]))
            out["o_end"].append(ns(e["ts"]) + max(0, ns(e["dur"])))
    return out


@pytest.mark.parametrize("rows_kept", [3, 64, 1 << 16], ids=["3", "64", "default"])
def test_columns_equal_the_per_value_conversions(
    monkeypatch: pytest.MonkeyPatch, rows_kept: int
) -> None:
    monkeypatch.setattr(events, "ROWS_KEPT", rows_kept)
    # every fourth set takes an odd value in field i % 7: 7 x 15 sets meet every value in
    # every field (15 and 7 are coprime)
    sets = 4 * 7 * len(ODD)
    trace = [e for i in range(sets) for e in _event(i, ODD[(i // 4) % len(ODD)])]
    col = Collector().add_all(trace)
    ref = _reference(trace)
    k, r, o = col.kernels, col.runtime, col.ops

    def same(column: Any, expected: list[Any]) -> None:
        np.testing.assert_array_equal(np.asarray(column), np.asarray(expected, dtype=float))

    same(k["device"], ref["k_dev"])
    same(k["start"], ref["k_start"])
    same(k["registers"], ref["k_regs"])
    for axis, name in enumerate(("grid_x", "grid_y", "grid_z")):
        same(k[name], [g[axis] for g in ref["k_grid"]])
    same(col.kernel_floats["duration"], ref["k_dur"])
    same(col.kernel_floats["shared"], ref["k_shared"])
    same(col.transfer_floats["bytes"], ref["t_bytes"])
    same(r["pid"], ref["r_pid"])
    same(r["start"], ref["r_start"])
    same(col.runtime_floats["duration"], ref["r_dur"])
    same(o["start"], ref["o_start"])
    same(o["end"], ref["o_end"])
    # the odd values did reach the columns: some missing, some NaN
    assert MISSING in k["device"] and MISSING in k["start"] and MISSING in r["pid"]
    assert np.isnan(np.asarray(col.kernel_floats["shared"])).any()
    # codes in event order: the kernels' names after the operators' and the call's
    assert col.names.values[:5] == [
        "op0",
        "cudaLaunchKernel",
        "k0",
        "Memcpy HtoD (Pinned -> Device)",
        "op1",
    ]


def test_the_garbage_collector_is_given_back_as_it_was() -> None:
    import gc

    def failing() -> Any:
        yield {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {}}
        assert not gc.isenabled()  # paused while the events are read
        raise ValueError("damaged")

    assert gc.isenabled()
    with pytest.raises(ValueError, match="damaged"):
        Collector().add_all(failing())
    assert gc.isenabled()  # back on after an error
    gc.disable()
    try:
        Collector().add_all([])
        assert not gc.isenabled()  # left off when it was off
    finally:
        gc.enable()
