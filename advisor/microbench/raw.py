"""Reading raw microbenchmark samples: the document ``microbench run`` writes, or the driver's
JSON lines as they are (a ``device`` record, then one object per sample)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from advisor import jsonfile, plausible, sideinputs
from advisor.devices.database import DeviceSpec, all_devices, compute_capability_facts, find_device
from advisor.errors import MalformedInput, UsageError

RAW_SCHEMA = "cuda-advisor/microbench-raw"
RAW_VERSION = 1

#: the fields every sample of a benchmark needs (strings for keys, numbers for the rest)
REQUIRED_FIELDS: Mapping[str, tuple[str, ...]] = {
    "arith_latency": ("class", "cycles", "ops"),
    "arith_throughput": ("class", "ns", "ops"),
    "arith_intensity": ("ns", "flops", "bytes", "flops_per_byte"),
    "mem_latency": ("level", "op", "cycles", "accesses"),
    "mem_throughput": ("level", "op", "ns", "bytes"),
    "dram_sweep": ("ns", "bytes", "bytes_in_flight"),
    "shmem_conflicts": ("ways", "ns"),
    "divergence": ("ways", "uniform_fma", "divergent_fma", "ns", "efficiency"),
}
_STRING_FIELDS = {"class", "level", "op"}
#: the plausibility range of each numeric field (:mod:`advisor.plausible`); a count otherwise
FIELD_RANGES: Mapping[str, plausible.Range] = {
    "ns": plausible.TIME_NS,
    "bytes": plausible.BYTES,
    "bytes_in_flight": plausible.BYTES,
    "efficiency": plausible.FRACTION,
    "ways": plausible.Range(0.0, 1024.0),  # bank-conflict or divergence ways (at most 32)
}
#: the plausibility range of the device record's numbers, where given
DEVICE_RANGES: Mapping[str, plausible.Range] = {
    "clock_khz": plausible.Range(0.0, plausible.CLOCK_HZ.hi / 1e3, lo_open=True),
    "memory_clock_khz": plausible.Range(0.0, plausible.MEMORY_CLOCK_HZ.hi / 1e3, lo_open=True),
    "memory_bus_width_bits": plausible.Range(0.0, 65536.0, lo_open=True),
    "sm_count": plausible.UNITS,
    "l2_bytes": plausible.BYTES,
}
#: an SM clock this far from the database's earns a note (as CLOCK_NOTE_FRAC in devices)
CLOCK_NOTE_FRAC = 0.05


@dataclass(frozen=True)
class RawRun:
    device: Mapping[str, Any]  # the driver's device record (+ driver_version)
    samples: tuple[Mapping[str, Any], ...]
    command: tuple[str, ...]
    source: str


def read_raw(path: str) -> RawRun:
    """A raw document or JSON-lines file; a bad file raises a one-line InputError (exit 3)."""
    text = jsonfile.read_text(path, "raw samples")
    jsonfile.check_shape(text, path)  # the limits hold for both layouts
    try:
        data = jsonfile.decode(text, path, shape_checked=True)
    except MalformedInput:
        data = None  # JSON lines, or a damaged file: the line reader says which line
    if isinstance(data, dict) and "schema" in data:
        return _from_document(data, path)
    return _from_lines(text, path)


def _from_document(data: dict[str, Any], path: str) -> RawRun:
    if data.get("schema") != RAW_SCHEMA:
        raise MalformedInput(path, f'not microbenchmark samples ("schema" must be "{RAW_SCHEMA}")')
    if data.get("version") != RAW_VERSION:
        raise MalformedInput(
            path,
            f"raw samples version {data.get('version')!r} is not supported (use {RAW_VERSION})",
        )
    jsonfile.validate(data, sideinputs.RAW, path)
    device = data.get("device")
    samples = data.get("samples")
    if not isinstance(device, dict) or not isinstance(samples, list):
        raise MalformedInput(path, '"device" must be an object and "samples" a list')
    command = data.get("command", [])
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        raise MalformedInput(path, '"command" must be a list of strings')
    checked = [_sample(s, path, None, f"samples[{i}].") for i, s in enumerate(samples)]
    return RawRun(_device(device, path), tuple(checked), tuple(command), path)


def _from_lines(text: str, path: str) -> RawRun:
    device, samples = parse_json_lines(text, path)
    return RawRun(device, tuple(samples), (), path)


def parse_json_lines(text: str, path: str) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """The device record and the samples of the driver's output (``path`` names it in errors)."""
    device: dict[str, Any] | None = None
    samples: list[Mapping[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = jsonfile.decode(line, path)
        except MalformedInput as exc:
            detail = exc.detail.removeprefix("not valid JSON: ")
            raise MalformedInput(
                path, f"neither a raw samples document nor JSON lines ({detail})", line=number
            ) from None
        if not isinstance(record, dict):
            raise MalformedInput(path, "expected one JSON object per line", line=number)
        if record.get("record") == "device":
            device = {k: v for k, v in record.items() if k != "record"}
        elif "bench" in record:
            samples.append(_sample(record, path, number))
    if device is None:
        raise MalformedInput(path, "no device record (the driver's first line) in the file")
    return _device(device, path), samples


def _device(record: dict[str, Any], path: str) -> dict[str, Any]:
    for key in ("name", "compute_capability"):
        if not isinstance(record.get(key), str) or not record[key]:
            raise MalformedInput(path, f"the device record needs a string {key!r}")
    for key, bounds in DEVICE_RANGES.items():
        value = record.get(key)
        if isinstance(value, int | float) and _number(value) and not bounds.holds(value):
            raise MalformedInput(path, f"device.{key}: {bounds.outside(value)}")
    return record


def _sample(record: Any, path: str, line: int | None, where: str = "") -> Mapping[str, Any]:
    """``record`` checked: its bench's fields present, strings or non-negative numbers within
    their plausibility ranges (``where``: the sample's key path in a document)."""
    if not isinstance(record, dict) or not isinstance(record.get("bench"), str):
        raise MalformedInput(path, 'every sample must be an object with a "bench" name', line=line)
    for field in REQUIRED_FIELDS.get(record["bench"], ()):
        value = record.get(field)
        ok = isinstance(value, str) if field in _STRING_FIELDS else _non_negative_number(value)
        if not ok:
            raise MalformedInput(
                path, f"{record['bench']} sample: {field!r} missing or invalid ({value!r})", line
            )
        bounds = FIELD_RANGES.get(field, plausible.COUNT)
        if isinstance(value, int | float) and not bounds.holds(value):
            key = f"{where}{field}" if where else f"{record['bench']} sample: {field}"
            raise MalformedInput(path, f"{key}: {bounds.outside(value)}", line)
    return record


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _non_negative_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value >= 0


def spec_from_record(record: Mapping[str, Any], source: str) -> tuple[DeviceSpec, str | None]:
    """The database entry of the measured GPU, else a spec built from its device record."""
    name = str(record["name"])
    try:
        spec = find_device(name)
    except UsageError:
        return _spec_from_properties(record, source), (
            f"{name} is not in the GPU database: device figures from its CUDA device properties"
        )
    clock_khz = record.get("clock_khz")
    if isinstance(clock_khz, int | float) and clock_khz > 0:
        measured_hz = float(clock_khz) * 1e3
        if abs(measured_hz - spec.boost_clock_hz) > CLOCK_NOTE_FRAC * spec.boost_clock_hz:
            return spec, (
                f"the GPU reports an SM clock of {measured_hz / 1e6:.0f} MHz;"
                f" the database uses {spec.boost_clock_hz / 1e6:.0f} MHz"
            )
    return spec, None


def _spec_from_properties(record: Mapping[str, Any], source: str) -> DeviceSpec:
    cc = str(record["compute_capability"])
    same_cc = [s for s in all_devices() if s.compute_capability == cc]
    try:
        facts = compute_capability_facts(cc)
    except KeyError:
        facts = {}
    if not same_cc or not facts:
        raise UsageError(
            f"{source}: GPU {record['name']!r} is not in the database and compute capability {cc}"
            " is unknown; give --device NAME of a database GPU"
        )
    try:
        clock_hz = float(record["clock_khz"]) * 1e3
        bandwidth = (
            2 * float(record["memory_clock_khz"]) * 1e3 * float(record["memory_bus_width_bits"]) / 8
        )
        sm_count = int(record["sm_count"])
    except (KeyError, TypeError, ValueError):
        raise MalformedInput(
            source,
            "the device record lacks clock_khz, memory_clock_khz, memory_bus_width_bits"
            " or sm_count",
        ) from None
    l2 = record.get("l2_bytes")
    return DeviceSpec(
        name=str(record["name"]),
        aliases=(),
        chip="unknown",
        architecture=same_cc[0].architecture,
        compute_capability=cc,
        sm_count=sm_count,
        fp32_cores_per_sm=same_cc[0].fp32_cores_per_sm,
        base_clock_hz=None,
        boost_clock_hz=clock_hz,
        memory_bandwidth_bytes_per_s=bandwidth,
        l2_bytes=float(l2) if isinstance(l2, int | float) and l2 > 0 else None,
        max_warps_per_sm=int(facts["max_warps_per_sm"]),
        shared_banks=int(facts["shared_banks"]),
        fp64_flops_per_clock_per_sm=None,
        sources=("cuda-advisor-microbench device record (cudaGetDeviceProperties)",),
        notes=(
            f"architecture and FP32 cores per SM of the database's compute capability {cc} boards",
            "memory bandwidth = 2 x memory clock x bus width (double data rate)",
        ),
    )
