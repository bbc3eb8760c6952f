"""The host side of a PyTorch profiler trace, as the report shows it: the idle split, launch
delay, the synchronizations by operator, the launch-bound check and the kernels by operator
(:mod:`advisor.models.host`, :mod:`advisor.report.operators`).

Built for profiles read from a Kineto trace only (the one format whose GPU activities carry
their operator and whose API calls carry their synchronization kind); None for the others, so
their reports and JSON are unchanged.  :func:`host_json` is the ``host`` block of
``report --json``.

``idle`` is the devices' idle time as a union over time (:func:`host.device_idle_split`: at
most the span); ``idle_by_stream`` the per-stream splits (HTA's layout; their sum counts a moment
once per idle stream).  ``busiest_stream`` says whether the host or the GPU sets the pace of the
busiest compute stream (:class:`host.StreamPace`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from advisor.communication import Communication, communication
from advisor.models import host
from advisor.profile import Profile
from advisor.report import operators as ops

#: the formats whose profiles get a host view
FORMATS = ("kineto",)


@dataclass(frozen=True)
class HostView:
    devices: tuple[host.DeviceUse, ...]
    idle_streams: tuple[host.IdleSplit, ...]
    idle_total: host.IdleSplit  # the devices' idle stretches (a union over time), summed
    launch_delay: host.LaunchDelay | None
    syncs: tuple[host.SyncGroup, ...]
    syncs_speedup: float  # removing every host sync
    launch_bound: ops.LaunchBound | None
    operators: tuple[ops.OperatorGroup, ...]
    pace: host.StreamPace | None = None  # the busiest compute stream: host- or GPU-bound
    communication: Communication | None = None  # NCCL/RCCL kernels and their overlap

    @property
    def span_ns(self) -> float:
        return sum(d.span_ns for d in self.devices)

    @property
    def idle_frac(self) -> float:
        span = self.span_ns
        return 1.0 - sum(d.busy_ns for d in self.devices) / span if span > 0 else 0.0

    @property
    def operators_listed(self) -> tuple[ops.OperatorGroup, ...]:
        return self.operators[: ops.OPERATORS_LISTED]

    @property
    def launch_bound_actions(self) -> tuple[str, ...]:
        return ops.LAUNCH_BOUND_ACTIONS


def host_view(profile: Profile) -> HostView | None:
    """The view of a Kineto profile with a timeline; None otherwise."""
    if not any(p.format in FORMATS for p in profile.provenance):
        return None
    timed = (
        profile.launches["start_ns"].notna().any() or profile.transfers["start_ns"].notna().any()
    )
    if not timed:
        return None
    acts = host.activities(profile)  # built once for the four readings below
    streams, _ = host.idle_split(profile, acts)
    devices = host.device_idle_split(profile, acts)
    total = host.IdleSplit(
        None,
        None,
        sum(d.host_wait_ns for d in devices),
        sum(d.launch_delay_ns for d in devices),
        sum(d.other_ns for d in devices),
    )
    syncs, speedup = host.sync_groups(profile, acts)
    return HostView(
        devices=host.device_use(profile, acts),
        idle_streams=streams,
        idle_total=total,
        launch_delay=host.launch_delay(profile, acts),
        syncs=syncs,
        syncs_speedup=speedup,
        launch_bound=ops.launch_bound(profile),
        operators=ops.operator_groups(profile),
        pace=host.stream_pace(profile, acts),
        communication=communication(profile),
    )


def host_json(view: HostView) -> dict[str, Any]:
    """The view as plain JSON values (times in ns)."""
    bound = view.launch_bound
    return {
        "gpu_idle_frac": view.idle_frac,
        "span_ns": view.span_ns,
        "devices": [asdict(d) | {"idle_frac": d.idle_frac} for d in view.devices],
        "idle": asdict(view.idle_total) | {"idle_ns": view.idle_total.idle_ns},  # union
        "busiest_stream": _pace_json(view.pace),
        "idle_by_stream": [asdict(s) | {"idle_ns": s.idle_ns} for s in view.idle_streams],
        "launch_delay": asdict(view.launch_delay) if view.launch_delay else None,
        "syncs": [asdict(s) for s in view.syncs],
        "syncs_potential_speedup": view.syncs_speedup,
        "launch_bound": asdict(bound) | {"share": bound.share} if bound else None,
        "operators": [asdict(o) for o in view.operators],
    }


def _pace_json(pace: host.StreamPace | None) -> dict[str, Any] | None:
    if pace is None:
        return None
    return asdict(pace) | {
        "idle": asdict(pace.idle) | {"idle_ns": pace.idle.idle_ns},
        "host_wait_share": pace.host_wait_share,
        "host_bound": pace.host_bound,
    }
