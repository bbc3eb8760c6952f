"""The declared schemas of the JSON side inputs, checked by :func:`advisor.jsonfile.load`.

One :mod:`msgspec` type per kind of file, written from the code that consumes it and the
format's documentation:

========================  ============================================  ========================
file                      option                                        schema
========================  ============================================  ========================
BSP application           ``report --app``, ``predict bsp --app``       :data:`APP`
MAX/SUM kernels           ``report --kernels``, ``maxsum --kernel``     :func:`kernels_schema`
device characterization   ``--device FILE``, ``devices FILE``           :data:`DEVICE`
saved analysis            a ``compare`` VERSION (``report --json``)     :data:`ANALYSIS`
raw microbench samples    ``microbench fit RAW``                        :data:`RAW`
========================  ============================================  ========================

A schema states every key's type and range (numbers are finite: the decoder refuses NaN,
Infinity and out-of-range literals).  Where the reader itself refuses unknown keys with the list
of allowed ones (descriptions, characterizations), the schema leaves unknown keys to it; what no
type can say (one of two keys required, expressions of N, interpolation samples increasing)
stays the reader's check too.  A saved analysis holds far more than ``compare`` reads; its
schema covers what is read, with the ranges the report documents: criteria in [0, 1], times
>= 0, potential speedups >= 1 in the Amdahl form and >= 0 where the paper's form can be
reported (seed 002's level form (1 / criterion) · p falls to 0 with p).
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType, field

NonNegative = Annotated[float, Meta(ge=0)]
Positive = Annotated[float, Meta(gt=0)]
Fraction = Annotated[float, Meta(ge=0, le=1)]
AtLeastOne = Annotated[float, Meta(ge=1)]
Nonempty = Annotated[str, Meta(min_length=1)]
Strings = list[str]
#: a number, or an expression of N as text (BSP application files)
NumberOrExpression = float | str
#: "1.3", 1.3 or [1, 3]
ComputeCapability = str | float | Annotated[list[int], Meta(min_length=2, max_length=2)]


# --- BSP application description (advisor/models/bsp/app.py) -------------------------------


class AppLatencies(Struct):
    g_sm: NonNegative | UnsetType = UNSET
    g_gm: NonNegative | UnsetType = UNSET
    g_l1: NonNegative | UnsetType = UNSET
    g_l2: NonNegative | UnsetType = UNSET


class AppFile(Struct):
    threads: NumberOrExpression
    comp: NumberOrExpression
    ld1: NumberOrExpression
    st1: NumberOrExpression
    ld0: NumberOrExpression | UnsetType = UNSET
    st0: NumberOrExpression | UnsetType = UNSET
    l1_hit_rate: NumberOrExpression | UnsetType = UNSET
    l2_hit_rate: NumberOrExpression | UnsetType = UNSET
    name: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    source: str | UnsetType = UNSET
    version: int | UnsetType = UNSET
    latency_cycles: AppLatencies | UnsetType = UNSET


APP = AppFile


# --- MAX/SUM kernel description (advisor/models/maxsum/description.py, terms.py) ------------


class Access(Struct):
    """One ``global`` or ``shared`` entry (the reader checks which keys each list allows)."""

    count: NonNegative
    coalesced: bool | UnsetType = UNSET
    threads_per_transaction: Positive | UnsetType = UNSET
    conflict_degree: Positive | UnsetType = UNSET
    stride: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    offset: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    word_bytes: Annotated[int, Meta(ge=1, le=16)] | UnsetType = UNSET
    index: str | UnsetType = UNSET
    constants: dict[str, int] | UnsetType = UNSET
    active: str | UnsetType = UNSET
    description: str | UnsetType = UNSET


class ThreadClass(Struct):
    name: str | UnsetType = UNSET
    ops: dict[str, NonNegative] | UnsetType = UNSET
    compute_cycles: NonNegative | UnsetType = UNSET
    memory_cycles: NonNegative | UnsetType = UNSET
    global_: list[Access] | UnsetType = field(default=UNSET, name="global")
    shared: list[Access] | UnsetType = UNSET
    description: str | UnsetType = UNSET
    source: str | UnsetType = UNSET


class Kernel(ThreadClass):
    blocks: NonNegative | UnsetType = UNSET
    blocks_per_sm: NonNegative | UnsetType = UNSET
    threads_per_block: NonNegative | UnsetType = UNSET
    warps_per_block: NonNegative | UnsetType = UNSET
    threads_per_warp: Positive | UnsetType = UNSET
    launches: Positive | UnsetType = UNSET
    measured_ms: Positive | UnsetType | None = UNSET
    profile_name: str | UnsetType = UNSET
    threads: Annotated[list[ThreadClass], Meta(min_length=1)] | UnsetType = UNSET


class Gpu(Struct):
    name: str | UnsetType = UNSET
    arch: str | UnsetType = UNSET
    compute_capability: ComputeCapability | UnsetType | None = UNSET
    clock_hz: Positive | UnsetType = UNSET
    sm_count: Positive | UnsetType | None = UNSET
    cores_per_sm: Positive | UnsetType = UNSET
    pipeline_depth: Positive | UnsetType = UNSET
    op_cycles: dict[str, NonNegative] | UnsetType = UNSET
    global_cycles: NonNegative | UnsetType = UNSET
    shared_cycles: NonNegative | UnsetType = UNSET
    shared_banks: Positive | UnsetType | None = UNSET
    source: str | UnsetType = UNSET


class KernelFile(Struct):
    """A description with a ``kernels`` list."""

    kernels: Annotated[list[Kernel], Meta(min_length=1)]
    gpu: Gpu | UnsetType = UNSET
    version: int | UnsetType = UNSET
    description: str | UnsetType = UNSET
    source: str | UnsetType = UNSET


class SingleKernelFile(Kernel):
    """A description of one kernel at top level (no ``kernels`` list)."""

    gpu: Gpu | UnsetType = UNSET
    version: int | UnsetType = UNSET


def kernels_schema(document: Any) -> type[KernelFile] | type[SingleKernelFile]:
    """The schema of a kernel description: with or without its ``kernels`` list."""
    if isinstance(document, dict) and "kernels" not in document:
        return SingleKernelFile
    return KernelFile


# --- device characterization (advisor/devices/characterization.py) --------------------------


class Device(Struct):
    name: Nonempty
    aliases: Strings | UnsetType = UNSET
    chip: Nonempty | UnsetType = UNSET
    architecture: Nonempty | UnsetType = UNSET
    compute_capability: Nonempty | UnsetType = UNSET
    sm_count: Positive | UnsetType = UNSET
    fp32_cores_per_sm: Positive | UnsetType = UNSET
    base_clock_hz: Positive | UnsetType | None = UNSET
    boost_clock_hz: Positive | UnsetType = UNSET
    memory_bandwidth_bytes_per_s: Positive | UnsetType = UNSET
    l2_bytes: Positive | UnsetType | None = UNSET
    max_warps_per_sm: Positive | UnsetType = UNSET
    shared_banks: Positive | UnsetType = UNSET
    fp64_flops_per_clock_per_sm: Positive | UnsetType | None = UNSET
    sources: Strings | UnsetType = UNSET
    notes: Strings | UnsetType = UNSET
    max_threads_per_sm: Positive | UnsetType | None = UNSET
    max_blocks_per_sm: Positive | UnsetType | None = UNSET
    registers_per_sm: Positive | UnsetType | None = UNSET
    shared_bytes_per_sm: Positive | UnsetType | None = UNSET


class Samples(Struct):
    x: list[float]
    y: list[Positive]


class Latencies(Struct):
    shared: Positive | UnsetType = UNSET
    l1: Positive | UnsetType = UNSET
    l2: Positive | UnsetType = UNSET
    dram: Positive | UnsetType = UNSET


class Functions(Struct):
    F_Divergence: Samples | UnsetType = UNSET
    F_DRAMThr: Samples | UnsetType = UNSET
    F_ARITHThr: Samples | UnsetType = UNSET
    F_SHMEM: Samples | UnsetType = UNSET


class Characterization(Struct):
    schema: str
    version: int
    device: Device
    measured: bool
    latencies_cycles: Latencies | UnsetType = UNSET
    functions: Functions | UnsetType = UNSET
    notes: Strings | UnsetType = UNSET


DEVICE = Characterization


# --- saved analysis, what compare reads (advisor/report/compare.py) -------------------------


class Criterion(Struct):
    value: Fraction | None
    potential_speedup: NonNegative | None
    potential_speedup_paper: NonNegative | UnsetType | None = UNSET
    potential_speedup_amdahl: AtLeastOne | UnsetType | None = UNSET


class AnalysisKernel(Struct):
    name: str
    duration_ns: NonNegative | None
    criteria: dict[str, Criterion]
    launches: Annotated[int, Meta(ge=0)] | UnsetType | None = UNSET
    potential_speedup: AtLeastOne | UnsetType | None = UNSET


class Application(Struct):
    gpu_time_ns: NonNegative | None
    potential_speedup: NonNegative | None


class Analysis(Struct):
    schema: str
    application: Application
    kernels: list[AnalysisKernel]


ANALYSIS = Analysis


# --- raw microbenchmark samples (advisor/microbench/raw.py) ---------------------------------


class RawDocument(Struct):
    schema: str
    version: int
    device: dict[str, Any]
    samples: list[dict[str, Any]]
    command: Strings | UnsetType = UNSET


RAW = RawDocument
