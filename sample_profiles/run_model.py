"""The one fictional application run every synthetic sample profile describes.

``./transpose 4096`` transposes a 4096 x 4096 float matrix (67,108,864 bytes) with the three
kernels of the classic shared-memory transpose study, each launched three times on a grid of
(128, 128, 1) blocks of (32, 8, 1) threads (32 x 32 tiles, 8 rows per thread block pass):

* ``transposeNaive`` reads the input down the columns (a warp touches 32 rows: one 32-byte sector
  per 4-byte element, so the global load efficiency is 4/32 = 12.5 %) and writes rows;
* ``transposeCoalesced`` stages a 32 x 32 tile (4096 bytes) in shared memory, so global loads and
  stores are coalesced, but reading a tile column hits one bank 32 times (32 shared wavefronts per
  load request);
* ``transposeNoBankConflicts`` pads the tile to 32 x 33 floats (4224 bytes), removing the conflicts.

The same run is described on a "Tesla V100-SXM2-16GB" (cc 7.0, 80 SMs) for the nvprof samples and
on an "NVIDIA A100-SXM4-40GB" (cc 8.0, 108 SMs) for the Nsight Compute / Nsight Systems samples.
Every number is made up but consistent: durations, copy sizes and throughputs (bytes / time),
cycles (time x clock), occupancy limits (registers, shared memory, warps) and efficiencies
(requested / transferred bytes).  Nothing here is measured.
"""

from __future__ import annotations

from dataclasses import dataclass

