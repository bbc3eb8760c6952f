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
    DeviceSpec,
    _database,
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
