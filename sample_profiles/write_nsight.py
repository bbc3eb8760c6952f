"""The Nsight Compute and Nsight Systems layouts of the synthetic samples, on the A100
(``../shared/docs/FORMATS.md`` §2 and §3).

ncu: ``--page raw`` (every field quoted, a units row, no thousands separators: ``--csv``
implies base units), ``--page details`` of the 2023+ header (metric rows end with a trailing
comma and stop before the rule columns; rule rows name the section by its identifier and carry
the estimated speedup; thousands separators), ``--print-summary per-kernel``.
nsys ``stats --format csv``: ``cuda_gpu_trace`` (2024+ header with ``GreenCtx``),
``cuda_api_trace``, ``cuda_gpu_kern_sum``, and one stdout capture of several reports with
``Processing`` lines.
"""

from __future__ import annotations

import statistics

from run_model import (
    A100,
    BLOCK,
    BLOCKS,
    GRID,
    HOST,
    KERNELS,
    MATRIX_BYTES,
    PROCESS,
    THREADS_PER_BLOCK,
    Activity,
    Kernel,
    global_ld_sectors,
    gpu_activities,
    shared_ld_bank_conflicts,
    timeline,
)

NCU_EXE = "/home/user/transpose/transpose"
NSYS_T0_NS = 512_340_118
NSYS_FIRST_CORRELATION = 98
NSYS_PID = 52190
NSYS_VERSION = "2024.5.1"
NSYS_REPORTS = f"/opt/nvidia/nsight-systems/{NSYS_VERSION}/host-linux-x64/reports"
WARPS_PER_SM = 64
#: resident blocks per SM: 8 by the warp limit (64 warps / 8 warps per block)
BLOCKS_PER_SM = WARPS_PER_SM // (THREADS_PER_BLOCK // 32)


def _q(*cells: object) -> str:
    """Cells as ncu prints them: every one double-quoted."""
    return ",".join(f'"{c}"' for c in cells)


def _sep(value: float, decimals: int = 2) -> str:
    """A number with thousands separators, as the details and summary pages print it."""
    return f"{value:,.{decimals}f}"


def ncu_preamble(pid: int) -> list[str]:
    lines = [f"==PROF== Connected to process {pid} ({NCU_EXE})"]
    for i, kernel in enumerate(KERNELS):
        lines.append(f'==PROF== Profiling "{kernel.short}" - {i}: 0%....50%....100% - 9 passes')
    return [*lines, f"==PROF== Disconnected from process {pid}"]


def _dims(dims: tuple[int, int, int]) -> str:
    return "({}, {}, {})".format(*dims)


def _ids(pid: int, launch: int, kernel: Kernel) -> list[object]:
    return [launch, pid, PROCESS, HOST, kernel.name, 1, 7, _dims(BLOCK), _dims(GRID), 0, A100.cc]


def _dram_pct(kernel: Kernel) -> float:
    """DRAM bytes / duration over the A100's 1555 GB/s peak, in percent (first launch)."""
    ns = kernel.a100_ns[0]
    return 100 * (kernel.dram_read_bytes + kernel.dram_write_bytes) / ns / A100.peak_dram_gbs


def raw_metrics(kernel: Kernel) -> dict[str, tuple[str, object]]:
    """metric -> (unit, value) of the raw page for the first launch of ``kernel``."""
    shared_pct = kernel.shared_efficiency_pct if kernel.static_smem else 0.0
    return {
        "device__attribute_display_name": ("", A100.name),
        "device__attribute_multiprocessor_count": ("", A100.sms),
        "dram__bytes_read.sum": ("byte", kernel.dram_read_bytes),
        "dram__bytes_write.sum": ("byte", kernel.dram_write_bytes),
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": ("%", f"{_dram_pct(kernel):.2f}"),
        "gpu__time_duration.sum": ("ns", kernel.a100_ns[0]),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": (
            "", shared_ld_bank_conflicts(kernel)),
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": ("", BLOCKS * 8 * 4),
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": ("sector", global_ld_sectors(kernel)),
        "launch__block_size": ("", THREADS_PER_BLOCK),
        "launch__grid_size": ("", BLOCKS),
        "launch__registers_per_thread": ("register/thread", kernel.registers),
        "launch__shared_mem_per_block_static": ("byte/block", kernel.static_smem),
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": (
            "%", f"{kernel.a100_sm_throughput_pct:.2f}"),
        "sm__warps_active.avg.pct_of_peak_sustained_active": (
            "%", f"{kernel.a100_warps_active_pct:.2f}"),
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": (
            "%", f"{kernel.gld_efficiency_pct:.2f}"),
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": (
            "%", f"{kernel.gst_efficiency_pct:.2f}"),
        "smsp__sass_average_data_bytes_per_wavefront_mem_shared.pct": ("%", f"{shared_pct:.2f}"),
        "smsp__thread_inst_executed_per_inst_executed.ratio": ("", "32"),
        "smsp__warps_issue_stalled_barrier_per_warp_active.pct": (
            "%", f"{kernel.a100_stall_barrier_pct:.2f}"),
    }  # fmt: skip


