"""The nvprof layouts of the synthetic samples (``../shared/docs/FORMATS.md`` §1), on the V100.

CSV: default summary with its units row (§1.2), CUDA 10 gpu trace with ``Correlation_ID`` and a
units row (§1.3 b), api trace (§1.4), ``--metrics`` summary with units glued to the values (§1.5),
``--events`` + ``--metrics`` tables in one file (§1.6).  Text: the default summary and the gpu
trace as nvprof prints them without ``--csv`` (fixed-width columns, units glued to the values).
"""

from __future__ import annotations

from collections.abc import Callable

from run_model import (
    BLOCK,
    COMMAND,
    GLOBAL_REQUESTS,
    GRID,
    KERNELS,
    MATRIX_BYTES,
    V100,
    Activity,
    Kernel,
    gpu_activities,
    shared_ld_bank_conflicts,
    timeline,
)

DEVICE = f"{V100.name} (0)"
T0_NS = 196_843_207
FIRST_CORRELATION = 117
COPY_NAMES = {"HtoD": "[CUDA memcpy HtoD]", "DtoH": "[CUDA memcpy DtoH]"}
COPY_KINDS = {"HtoD": ("Pageable", "Device"), "DtoH": ("Device", "Pageable")}
GIB = float(1 << 30)
MIB = float(1 << 20)


def run() -> list[Activity]:
    return timeline(V100, T0_NS, FIRST_CORRELATION)


def preamble(pid: int, *, replay: bool = False) -> list[str]:
    lines = [f"=={pid}== NVPROF is profiling process {pid}, command: {COMMAND}"]
    if replay:
        lines.append(
            f"=={pid}== Some kernel(s) will be replayed on device 0 in order to collect all "
            "events/metrics."
        )
    lines += [f"=={pid}== Profiling application: {COMMAND}", f"=={pid}== Profiling result:"]
    return lines


def gpu_name(activity: Activity) -> str:
    if activity.kernel is not None:
        return activity.kernel.name
    return COPY_NAMES[str(activity.gpu_kind)]


def _groups(
    activities: list[Activity], key: Callable[[Activity], str], value: Callable[[Activity], int]
) -> list[tuple[str, list[int]]]:
    """(name, durations) per name, by total time, longest first (nvprof's summary order)."""
    groups: dict[str, list[int]] = {}
    for activity in activities:
        groups.setdefault(key(activity), []).append(value(activity))
    return sorted(groups.items(), key=lambda kv: (-sum(kv[1]), kv[0]))


def summary_groups(activities: list[Activity]) -> dict[str, list[tuple[str, list[int]]]]:
    gpu = _groups(gpu_activities(activities), gpu_name, lambda a: a.gpu_duration_ns)
    api = _groups(activities, lambda a: a.api, lambda a: a.duration_ns)
    return {"GPU activities": gpu, "API calls": api}


def summary_csv(pid: int) -> list[str]:
    """Default ``--csv`` summary; the units row mixes ms and us between columns (§1.2)."""
    lines = preamble(pid)
    lines += ['"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"', ",%,ms,,us,us,ms,"]
    for kind, groups in summary_groups(run()).items():
        total = sum(sum(d) for _, d in groups)
        for name, durations in groups:
            time = sum(durations)
            lines.append(
                f'"{kind}",{100 * time / total:.6f},{time / 1e6:.6f},{len(durations)},'
                f"{time / len(durations) / 1e3:.6f},{min(durations) / 1e3:.6f},"
                f'{max(durations) / 1e6:.6f},"{name}"'
            )
    return lines


def gputrace_csv(pid: int) -> list[str]:
    """``--print-gpu-trace --csv``, CUDA 10 header (§1.3 b): kernel names without the ``[id]``
    suffix, the id in ``Correlation_ID``; Static SMem in KB, Size in MB, Throughput in GB/s."""
    lines = preamble(pid)
    lines.append(
        '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
        '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","SrcMemType",'
        '"DstMemType","Device","Context","Stream","Name","Correlation_ID"'
    )
    lines.append("ms,us,,,,,,,,KB,B,MB,GB/s,,,,,,,")
    for a in gpu_activities(run()):
        head = f"{a.gpu_start_ns / 1e6:.6f},{a.gpu_duration_ns / 1e3:.6f}"
        tail = f'"{DEVICE}","1","7","{gpu_name(a)}",{a.correlation_id}'
        if a.kernel is not None:
            k = a.kernel
            dims = ",".join(str(d) for d in (*GRID, *BLOCK))
            lines.append(f"{head},{dims},{k.registers},{k.static_smem / 1024:.6f},0,,,,,{tail}")
        else:
            src, dst = COPY_KINDS[str(a.gpu_kind)]
            rate = MATRIX_BYTES / (a.gpu_duration_ns / 1e9) / GIB
            lines.append(
                f'{head},,,,,,,,,,{MATRIX_BYTES / MIB:.6f},{rate:.6f},"{src}","{dst}",{tail}'
            )
    return lines


