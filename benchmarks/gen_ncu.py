"""Synthetic Nsight Compute ``ncu --csv --page raw`` exports of any size, for the scale benchmarks.

Run: ``python benchmarks/gen_ncu.py OUT.csv [--n 10000] [--seed 0]``.

The layout follows the raw pages of ncu 2025.x (FORMATS.md §2.3): ``==PROF==`` lines before the
table, a header of eleven identification columns (``ID`` .. ``CC``) followed by the metric
columns in alphabetical order, a units row of quoted strings (``""`` under the identification
columns and unitless metrics), then one row per launch; every cell is quoted, lines end in LF.
The metric columns (:func:`metric_columns`, 475 columns in all) are the families such a page
holds: ``device__attribute_*`` (blank units, kHz clocks and byte sizes as CUDA reports them),
``launch__*``, ``gpu__time_duration.sum`` in ns, the section metrics the metric map knows
(``dram__bytes_read.sum``, ``sm__warps_active.avg.pct_of_peak_sustained_active`` ...) and the
per-pipe ``.avg/.max/.min/.sum`` x ``pct_of_peak_sustained_active/elapsed`` utilisations.

Launches draw from a few dozen kernels (long templated C++ names with commas included) with a
skewed frequency; each kernel has its own launch shape, stream and metric levels, and each
launch varies around them.  Seeded: the same (n, seed) gives the same bytes.  Columns are built
with numpy and written with pyarrow, so 10,000 launches take a few seconds.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

ID_COLUMNS = (
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
    "Block Size", "Grid Size", "Device", "CC",
)  # fmt: skip
PROCESS_ID = 412907
DEVICE_NAME = "NVIDIA H100 80GB HBM3"
SM_COUNT = 132

#: device__attribute_* -> value (an H100 SXM; clocks in kHz and sizes in bytes, blank units)
DEVICE_ATTRIBUTES: dict[str, str] = {
    "architecture": "400", "async_engine_count": "3", "can_map_host_memory": "1",
    "can_tex2d_gather": "1", "can_use_host_pointer_for_registered_mem": "1",
    "chip": "400", "clock_rate": "1980000", "cluster_launch": "1",
    "compute_capability_major": "9", "compute_capability_minor": "0", "compute_mode": "0",
    "compute_preemption_supported": "1", "concurrent_kernels": "1",
    "concurrent_managed_access": "1", "confidential_computing_mode": "No-CC",
    "cooperative_launch": "1", "cooperative_multi_device_launch": "1", "device_index": "0",
    "direct_managed_mem_access_from_host": "0", "display_name": DEVICE_NAME,
    "dma_buf_supported": "1", "ecc_enabled": "1", "fb_bus_width": "5120", "fbp_count": "10",
    "generic_compression_supported": "1", "global_l1_cache_supported": "1",
    "global_memory_bus_width": "5120", "gpu_direct_rdma_supported": "1", "gpu_overlap": "1",
    "host_native_atomic_supported": "0", "host_register_supported": "1",
    "implementation": "400", "integrated": "0", "ipc_event_supported": "1",
    "kernel_exec_timeout": "0", "l2_cache_size": "52428800", "l2s_count": "80",
    "limits_max_cta_per_sm": "32", "limits_num_tpcs": "66", "local_l1_cache_supported": "1",
    "managed_memory": "1", "max_access_policy_window_size": "134213632",
    "max_block_dim_x": "1024", "max_block_dim_y": "1024", "max_block_dim_z": "64",
    "max_blocks_per_multiprocessor": "32", "max_gpu_frequency_khz": "1980000",
    "max_grid_dim_x": "2147483647", "max_grid_dim_y": "65535", "max_grid_dim_z": "65535",
    "max_ipc_per_multiprocessor": "4", "max_ipc_per_scheduler": "1",
    "max_mem_frequency_khz": "2619000", "max_persisting_l2_cache_size": "32505856",
    "max_pitch": "2147483647", "max_registers_per_block": "65536",
    "max_registers_per_multiprocessor": "65536", "max_registers_per_thread": "255",
    "max_shared_memory_per_block": "49152", "max_shared_memory_per_block_optin": "232448",
    "max_shared_memory_per_multiprocessor": "233472", "max_threads_per_block": "1024",
    "max_threads_per_multiprocessor": "2048", "max_warps_per_multiprocessor": "64",
    "max_warps_per_scheduler": "16", "maximum_surface1d_width": "32768",
    "maximum_surface2d_height": "65536", "maximum_surface2d_width": "131072",
    "maximum_texture1d_width": "131072",
    "maximum_texture2d_height": "65536", "maximum_texture2d_width": "131072",
    "maximum_texture3d_depth": "16384", "maximum_texture3d_height": "16384",
    "maximum_texture3d_width": "16384", "memory_clock_rate": "2619000",
    "memory_pools_supported": "1", "multi_gpu_board": "0", "multiprocessor_count": "132",
    "num_l2s_per_fbp": "8", "num_schedulers_per_multiprocessor": "4",
    "num_tex_per_multiprocessor": "4", "pageable_memory_access": "0", "pci_bus_id": "27",
    "pci_device_id": "0", "pci_domain_id": "0", "ram_location": "1", "ram_type": "9",
    "reserved_shared_memory_per_block": "1024", "sass_level": "9",
    "single_to_double_precision_perf_ratio": "2", "sparse_cuda_array_supported": "1",
    "stream_priorities_supported": "1", "surface_alignment": "512", "tcc_driver": "0",
    "tensor_map_access_supported": "1", "texture_alignment": "512",
    "texture_pitch_alignment": "32", "total_constant_memory": "65536",
    "total_memory": "84942979072", "unified_addressing": "1",
    "unified_function_pointers": "1", "virtual_address_management_supported": "1",
    "warp_size": "32",
}  # fmt: skip

#: section metrics with their printed unit and (low, high) range of the per-kernel level
SECTION_METRICS: dict[str, tuple[str, float, float]] = {
    "dram__bytes_read.sum": ("byte", 1e4, 4e9),
    "dram__bytes_write.sum": ("byte", 1e3, 2e9),
    "dram__bytes_read.sum.per_second": ("byte/second", 1e9, 3e12),
    "dram__bytes_write.sum.per_second": ("byte/second", 1e8, 2e12),
    "dram__cycles_elapsed.avg.per_second": ("cycle/second", 2.5e9, 2.62e9),
    "dram__sectors_read.sum": ("sector", 1e3, 1e8),
    "dram__sectors_write.sum": ("sector", 1e2, 6e7),
    "gpc__cycles_elapsed.max": ("cycle", 5e3, 5e6),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": ("%", 1, 95),
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": ("%", 0.5, 92),
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio": ("", 1, 32),
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio": ("", 1, 32),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": ("", 0, 1e6),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": ("", 0, 5e5),
    "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second": ("byte/second", 1e9, 5e12),
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": ("request", 1e3, 1e7),
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": ("request", 1e2, 5e6),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": ("sector", 1e3, 1e8),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": ("sector", 1e2, 5e7),
    "lts__t_sectors_srcunit_tex_op_read.sum": ("sector", 1e3, 1e8),
    "lts__t_sectors_srcunit_tex_op_write.sum": ("sector", 1e2, 5e7),
    "sm__cycles_active.avg": ("cycle", 4e3, 4e6),
    "sm__cycles_elapsed.sum": ("cycle", 6e5, 6e8),
    "sm__inst_executed.avg.per_cycle_active": ("inst/cycle", 0.2, 3.8),
    "sm__maximum_warps_per_active_cycle_pct": ("%", 12.5, 100),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": ("%", 1, 95),
    "sm__warps_active.avg.pct_of_peak_sustained_active": ("%", 5, 98),
    "sm__warps_active.avg.per_cycle_active": ("warp", 3, 63),
    "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed": ("%", 10, 99),
    "smsp__cycles_elapsed.avg.per_second": ("cycle/second", 1.7e9, 1.98e9),
    "smsp__inst_executed.sum": ("inst", 1e5, 1e9),
    "smsp__sass_average_branch_targets_threads_uniform.pct": ("%", 60, 100),
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": ("%", 12.5, 100),
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": ("%", 12.5, 100),
    "smsp__thread_inst_executed_per_inst_executed.ratio": ("", 16, 32),
    "smsp__warps_launched.sum": ("warp", 32, 1e6),
}
#: per-pipe utilisation families: sm__inst_executed_pipe_<p>.* and sm__pipe_<p>_cycles_active.*
PIPES = (
    "adu", "alu", "cbu", "fma", "fmaheavy", "fmalite", "fp16", "fp64", "lsu", "shared",
    "tensor", "tensor_op_dmma", "tensor_op_hmma", "tensor_op_imma", "tex", "tma", "uniform", "xu",
)  # fmt: skip
PCT_FORMS = tuple(
    f".{s}.pct_of_peak_sustained_{w}" for s in ("avg", "max", "min", "sum")
    for w in ("active", "elapsed")
)  # fmt: skip
#: launch__* columns that are text or unitless numbers, and their units
LAUNCH_UNITS = {
    "block_dim_x": "block", "block_dim_y": "block", "block_dim_z": "block",
    "occupancy_limit_blocks": "block", "occupancy_limit_registers": "block",
    "occupancy_limit_shared_mem": "block", "occupancy_limit_warps": "block",
    "registers_per_thread": "register/thread", "shared_mem_config_size": "byte",
    "shared_mem_per_block_dynamic": "byte/block", "shared_mem_per_block_static": "byte/block",
    "sm_count": "SM", "thread_count": "thread",
}  # fmt: skip
LAUNCH_TEXT = {
    "cluster_scheduling_policy": "PolicySpread", "execution_model": "SIMT",
    "func_cache_config": "CachePreferNone", "tpc_enabled": "all", "kernel_name": "",
}  # fmt: skip
LAUNCH_NUMBERS = (
    "block_size", "context_id", "device_id", "grid_dim_x", "grid_dim_y", "grid_dim_z",
    "grid_size", "stream_id", "waves_per_multiprocessor", "cluster_dim_x", "cluster_dim_y",
    "cluster_dim_z", "cluster_size", "uses_cdp", "uses_green_context", "stack_size",
)  # fmt: skip

KERNEL_BASES = (
    "void gemm_kernel<float, 128, 128, 8, 4, true, false>(int, int, int, const float *, float *)",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, 0, 0, bfloat16_t>, 0, 1>"
    "(Flash_fwd_params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "std::array<char *, 1>>(int, T2, T3)",
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(T1::Params)",
    "void reduce_rows<256, __half, float>(const T2 *, T3 *, int, int)",
    "layer_norm_forward_kernel",
    "void softmax_warp_forward<float, float, float, 10, false, false>(T2 *, const T1 *, int)",
    "transpose_tiled(float *, const float *, int, int)",
    "void scan_kernel<int, 512>(const T1 *, T1 *, unsigned long)",
    "histogram_shared_atomics(const unsigned char *, unsigned int *, int)",
    "void stencil3d<double, 8, 8, 4>(const T1 *, T1 *, int, int, int)",
    "spmv_csr_vector(int, const int *, const int *, const float *, const float *, float *)",
)  # fmt: skip
BLOCKS = ((128, 1, 1), (256, 1, 1), (32, 8, 1), (16, 16, 1), (64, 4, 1), (512, 1, 1))
STREAMS = (7, 13, 14, 15, 16)


def metric_columns() -> list[tuple[str, str]]:
    """(metric column, printed unit) of every metric column, in the page's alphabetical order."""
    cols: dict[str, str] = {"c2clink__enabled_mask": "", "c2clink__present": ""}
    cols.update({f"device__attribute_{a}": "" for a in DEVICE_ATTRIBUTES})
    cols["gpu__time_duration.sum"] = "ns"
    cols.update({f"launch__{k}": u for k, u in LAUNCH_UNITS.items()})
    cols.update({f"launch__{k}": "" for k in (*LAUNCH_TEXT, *LAUNCH_NUMBERS)})
    cols.update({name: unit for name, (unit, _, _) in SECTION_METRICS.items()})
    for pipe in PIPES:
        for form in PCT_FORMS:
            cols[f"sm__inst_executed_pipe_{pipe}{form}"] = "%"
            cols[f"sm__pipe_{pipe}_cycles_active{form}"] = "%"
    return sorted(cols.items())