ID_COLUMNS = (
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
    "Block Size", "Grid Size", "Device", "CC",
)  # fmt: skip


def ncu_raw(pid: int) -> list[str]:
    metrics = sorted(raw_metrics(KERNELS[0]))
    lines = [*ncu_preamble(pid), _q(*ID_COLUMNS, *metrics)]
    units = raw_metrics(KERNELS[0])
    lines.append(_q(*([""] * len(ID_COLUMNS)), *(units[m][0] for m in metrics)))
    for launch, kernel in enumerate(KERNELS):
        values = raw_metrics(kernel)
        lines.append(_q(*_ids(pid, launch, kernel), *(values[m][1] for m in metrics)))
    return lines


DETAILS_HEADER = (
    *ID_COLUMNS, "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name",
    "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup",
)  # fmt: skip
#: (section identifier, rule, type, description, speedup type, speedup %) per kernel
RULES: dict[str, list[tuple[str, str, str, str, str, str]]] = {
    "transposeNaive": [
        ("SpeedOfLight", "SOLBottleneck", "OPT",
         "Memory is busier than compute, yet DRAM runs at a third of its peak: look at the "
         "Memory Workload Analysis section for the access pattern that wastes bandwidth.",
         "global", "62.15"),
        ("SourceCounters", "UncoalescedGlobalAccess", "OPT",
         "Global loads move 32 sectors per request where 4 would do: each warp reads one "
         "element from 32 different rows. Stage the tile in shared memory to coalesce them.",
         "local", "84.38"),
    ],
    "transposeCoalesced": [
        ("SourceCounters", "UncoalescedSharedAccess", "OPT",
         "Shared loads need 32 wavefronts per request: the tile column read hits one bank 32 "
         "times. Pad the tile by one element per row to spread it over the banks.",
         "local", "24.47"),
    ],
    "transposeNoBankConflicts": [
        ("SpeedOfLight", "SOLBottleneck", "INF",
         "DRAM throughput is above 80% of its peak: the kernel is bound by memory bandwidth.",
         "", ""),
    ],
}  # fmt: skip


def details_metrics(kernel: Kernel) -> list[tuple[str, str, str, str]]:
    """(section, label, unit, value) rows of the details page for the first launch."""
    ns = kernel.a100_ns[0]
    cycles = ns * A100.sm_clock_ghz
    dram_gbs = (kernel.dram_read_bytes + kernel.dram_write_bytes) / ns
    dram_pct = _dram_pct(kernel)
    limit_regs = 65536 // (kernel.registers * THREADS_PER_BLOCK)
    smem = (
        ("byte/block", "0")
        if not kernel.static_smem
        else ("Kbyte/block", f"{kernel.static_smem / 1000:.2f}")
    )
    warps = kernel.a100_warps_active_pct * WARPS_PER_SM / 100
    sol, launch, occ, mem = (
        "GPU Speed Of Light Throughput",
        "Launch Statistics",
        "Occupancy",
        "Memory Workload Analysis",
    )
    return [
        (sol, "DRAM Frequency", "Ghz", f"{A100.dram_clock_ghz:.2f}"),
        (sol, "SM Frequency", "Ghz", f"{A100.sm_clock_ghz:.2f}"),
        (sol, "Elapsed Cycles", "cycle", _sep(cycles, 0)),
        (sol, "Memory Throughput", "%", f"{dram_pct:.2f}"),
        (sol, "DRAM Throughput", "%", f"{dram_pct:.2f}"),
        (sol, "Duration", "us", f"{ns / 1e3:.2f}"),
        (sol, "L1/TEX Cache Throughput", "%", f"{kernel.a100_sm_throughput_pct * 1.3:.2f}"),
        (sol, "L2 Cache Throughput", "%", f"{dram_pct * 0.92:.2f}"),
        (sol, "SM Active Cycles", "cycle", _sep(cycles * 0.984)),
        (sol, "Compute (SM) Throughput", "%", f"{kernel.a100_sm_throughput_pct:.2f}"),
        (launch, "Block Size", "", str(THREADS_PER_BLOCK)),
        (launch, "Grid Size", "", _sep(BLOCKS, 0)),
        (launch, "Registers Per Thread", "register/thread", str(kernel.registers)),
        (launch, "Static Shared Memory Per Block", *smem),
        (launch, "Threads", "thread", _sep(BLOCKS * THREADS_PER_BLOCK, 0)),
        (launch, "Waves Per SM", "", f"{BLOCKS / (A100.sms * BLOCKS_PER_SM):.2f}"),
        (occ, "Block Limit Registers", "block", str(min(limit_regs, 32))),
        (occ, "Block Limit Shared Mem", "block", "32"),
        (occ, "Block Limit Warps", "block", str(BLOCKS_PER_SM)),
        (occ, "Theoretical Active Warps per SM", "warp", str(WARPS_PER_SM)),
        (occ, "Theoretical Occupancy", "%", "100"),
        (occ, "Achieved Occupancy", "%", f"{kernel.a100_warps_active_pct:.2f}"),
        (occ, "Achieved Active Warps Per SM", "warp", f"{warps:.2f}"),
        (mem, "Memory Throughput", "Gbyte/s", _sep(dram_gbs)),
        (mem, "L2 Hit Rate", "%", f"{kernel.a100_l2_hit_pct:.2f}"),
        (mem, "Mem Busy", "%", f"{dram_pct * 0.95:.2f}"),
    ]  # fmt: skip