def apitrace_csv(pid: int) -> list[str]:
    """``--print-api-trace --csv`` (§1.4): Start in ms, Duration in us."""
    lines = preamble(pid)
    lines += ['"Start","Duration","Name","Correlation_ID"', "ms,us,,"]
    for a in run():
        lines.append(
            f'{a.start_ns / 1e6:.6f},{a.duration_ns / 1e3:.6f},"{a.api}",{a.correlation_id}'
        )
    return lines


def _pct(value: float) -> str:
    return f"{value:.6f}%"


def _gbs(value: float) -> str:
    return f"{value:.6f}GB/s"


def _plain(value: float) -> str:
    return f"{value:.6f}"


def _same(value: str) -> tuple[str, str, str]:
    return value, value, value


def _throughputs(kernel: Kernel, nbytes: int) -> tuple[str, str, str]:
    """Min, max, avg of bytes / duration over the three launches, binary GB/s (§1.3)."""
    rates = [nbytes / (ns / 1e9) / GIB for ns in kernel.v100_ns]
    return _gbs(min(rates)), _gbs(max(rates)), _gbs(sum(rates) / len(rates))


def metric_values(kernel: Kernel) -> list[tuple[str, str, tuple[str, str, str]]]:
    """(name, description, (min, max, avg)) of the ``--metrics`` sample for one kernel."""
    occ = kernel.achieved_occupancy
    shared = kernel.static_smem > 0
    return [
        ("achieved_occupancy", "Achieved Occupancy",
         (_plain(min(occ)), _plain(max(occ)), _plain(sum(occ) / len(occ)))),
        ("sm_efficiency", "Multiprocessor Activity", _same(_pct(kernel.sm_efficiency_pct))),
        ("warp_execution_efficiency", "Warp Execution Efficiency", _same(_pct(100.0))),
        ("gld_efficiency", "Global Memory Load Efficiency",
         _same(_pct(kernel.gld_efficiency_pct))),
        ("gst_efficiency", "Global Memory Store Efficiency",
         _same(_pct(kernel.gst_efficiency_pct))),
        ("gld_transactions_per_request", "Global Load Transactions Per Request",
         _same(_plain(4.0 if kernel.gld_efficiency_pct == 100.0 else 32.0))),
        ("gst_transactions_per_request", "Global Store Transactions Per Request",
         _same(_plain(4.0))),
        ("shared_efficiency", "Shared Memory Efficiency",
         _same(_pct(kernel.shared_efficiency_pct))),
        ("shared_load_transactions_per_request", "Shared Memory Load Transactions Per Request",
         _same(_plain(kernel.shared_ld_per_request))),
        ("shared_store_transactions_per_request", "Shared Memory Store Transactions Per Request",
         _same(_plain(1.0 if shared else 0.0))),
        ("stall_sync", "Issue Stall Reasons (Synchronization)",
         _same(_pct(kernel.stall_sync_pct))),
        ("dram_read_throughput", "Device Memory Read Throughput",
         _throughputs(kernel, kernel.dram_read_bytes)),
        ("dram_write_throughput", "Device Memory Write Throughput",
         _throughputs(kernel, kernel.dram_write_bytes)),
        ("dram_utilization", "Device Memory Utilization", _same(f'"{kernel.dram_level}"')),
    ]  # fmt: skip


METRIC_NAMES = [name for name, _, _ in metric_values(KERNELS[0])]
EVENTS_TABLE_METRICS = ("achieved_occupancy", "gld_efficiency", "shared_efficiency", "stall_sync")
EVENT_NAMES = (
    "shared_ld_bank_conflict", "shared_st_bank_conflict", "shared_ld_transactions",
    "shared_st_transactions", "global_load", "global_store",
)  # fmt: skip


def _metric_rows(names: tuple[str, ...] | list[str]) -> list[str]:
    lines = ['"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"']
    for kernel in KERNELS:
        for name, description, (lo, hi, avg) in metric_values(kernel):
            if name in names:
                lines.append(
                    f'"{DEVICE}","{kernel.name}",3,"{name}","{description}",{lo},{hi},{avg}'
                )
    return lines


def metrics_csv(pid: int) -> list[str]:
    """``--metrics ... --csv`` summary (§1.5): one row per (kernel, metric), units glued."""
    return [*preamble(pid, replay=True), f"=={pid}== Metric result:", *_metric_rows(METRIC_NAMES)]


def event_values(kernel: Kernel) -> dict[str, int]:
    """Per-launch event counts: warp-level instructions and shared wavefronts (transactions)."""
    shared = kernel.static_smem > 0
    return {
        "shared_ld_bank_conflict": shared_ld_bank_conflicts(kernel),
        "shared_st_bank_conflict": 0,
        "shared_ld_transactions": int(GLOBAL_REQUESTS * kernel.shared_ld_per_request),
        "shared_st_transactions": GLOBAL_REQUESTS if shared else 0,
        "global_load": GLOBAL_REQUESTS,
        "global_store": GLOBAL_REQUESTS,
    }


