"""What to collect: the exact profiler command lines that gather each criterion's inputs.

Every criterion that is not computable carries these commands (Decision 2), and
``cuda-advisor metrics --tool ncu|nvprof`` prints the one command that collects everything the
advisor uses.  The lists are data: each criterion's spec (``SPEC.needs`` in its module, a
:class:`~advisor.criteria.engine.spec.Needs`) names the Nsight Compute metrics (PerfWorks names,
Volta and later), the nvprof metrics and events (Kepler to Volta), and whether it needs a
timeline instead (HOSTSYNC: Nsight Compute serializes and replays kernels, so only a trace -- nsys
or ``nvprof --print-gpu-trace`` -- has real start times); :data:`NEEDS` gathers them, followed by
the inputs of the speedup estimates and of the bound.  ``./APP`` stands for the user's
application and its arguments.
"""

from __future__ import annotations

from collections.abc import Mapping

from advisor.criteria.engine.spec import Needs, SpecView

APP = "./APP"

_WARP_CYCLES_NCU = ("sm__warps_active.avg.per_cycle_active", "sm__cycles_active.sum")
_WARP_CYCLES_NVPROF_EVENTS = ("active_warps",)

#: the inputs of the speedup estimates: p = L1% / L2% / ShMem% and the overall figure
SPEEDUP_NEEDS = Needs(ncu_metrics=_WARP_CYCLES_NCU, nvprof_events=_WARP_CYCLES_NVPROF_EVENTS)
#: the inputs of the bound classification
BOUND_NEEDS = Needs(
    ncu_metrics=(
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    ncu_sections=("SpeedOfLight",),
    nvprof_metrics=("flop_sp_efficiency", "flop_dp_efficiency"),
)

#: criterion (each spec's ``needs``, in paper order) or "SPEEDUP" / "BOUND" -> inputs to collect
NEEDS: Mapping[str, Needs] = SpecView(
    lambda spec: spec.needs, extra={"SPEEDUP": SPEEDUP_NEEDS, "BOUND": BOUND_NEEDS}
)

#: Nsight Compute sections whose rule results the report shows beside its own criteria
RULE_SECTIONS = (
    "SpeedOfLight",
    "LaunchStats",
    "Occupancy",
    "WarpStateStats",
    "MemoryWorkloadAnalysis_Tables",
    "SourceCounters",
)

NSYS_TIMELINE = (
    f"nsys profile --trace=cuda --output advisor_timeline {APP} && "
    "nsys stats --report cuda_gpu_trace --format csv --output advisor_timeline "
    "advisor_timeline.nsys-rep"
)
NVPROF_TIMELINE = f"nvprof --print-gpu-trace --csv --log-file advisor_gputrace.csv {APP}"


def ncu_command(metrics: tuple[str, ...], sections: tuple[str, ...] = ()) -> str:
    """``ncu [--section S]... --metrics a,b -o advisor_ncu ./APP``."""
    parts = ["ncu"]
    parts += [f"--section {s}" for s in sections]
    if metrics:
        parts.append("--metrics " + ",".join(metrics))
    parts += ["-o advisor_ncu", APP]
    return " ".join(parts)


def nvprof_command(metrics: tuple[str, ...], events: tuple[str, ...] = ()) -> str:
    """``nvprof --metrics a,b --events c --csv --log-file advisor_nvprof.csv ./APP``."""
    parts = ["nvprof"]
    if metrics:
        parts.append("--metrics " + ",".join(metrics))
    if events:
        parts.append("--events " + ",".join(events))
    parts += ["--csv --log-file advisor_nvprof.csv", APP]
    return " ".join(parts)


def commands_for(criterion: str, with_speedup: bool = False) -> dict[str, str]:
    """tool -> command line collecting the inputs of ``criterion`` (and its speedup's)."""
    needs = NEEDS[criterion]
    if needs.timeline:
        return {"nsys": NSYS_TIMELINE, "nvprof": NVPROF_TIMELINE}
    extra = SPEEDUP_NEEDS if with_speedup else Needs()
    out = {
        "ncu": ncu_command(
            _union(needs.ncu_metrics, extra.ncu_metrics),
            needs.ncu_sections,
        )
    }
    if needs.nvprof_note:
        out["nvprof"] = f"not available: {needs.nvprof_note}"
    else:
        out["nvprof"] = nvprof_command(
            _union(needs.nvprof_metrics, extra.nvprof_metrics),
            _union(needs.nvprof_events, extra.nvprof_events),
        )
    return out


def everything(tool: str) -> list[str]:
    """The command(s) that collect every input the advisor uses with ``tool``.

    One profiler run collects all metrics; HOSTSYNC needs a second, un-replayed run for the
    timeline (Nsight Compute replays kernels one by one, and nvprof's metric replay distorts
    timings), so the timeline command follows on its own line.
    """
    if tool not in ("ncu", "nvprof"):
        raise ValueError(f"unknown tool {tool!r}")
    metrics: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    sections: tuple[str, ...] = RULE_SECTIONS if tool == "ncu" else ()
    for needs in NEEDS.values():
        if tool == "ncu":
            metrics = _union(metrics, needs.ncu_metrics)
            sections = _union(sections, needs.ncu_sections)
        else:
            metrics = _union(metrics, needs.nvprof_metrics)
            events = _union(events, needs.nvprof_events)
    if tool == "ncu":
        return [ncu_command(metrics, sections), NSYS_TIMELINE]
    return [nvprof_command(metrics, events), NVPROF_TIMELINE]


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*a, *b)))