def ncu_details(pid: int) -> list[str]:
    lines = [*ncu_preamble(pid), _q(*DETAILS_HEADER)]
    for launch, kernel in enumerate(KERNELS):
        ids = _ids(pid, launch, kernel)
        for section, label, unit, value in details_metrics(kernel):
            lines.append(_q(*ids, section, label, unit, value) + ",")
        for section, rule, kind, text, speedup_type, speedup in RULES[kernel.short]:
            lines.append(_q(*ids, section, "", "", "", rule, kind, text, speedup_type, speedup))
    return lines


SUMMARY_HEADER = (
    "Process ID", "Process Name", "Host Name", "Kernel Name", "Block Size", "Grid Size", "Device",
    "CC", "Invocations", "Section Name", "Metric Name", "Metric Unit", "Minimum", "Maximum",
    "Average",
)  # fmt: skip


def ncu_summary(pid: int) -> list[str]:
    """``--print-summary per-kernel``: one group per kernel over its 3 launches."""
    lines = [*ncu_preamble(pid)[:1]]
    lines += [
        f'==PROF== Profiling "{k.short}" - {3 * i + j}: 0%....50%....100% - 9 passes'
        for i, k in enumerate(KERNELS)
        for j in range(3)
    ]
    lines += [f"==PROF== Disconnected from process {pid}", _q(*SUMMARY_HEADER)]
    for kernel in KERNELS:
        ids = (pid, PROCESS, HOST, kernel.name, _dims(BLOCK), _dims(GRID), 0, A100.cc, 3)
        ns = kernel.a100_ns
        cycles = [t * A100.sm_clock_ghz for t in ns]
        occ = kernel.a100_warps_active_pct
        rows = [
            ("GPU Speed Of Light Throughput", "SM Frequency", "Ghz", [A100.sm_clock_ghz] * 3),
            ("GPU Speed Of Light Throughput", "Elapsed Cycles", "cycle", cycles),
            ("GPU Speed Of Light Throughput", "Duration", "us", [t / 1e3 for t in ns]),
            ("Occupancy", "Achieved Occupancy", "%", [occ - 0.21, occ + 0.17, occ]),
            ("Occupancy", "Theoretical Occupancy", "%", [100.0] * 3),
        ]
        for section, label, unit, values in rows:
            avg = values[2] if label == "Achieved Occupancy" else sum(values) / 3
            lines.append(
                _q(*ids, section, label, unit, _sep(min(values)), _sep(max(values)), _sep(avg))
            )
    return lines


# ------------------------------------------------------------------------------- nsys


def nsys_run() -> list[Activity]:
    return timeline(A100, NSYS_T0_NS, NSYS_FIRST_CORRELATION)


NSYS_COPY = {"HtoD": "[CUDA memcpy Host-to-Device]", "DtoH": "[CUDA memcpy Device-to-Host]"}
NSYS_KINDS = {"HtoD": ("Pageable", "Device"), "DtoH": ("Device", "Pageable")}


def _name(text: str) -> str:
    """nsys quotes a field only when it holds a comma."""
    return f'"{text}"' if "," in text else text