MATRIX_N = 4096
MATRIX_BYTES = MATRIX_N * MATRIX_N * 4  # 67,108,864
GRID = (128, 128, 1)
BLOCK = (32, 8, 1)
THREADS_PER_BLOCK = BLOCK[0] * BLOCK[1] * BLOCK[2]  # 256
BLOCKS = GRID[0] * GRID[1] * GRID[2]  # 16,384
#: warp-level global load (= store) requests per launch: 8 warps x 4 row passes per block
GLOBAL_REQUESTS = BLOCKS * (THREADS_PER_BLOCK // 32) * 4  # 524,288
COMMAND = "./transpose 4096"
PROCESS = "transpose"
HOST = "127.0.0.1"


@dataclass(frozen=True)
class Gpu:
    name: str
    cc: str
    sms: int
    sm_clock_ghz: float
    dram_clock_ghz: float
    peak_dram_gbs: float  # decimal GB/s


V100 = Gpu("Tesla V100-SXM2-16GB", "7.0", 80, 1.53, 0.877, 900.0)
A100 = Gpu("NVIDIA A100-SXM4-40GB", "8.0", 108, 1.41, 1.215, 1555.0)


@dataclass(frozen=True)
class Kernel:
    """One kernel of the run, with what the profilers would say about it."""

    name: str
    short: str
    registers: int
    static_smem: int  # bytes per block
    v100_ns: tuple[int, int, int]  # the three launches on the V100
    a100_ns: tuple[int, int, int]  # the three launches on the A100
    gld_efficiency_pct: float
    gst_efficiency_pct: float
    shared_efficiency_pct: float
    shared_ld_per_request: float  # shared wavefronts (transactions) per load request
    dram_read_bytes: int  # per launch (a little over-fetch for the strided reads)
    dram_write_bytes: int
    achieved_occupancy: tuple[float, float, float]  # nvprof ratio, per V100 launch
    stall_sync_pct: float
    sm_efficiency_pct: float
    dram_level: str  # nvprof dram_utilization
    a100_warps_active_pct: float
    a100_stall_barrier_pct: float
    a100_sm_throughput_pct: float
    a100_l2_hit_pct: float


KERNELS = (
    Kernel(
        name="transposeNaive(float*, const float*, int, int)",
        short="transposeNaive",
        registers=16,
        static_smem=0,
        v100_ns=(415_232, 412_480, 412_896),
        a100_ns=(286_912, 285_344, 285_696),
        gld_efficiency_pct=12.5,
        gst_efficiency_pct=100.0,
        shared_efficiency_pct=0.0,
        shared_ld_per_request=0.0,
        dram_read_bytes=68_716_032,
        dram_write_bytes=67_141_632,
        achieved_occupancy=(0.869731, 0.873102, 0.870902),
        stall_sync_pct=0.0,
        sm_efficiency_pct=99.12,
        dram_level="Mid (4)",
        a100_warps_active_pct=86.42,
        a100_stall_barrier_pct=0.0,
        a100_sm_throughput_pct=24.17,
        a100_l2_hit_pct=50.31,
    ),
    Kernel(
        name="transposeCoalesced(float*, const float*, int, int)",
        short="transposeCoalesced",
        registers=20,
        static_smem=4096,
        v100_ns=(238_112, 236_800, 236_544),
        a100_ns=(132_800, 131_872, 131_968),
        gld_efficiency_pct=100.0,
        gst_efficiency_pct=100.0,
        shared_efficiency_pct=6.06,  # (128 + 128) / (128 + 32 x 128) requested / moved bytes
        shared_ld_per_request=32.0,
        dram_read_bytes=67_174_400,
        dram_write_bytes=67_141_632,
        achieved_occupancy=(0.912488, 0.910276, 0.913354),
        stall_sync_pct=14.63,
        sm_efficiency_pct=99.31,
        dram_level="Mid (6)",
        a100_warps_active_pct=90.13,
        a100_stall_barrier_pct=18.92,
        a100_sm_throughput_pct=41.86,
        a100_l2_hit_pct=49.87,
    ),
    Kernel(
        name="transposeNoBankConflicts(float*, const float*, int, int)",
        short="transposeNoBankConflicts",
        registers=20,
        static_smem=4224,
        v100_ns=(183_104, 181_536, 181_760),
        a100_ns=(100_224, 99_168, 99_328),
        gld_efficiency_pct=100.0,
        gst_efficiency_pct=100.0,
        shared_efficiency_pct=100.0,
        shared_ld_per_request=1.0,
        dram_read_bytes=67_174_400,
        dram_write_bytes=67_141_632,
        achieved_occupancy=(0.921745, 0.920113, 0.922508),
        stall_sync_pct=21.37,
        sm_efficiency_pct=99.40,
        dram_level="High (8)",
        a100_warps_active_pct=91.02,
        a100_stall_barrier_pct=25.41,
        a100_sm_throughput_pct=33.58,
        a100_l2_hit_pct=49.95,
    ),
)


def shared_ld_bank_conflicts(kernel: Kernel) -> int:
    """Extra shared wavefronts of the load requests of one launch (a 32-way conflict adds 31).

    Shared load requests equal the global load requests (one tile read per row pass)."""
    if kernel.static_smem == 0:
        return 0
    return int(GLOBAL_REQUESTS * (kernel.shared_ld_per_request - 1))


def global_ld_sectors(kernel: Kernel) -> int:
    """32-byte sectors of the global load requests of one launch: 4 per coalesced warp request
    (128 bytes), 32 when every thread of the warp reads another row."""
    per_request = 4 if kernel.gld_efficiency_pct == 100.0 else 32
    return GLOBAL_REQUESTS * per_request


@dataclass(frozen=True)
class Activity:
    """One API call, with the GPU activity it started (if any)."""

    api: str
    start_ns: int
    duration_ns: int
    correlation_id: int
    gpu_kind: str | None = None  # "kernel", "HtoD", "DtoH"
    kernel: Kernel | None = None
    gpu_start_ns: int = 0
    gpu_duration_ns: int = 0


# host-side latencies of the fictional run (ns); fixed so the output is deterministic
_MALLOC_NS = (309_871_446, 412_338)
_LAUNCH_NS = ((26_781, 6_142, 5_873), (7_904, 5_611, 5_527), (7_312, 5_498, 5_604))
_FREE_NS = (182_611, 96_245)


def timeline(gpu: Gpu, t0_ns: int, first_corr: int) -> list[Activity]:
    """The run's API calls in host order, each with the GPU activity it started.

    ``cudaMalloc`` x2, ``cudaMemcpy`` HtoD, then per kernel three ``cudaLaunchKernel``, one
    ``cudaDeviceSynchronize`` and a ``cudaMemcpy`` DtoH of the result, then ``cudaFree`` x2.
    Kernels queue back to back on stream 7; each copy blocks the host.
    """
    on_v100 = gpu is V100
    htod_ns = 5_734_688 if on_v100 else 5_180_032
    dtoh_ns = (5_912_416, 5_897_312, 5_904_064) if on_v100 else (5_402_144, 5_397_760, 5_401_216)
    out: list[Activity] = []
    t = t0_ns
    corr = first_corr

    def add(activity: Activity, gap_ns: int) -> None:
        nonlocal t, corr
        out.append(activity)
        t = activity.start_ns + activity.duration_ns + gap_ns
        corr += 1

    for i, dur in enumerate(_MALLOC_NS):
        add(Activity("cudaMalloc", t, dur, corr), 3_117 + 1_000 * i)
    add(_copy(t, corr, "HtoD", htod_ns), 2_406)
    for k, kernel in enumerate(KERNELS):
        durations = kernel.v100_ns if on_v100 else kernel.a100_ns
        gpu_free = t + 9_904 - 1_536  # the first launch starts 9.9 us after its API call
        for j, dur in enumerate(durations):
            api = _LAUNCH_NS[k][j]
            gpu_start = max(t + 9_904, gpu_free + 1_536)
            add(Activity("cudaLaunchKernel", t, api, corr, "kernel", kernel, gpu_start, dur), 1_213)
            gpu_free = gpu_start + dur
        add(Activity("cudaDeviceSynchronize", t, gpu_free + 4_128 - t, corr), 1_690)
        add(_copy(t, corr, "DtoH", dtoh_ns[k]), 2_051)
    for dur in _FREE_NS:
        add(Activity("cudaFree", t, dur, corr), 4_480)
    return out


def _copy(t: int, corr: int, kind: str, gpu_ns: int) -> Activity:
    lead = 18_512 if kind == "HtoD" else 14_336
    return Activity("cudaMemcpy", t, lead + gpu_ns + 5_216, corr, kind, None, t + lead, gpu_ns)


def gpu_activities(activities: list[Activity]) -> list[Activity]:
    """The activities that ran on the GPU, in GPU start order."""
    gpu = [a for a in activities if a.gpu_kind is not None]
    return sorted(gpu, key=lambda a: a.gpu_start_ns)
