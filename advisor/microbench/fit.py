"""From raw microbenchmark samples to a device characterization (seed 002 section III-B;
MODELS.md section 2 and Decision 5).

The paper turns each intensity sweep into a characterization function "through a sampling,
quantization, and interpolation process".  Here:

* **sampling**: the median over the repetitions of each configuration (robust to a slow first
  launch or a clock change);
* **quantization**: the intensity x is rounded to a grid of 1/:data:`QUANTUM_STEPS`, samples that
  land on the same grid point are merged (median), and F is clipped to (0, 1];
* **interpolation**: the sample points are stored in the JSON and read back as a monotone
  piecewise-cubic Hermite interpolant (:class:`advisor.devices.characterization.MonotoneFunction`),
  which never overshoots and is monotone wherever the samples are.

**What each F is (a decision; the paper does not print the formulas).**  Every F is evaluated by
the criteria engine at the *raw* value of its criterion (the profile's measured ratio) and is
normalised to [0, 1] with F = 1 meaning "the device behaves exactly as the raw ratio says":

* F_Divergence(x), x = warp execution efficiency: the engine computes DIVERGENCE = x * F(x).  The
  benchmark runs the same useful work at efficiency x and measures the relative performance
  P(x) = T(x = 1) / T(x); F(x) = P(x) / x makes x * F(x) = P(x), the measured slowdown.
* F_SHMEM(x), x = ideal / actual shared transactions = 1/k for k-way bank conflicts: likewise
  F(1/k) = P / x = k * T(1) / T(k), and SHMEM_EFFICIENCY = x * F(x) = T(1) / T(k).
* F_DRAMThr(x), x = achieved DRAM throughput / the database's peak: the engine computes
  MEMTHR = x / F(x).  The sweep varies the bytes in flight s; by Little's law an ideal memory
  delivers min(peak, s / L0), with L0 the latency at the lightest load (the smallest s of the
  sweep).  F(x) = achieved / ideal, so MEMTHR is the share of the bus the kernel keeps busy
  (1 at saturation, where the seed sets THROUGHPUT/OCCUPANCY to 1).
* F_ARITHThr(x), x = achieved FLOP/s / the database's peak FP32: ARITHTHR = x / F(x).  The sweep
  varies the arithmetic intensity I (flop per DRAM byte); the roofline bound is
  min(peak FP32, I * peak DRAM); F(x) = achieved / roofline bound.

Values above 1 (the device hides part of a cost, or beats the database's peak) are clipped to 1
and counted in a note.  Latencies are the median cycles per access of the load pointer chases;
throughputs and store figures, which the characterization schema has no field for, go to notes.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.devices.characterization import (
    FUNCTION_NAMES,
    LATENCY_LEVELS,
    Characterization,
    MonotoneFunction,
    default_characterization,
)
from advisor.devices.database import DeviceSpec, find_device
from advisor.microbench.raw import RawRun, spec_from_record

#: x is rounded to multiples of 1/256: keeps 1/32 (32-way conflicts) exact and merges
#: configurations whose intensities differ by less than 0.4 %
QUANTUM_STEPS = 256
#: the smallest F kept: the schema needs positive values
F_FLOOR = 1e-3
#: F is stored with 4 decimals (repetitions of one point differ by far more)
F_DECIMALS = 4
_NS_PER_S = 1e9


@dataclass(frozen=True)
class Point:
    """One configuration of a sweep after sampling: intensity x and F(x) before clipping."""

    x: float
    f: float
    label: str


@dataclass(frozen=True)
class FittedFunction:
    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    clipped: int  # points whose F exceeded 1
    points: int  # configurations before quantization


def median_by(
    samples: Iterable[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], Any], value: str
) -> dict[Any, float]:
    """Median of ``value`` over the repetitions of each configuration ``key(sample)``."""
    groups: dict[Any, list[float]] = defaultdict(list)
    for s in samples:
        groups[key(s)].append(float(s[value]))
    return {k: statistics.median(v) for k, v in groups.items()}


def rate(
    samples: Iterable[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], Any], amount: str
) -> dict[Any, float]:
    """Median over repetitions of ``amount`` per second (``amount`` / ``ns``)."""
    groups: dict[Any, list[float]] = defaultdict(list)
    for s in samples:
        if float(s["ns"]) > 0:
            groups[key(s)].append(float(s[amount]) * _NS_PER_S / float(s["ns"]))
    return {k: statistics.median(v) for k, v in groups.items()}


def quantize(
    points: Sequence[Point], steps: int = QUANTUM_STEPS
) -> tuple[tuple[float, ...], tuple[float, ...], int]:
    """Grid x to 1/steps, merge equal grid points (median F), clip F to [F_FLOOR, 1], round F.

    Returns (x, y, number of points whose F was above 1).  Points with x <= 0 are dropped.
    """
    bins: dict[int, list[float]] = defaultdict(list)
    clipped = 0
    for p in points:
        if not p.x > 0:
            continue
        if p.f > 1.0:
            clipped += 1
        bins[max(1, round(p.x * steps))].append(p.f)
    xs = tuple(k / steps for k in sorted(bins))
    ys = tuple(
        round(min(1.0, max(F_FLOOR, statistics.median(bins[k]))), F_DECIMALS) for k in sorted(bins)
    )
    return xs, ys, clipped


# --------------------------------------------------------------------------- the four sweeps


def shmem_points(samples: Sequence[Mapping[str, Any]]) -> list[Point]:
    """F_SHMEM: x = 1/k, F = k * T(1) / T(k) from the k-way bank-conflict sweep."""
    times = median_by(_bench(samples, "shmem_conflicts"), lambda s: int(s["ways"]), "ns")
    if 1 not in times:
        return []
    return [Point(1.0 / k, k * times[1] / t, f"{k}-way") for k, t in sorted(times.items()) if t > 0]


def divergence_points(samples: Sequence[Mapping[str, Any]]) -> list[Point]:
    """F_Divergence: x = warp execution efficiency, F = (T_ref / T) / x (reference: 1 way)."""
    rows = _bench(samples, "divergence")
    key = _divergence_key
    times = median_by(rows, key, "ns")
    efficiency = {key(s): float(s["efficiency"]) for s in rows}
    references = [t for k, t in times.items() if k[0] == 1]
    if not references:
        return []
    ref = statistics.median(references)
    return [
        Point(
            efficiency[k],
            (ref / t) / efficiency[k],
            f"{k[0]} ways, {k[2]} of {k[1] + k[2]} divergent",
        )
        for k, t in sorted(times.items())
        if t > 0 and efficiency[k] > 0
    ]


def _divergence_key(s: Mapping[str, Any]) -> tuple[int, int, int]:
    return (int(s["ways"]), int(s["uniform_fma"]), int(s["divergent_fma"]))


def dram_points(samples: Sequence[Mapping[str, Any]], peak_bytes_per_s: float) -> list[Point]:
    """F_DRAMThr: x = achieved / peak bandwidth, F = achieved / min(peak, s / L0)."""
    rows = _bench(samples, "dram_sweep")
    bandwidth = rate(rows, lambda s: int(s["bytes_in_flight"]), "bytes")
    if not bandwidth or not peak_bytes_per_s > 0:
        return []
    lightest = min(bandwidth)
    latency_s = lightest / bandwidth[lightest]  # L0 = s / B at the lightest load
    points = []
    for in_flight, achieved in sorted(bandwidth.items()):
        ideal = min(peak_bytes_per_s, in_flight / latency_s)
        points.append(
            Point(achieved / peak_bytes_per_s, achieved / ideal, f"{in_flight} B in flight")
        )
    return points


def arith_points(
    samples: Sequence[Mapping[str, Any]], peak_flops: float, peak_bytes_per_s: float
) -> list[Point]:
    """F_ARITHThr: x = achieved / peak FP32, F = achieved / min(peak, I * peak DRAM)."""
    rows = _bench(samples, "arith_intensity")
    flops = rate(rows, lambda s: float(s["flops_per_byte"]), "flops")
    if not flops or not peak_flops > 0:
        return []
    points = []
    for intensity, achieved in sorted(flops.items()):
        roof = min(peak_flops, intensity * peak_bytes_per_s)
        points.append(Point(achieved / peak_flops, achieved / roof, f"{intensity:g} flop/B"))
    return points


def _bench(samples: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    return [s for s in samples if s.get("bench") == name]


def fit_functions(samples: Sequence[Mapping[str, Any]], spec: DeviceSpec) -> list[FittedFunction]:
    """Every characterization function the samples allow, in FUNCTION_NAMES order."""
    sweeps: dict[str, list[Point]] = {
        "F_Divergence": divergence_points(samples),
        "F_DRAMThr": dram_points(samples, spec.memory_bandwidth_bytes_per_s),
        "F_ARITHThr": arith_points(
            samples, spec.peak_fp32_flops, spec.memory_bandwidth_bytes_per_s
        ),
        "F_SHMEM": shmem_points(samples),
    }
    out = []
    for name in FUNCTION_NAMES:
        points = sweeps[name]
        xs, ys, clipped = quantize(points)
        if xs:
            out.append(FittedFunction(name, xs, ys, clipped, len(points)))
    return out


def load_latencies(samples: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Median cycles per load of each level's pointer chase."""
    rows = [s for s in _bench(samples, "mem_latency") if s.get("op") == "load"]
    per_access = [
        {"level": s["level"], "c": float(s["cycles"]) / float(s["accesses"])}
        for s in rows
        if float(s["accesses"]) > 0
    ]
    return {k: round(v, 2) for k, v in median_by(per_access, lambda s: s["level"], "c").items()}


