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
Infinity and out-of-range literals); every number also has a plausibility range from
:mod:`advisor.plausible` (a time below a day, a size below a petabyte, a clock up to 10 GHz...),
so a finite but absurd value (a kernel time of 1e308 ns) is refused as
``value outside [lo, hi]``.  Where the reader itself refuses unknown keys with the list of allowed
ones (descriptions, characterizations), the schema leaves unknown keys to it; what no
type can say (one of two keys required, expressions of N, interpolation samples increasing)
stays the reader's check too.  A saved analysis holds far more than ``compare`` reads; its
schema covers what is read, with the ranges the report documents: criteria in [0, 1], times
in [0, a day], potential speedups in [1, 1e9] in the Amdahl form and [0, 1e9] where the paper's
form can be reported (seed 002's level form (1 / criterion) · p falls to 0 with p).
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType, field

from advisor import plausible
from advisor.plausible import Range


def meta(bounds: Range, whole: bool = False) -> Meta:
    """The :mod:`msgspec` constraint of a plausibility range (its bounds are read back from the
    constraint when a value breaks it: :func:`advisor.jsonfile.validate`); ``whole``: for an
    ``int`` key (msgspec wants integer bounds there)."""
    lo: float = int(bounds.lo) if whole else bounds.lo
    hi: float = int(bounds.hi) if whole else bounds.hi
    if bounds.lo_open:
        return Meta(gt=lo, le=hi)
    return Meta(ge=lo, le=hi)


#: a duration in ns (a day at most)
TimeNs = Annotated[float, meta(plausible.TIME_NS)]
#: a count of operations, accesses, blocks, threads, launches or cycles
Count = Annotated[float, meta(plausible.COUNT)]
#: cycles of one operation or access
CyclesPerOp = Annotated[float, meta(plausible.CYCLES_PER_OP)]
#: a positive latency in cycles
Latency = Annotated[float, meta(plausible.LATENCY)]
#: SMs, cores, warps, banks, threads or blocks per SM, pipeline depth
Units = Annotated[float, meta(plausible.UNITS)]
Bytes = Annotated[float, meta(plausible.BYTES)]
PositiveBytes = Annotated[float, Meta(gt=0, le=plausible.BYTES.hi)]
ClockHz = Annotated[float, meta(plausible.CLOCK_HZ)]
Bandwidth = Annotated[float, meta(plausible.BANDWIDTH)]
Fraction = Annotated[float, meta(plausible.FRACTION)]
Speedup = Annotated[float, meta(plausible.SPEEDUP)]
AtLeastOne = Annotated[float, meta(plausible.AMDAHL_SPEEDUP)]
TimeMs = Annotated[float, meta(plausible.TIME_MS)]
#: "1.3", 1.3 or [1, 3] (a major and a minor version of at most two digits each)
ComputeCapability = (
    str
    | Annotated[float, Meta(ge=0, le=99.99)]
    | Annotated[list[Annotated[int, Meta(ge=0, le=99)]], Meta(min_length=2, max_length=2)]
)
#: a characterization function's sample (x: the function's argument, y > 0: its value)
SampleX = Annotated[float, Meta(ge=-plausible.COUNT.hi, le=plausible.COUNT.hi)]
SampleY = Annotated[float, Meta(gt=0, le=plausible.COUNT.hi)]
Nonempty = Annotated[str, Meta(min_length=1)]
Strings = list[str]
#: a number, or an expression of N as text (BSP application files)
NumberOrExpression = Count | str


# --- BSP application description (advisor/models/bsp/app.py) -------------------------------


class AppLatencies(Struct):
    g_sm: CyclesPerOp | UnsetType = UNSET
    g_gm: CyclesPerOp | UnsetType = UNSET
    g_l1: CyclesPerOp | UnsetType = UNSET
    g_l2: CyclesPerOp | UnsetType = UNSET


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

    count: Count
    coalesced: bool | UnsetType = UNSET
    threads_per_transaction: Units | UnsetType = UNSET
    conflict_degree: Units | UnsetType = UNSET
    stride: Annotated[int, meta(plausible.COUNT, whole=True)] | UnsetType = UNSET
    offset: Annotated[int, meta(plausible.COUNT, whole=True)] | UnsetType = UNSET
    word_bytes: Annotated[int, Meta(ge=1, le=16)] | UnsetType = UNSET
    index: str | UnsetType = UNSET
    constants: dict[str, int] | UnsetType = UNSET
    active: str | UnsetType = UNSET
    description: str | UnsetType = UNSET


class ThreadClass(Struct):
    name: str | UnsetType = UNSET
    ops: dict[str, Count] | UnsetType = UNSET
    compute_cycles: Count | UnsetType = UNSET
    memory_cycles: Count | UnsetType = UNSET
    global_: list[Access] | UnsetType = field(default=UNSET, name="global")
    shared: list[Access] | UnsetType = UNSET
    description: str | UnsetType = UNSET
    source: str | UnsetType = UNSET


class Kernel(ThreadClass):
    blocks: Count | UnsetType = UNSET
    blocks_per_sm: Count | UnsetType = UNSET
    threads_per_block: Count | UnsetType = UNSET
    warps_per_block: Count | UnsetType = UNSET
    threads_per_warp: Units | UnsetType = UNSET
    launches: Annotated[float, Meta(gt=0, le=plausible.COUNT.hi)] | UnsetType = UNSET
    measured_ms: TimeMs | UnsetType | None = UNSET
    profile_name: str | UnsetType = UNSET
    threads: Annotated[list[ThreadClass], Meta(min_length=1)] | UnsetType = UNSET


class Gpu(Struct):
    name: str | UnsetType = UNSET
    arch: str | UnsetType = UNSET
    compute_capability: ComputeCapability | UnsetType | None = UNSET
    clock_hz: ClockHz | UnsetType = UNSET
    sm_count: Units | UnsetType | None = UNSET
    cores_per_sm: Units | UnsetType = UNSET
    pipeline_depth: Units | UnsetType = UNSET
    op_cycles: dict[str, CyclesPerOp] | UnsetType = UNSET
    global_cycles: CyclesPerOp | UnsetType = UNSET
    shared_cycles: CyclesPerOp | UnsetType = UNSET
    shared_banks: Units | UnsetType | None = UNSET
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
    sm_count: Units | UnsetType = UNSET
    fp32_cores_per_sm: Units | UnsetType = UNSET
    base_clock_hz: ClockHz | UnsetType | None = UNSET
    boost_clock_hz: ClockHz | UnsetType = UNSET
    memory_bandwidth_bytes_per_s: Bandwidth | UnsetType = UNSET
    l2_bytes: PositiveBytes | UnsetType | None = UNSET
    max_warps_per_sm: Units | UnsetType = UNSET
    shared_banks: Units | UnsetType = UNSET
    fp64_flops_per_clock_per_sm: Units | UnsetType | None = UNSET
    sources: Strings | UnsetType = UNSET
    notes: Strings | UnsetType = UNSET
    max_threads_per_sm: Units | UnsetType | None = UNSET
    max_blocks_per_sm: Units | UnsetType | None = UNSET
    registers_per_sm: Units | UnsetType | None = UNSET
    shared_bytes_per_sm: PositiveBytes | UnsetType | None = UNSET


class Samples(Struct):
    x: list[SampleX]
    y: list[SampleY]


class Latencies(Struct):
    shared: Latency | UnsetType = UNSET
    l1: Latency | UnsetType = UNSET
    l2: Latency | UnsetType = UNSET
    dram: Latency | UnsetType = UNSET


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
    potential_speedup: Speedup | None
    potential_speedup_paper: Speedup | UnsetType | None = UNSET
    potential_speedup_amdahl: AtLeastOne | UnsetType | None = UNSET


class AnalysisKernel(Struct):
    name: str
    duration_ns: TimeNs | None
    criteria: dict[str, Criterion]
    launches: Annotated[int, meta(plausible.COUNT, whole=True)] | UnsetType | None = UNSET
    potential_speedup: AtLeastOne | UnsetType | None = UNSET


class Application(Struct):
    gpu_time_ns: TimeNs | None
    potential_speedup: Speedup | None


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
