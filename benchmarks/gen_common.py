"""Shared parts of the large-input generators: a seeded GPU timeline and vectorised CSV writing.

The timeline (:func:`timeline`) is what a long training-like run leaves: a few dozen distinct
kernels (short C names, long templated C++ names with commas, cuBLAS/cutlass/thrust-style names)
drawn with skewed frequencies, memcpy HtoD/DtoH/DtoD and memset rows interleaved (about one row
in ten), several streams, log-normal durations per kernel and exponential gaps, sorted by start.
Every column is a numpy array; the CSV writers format whole columns with pyarrow compute
functions and join them into lines, so a million rows are written in a few seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: kernel names of the mix: plain C names, templated C++ names (commas, angle brackets, nested
#: templates), library names as the profilers print them
KERNEL_NAMES: tuple[str, ...] = (
    "vectorAdd(float const*, float const*, float*, int)",
    "matMul(float*, float*, float*, int)",
    "reduce6(float*, float*, unsigned int)",
    "transposeNaive(float*, const float*, int, int)",
    "transposeCoalesced(float*, const float*, int, int)",
    "calculate_temp(int, float*, float*, float*, int, int, int, int, float, float, float, float, "
    "float)",
    "lud_diagonal(float*, int, int)",
    "lud_perimeter(float*, int, int)",
    "lud_internal(float*, int, int)",
    "cuda_compute_flux(int, int*, float*, float*, float*)",
    "cuda_time_step(int, int, float*, float*, float*, float*)",
    "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
    "cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
    "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
    "float>>(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
    "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
    "float>, float, float)",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>"
    "(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
    "ampere_sgemm_128x64_nn",
    "ampere_sgemm_64x32_sliced1x4_tn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>>(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, "
    "false, false>(float*, float const*, int, int, int, bool const*, int, bool)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>>"
    "(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
    "unsigned int, float, 4>)",
    "void thrust::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__parallel_for::ParallelForAgent"
    "<thrust::cuda_cub::__uninitialized_fill::functor<thrust::device_ptr<int>, int>, "
    "unsigned long>, thrust::cuda_cub::__uninitialized_fill::functor<thrust::device_ptr<int>, "
    "int>, unsigned long>(thrust::cuda_cub::__uninitialized_fill::functor<"
    "thrust::device_ptr<int>, int>, unsigned long)",
    "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<unsigned int, "
    "cub::NullType, unsigned int>::Policy800, false, unsigned int, cub::NullType, unsigned int, "
    "int, int>(int*, int*, unsigned int*, unsigned int const*, unsigned int*, "
    "cub::NullType const*, cub::NullType*, unsigned int, int, int)",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
    "cutlass::half_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t>>, false, true, "
    "false, false, true, false, false>(Flash_fwd_params)",
    "void layer_norm_kernel<float, float>(int, float, float const*, float const*, "
    "float const*, float*, float*, float*)",
    "void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>"
    "(cublasSplitKParams<float>, float const*, float const*, float*, float const*, "
    "float const*, float const*, float const*, float*, void*, long, float*, int*)",
    "nchwToNhwcKernel",
    "void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>"
    "(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long, "
    "int, float, float, int, float const*, float const*, bool, int, int)",
    "void gen_sequenced<curandStateXORWOW, float, int, &(float curand_uniform_noargs"
    "<curandStateXORWOW>(curandStateXORWOW*, int)), rng_config<curandStateXORWOW, "
    "(curandOrdering)101>>(curandStateXORWOW*, float*, unsigned long, unsigned long, int)",
    "histogram256Kernel(unsigned int*, unsigned int*, unsigned int)",
    "scan_naive(float*, float*, int)",
    "bfs_kernel(Node*, int*, bool*, bool*, bool*, int*, int)",
    "srad_cuda_1(float*, float*, float*, float*, float*, float*, int, int, float)",
    "srad_cuda_2(float*, float*, float*, float*, float*, float*, int, int, float, float)",
    "kmeansPoint(float*, int, int, int, int*, float*, float*, int*)",
    "needle_cuda_shared_1(int*, int*, int, int, int, int)",
    "[lambda(int) (instance 3)]",
    "_GLOBAL__N__c5035a89_12_kernels_cu_0f2b7c41::scale_kernel(float*, float, int)",
    "stencil2d_kernel<float>(float*, float*, int, int, float, float, float)",
)
#: (transfer name suffix, nvprof SrcMemType, nvprof DstMemType) of the memcpy/memset mix
TRANSFERS: tuple[tuple[str, str, str], ...] = (
    ("HtoD", "Pageable", "Device"),
    ("DtoH", "Device", "Pageable"),
    ("DtoD", "Device", "Device"),
    ("memset", "Device", ""),
)
TRANSFER_WEIGHTS = np.array([0.45, 0.35, 0.1, 0.1])
TRANSFER_SHARE = 0.1
STREAMS = np.array([7, 13, 14, 15, 16, 21])
CHUNK_ROWS = 250_000


@dataclass(frozen=True)
class Timeline:
    """n GPU activities in start order; ``kernel`` is an index into :data:`KERNEL_NAMES`, -1 for
    a transfer, whose kind is ``transfer`` (index into :data:`TRANSFERS`, -1 for a kernel)."""

    start_ns: np.ndarray  # int64, from 0
    duration_ns: np.ndarray  # int64, > 0
    kernel: np.ndarray  # int64
    transfer: np.ndarray  # int64
    stream: np.ndarray  # int64
    correlation_id: np.ndarray  # int64
    grid: np.ndarray  # int64 (n, 3)
    block: np.ndarray  # int64 (n, 3)
    registers: np.ndarray  # int64
    static_smem_bytes: np.ndarray  # int64
    dynamic_smem_bytes: np.ndarray  # int64
    bytes: np.ndarray  # int64, 0 for kernels

    @property
    def is_kernel(self) -> np.ndarray:
        return self.kernel >= 0

    def __len__(self) -> int:
        return len(self.start_ns)


def timeline(n: int, seed: int) -> Timeline:
    """A seeded timeline of ``n`` activities (see the module docstring)."""
    rng = np.random.default_rng(seed)
    k = len(KERNEL_NAMES)
    weights = 1.0 / np.arange(1, k + 1) ** 1.1  # a few hot kernels, a long tail
    weights /= weights.sum()
    per_kernel_ns = np.exp(rng.uniform(np.log(2_000), np.log(2_000_000), k))
    per_kernel_grid = rng.choice([1, 32, 128, 256, 506, 1024, 4096, 65536], size=k)
    per_kernel_block = rng.choice([64, 128, 192, 256, 512, 1024], size=k)
    per_kernel_regs = rng.integers(16, 128, size=k)
    per_kernel_smem = rng.choice([0, 0, 1024, 4096, 16384, 49152], size=k)
    is_transfer = rng.random(n) < TRANSFER_SHARE
    kernel = np.where(is_transfer, -1, rng.choice(k, size=n, p=weights))
    transfer = np.where(is_transfer, rng.choice(len(TRANSFERS), size=n, p=TRANSFER_WEIGHTS), -1)
    copy_bytes = (2 ** rng.integers(10, 27, size=n)).astype(np.int64)
    nbytes = np.where(is_transfer, copy_bytes, 0)
    base = np.where(is_transfer, 1_000 + copy_bytes / 12.0, per_kernel_ns[np.maximum(kernel, 0)])
    duration = np.maximum(1, base * rng.lognormal(0.0, 0.25, size=n)).astype(np.int64)
    gaps = rng.exponential(3_000.0, size=n).astype(np.int64)
    start = np.cumsum(gaps + duration // 3)  # several streams overlap
    kidx = np.maximum(kernel, 0)
    ones = np.ones(n, dtype=np.int64)
    grid = np.stack([per_kernel_grid[kidx], ones, ones], axis=1)
    block = np.stack([per_kernel_block[kidx], ones, ones], axis=1)
    return Timeline(
        start_ns=start.astype(np.int64),
        duration_ns=duration,
        kernel=kernel.astype(np.int64),
        transfer=transfer.astype(np.int64),
        stream=STREAMS[rng.integers(0, len(STREAMS), size=n)],
        correlation_id=np.arange(n, dtype=np.int64) * 3 + 105,
        grid=grid,
        block=block,
        registers=per_kernel_regs[kidx],
        static_smem_bytes=per_kernel_smem[kidx],
        dynamic_smem_bytes=np.where(rng.random(n) < 0.2, 256, 0).astype(np.int64),
        bytes=nbytes.astype(np.int64),
    )


def fixed(values: np.ndarray, decimals: int, valid: np.ndarray | None = None) -> pa.Array:
    """Numbers printed with ``decimals`` fixed decimals (``%.6f`` as nvprof and nsys print
    them), null where ``valid`` is False; built with integer arithmetic, no per-row Python."""
    scale = 10**decimals
    scaled = np.rint(np.asarray(values, dtype=np.float64) * scale).astype(np.int64)
    whole = pc.cast(pa.array(scaled // scale), pa.string())
    frac = pc.utf8_lpad(pc.cast(pa.array(scaled % scale), pa.string()), width=decimals, padding="0")
    text = pc.binary_join_element_wise(whole, frac, ".")
    return _masked(text, valid)


def integers(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """Whole numbers as text, null where ``valid`` is False."""
    return _masked(pc.cast(pa.array(np.asarray(values, dtype=np.int64)), pa.string()), valid)


def texts(table: Sequence[str], index: np.ndarray, quote: str = "") -> pa.Array:
    """``table[index]`` as text (null where index < 0), each wrapped in ``quote``."""
    words = pa.array([f"{quote}{t}{quote}" for t in table], type=pa.string())
    idx = pa.array(np.asarray(index, dtype=np.int64), mask=np.asarray(index) < 0)
    return pc.take(words, idx)


def quoted(text: pa.Array) -> pa.Array:
    """Every non-null cell in double quotes."""
    return pc.binary_join_element_wise('"', text, '"', "")


def masked(text: pa.Array, valid: np.ndarray | None) -> pa.Array:
    """``text``, null where ``valid`` is False."""
    return _masked(text, valid)


def _masked(text: pa.Array, valid: np.ndarray | None) -> pa.Array:
    if valid is None:
        return text
    nulls = pa.nulls(len(text), pa.string())
    return pc.if_else(pa.array(np.asarray(valid, dtype=bool)), text, nulls)


def join_lines(columns: Sequence[pa.Array], separator: str = ",") -> bytes:
    """The CSV lines of ``columns`` (already formatted and quoted text; null -> empty field),
    or with another ``separator`` between the cells."""
    lines = pc.binary_join_element_wise(
        *columns, separator, null_handling="replace", null_replacement=""
    )
    ended = pc.binary_join_element_wise(lines, "", "\n")  # line + "\n" + ""
    if not len(ended):
        return b""
    offsets = np.frombuffer(ended.buffers()[1], dtype=np.int32)
    first, last = offsets[ended.offset], offsets[ended.offset + len(ended)]
    return memoryview(ended.buffers()[2])[first:last].tobytes()


def write_chunked(path: Path, head: str, n: int, rows: object) -> None:
    """Write ``head`` then the lines ``rows(lo, hi)`` returns for each chunk of rows."""
    with open(path, "wb") as out:
        out.write(head.encode())
        for lo in range(0, n, CHUNK_ROWS):
            out.write(rows(lo, min(n, lo + CHUNK_ROWS)))  # type: ignore[operator]
