"""The GPU database: one :class:`DeviceSpec` per board, found by the name a profiler prints.

The figures live in ``advisor/data/gpus.csv`` (one row per board, every row with its sources) and
the per-compute-capability and per-architecture facts in ``advisor/data/architectures.json``
(resident warps per SM and shared-memory banks from FORMATS.md section 5; default load latencies
from published microbenchmark studies).  Units in the CSV are MHz, decimal GB/s and KiB; here they
are Hz, bytes/s and bytes.

Peak FP32 throughput follows FORMATS.md section 5: ``2 x SMs x FP32 cores/SM x boost clock`` (one
fused multiply-add per core per clock).  For the six boards of seed 000 Table I (GT 630, GTX 660,
GTX 680, GTX Titan, Tesla K20, Tesla K40) the SM/core counts and the clock are the paper's, so the
BSP model (MODELS.md section 3) reproduces its R and P; where that clock is not NVIDIA's boost clock
the row's notes say so.

The device characterization (latencies, F functions, JSON files) is in
:mod:`advisor.devices.characterization`; choosing the device of a profile in
:mod:`advisor.devices.resolve`.
"""

from __future__ import annotations

import csv
import difflib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from advisor.errors import SchemaError, UsageError

_DATA = Path(__file__).resolve().parents[1] / "data"
GPUS_CSV = _DATA / "gpus.csv"
ARCHITECTURES_JSON = _DATA / "architectures.json"

#: memory levels with a load latency, in the order reports print them
LATENCY_LEVELS = ("shared", "l1", "l2", "dram")
#: FP32 operations per core per clock: one fused multiply-add counts as two (FORMATS.md section 5).
FLOPS_PER_CORE_PER_CLOCK = 2.0
#: How many close matches an unknown-GPU message lists.
CLOSE_MATCHES = 3
#: difflib similarity below which a database name is not offered as a close match.
CLOSE_MATCH_CUTOFF = 0.6
#: A profile clock this far (as a fraction) from the database clock earns a note: board partners'
#: boost clocks differ by a few percent, larger gaps change every peak-relative figure.
CLOCK_NOTE_FRAC = 0.05

_INDEX_SUFFIX = re.compile(r"\s*\(\d+\)\s*$")  # nvprof's "Tesla K40c (0)"
_PREFIXES = ("nvidia", "geforce")
_SEPARATORS = re.compile(r"[\s\-_]+")


#: the optional per-SM limits of a DeviceSpec (a device record's; None: the compute capability's)
SM_LIMIT_FIELDS = (
    "max_threads_per_sm",
    "max_blocks_per_sm",
    "registers_per_sm",
    "shared_bytes_per_sm",
)


@dataclass(frozen=True)
class DeviceSpec:
    """Hardware facts of one GPU board (per GPU for dual-GPU boards)."""

    name: str  # canonical, e.g. "GeForce GTX 680"
    aliases: tuple[str, ...]  # other spellings profilers and datasets print
    chip: str  # "GK104"
    architecture: str  # "Tesla" (G92/GT200), "Fermi", ..., "Blackwell"
    compute_capability: str  # "3.0"
    sm_count: int
    fp32_cores_per_sm: int
    base_clock_hz: float | None
    boost_clock_hz: float  # SM (shader) clock used for peak FLOP/s
    memory_bandwidth_bytes_per_s: float  # decimal GB/s x 1e9
    l2_bytes: float | None
    max_warps_per_sm: int
    shared_banks: int  # 16 (cc 1.x) or 32
    fp64_flops_per_clock_per_sm: float | None  # None: no FP64 unit, or rate not confirmed
    sources: tuple[str, ...]  # where the numbers come from
    notes: tuple[str, ...] = ()  # deviations from vendor figures, per-GPU figures of dual boards
    # per-SM limits the profile's device record states (None: the compute capability's table,
    # advisor.criteria.engine.occupancy, applies); the database rows leave them None
    max_threads_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    registers_per_sm: int | None = None  # 32-bit registers
    shared_bytes_per_sm: int | None = None  # largest shared-memory carve-out per SM

    @property
    def peak_fp32_flops(self) -> float:
        """2 x SMs x FP32 cores/SM x boost clock (FORMATS.md section 5)."""
        return (
            FLOPS_PER_CORE_PER_CLOCK * self.sm_count * self.fp32_cores_per_sm * self.boost_clock_hz
        )

    @property
    def peak_fp64_flops(self) -> float | None:
        """SMs x FP64 flops per clock per SM x boost clock; None when the rate is not known."""
        if self.fp64_flops_per_clock_per_sm is None:
            return None
        return self.sm_count * self.fp64_flops_per_clock_per_sm * self.boost_clock_hz


def all_devices() -> tuple[DeviceSpec, ...]:
    """Every board in the database, in file order (by architecture, then model)."""
    return _database()[0]


def find_device(name: str) -> DeviceSpec:
    """The board whose name or alias matches ``name`` after :func:`normalize_name`.

    Raises :class:`UsageError` naming up to three close matches (difflib) when none matches.
    """
    key = normalize_name(name)
    spec = _database()[1].get(key)
    if spec is None:
        raise UsageError(unknown_device_message(name))
    return spec


def normalize_name(name: str) -> str:
    """Lower case, without nvprof's " (0)" index, "NVIDIA "/"GeForce " prefixes and separators.

    "NVIDIA GeForce RTX 5090" -> "rtx5090"; "GTX-680" -> "gtx680"; "Tesla K40c (0)" -> "teslak40c".
    """
    text = _INDEX_SUFFIX.sub("", str(name)).strip().lower()
    words = _SEPARATORS.split(text)
    while len(words) > 1 and words[0] in _PREFIXES:
        words = words[1:]
    return "".join(words)


