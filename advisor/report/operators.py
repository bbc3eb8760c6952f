"""Kernels grouped by the PyTorch operator that launched them, and the launch-bound check.

Operator groups: the launches of a trace whose launches name their operator
(``launches.operator``, a PyTorch profiler trace) grouped by it: launches, distinct kernels and
GPU time per operator, largest first; launches without an operator form one group.

Launch-bound: a kernel that runs shorter than the CPU call that launched it
(``cudaLaunchKernel``, joined by correlation id) cannot keep the GPU ahead of the host: the
host's launch overhead, not the GPU, sets the pace (the "short GPU kernels" of Holistic Trace
Analysis's launch statistics).  When at least :data:`LAUNCH_BOUND_MIN_SHARE` of the launches
(and :data:`LAUNCH_BOUND_MIN_LAUNCHES` of them) are such, the report hints at CUDA graphs and
fusion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor.models.host import NO_OPERATOR
from advisor.profile import Profile

#: share of the launches that must be launch-bound for the hint (half: most of the stream)
LAUNCH_BOUND_MIN_SHARE = 0.5
#: fewest launch-bound launches for the hint (a handful of short kernels is no pattern)
LAUNCH_BOUND_MIN_LAUNCHES = 20
#: operator groups listed (the rest are summed in the JSON only)
OPERATORS_LISTED = 15
LAUNCH_BOUND_ACTIONS = (
    "capture the step in a CUDA graph (torch.cuda.graphs, or torch.compile with "
    'mode="reduce-overhead") so one launch replays the whole sequence',
    "fuse the small elementwise kernels (torch.compile, fused optimizers such as "
    "foreach=True / fused=True, fused layer norms and attention)",
    "give each kernel more work: larger batches, fewer and bigger tensors",
)


@dataclass(frozen=True)
class OperatorGroup:
    operator: str
    launches: int
    kernels: int  # distinct kernel names
    gpu_time_ns: float
    share: float  # of the GPU time of all kernels
    top_kernel: str  # the kernel with the most time in the group


@dataclass(frozen=True)
class LaunchBound:
    launches: int  # launches whose call is in the trace
    short: int  # of them, shorter than their launch call
    short_gpu_time_ns: float
    short_call_time_ns: float  # CPU time in their launch calls
    hint: bool

    @property
    def share(self) -> float:
        return self.short / self.launches if self.launches else 0.0


def operator_groups(profile: Profile) -> tuple[OperatorGroup, ...]:
    """Every operator's launches, most GPU time first (ties by name)."""
    launches = profile.launches
    if launches.empty or launches["operator"].isna().all():
        return ()
    frame = pd.DataFrame(
        {
            "operator": launches["operator"].astype("object").fillna(NO_OPERATOR).to_numpy(),
            "name": launches["name"].astype(str).to_numpy(),
            "time": launches["duration_ns"].fillna(0).to_numpy(float),
        }
    )
    total = float(frame["time"].sum())
    # one grouping for every operator at once (a loop over operators cost a grouping each):
    # the time per (operator, kernel), sorted by both, gives each operator's launches, distinct
    # kernels, time and top kernel (the first of the largest in name order); the durations
    # are whole nanoseconds, so the sums are exact in any order
    launches_per = frame.groupby("operator", sort=True).size()
    per_kernel = frame.groupby(["operator", "name"], sort=True)["time"].sum()
    by_operator = per_kernel.groupby(level=0, sort=True)
    kernels, times, top = by_operator.size(), by_operator.sum(), by_operator.idxmax()
    groups = []
    for operator, count in launches_per.items():
        time = float(times[operator])
        groups.append(
            OperatorGroup(
                str(operator), int(count), int(kernels[operator]), time,
                time / total if total > 0 else 0.0, str(top[operator][1]),
            )
        )  # fmt: skip
    groups.sort(key=lambda grp: (-grp.gpu_time_ns, grp.operator))
    return tuple(groups)


def launch_bound(profile: Profile) -> LaunchBound | None:
    """The launches shorter than their launch call (module docstring); None when no launch's
    call is in the trace."""
    launches = profile.launches[profile.launches["correlation_id"].notna()]
    calls = profile.api_calls[profile.api_calls["correlation_id"].notna()]
    if launches.empty or calls.empty:
        return None
    call_dur = pd.Series(
        calls["duration_ns"].to_numpy(float),
        index=calls["correlation_id"].astype("Int64").to_numpy(np.int64),
    )
    call_dur = call_dur[~call_dur.index.duplicated(keep="first")]
    cpu = call_dur.reindex(launches["correlation_id"].astype("Int64").to_numpy(np.int64))
    gpu = launches["duration_ns"].to_numpy(float)
    cpu_ns = cpu.to_numpy(float)
    known = ~np.isnan(cpu_ns) & ~np.isnan(gpu)
    short = known & (gpu < cpu_ns)
    if not known.any():
        return None
    count = int(short.sum())
    hint = bool(
        count >= LAUNCH_BOUND_MIN_LAUNCHES and count >= LAUNCH_BOUND_MIN_SHARE * known.sum()
    )
    return LaunchBound(
        int(known.sum()), count, float(gpu[short].sum()), float(cpu_ns[short].sum()), hint
    )