# ------------------------------------------------------------------------------- the result


def fit_characterization(raw: RawRun, device: str | None = None) -> Characterization:
    """The measured characterization of ``raw``'s GPU (``device`` overrides the database name)."""
    spec, spec_note = _spec(raw, device)
    samples = raw.samples
    defaults = default_characterization(spec).latencies_cycles
    measured = load_latencies(samples)
    notes = [_origin(raw), spec_note] if spec_note else [_origin(raw)]
    latencies: dict[str, float] = {}
    for level in LATENCY_LEVELS:
        if level in measured:
            latencies[level] = measured[level]
        else:
            latencies[level] = float(defaults[level])
            notes.append(
                f"{level} latency not measured: default {defaults[level]:g} cycles"
                f" for {spec.architecture}"
            )
    functions: dict[str, MonotoneFunction] = {}
    for fitted in fit_functions(samples, spec):
        functions[fitted.name] = MonotoneFunction(fitted.x, fitted.y)
        notes.append(_function_note(fitted))
    for name in FUNCTION_NAMES:
        if name not in functions:
            notes.append(f"{name} not measured (no samples): F = 1")
    notes.extend(throughput_notes(samples))
    return Characterization(
        device=spec,
        latencies_cycles=latencies,
        functions=functions,
        measured=True,
        source=raw.source,
        notes=tuple(notes),
    )