def nsys_gpu_trace() -> list[str]:
    """``cuda_gpu_trace`` (§3.2): MB are decimal; Throughput uses the report script's integer
    division ``bytes * (1000000000 / duration)``."""
    lines = [
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
        "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
    ]
    device = f"{A100.name} (0)"
    for a in gpu_activities(nsys_run()):
        head = f"{a.gpu_start_ns},{a.gpu_duration_ns},{a.correlation_id}"
        if a.kernel is not None:
            k = a.kernel
            dims = ",".join(str(d) for d in (*GRID, *BLOCK))
            body = f"{dims},{k.registers},{k.static_smem / 1e6:.3f},0.000,,,,"
            name = _name(k.name)
        else:
            rate = MATRIX_BYTES * (1_000_000_000 // a.gpu_duration_ns) / 1e6
            src, dst = NSYS_KINDS[str(a.gpu_kind)]
            body = f",,,,,,,,,{MATRIX_BYTES / 1e6:.3f},{rate:.3f},{src},{dst}"
            name = NSYS_COPY[str(a.gpu_kind)]
        lines.append(f"{head},{body},{device},1,,7,{name}")
    return lines


def nsys_api_trace() -> list[str]:
    lines = ["Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name"]
    for a in nsys_run():
        lines.append(
            f"{a.start_ns},{a.duration_ns},{a.api},0,{a.correlation_id},{NSYS_PID},{NSYS_PID},"
            f"20,{PROCESS}"
        )
    return lines


def _stats_rows(groups: dict[str, list[int]], last: str, count: str) -> list[str]:
    """Time (%), Total, count, Avg, Med, Min, Max, StdDev per name, longest total first."""
    total = sum(sum(v) for v in groups.values())
    lines = [
        f"Time (%),Total Time (ns),{count},Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),{last}"
    ]
    for name, values in sorted(groups.items(), key=lambda kv: (-sum(kv[1]), kv[0])):
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        lines.append(
            f"{100 * sum(values) / total:.1f},{sum(values)},{len(values)},"
            f"{statistics.mean(values):.1f},{statistics.median(values):.1f},{min(values)},"
            f"{max(values)},{std:.1f},{_name(name)}"
        )
    return lines


def nsys_kern_sum() -> list[str]:
    groups: dict[str, list[int]] = {}
    for a in gpu_activities(nsys_run()):
        if a.kernel is not None:
            groups.setdefault(a.kernel.name, []).append(a.gpu_duration_ns)
    return _stats_rows(groups, "Name", "Instances")


def nsys_api_sum() -> list[str]:
    groups: dict[str, list[int]] = {}
    for a in nsys_run():
        groups.setdefault(a.api, []).append(a.duration_ns)
    return _stats_rows(groups, "Name", "Num Calls")


def nsys_mem_time_sum() -> list[str]:
    groups: dict[str, list[int]] = {}
    for a in gpu_activities(nsys_run()):
        if a.kernel is None:
            groups.setdefault(NSYS_COPY[str(a.gpu_kind)], []).append(a.gpu_duration_ns)
    return _stats_rows(groups, "Operation", "Count")


def nsys_mem_size_sum() -> list[str]:
    lines = ["Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation"]
    counts: dict[str, int] = {}
    for a in gpu_activities(nsys_run()):
        if a.kernel is None:
            name = NSYS_COPY[str(a.gpu_kind)]
            counts[name] = counts.get(name, 0) + 1
    mb = MATRIX_BYTES / 1e6
    for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"{n * mb:.3f},{n},{mb:.3f},{mb:.3f},{mb:.3f},{mb:.3f},0.000,{name}")
    return lines


def nsys_stats_multi() -> list[str]:
    """``nsys stats --format csv`` to stdout with several reports: each preceded by its
    ``Processing [...]`` line and followed by a blank line; NVTX is skipped (none recorded)."""
    lines = [
        "Generating SQLite file transpose.sqlite from transpose.nsys-rep",
        "Exporting 1873 events: [==================================================100%]",
    ]
    reports = (
        ("nvtx_sum", None),
        ("cuda_api_sum", nsys_api_sum),
        ("cuda_gpu_kern_sum", nsys_kern_sum),
        ("cuda_gpu_mem_time_sum", nsys_mem_time_sum),
        ("cuda_gpu_mem_size_sum", nsys_mem_size_sum),
    )
    for report, build in reports:
        lines.append(f"Processing [transpose.sqlite] with [{NSYS_REPORTS}/{report}.py]...")
        if build is None:
            lines.append(
                "SKIPPED: transpose.sqlite does not contain NV Tools Extension (NVTX) data."
            )
        else:
            lines += build()
        lines.append("")
    return lines
