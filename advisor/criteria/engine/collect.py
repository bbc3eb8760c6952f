"""What to collect: the exact profiler command lines that gather each criterion's inputs.

Every criterion that is not computable carries these commands (Decision 2), and
``cuda-advisor metrics --tool ncu|nvprof`` prints the one command that collects everything the
advisor uses.  The lists are data: each criterion names the Nsight Compute metrics (PerfWorks
names, Volta and later), the nvprof metrics and events (Kepler to Volta), and whether it needs a
timeline instead (HOSTSYNC: Nsight Compute serializes and replays kernels, so only a trace -- nsys
or ``nvprof --print-gpu-trace`` -- has real start times).  ``./APP`` stands for the user's
application and its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

APP = "./APP"


@dataclass(frozen=True)
class Needs:
    ncu_metrics: tuple[str, ...] = ()
    ncu_sections: tuple[str, ...] = ()
    nvprof_metrics: tuple[str, ...] = ()
    nvprof_events: tuple[str, ...] = ()
    timeline: bool = False
    nvprof_note: str = ""  # why nvprof cannot give it, when it cannot


_WARP_CYCLES_NCU = ("sm__warps_active.avg.per_cycle_active", "sm__cycles_active.sum")
_WARP_CYCLES_NVPROF_EVENTS = ("active_warps",)

#: criterion (or "SPEEDUP" / "BOUND" for the speedup estimates) -> inputs to collect
NEEDS: dict[str, Needs] = {
    "HOSTSYNC": Needs(timeline=True),
    "DEVICESYNC": Needs(
        ncu_metrics=(
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "sm__cycles_active.avg",
            "sm__cycles_elapsed.avg",
        ),
        ncu_sections=("WarpStateStats",),
        nvprof_metrics=("stall_sync", "achieved_occupancy", "sm_efficiency"),
    ),
    "DIVERGENCE": Needs(
        ncu_metrics=("smsp__thread_inst_executed_per_inst_executed.ratio",),
        nvprof_metrics=("warp_execution_efficiency",),
    ),
    "LOADBALANC_WARP": Needs(
        ncu_metrics=(
            "sm__warps_active.avg.per_cycle_active",
            "sm__maximum_warps_avg_per_active_cycle",
        ),
        ncu_sections=("Occupancy",),
        nvprof_metrics=("achieved_occupancy",),
        nvprof_events=("active_warps", "active_cycles"),
    ),
    "LOADBALANC_SM": Needs(
        ncu_metrics=("sm__cycles_active.max", "sm__cycles_active.avg"),
        nvprof_note=(
            "nvprof reports per-SM active cycles only with --aggregate-mode off, a layout this "
            "advisor does not read; use Nsight Compute on Volta and later"
        ),
    ),
    "L1_GRANULARITY": Needs(
        ncu_metrics=(
            "smsp__sass_data_bytes_mem_global_op_ld.sum",
            "smsp__sass_data_bytes_mem_global_op_st.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        ),
        nvprof_metrics=(
            "gld_requested_throughput",
            "gst_requested_throughput",
            "gld_throughput",
            "gst_throughput",
            "gld_transactions",
            "gst_transactions",
        ),
    ),
    "L2_GRANULARITY": Needs(
        ncu_metrics=(
            "smsp__sass_data_bytes_mem_global_op_ld.sum",
            "smsp__sass_data_bytes_mem_global_op_st.sum",
            "lts__t_sectors_srcunit_tex_op_read.sum",
            "lts__t_sectors_srcunit_tex_op_write.sum",
        ),
        nvprof_metrics=(
            "gld_requested_throughput",
            "gst_requested_throughput",
            "l2_tex_read_throughput",
            "l2_tex_write_throughput",
            "l2_read_transactions",
            "l2_write_transactions",
        ),
    ),
    "SHMEM_EFFICIENCY": Needs(
        ncu_metrics=(
            "smsp__inst_executed_op_shared_ld.sum",
            "smsp__inst_executed_op_shared_st.sum",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        ),
        nvprof_metrics=("shared_load_transactions", "shared_store_transactions"),
        nvprof_events=("shared_load", "shared_store"),
    ),
    "THROUGHPUT_OCCUPANCY": Needs(
        ncu_metrics=(
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "sm__maximum_warps_per_active_cycle_pct",
        ),
        ncu_sections=("Occupancy",),
        nvprof_metrics=("dram_read_throughput", "dram_write_throughput", "achieved_occupancy"),
    ),
    "SPEEDUP": Needs(  # p = L1% / L2% / ShMem% and the overall figure
        ncu_metrics=_WARP_CYCLES_NCU,
        nvprof_events=_WARP_CYCLES_NVPROF_EVENTS,
    ),
    "BOUND": Needs(
        ncu_metrics=(
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        ncu_sections=("SpeedOfLight",),
        nvprof_metrics=("flop_sp_efficiency", "flop_dp_efficiency"),
    ),
}

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
    extra = NEEDS["SPEEDUP"] if with_speedup else Needs()
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
