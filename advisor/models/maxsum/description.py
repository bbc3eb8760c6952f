"""Reading a MAX/SUM kernel description (JSON) into :mod:`advisor.models.maxsum` values.

The file (all counts per thread; ``docs/maxsum_access.md`` has worked examples)::

    {
      "gpu": {"name": "GTX 280", "compute_capability": "1.3", "clock_hz": 1.3e9,
              "sm_count": 30, "cores_per_sm": 8, "pipeline_depth": 4,
              "op_cycles": {"my_op": 8}, "global_cycles": 500, "shared_cycles": 4},
      "kernels": [
        {"name": "listRank", "blocks": 390, "threads_per_block": 512, "launches": 1,
         "measured_ms": 24.0, "profile_name": "listRank",
         "ops": {"int_add": 2}, "compute_cycles": 0, "memory_cycles": 0,
         "global": [{"count": 264, "coalesced": false},
                    {"count": 1, "stride": 2, "offset": 0, "word_bytes": 4}],
         "shared": [{"count": 2, "conflict_degree": 2}, {"count": 1, "index": "tid*2"}]}
      ]
    }

A file may also hold one kernel at top level (no ``kernels`` list).  N_B is ``blocks_per_sm``
when given, else ceil(blocks / sm_count) (blocks run on an SM one after the other); N_w is
``warps_per_block``, else ceil(threads_per_block / threads_per_warp); N_t is
``threads_per_warp`` (32).  A kernel's ``threads`` list holds thread classes (C_T(K) is the max
over them); without it the kernel's own fields describe its one thread class.  GPU values come
from the file's ``gpu`` object, overridden by a device-database entry (``--gpu NAME``); the
op-cycle table and D come from ``advisor/data/op_cycles.json`` by ``arch`` or compute
capability, the file's ``op_cycles`` adding to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from advisor import jsonfile, sideinputs
from advisor.errors import MalformedInput
from advisor.models import maxsum
from advisor.models.maxsum import CostTerm, GpuParams, KernelModel, OpCycleTable, ThreadCost
from advisor.models.maxsum.terms import GLOBAL_KEYS, SHARED_KEYS, global_term, shared_term

_GPU_KEYS = {
    "name", "arch", "compute_capability", "clock_hz", "sm_count", "cores_per_sm",
    "pipeline_depth", "op_cycles", "global_cycles", "shared_cycles", "shared_banks", "source",
}  # fmt: skip
_NOTE_KEYS = {"description", "source"}  # free text for the reader, ignored by the model
_THREAD_KEYS = {"name", "ops", "compute_cycles", "memory_cycles", "global", "shared"} | _NOTE_KEYS
_KERNEL_KEYS = _THREAD_KEYS | {
    "blocks", "blocks_per_sm", "threads_per_block", "warps_per_block", "threads_per_warp",
    "launches", "measured_ms", "profile_name", "threads",
}  # fmt: skip


class DeviceLike(Protocol):
    """What the model needs from a device-database entry (``advisor.devices.database``)."""

    name: str
    boost_clock_hz: float
    sm_count: int
    fp32_cores_per_sm: int
    compute_capability: Any


@dataclass(frozen=True)
class KernelDescription:
    """A loaded description: the machine, its op table (if any), the kernels and their
    names to look up in a profile."""

    path: str
    gpu: GpuParams
    table: OpCycleTable | None
    kernels: tuple[KernelModel, ...]
    profile_names: tuple[str, ...]


def load(path: str | Path, device: DeviceLike | None = None) -> KernelDescription:
    """Read and validate the kernel description at ``path``; ``device`` overrides its GPU fields.

    Raises :class:`UnreadableInput` / :class:`MalformedInput` naming the file and the field.
    """
    return from_dict(jsonfile.load(path, "kernel description"), str(path), device)


def from_dict(
    raw: Any, where: str = "<kernel description>", device: DeviceLike | None = None
) -> KernelDescription:
    """Validate an already-parsed description (``where`` names it in error messages)."""
    if not isinstance(raw, dict):
        raise MalformedInput(where, "expected a JSON object with 'gpu' and 'kernels'")
    jsonfile.validate(raw, sideinputs.kernels_schema(raw), where)
    if "kernels" in raw:
        extra = sorted(set(raw) - {"gpu", "kernels", "version"} - _NOTE_KEYS)
        if extra:
            raise MalformedInput(where, f"unknown top-level key(s) {', '.join(extra)}")
        kernels_raw = raw["kernels"]
    else:
        kernels_raw = [{k: v for k, v in raw.items() if k not in ("gpu", "version")}]
    if not isinstance(kernels_raw, list) or not kernels_raw:
        raise MalformedInput(where, "'kernels' must be a non-empty list of kernel objects")
    reader = _Reader(where, raw.get("gpu", {}), device)
    pairs = [reader.kernel(item, f"kernels[{i}]") for i, item in enumerate(kernels_raw)]
    return KernelDescription(
        path=where,
        gpu=reader.gpu,
        table=reader.table,
        kernels=tuple(k for k, _ in pairs),
        profile_names=tuple(n for _, n in pairs),
    )


class _Reader:
    """Field-by-field validation with messages naming the file and the JSON path."""

    def __init__(self, path: str, gpu_raw: Any, device: DeviceLike | None) -> None:
        self.path = path
        merged = dict(self.obj(gpu_raw, "gpu", _GPU_KEYS))
        if device is not None:
            merged.update(
                name=device.name,
                clock_hz=float(device.boost_clock_hz),
                sm_count=int(device.sm_count),
                cores_per_sm=int(device.fp32_cores_per_sm),
                compute_capability=cc_text(device.compute_capability),
            )
            if getattr(device, "shared_banks", None):
                merged["shared_banks"] = int(device.shared_banks)  # type: ignore[attr-defined]
        self._set_gpu(merged)

    def _set_gpu(self, raw: dict[str, Any]) -> None:
        cc = None if raw.get("compute_capability") is None else cc_text(raw["compute_capability"])
        arch = raw.get("arch")
        table = maxsum.table_for(str(arch)) if arch else (maxsum.table_for(cc) if cc else None)
        if arch and table is None:
            known = ", ".join(sorted(maxsum.op_cycle_tables()))
            raise self.fail("gpu.arch", f"no op-cycle table for {arch!r}; known: {known}")
        for key in ("clock_hz", "cores_per_sm"):
            if key not in raw:
                raise self.fail(f"gpu.{key}", "missing; give it in the file or use --gpu NAME")
        depth = raw.get("pipeline_depth", table.pipeline_depth if table else None)
        if depth is None:
            raise self.fail(
                "gpu.pipeline_depth",
                f"missing: the seeds give D only for GT200 (cc 1.2/1.3), not for cc {cc}",
            )
        extra = self.obj(raw.get("op_cycles", {}), "gpu.op_cycles", None)
        self.ops = dict(table.ops) if table else {}
        self.ops.update({k: self.number(v, f"gpu.op_cycles.{k}") for k, v in extra.items()})
        self.global_cycles = self._optional(
            raw, "global_cycles", table.global_cycles if table else None
        )
        self.shared_cycles = self._optional(
            raw, "shared_cycles", table.shared_cycles if table else None
        )
        banks = raw.get("shared_banks")
        self.banks = None if banks is None else int(self.number(banks, "gpu.shared_banks", True))
        sms = raw.get("sm_count")
        self.table = table
        self.gpu = GpuParams(
            name=str(raw.get("name", "(from kernel file)")),
            clock_hz=self.number(raw["clock_hz"], "gpu.clock_hz", positive=True),
            cores_per_sm=self.number(raw["cores_per_sm"], "gpu.cores_per_sm", positive=True),
            pipeline_depth=self.number(depth, "gpu.pipeline_depth", positive=True),
            sm_count=None if sms is None else int(self.number(sms, "gpu.sm_count", True)),
            compute_capability=cc,
            arch=table.arch if table else None,
        )

    def fail(self, where: str, message: str) -> MalformedInput:
        return MalformedInput(self.path, f"{where}: {message}")

    def obj(self, value: Any, where: str, keys: set[str] | frozenset[str] | None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "expected a JSON object")
        unknown = sorted(set(value) - keys) if keys is not None else []
        if unknown:
            known = ", ".join(sorted(keys or ()))
            raise self.fail(where, f"unknown key(s) {', '.join(unknown)}; known: {known}")
        return value

    def number(self, value: Any, where: str, positive: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, f"expected a number, got {value!r}")
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise self.fail(where, f"must be a finite number {'> 0' if positive else '>= 0'}")
        return float(value)

    def _optional(self, raw: dict[str, Any], key: str, default: float | None) -> float | None:
        return self.number(raw[key], f"gpu.{key}") if key in raw else default

    def kernel(self, raw: Any, where: str) -> tuple[KernelModel, str]:
        raw = self.obj(raw, where, _KERNEL_KEYS)
        name = str(raw.get("name", where))
        per_warp = raw.get("threads_per_warp", maxsum.THREADS_PER_WARP)
        n_t = self.number(per_warp, f"{where}.threads_per_warp", positive=True)
        if "blocks_per_sm" in raw:
            n_b = self.number(raw["blocks_per_sm"], f"{where}.blocks_per_sm")
        elif "blocks" in raw:
            if self.gpu.sm_count is None:
                raise self.fail(f"{where}.blocks", "needs gpu.sm_count (or give blocks_per_sm)")
            n_b = float(
                math.ceil(self.number(raw["blocks"], f"{where}.blocks") / self.gpu.sm_count)
            )
        else:
            raise self.fail(where, "give blocks (with gpu.sm_count) or blocks_per_sm")
        if "warps_per_block" in raw:
            n_w = self.number(raw["warps_per_block"], f"{where}.warps_per_block")
        elif "threads_per_block" in raw:
            block = self.number(raw["threads_per_block"], f"{where}.threads_per_block")
            n_w = float(math.ceil(block / n_t))
        else:
            raise self.fail(where, "give threads_per_block or warps_per_block")
        launches = self.number(raw.get("launches", 1), f"{where}.launches", positive=True)
        if launches != int(launches):
            raise self.fail(f"{where}.launches", "must be a whole number")
        measured = raw.get("measured_ms")
        measured_s = (
            None if measured is None else self.number(measured, f"{where}.measured_ms", True)
        )
        model = KernelModel(
            name=name,
            blocks_per_sm=n_b,
            warps_per_block=n_w,
            threads_per_warp=n_t,
            threads=self.thread_classes(raw, where),
            launches=int(launches),
            measured_s=None if measured_s is None else measured_s / 1e3,
        )
        return model, str(raw.get("profile_name", name))

    def thread_classes(self, raw: dict[str, Any], where: str) -> tuple[ThreadCost, ...]:
        items = raw.get("threads")
        if items is None:
            own = {k: v for k, v in raw.items() if k in _THREAD_KEYS - _NOTE_KEYS - {"name"}}
            return (self.thread(own, where, "thread"),)
        if not isinstance(items, list) or not items:
            raise self.fail(f"{where}.threads", "must be a non-empty list of thread classes")
        misplaced = sorted(_THREAD_KEYS & set(raw) - {"name"} - _NOTE_KEYS)
        if misplaced:
            keys = ", ".join(misplaced)
            raise self.fail(where, f"with 'threads', put {keys} in each thread class")
        classes = []
        for j, item in enumerate(items):
            at = f"{where}.threads[{j}]"
            classes.append(self.thread(self.obj(item, at, _THREAD_KEYS), at, f"thread{j}"))
        return tuple(classes)

    def thread(self, raw: dict[str, Any], where: str, default_name: str) -> ThreadCost:
        terms: list[CostTerm] = []
        ops = self.obj(raw.get("ops", {}), f"{where}.ops", None)
        unknown = sorted(set(ops) - set(self.ops))
        if unknown:
            known = ", ".join(sorted(self.ops)) or "none (no table for this GPU)"
            raise self.fail(
                f"{where}.ops",
                f"no cycle count for {', '.join(unknown)}; known: {known}; add gpu.op_cycles",
            )
        for op in sorted(ops):
            terms.append(
                CostTerm("op", op, self.number(ops[op], f"{where}.ops.{op}"), self.ops[op])
            )
        if "compute_cycles" in raw:
            given = self.number(raw["compute_cycles"], f"{where}.compute_cycles")
            terms.append(CostTerm("compute", "compute cycles (given)", 1.0, given))
        cc = self.gpu.compute_capability
        for j, entry in enumerate(self.accesses(raw, "global", where)):
            at = f"{where}.global[{j}]"
            latency = self.need(self.global_cycles, at, "global_cycles")
            entry = self.obj(entry, at, GLOBAL_KEYS)
            terms.append(self.term(at, global_term, entry, cc, latency))
        for j, entry in enumerate(self.accesses(raw, "shared", where)):
            at = f"{where}.shared[{j}]"
            latency = self.need(self.shared_cycles, at, "shared_cycles")
            entry = self.obj(entry, at, SHARED_KEYS)
            terms.append(self.term(at, shared_term, entry, cc, self.banks, latency))
        if "memory_cycles" in raw:
            given = self.number(raw["memory_cycles"], f"{where}.memory_cycles")
            terms.append(CostTerm("memory", "memory cycles (given)", 1.0, given))
        return ThreadCost(name=str(raw.get("name", default_name)), terms=tuple(terms))

    def accesses(self, raw: dict[str, Any], key: str, where: str) -> list[Any]:
        value = raw.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"{where}.{key}", "must be a list of access objects")
        return value

    def need(self, latency: float | None, where: str, key: str) -> float:
        if latency is None:
            raise self.fail(where, f"no access cost for this GPU in the seeds; add gpu.{key}")
        return latency

    def term(self, where: str, make: Callable[..., CostTerm], *args: Any) -> CostTerm:
        try:
            return make(*args)
        except ValueError as exc:
            raise self.fail(where, str(exc)) from None


def cc_text(value: Any) -> str:
    """A compute capability as "MAJOR.MINOR" from "1.3", 1.3 or (1, 3)."""
    if isinstance(value, tuple | list) and len(value) == 2:
        return f"{int(value[0])}.{int(value[1])}"
    return str(value).strip()
