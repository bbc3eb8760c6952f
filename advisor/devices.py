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
:mod:`advisor.characterization`; its public names are re-exported here.
"""

from __future__ import annotations

import csv
import difflib
import json
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from advisor.characterization import (
    FUNCTION_NAMES,
    LATENCY_LEVELS,
    Characterization,
    MonotoneFunction,
    default_characterization,
    dump_characterization,
    load_characterization,
)
from advisor.errors import SchemaError, UsageError
from advisor.profile import Profile

_DATA = Path(__file__).resolve().parent / "data"
GPUS_CSV = _DATA / "gpus.csv"
ARCHITECTURES_JSON = _DATA / "architectures.json"

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


def resolve_device(profile: Profile, option: str | None) -> Characterization:
    """The characterization to analyse ``profile`` with.

    ``option`` is the ``--device`` value: an existing file -> :func:`load_characterization`; any
    other text -> a GPU name (:func:`find_device`) with :func:`default_characterization`.  With
    ``None``, the GPU the profile names: its devices table, else the ``device`` column of its
    launches, kernel summaries or metrics.  When it names several GPUs, the one with the most GPU
    time is used and a note says so.  A profile naming no GPU is a :class:`UsageError`.
    """
    if option is not None:
        if os.path.isfile(option):
            return load_characterization(option)
        if option.lower().endswith(".json"):
            raise UsageError(f"--device {option}: no such characterization file")
        return default_characterization(find_device(option))
    names = _profile_device_names(profile)
    if not names:
        raise UsageError(
            f"{profile.path} does not name its GPU; give --device NAME or --device FILE.json"
        )
    specs: dict[str, DeviceSpec] = {}
    for name in names:
        spec = _database()[1].get(normalize_name(name))
        if spec is None:
            raise UsageError(
                f"{profile.path}: {unknown_device_message(name)}; "
                "give --device NAME or --device FILE.json"
            )
        specs.setdefault(spec.name, spec)
    chosen, note = _most_gpu_time(profile, names, specs)
    ch = default_characterization(chosen)
    extra = ([note] if note else []) + _profile_disagreements(profile, chosen)
    if not extra:
        return ch
    return replace(ch, notes=(*ch.notes, *extra))


def _profile_device_names(profile: Profile) -> list[str]:
    """Distinct GPU names in the profile, devices table first, in order of appearance."""
    found: list[str] = []
    for frame, column in (
        (profile.devices, "name"),
        (profile.launches, "device"),
        (profile.kernel_summary, "device"),
        (profile.metrics, "device"),
    ):
        found.extend(str(v) for v in frame[column].dropna().unique() if str(v).strip())
    return list(dict.fromkeys(found))


def _most_gpu_time(
    profile: Profile, names: list[str], specs: dict[str, DeviceSpec]
) -> tuple[DeviceSpec, str | None]:
    """The GPU with the most kernel time (launch durations, else summary totals)."""
    if len(specs) == 1:
        return next(iter(specs.values())), None
    time_ns = dict.fromkeys(specs, 0.0)
    for frame, column in ((profile.launches, "duration_ns"), (profile.kernel_summary, "total_ns")):
        for device, value in zip(frame["device"], frame[column], strict=True):
            if isinstance(device, str) and value == value:  # NaN-safe
                key = _database()[1].get(normalize_name(device))
                if key is not None:
                    time_ns[key.name] += float(value)
        if any(time_ns.values()):
            break
    order = list(dict.fromkeys(_database()[1][normalize_name(n)].name for n in names))
    best = max(order, key=lambda n: (time_ns[n], -order.index(n)))
    total = sum(time_ns.values())
    share = f" ({time_ns[best] / total:.0%} of its GPU time)" if total > 0 else ""
    note = f"the profile names several GPUs ({', '.join(order)}); using {best}{share}"
    return specs[best], note


def _profile_disagreements(profile: Profile, spec: DeviceSpec) -> list[str]:
    """Notes where the profile's own device record differs from the database entry."""
    keys = _keys_of(spec)
    for record in profile.devices.to_dict("records"):
        name = record.get("name")
        if not isinstance(name, str) or normalize_name(name) not in keys:
            continue
        notes = []
        sm_count = _finite(record.get("sm_count"))
        if sm_count is not None and int(sm_count) != spec.sm_count:
            notes.append(
                f"the profile reports {int(sm_count)} SMs; the database has {spec.sm_count}"
            )
        clock = _finite(record.get("sm_clock_hz"))
        if clock and abs(clock - spec.boost_clock_hz) > CLOCK_NOTE_FRAC * spec.boost_clock_hz:
            notes.append(
                f"the profile reports an SM clock of {clock / 1e6:.0f} MHz;"
                f" the database uses {spec.boost_clock_hz / 1e6:.0f} MHz"
            )
        return notes
    return []


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def _keys_of(spec: DeviceSpec) -> set[str]:
    return {normalize_name(n) for n in (spec.name, *spec.aliases)}


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


def _split(cell: str) -> tuple[str, ...]:
    """Items of a "; "-separated cell; a "; " inside parentheses does not split."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(cell):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth == 0:
            parts.append(cell[start:i])
            start = i + 1
    parts.append(cell[start:])
    return tuple(part.strip() for part in parts if part.strip())


def _scaled(cell: str, factor: float) -> float | None:
    return float(cell) * factor if cell.strip() else None


__all__ = [
    "FUNCTION_NAMES",
    "LATENCY_LEVELS",
    "Characterization",
    "DeviceSpec",
    "MonotoneFunction",
    "all_devices",
    "default_characterization",
    "dump_characterization",
    "find_device",
    "load_characterization",
    "normalize_name",
    "resolve_device",
]
