"""Which device a profile is analysed with: ``--device`` (a name or a characterization file), else
the GPU the profile names, looked up in the database (:mod:`advisor.devices.database`) and given
the architecture's default characterization (:mod:`advisor.devices.characterization`)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from advisor.devices.characterization import (
    Characterization,
    default_characterization,
    load_characterization,
)
from advisor.devices.database import (
    CLOCK_NOTE_FRAC,
    SM_LIMIT_FIELDS,
    DeviceSpec,
    _database,
    architecture_of,
    compute_capability_facts,
    find_device,
    normalize_name,
    unknown_device_message,
)
from advisor.errors import UsageError
from advisor.profile import Profile


def resolve_device(profile: Profile, option: str | None) -> Characterization:
    """The characterization to analyse ``profile`` with.

    ``option`` is the ``--device`` value: an existing file -> :func:`load_characterization`; any
    other text -> a GPU name (:func:`find_device`) with :func:`default_characterization`.  With
    ``None``, the GPU the profile names: its devices table, else the ``device`` column of its
    launches, kernel summaries or metrics.  When it names several GPUs, the one with the most GPU
    time is used and a note says so.

    The device facts come from the profile where it states them (Decision D1 of
    docs/devices.md): a device record with the compute capability, SM count, SM clock and memory
    bandwidth (Nsight Compute's ``device__attribute_*``, the nvprof and nsys device tables) gives
    the whole spec, with the per-SM limits it states (resident warps, threads, blocks,
    registers, shared memory); the compute capability gives FP32 cores, shared banks and the
    resident warps per SM the record does not state; the database fills in only what the
    profile lacks (chip, FP64 rate).  Without such a record the database entry is used (with
    the per-SM limits of a record too incomplete to give the spec); a GPU the database lacks
    whose compute capability is known gets its architecture's defaults with a note.  A profile
    naming no GPU, or only GPUs neither it nor the database describes, is a :class:`UsageError`.
    """
    if option is not None:
        if os.path.isfile(option):
            return load_characterization(option)
        if option.lower().endswith(".json"):
            raise UsageError(f"--device {option}: no such characterization file")
        return default_characterization(find_device(option))
    names = profile_device_names(profile)
    if not names:
        raise UsageError(
            f"{profile.path} does not name its GPU; give --device NAME or --device FILE.json"
        )
    by_name: dict[str, tuple[DeviceSpec, tuple[str, ...]]] = {}
    for name in names:
        found = _spec_for(profile, name)
        if found is None:
            raise UsageError(
                f"{profile.path}: {unknown_device_message(name)}; "
                "give --device NAME or --device FILE.json"
            )
        by_name[name] = found
    chosen, note = _most_gpu_time(profile, names, {n: s for n, (s, _) in by_name.items()})
    ch = default_characterization(chosen)
    own = next(notes for spec, notes in by_name.values() if spec is chosen)
    extra = ([note] if note else []) + list(own)
    if not extra:
        return ch
    return replace(ch, notes=(*ch.notes, *extra))


#: where a spec built from the profile's device record says its figures come from
PROFILE_SOURCE = (
    "the profile's device record: compute capability, SMs, SM clock, memory bandwidth, L2, "
    "per-SM limits (Nsight Compute device attributes or the nvprof/nsys device table)"
)


def _spec_for(profile: Profile, name: str) -> tuple[DeviceSpec, tuple[str, ...]] | None:
    """The spec of the GPU the profile calls ``name`` and the notes to show with it."""
    db = _database()[1].get(normalize_name(name))
    record = _record(profile, name)
    cc = _cc(record.get("compute_capability")) if record else None
    facts = _cc_facts(cc)
    if record is not None and cc is not None and facts is not None:
        sm_count = _finite(record.get("sm_count"))
        clock = _finite(record.get("sm_clock_hz"))
        bandwidth = _finite(record.get("memory_bandwidth_bytes_per_s"))
        l2 = _finite(record.get("l2_bytes"))
        architecture, cores, warps, banks = facts
        limits = _record_limits(record)
        warps = limits.pop("max_warps_per_sm", warps)
        complete = bool(sm_count and clock and bandwidth)
        if complete or db is None:
            spec = DeviceSpec(
                name=db.name if db is not None else name,
                aliases=db.aliases if db is not None else (),
                chip=db.chip if db is not None else "",
                architecture=architecture,
                compute_capability=cc,
                sm_count=int(sm_count) if sm_count else 0,
                fp32_cores_per_sm=cores,
                base_clock_hz=db.base_clock_hz if db is not None else None,
                boost_clock_hz=clock or 0.0,
                memory_bandwidth_bytes_per_s=bandwidth or 0.0,
                l2_bytes=l2 if l2 else (db.l2_bytes if db is not None else None),
                max_warps_per_sm=warps,
                shared_banks=banks,
                fp64_flops_per_clock_per_sm=(
                    db.fp64_flops_per_clock_per_sm
                    if db is not None and db.compute_capability == cc
                    else None
                ),
                sources=(PROFILE_SOURCE, *(db.sources if db is not None else ())),
                notes=db.notes if db is not None else (),
                **limits,
            )
            if complete:
                note = f"{name}: device facts from the profile's own device record"
                if db is None:
                    note += " (the GPU database does not list this board)"
                return spec, (note,)
            given = (("SMs", sm_count), ("SM clock", clock), ("bandwidth", bandwidth))
            missing = [label for label, value in given if not value]
            return spec, (
                f"unknown GPU '{name}': {architecture} defaults for compute capability {cc} "
                f"(latencies, resident warps); the profile does not give {', '.join(missing)}",
            )
    if db is None:
        return None
    limits = _record_limits(record) if record is not None else {}
    if limits:  # the device's own per-SM limits over the compute capability's
        db = replace(
            db,
            max_warps_per_sm=limits.get("max_warps_per_sm", db.max_warps_per_sm),
            max_threads_per_sm=limits.get("max_threads_per_sm"),
            max_blocks_per_sm=limits.get("max_blocks_per_sm"),
            registers_per_sm=limits.get("registers_per_sm"),
            shared_bytes_per_sm=limits.get("shared_bytes_per_sm"),
        )
    return db, tuple(_profile_disagreements(profile, db))


#: DeviceSpec field <- devices column of the per-SM limits a device record may state
_LIMIT_COLUMNS = ("max_warps_per_sm", *SM_LIMIT_FIELDS)


def _record_limits(record: dict[str, Any]) -> dict[str, int]:
    """The per-SM limits (resident warps, threads, blocks, registers, shared bytes) the device
    record states, as whole positive numbers; a missing or unusable cell is left out."""
    out: dict[str, int] = {}
    for column in _LIMIT_COLUMNS:
        value = _finite(record.get(column))
        if value is not None and value > 0 and value == int(value):
            out[column] = int(value)
    return out


def _record(profile: Profile, name: str) -> dict[str, Any] | None:
    """The profile's first device record named ``name``."""
    key = normalize_name(name)
    for record in profile.devices.to_dict("records"):
        if isinstance(record.get("name"), str) and normalize_name(record["name"]) == key:
            return {str(k): v for k, v in record.items()}
    return None


def _cc(value: Any) -> str | None:
    """``"8.6"`` from a compute capability cell (``8.6``, ``"8.6"``); None when absent."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip()
    try:
        major, _, minor = text.partition(".")
        return f"{int(major)}.{int(minor or 0)}"
    except ValueError:
        return None


def _cc_facts(cc: str | None) -> tuple[str, int, int, int] | None:
    """(architecture, FP32 cores per SM, resident warps per SM, shared banks) of ``cc``."""
    if cc is None:
        return None
    architecture = architecture_of(cc)
    try:
        facts = compute_capability_facts(cc)
    except KeyError:
        return None
    if architecture is None or "fp32_cores_per_sm" not in facts:
        return None
    return (
        architecture,
        int(facts["fp32_cores_per_sm"]),
        int(facts["max_warps_per_sm"]),
        int(facts["shared_banks"]),
    )


def profile_device_names(profile: Profile) -> list[str]:
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
    """The GPU with the most kernel time (launch durations, else summary totals); ``specs``
    maps each name the profile uses to its spec."""
    order = list(dict.fromkeys(specs[n].name for n in names))
    by_board = {specs[n].name: specs[n] for n in names}
    if len(order) == 1:
        return by_board[order[0]], None
    time_ns = dict.fromkeys(order, 0.0)
    for frame, column in ((profile.launches, "duration_ns"), (profile.kernel_summary, "total_ns")):
        for device, value in zip(frame["device"], frame[column], strict=True):
            if isinstance(device, str) and value == value:  # NaN-safe
                spec = specs.get(device)
                if spec is not None:
                    time_ns[spec.name] += float(value)
        if any(time_ns.values()):
            break
    best = max(order, key=lambda n: (time_ns[n], -order.index(n)))
    total = sum(time_ns.values())
    share = f" ({time_ns[best] / total:.0%} of its GPU time)" if total > 0 else ""
    note = f"the profile names several GPUs ({', '.join(order)}); using {best}{share}"
    return by_board[best], note


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