def close_matches(name: str) -> list[str]:
    """Canonical names of up to :data:`CLOSE_MATCHES` boards whose names resemble ``name``."""
    index = _database()[1]
    keys = difflib.get_close_matches(
        normalize_name(name), list(index), n=4 * CLOSE_MATCHES, cutoff=CLOSE_MATCH_CUTOFF
    )
    names = list(dict.fromkeys(index[k].name for k in keys))
    return names[:CLOSE_MATCHES]


def unknown_device_message(name: str) -> str:
    matches = close_matches(name)
    hint = f"close matches: {', '.join(matches)}" if matches else "no close match"
    return f"unknown GPU '{name}'; {hint} (see `cuda-advisor devices`)"


def compute_capability_facts(compute_capability: str) -> dict[str, Any]:
    """``max_warps_per_sm``, ``shared_banks`` and ``source`` of one compute capability."""
    table = _architectures()["compute_capabilities"]
    if compute_capability not in table:
        raise KeyError(f"compute capability {compute_capability} is not in {ARCHITECTURES_JSON}")
    return dict(table[compute_capability])


def architecture_of(compute_capability: str) -> str | None:
    """The architecture whose compute capabilities include ``compute_capability`` (None if
    none does)."""
    for name, entry in _architectures()["architectures"].items():
        if compute_capability in entry["compute_capabilities"]:
            return str(name)
    return None


def architecture_latencies(architecture: str) -> dict[str, dict[str, Any]]:
    """Default load latencies of an architecture: level -> {value, source, verified, ...}."""
    archs = _architectures()["architectures"]
    if architecture not in archs:
        raise KeyError(f"architecture {architecture!r} is not in {ARCHITECTURES_JSON}")
    return {level: dict(entry) for level, entry in archs[architecture]["latencies_cycles"].items()}


def architecture_names() -> tuple[str, ...]:
    return tuple(_architectures()["architectures"])


@lru_cache(maxsize=1)
def _architectures() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ARCHITECTURES_JSON.read_text(encoding="utf-8"))
    for arch, entry in data["architectures"].items():
        levels = set(entry["latencies_cycles"])
        if levels != set(LATENCY_LEVELS):
            raise SchemaError(f"{ARCHITECTURES_JSON}: {arch} latencies {sorted(levels)}")
    return data


@lru_cache(maxsize=1)
def _database() -> tuple[tuple[DeviceSpec, ...], dict[str, DeviceSpec]]:
    with GPUS_CSV.open(encoding="utf-8", newline="") as handle:
        specs = tuple(_row_to_spec(row, line) for line, row in enumerate(csv.DictReader(handle), 2))
    index: dict[str, DeviceSpec] = {}
    for spec in specs:
        for spelling in (spec.name, *spec.aliases):
            key = normalize_name(spelling)
            if index.get(key, spec) is not spec:
                raise SchemaError(
                    f"{GPUS_CSV}: '{spelling}' names both {index[key].name} and {spec.name}"
                )
            index[key] = spec
    return specs, index


def _row_to_spec(row: dict[str, str], line: int) -> DeviceSpec:
    where = f"{GPUS_CSV}:{line}"
    cc = row["compute_capability"].strip()
    arch = row["architecture"].strip()
    if arch not in architecture_names():
        raise SchemaError(f"{where}: unknown architecture {arch!r}")
    try:
        facts = compute_capability_facts(cc)
    except KeyError as exc:
        raise SchemaError(f"{where}: {exc}") from None
    if not row["sources"].strip():
        raise SchemaError(f"{where}: every row needs its sources")
    return DeviceSpec(
        name=row["name"].strip(),
        aliases=_split(row["aliases"]),
        chip=row["chip"].strip(),
        architecture=arch,
        compute_capability=cc,
        sm_count=int(row["sm_count"]),
        fp32_cores_per_sm=int(row["fp32_cores_per_sm"]),
        base_clock_hz=_scaled(row["base_clock_mhz"], 1e6),
        boost_clock_hz=float(row["boost_clock_mhz"]) * 1e6,
        memory_bandwidth_bytes_per_s=float(row["memory_bandwidth_gb_per_s"]) * 1e9,
        l2_bytes=_scaled(row["l2_kib"], 1024.0),
        max_warps_per_sm=int(facts["max_warps_per_sm"]),
        shared_banks=int(facts["shared_banks"]),
        fp64_flops_per_clock_per_sm=_scaled(row["fp64_flops_per_clock_per_sm"], 1.0),
        sources=_split(row["sources"]),
        notes=_split(row["notes"]),
    )


#: the characters :func:`_split` looks at
_SPLIT_MARKS = re.compile(r"[();]")


def _split(cell: str) -> tuple[str, ...]:
    """Items of a "; "-separated cell; a "; " inside parentheses does not split.  Only the
    parentheses and semicolons are visited (the notes cells run to hundreds of characters:
    a walk over every character took most of the database's load)."""
    parts, depth, start = [], 0, 0
    for mark in _SPLIT_MARKS.finditer(cell):
        char = mark.group()
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0:
            i = mark.start()
            parts.append(cell[start:i])
            start = i + 1
    parts.append(cell[start:])
    return tuple(part.strip() for part in parts if part.strip())


def _scaled(cell: str, factor: float) -> float | None:
    return float(cell) * factor if cell.strip() else None


__all__ = [
    "LATENCY_LEVELS",
    "SM_LIMIT_FIELDS",
    "DeviceSpec",
    "all_devices",
    "find_device",
    "normalize_name",
]