def _spec(raw: RawRun, device: str | None) -> tuple[DeviceSpec, str | None]:
    if device is not None:
        return find_device(device), f"device taken from --device {device!r}"
    return spec_from_record(raw.device, raw.source)


def _origin(raw: RawRun) -> str:
    d = raw.device
    runtime = d.get("cuda_runtime_version")
    if isinstance(runtime, int):  # 13000 -> 13.0
        runtime = f"{runtime // 1000}.{runtime % 1000 // 10}"
    return (
        f"fitted from {len(raw.samples)} cuda-advisor-microbench samples ({raw.source}) of"
        f" {d.get('name')} (compute capability {d.get('compute_capability')},"
        f" driver {d.get('driver_version', 'unknown')}, CUDA runtime {runtime}),"
        f" run as `{' '.join(raw.command) or 'cuda-advisor-microbench'}`"
    )


def _function_note(f: FittedFunction) -> str:
    text = (
        f"{f.name}: {len(f.x)} points from {f.points} configurations"
        f" (median of repetitions, x on a 1/{QUANTUM_STEPS} grid)"
    )
    if f.clipped:
        text += f"; {f.clipped} point(s) above 1 clipped to 1"
    return text


def throughput_notes(samples: Sequence[Mapping[str, Any]]) -> list[str]:
    """Arithmetic and memory figures the characterization schema has no field for."""
    notes = []
    cycles = median_by(
        [
            {"k": s["class"], "c": float(s["cycles"]) / float(s["ops"])}
            for s in _bench(samples, "arith_latency")
            if float(s["ops"]) > 0
        ],
        lambda s: s["k"],
        "c",
    )
    ops = rate(_bench(samples, "arith_throughput"), lambda s: s["class"], "ops")
    for cls in ("int", "fp32", "sfu", "fp64"):
        if cls in cycles or cls in ops:
            lat = f"{cycles[cls]:.2f} cycles latency" if cls in cycles else "latency not measured"
            thr = f"{ops[cls] / 1e9:.1f} G instructions/s" if cls in ops else "no throughput"
            notes.append(f"arithmetic {cls}: {lat}, {thr}")
    stores = [s for s in _bench(samples, "mem_latency") if s.get("op") == "store"]
    store_cycles = median_by(
        [{"l": s["level"], "c": float(s["cycles"]) / float(s["accesses"])} for s in stores],
        lambda s: s["l"],
        "c",
    )
    bandwidth = rate(_bench(samples, "mem_throughput"), lambda s: (s["level"], s["op"]), "bytes")
    for level in LATENCY_LEVELS:
        parts = [
            f"{op} {bandwidth[(level, op)] / 1e9:.1f} GB/s"
            for op in ("load", "store")
            if (level, op) in bandwidth
        ]
        if level in store_cycles:
            parts.append(f"store issue+drain {store_cycles[level]:.2f} cycles per store")
        if parts:
            notes.append(f"memory {level}: " + ", ".join(parts))
    return notes