def events_metrics_csv(pid: int) -> list[str]:
    """``--events ... --metrics ... --csv`` (§1.6): an event table (with Total), a blank line,
    then the metric table."""
    lines = [*preamble(pid, replay=True), f"=={pid}== Event result:"]
    lines.append('"Device","Kernel","Invocations","Event Name","Min","Max","Avg","Total"')
    for kernel in KERNELS:
        for name, count in event_values(kernel).items():
            lines.append(
                f'"{DEVICE}","{kernel.name}",3,"{name}",{count},{count},{count},{3 * count}'
            )
    lines += ["", f"=={pid}== Metric result:", *_metric_rows(EVENTS_TABLE_METRICS)]
    return lines


# ---------------------------------------------------------------------------- plain text


def _sig(value: float) -> str:
    """nvprof's text precision: 5 significant digits."""
    if value < 10:
        return f"{value:.4f}"
    if value < 100:
        return f"{value:.3f}"
    return f"{value:.2f}"


def text_time(ns: float) -> str:
    if ns < 1e3:
        return f"{ns:.0f}ns"
    if ns < 1e6:
        return _sig(ns / 1e3) + "us"
    if ns < 1e9:
        return _sig(ns / 1e6) + "ms"
    return f"{ns / 1e9:.5f}s"


def text_bytes(nbytes: float) -> str:
    for unit, size in (("GB", GIB), ("MB", MIB), ("KB", 1024.0)):
        if nbytes >= size:
            return _sig(nbytes / size) + unit
    return f"{nbytes:.0f}B"


def summary_txt(pid: int) -> list[str]:
    """The default text summary: ``Type`` label on the first row of each section only."""
    lines = preamble(pid)
    header = ("Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max")
    lines.append(_summary_row(header, "Name"))
    for kind, groups in summary_groups(run()).items():
        total = sum(sum(d) for _, d in groups)
        for i, (name, durations) in enumerate(groups):
            time = sum(durations)
            cells = (
                f"{kind}:" if i == 0 else "",
                f"{100 * time / total:.2f}%",
                text_time(time),
                str(len(durations)),
                text_time(time / len(durations)),
                text_time(min(durations)),
                text_time(max(durations)),
            )
            lines.append(_summary_row(cells, name))
    return lines


def _summary_row(cells: tuple[str, ...], name: str) -> str:
    widths = (16, 9, 10, 10, 10, 10, 10)
    return "".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + "  " + name


TRACE_HEADER = (
    "Start", "Duration", "Grid Size", "Block Size", "Regs*", "SSMem*", "DSMem*", "Size",
    "Throughput", "SrcMemType", "DstMemType", "Device", "Context", "Stream",
)  # fmt: skip
TRACE_LEGEND = (
    "Regs: registers per CUDA thread (the driver and tools may reserve some of them).",
    "SSMem: static shared memory per CUDA block.",
    "DSMem: dynamic shared memory per CUDA block.",
    "SrcMemType: memory type a copy reads from.",
    "DstMemType: memory type a copy writes to.",
)


def gputrace_txt(pid: int) -> list[str]:
    """``--print-gpu-trace`` text: right-aligned columns, ``-`` for empty cells, kernel names
    with the ``[correlation id]`` suffix, a legend after the table."""
    rows: list[tuple[list[str], str]] = []
    for a in gpu_activities(run()):
        cells = [text_time(a.gpu_start_ns), text_time(a.gpu_duration_ns)]
        if a.kernel is not None:
            k = a.kernel
            cells += [
                "({} {} {})".format(*GRID), "({} {} {})".format(*BLOCK), str(k.registers),
                text_bytes(k.static_smem), "0B", "-", "-", "-", "-",
            ]  # fmt: skip
            name = f"{k.name} [{a.correlation_id}]"
        else:
            rate = MATRIX_BYTES / (a.gpu_duration_ns / 1e9) / GIB
            cells += ["-"] * 5 + [text_bytes(MATRIX_BYTES), _sig(rate) + "GB/s"]
            cells += list(COPY_KINDS[str(a.gpu_kind)])
            name = gpu_name(a)
        cells += [DEVICE, "1", "7"]
        rows.append((cells, name))
    widths = [
        max(len(TRACE_HEADER[i]), *(len(cells[i]) for cells, _ in rows))
        for i in range(len(TRACE_HEADER))
    ]

    def line(cells: list[str] | tuple[str, ...], name: str) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + "  " + name

    out = [*preamble(pid), line(TRACE_HEADER, "Name")]
    out += [line(cells, name) for cells, name in rows]
    return [*out, "", *TRACE_LEGEND]