def kernel_names(count: int) -> list[str]:
    """``count`` distinct kernel names: the bases, then numbered instantiations of them."""
    names = list(KERNEL_BASES)
    i = 0
    while len(names) < count:
        base = KERNEL_BASES[i % len(KERNEL_BASES)]
        tag = f"_v{i // len(KERNEL_BASES) + 2}"
        cut = base.find("<") if "<" in base else base.find("(")
        names.append(base[:cut] + tag + base[cut:] if cut > 0 else base + tag)
        i += 1
    return names[:count]


def _ints(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(np.rint(values).astype(np.int64)), pa.string())


def _fixed2(values: np.ndarray) -> pa.Array:
    """Numbers printed with two decimals ("55.68", "0.00"), as ncu prints percentages."""
    cents = np.rint(np.abs(values) * 100).astype(np.int64)
    whole = pc.cast(pa.array(cents // 100), pa.string())
    frac = pc.utf8_lpad(pc.cast(pa.array(cents % 100), pa.string()), 2, "0")
    return pc.binary_join_element_wise(whole, frac, ".")


def _dims(shape: np.ndarray) -> pa.Array:
    """``(x, y, z)`` cells from an (n, 3) array of dimensions."""
    parts = [pc.cast(pa.array(shape[:, i]), pa.string()) for i in range(3)]
    joined = pc.binary_join_element_wise(*parts, ", ")
    return pc.binary_join_element_wise("(", joined, ")", "")


def _launch_table(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per-launch kernel index, shape and duration, and per-kernel levels."""
    kernels = 36
    weights = 1.0 / np.arange(1, kernels + 1) ** 1.1
    kernel = rng.choice(kernels, size=n, p=weights / weights.sum())
    block = np.array(BLOCKS)[rng.integers(0, len(BLOCKS), kernels)]
    grid = np.stack(
        [rng.integers(1, 4096, kernels), rng.choice([1, 2, 8, 32], kernels), np.ones(kernels, int)],
        axis=1,
    )
    mean_ns = np.exp(rng.uniform(np.log(3e3), np.log(4e6), kernels))
    duration = mean_ns[kernel] * rng.lognormal(0.0, 0.05, n)
    return {
        "kernel": kernel,
        "block": block[kernel],
        "grid": grid[kernel],
        "regs": rng.choice([16, 24, 32, 40, 56, 64, 96, 128, 255], kernels)[kernel],
        "smem_static": rng.choice([0, 0, 1024, 4096, 16384], kernels)[kernel],
        "smem_dynamic": rng.choice([0, 0, 0, 9216, 49152], kernels)[kernel],
        "stream": rng.choice(STREAMS, kernels)[kernel],
        "duration": duration,
        "level": rng.uniform(0.0, 1.0, (kernels, 2)),
    }


def _metric_cell(
    name: str, unit: str, t: dict[str, np.ndarray], n: int, rng: np.random.Generator
) -> pa.Array:
    """The cells of one metric column."""
    if name.startswith("device__attribute_"):
        return pa.array([DEVICE_ATTRIBUTES[name.removeprefix("device__attribute_")]] * n)
    if name.startswith("c2clink__"):
        return pa.array(["0"] * n)
    if name == "gpu__time_duration.sum":
        return _ints(t["duration"])
    if name.startswith("launch__"):
        return _launch_cell(name.removeprefix("launch__"), t, n)
    noise = rng.normal(1.0, 0.01, n)
    if name in SECTION_METRICS:
        _, low, high = SECTION_METRICS[name]
        level = rng.uniform(0.0, 1.0, int(t["kernel"].max()) + 1)[t["kernel"]]
        values = (low + (high - low) * level) * noise
        if unit == "%":
            return _fixed2(np.clip(values, 0.0, 100.0))
        return _fixed2(values) if "ratio" in name or "/cycle" in unit else _ints(values)
    level = rng.uniform(0.0, 60.0, int(t["kernel"].max()) + 1)[t["kernel"]]
    return _fixed2(np.clip(level * noise, 0.0, 100.0))


def _launch_cell(key: str, t: dict[str, np.ndarray], n: int) -> pa.Array:
    block, grid = t["block"], t["grid"]
    numbers = {
        "block_dim_x": block[:, 0], "block_dim_y": block[:, 1], "block_dim_z": block[:, 2],
        "grid_dim_x": grid[:, 0], "grid_dim_y": grid[:, 1], "grid_dim_z": grid[:, 2],
        "block_size": block.prod(axis=1), "grid_size": grid.prod(axis=1),
        "thread_count": block.prod(axis=1) * grid.prod(axis=1),
        "registers_per_thread": t["regs"], "shared_mem_per_block_static": t["smem_static"],
        "shared_mem_per_block_dynamic": t["smem_dynamic"], "stream_id": t["stream"],
        "context_id": np.ones(n), "sm_count": np.full(n, SM_COUNT),
        "shared_mem_config_size": np.full(n, 233472), "stack_size": np.full(n, 1024),
        "occupancy_limit_blocks": np.full(n, 32),
        "occupancy_limit_registers": 65536 // np.maximum(t["regs"] * block.prod(axis=1), 1),
        "occupancy_limit_warps": 64 // np.maximum(block.prod(axis=1) // 32, 1),
        "occupancy_limit_shared_mem": np.full(n, 32),
    }  # fmt: skip
    if key in numbers:
        return _ints(np.asarray(numbers[key], dtype=float))
    if key in LAUNCH_TEXT:
        return pa.array([LAUNCH_TEXT[key]] * n)
    if key == "waves_per_multiprocessor":
        return _fixed2(grid.prod(axis=1) / (SM_COUNT * 8.0))
    return pa.array(["0"] * n)  # device id, cluster dims, cdp, green context: all 0 here


def write_ncu_raw(path: Path, n: int, seed: int = 0) -> None:
    """Write an ncu ``--csv --page raw`` export of ``n`` launches to ``path`` (see the module)."""
    rng = np.random.default_rng(seed)
    t = _launch_table(n, rng)
    names = np.array(kernel_names(36), dtype=object)
    metrics = metric_columns()
    columns: dict[str, pa.Array] = {
        "ID": _ints(np.arange(n)),
        "Process ID": pa.array([str(PROCESS_ID)] * n),
        "Process Name": pa.array(["python3.12"] * n),
        "Host Name": pa.array(["127.0.0.1"] * n),
        "Kernel Name": pa.array(names[t["kernel"]], type=pa.string()),
        "Context": pa.array(["1"] * n),
        "Stream": _ints(t["stream"]),
        "Block Size": _dims(t["block"]),
        "Grid Size": _dims(t["grid"]),
        "Device": pa.array(["0"] * n),
        "CC": pa.array(["9.0"] * n),
    }
    for name, unit in metrics:
        columns[name] = _metric_cell(name, unit, t, n, rng)
    header = ",".join(f'"{c}"' for c in columns)
    units = ",".join(['""'] * len(ID_COLUMNS) + [f'"{u}"' for _, u in metrics])
    preamble = (
        f"==PROF== Connected to process {PROCESS_ID} (/usr/bin/python3.12)\n"
        f"==PROF== Disconnected from process {PROCESS_ID}\n"
    )
    options = pacsv.WriteOptions(include_header=False, quoting_style="all_valid")
    with open(path, "wb") as handle:
        handle.write((preamble + header + "\n" + units + "\n").encode("utf-8"))
        pacsv.write_csv(pa.table(columns), handle, write_options=options)


#: the details page the ``ncu-details-csv`` input repeats: the committed synthetic sample
DETAILS_TEMPLATE = Path(__file__).resolve().parents[1] / "sample_profiles/synthetic_ncu_details.csv"


def write_ncu_details(path: Path, n: int, seed: int = 0) -> None:
    """An ncu ``--csv --page details`` export of about ``n`` rows: the launches of
    :data:`DETAILS_TEMPLATE` (one block of section/metric rows and rule rows per launch, each
    row with the launch's ID first) drawn at random, renumbered, until ``n`` rows are written.
    The values repeat the template's; the cost of reading a details page is per row."""
    lines = DETAILS_TEMPLATE.read_text(encoding="utf-8").splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    blocks: dict[str, list[str]] = {}
    for line in lines[head + 1 :]:
        launch, rest = line.split(",", 1)
        blocks.setdefault(launch, []).append(rest.replace("{", "{{").replace("}", "}}"))
    templates = ["".join(f'"{{0}}",{rest}\n' for rest in rows) for rows in blocks.values()]
    sizes = [len(rows) for rows in blocks.values()]
    rng = np.random.default_rng(seed)
    preamble = "".join(f"{line}\n" for line in lines[: head + 1] if not line.startswith("#"))
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(preamble)
        written, launch = 0, 0
        while written < n:
            chunk = rng.integers(0, len(templates), 4096)
            text = []
            for k in chunk:
                if written >= n:
                    break
                text.append(templates[k].format(launch))
                written += sizes[k]
                launch += 1
            out.write("".join(text))


GENERATORS: dict[str, tuple[Callable[[Path, int, int], None], int, bool]] = {
    "ncu-raw-csv": (write_ncu_raw, 10_000, True),
    "ncu-details-csv": (write_ncu_details, 1_000_000, True),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=GENERATORS["ncu-raw-csv"][1])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    write_ncu_raw(args.out, args.n, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
