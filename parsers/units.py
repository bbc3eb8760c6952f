"""Numbers and units as the NVIDIA profilers print them, converted to base units.

Every parser converts at its boundary with these functions, so no other module sees
``"12.3GB/s"``, ``"1,234"`` or ``"Low (1)"``.  Base units (see :data:`advisor.schema.BASE_UNITS`):
time in ``ns``, sizes in ``byte``, throughputs in ``byte/s``, percentages as ``frac`` (0..1),
frequencies in ``hz``, nvprof utilization levels as ``level`` (0..10), everything else as printed.

Prefix conventions differ between tools (``../shared/docs/FORMATS.md`` §1.3, §2.5, §3.2):
nvprof sizes and throughputs are binary (KB = 1024 B); Nsight Compute and Nsight Systems are
decimal (Kbyte = 1000 B, MB = 1e6 B), except nsys ``KiB``/``MiB`` which say binary.
"""

from __future__ import annotations

import math
import re

import numpy as np
import numpy.typing as npt

NAN = float("nan")

#: cells that mean "no value" in any of the tools
MISSING_TOKENS = frozenset(
    {"", "-", "--", "n/a", "N/A", "NA", "nan", "NaN", "<OVERFLOW>", "OVERFLOW", "(null)", "null"}
)

TIME_NS = {
    "s": 1e9, "sec": 1e9, "second": 1e9, "seconds": 1e9,
    "ms": 1e6, "msec": 1e6, "msecond": 1e6,
    "us": 1e3, "usec": 1e3, "usecond": 1e3, "µs": 1e3,
    "ns": 1.0, "nsec": 1.0, "nsecond": 1.0,
}  # fmt: skip

BINARY = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
DECIMAL = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
IEC = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_GROUPED = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_GLUED = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ%/]*)\s*$")
_LEVEL = re.compile(r"^\s*[A-Za-z]+\s*\((\d+)\)\s*$")


#: a whole number at or beyond this magnitude does not fit an Int64 column: in a file it is no
#: real count, id or dimension
INT_LIMIT = 2**63


def fits_int(value: float | np.floating) -> bool:
    """True for a finite whole number an ``Int64`` column holds (NaN, inf, 1.5, 1e20: False)."""
    if isinstance(value, int):
        return abs(value) < INT_LIMIT
    return math.isfinite(value) and float(value).is_integer() and abs(value) < INT_LIMIT


def fits_int_array(values: npt.ArrayLike) -> np.ndarray:
    """:func:`fits_int` of every element of a float array, vectorised (NaN -> False)."""
    arr = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        fits = np.abs(arr) < INT_LIMIT  # False for NaN and inf
        fits &= np.floor(arr) == arr
        return fits


def is_missing(cell: object) -> bool:
    """True for None, NaN and the tools' placeholder tokens (``<OVERFLOW>``, ``n/a``, ``-``, '')."""
    if cell is None:
        return True
    if isinstance(cell, float):
        return math.isnan(cell)
    return str(cell).strip() in MISSING_TOKENS


def parse_number(cell: object) -> float:
    """A plain number cell -> float; placeholders and non-numbers -> NaN.

    Accepts thousands separators (``"1,234.56"``) and scientific notation (``1.31e+03``).
    """
    if is_missing(cell):
        return NAN
    text = str(cell).strip().strip('"')
    if _GROUPED.fullmatch(text):
        text = text.replace(",", "")
    if _NUMBER.fullmatch(text):
        return float(text)
    return NAN


def parse_level(cell: object) -> float:
    """nvprof utilization level ``"Low (1)"`` / ``"Max (10)"`` -> 1.0 / 10.0; else NaN."""
    if is_missing(cell):
        return NAN
    m = _LEVEL.match(str(cell))
    return float(m.group(1)) if m else NAN


def time_to_ns(value: float, unit: str) -> float:
    """Scale a time ``value`` printed in ``unit`` (s, ms, us, ns, usecond, ...) to ns."""
    factor = TIME_NS.get(unit.strip())
    if factor is None:
        raise ValueError(f"unknown time unit {unit!r}")
    return value * factor


def nvprof_cell(cell: object) -> tuple[float, str]:
    """One nvprof value with its unit glued on -> (value in base unit, base unit).

    ``'155.06GB/s'`` -> (155.06 * 2**30, 'byte/s'); ``'97.5%'`` -> (0.975, 'frac');
    ``'Low (1)'`` -> (1.0, 'level'); ``'12.5us'`` -> (12500.0, 'ns'); ``'42'`` -> (42.0, '');
    placeholders -> (NaN, '').  nvprof prefixes are binary.  A unit it does not know raises
    ValueError so the parser can report the line.
    """
    if is_missing(cell):
        return NAN, ""
    text = str(cell).strip().strip('"')
    level = _LEVEL.match(text)
    if level:
        return float(level.group(1)), "level"
    m = _GLUED.match(text)
    if not m:
        if _GROUPED.fullmatch(text):
            return float(text.replace(",", "")), ""
        raise ValueError(f"not a number: {text!r}")
    value, unit = float(m.group(1)), m.group(2)
    return scale_nvprof(value, unit)


def scale_nvprof(value: float, unit: str) -> tuple[float, str]:
    """Scale a value printed with an nvprof unit (binary prefixes) to its base unit."""
    unit = unit.strip()
    if unit == "":
        return value, ""
    if unit == "%":
        return value / 100.0, "frac"
    if unit in TIME_NS:
        return value * TIME_NS[unit], "ns"
    if unit in BINARY:
        return value * BINARY[unit], "byte"
    if unit.endswith("/s") and unit[:-2] in BINARY:
        return value * BINARY[unit[:-2]], "byte/s"
    raise ValueError(f"unknown nvprof unit {unit!r}")


_NCU_SIZE = re.compile(r"^([KMGT]?)(byte|bytes)(/(second|s|block|cycle|request|sector))?$", re.I)
_NCU_HZ = re.compile(r"^([KMGT]?)hz$", re.I)
_NCU_PER_TIME = re.compile(r"^(.+)/(nsecond|usecond|msecond|second|ns|us|ms|s)$")


def scale_ncu(value: float, unit: str) -> tuple[float, str]:
    """Scale a value printed with an Nsight Compute unit (decimal prefixes) to its base unit.

    ``(13.72, 'Ghz')`` -> (1.372e10, 'hz'); ``(3.2, 'Mbyte')`` -> (3.2e6, 'byte');
    ``(250, 'Gbyte/second')`` -> (2.5e11, 'byte/s'); ``(65.7, '%')`` -> (0.657, 'frac');
    ``(1.2, 'usecond')`` -> (1200.0, 'ns'); ``(3, 'cycle/nsecond')`` -> (3e9, 'cycle/s').
    Units it does not scale (``cycle``, ``inst``, ``register/thread``, ``warp``) pass through.
    """
    unit = (unit or "").strip()
    if unit in ("", "none"):
        return value, ""
    if unit == "%":
        return value / 100.0, "frac"
    if unit in TIME_NS:
        return value * TIME_NS[unit], "ns"
    m = _NCU_SIZE.match(unit)
    if m:
        prefix = m.group(1).upper()
        per = m.group(4)
        if per in ("second", "s"):
            return value * DECIMAL[prefix], "byte/s"
        suffix = f"/{per}" if per else ""
        return value * DECIMAL[prefix], "byte" + suffix
    m = _NCU_HZ.match(unit)
    if m:
        return value * DECIMAL[m.group(1).upper()], "hz"
    m = _NCU_PER_TIME.match(unit)
    if m:
        per_ns = TIME_NS[m.group(2)]
        return value * 1e9 / per_ns, f"{m.group(1)}/s"
    return value, unit


def scale_nsys_header(unit: str) -> tuple[float, str]:
    """Factor and base unit for an Nsight Systems header unit: ``(ns)``, ``(MB)``, ``(MB/s)``...

    nsys sizes are decimal (MB = 1e6 B) unless spelled KiB/MiB.
    """
    unit = unit.strip().strip("()")
    if unit == "%":
        return 0.01, "frac"
    if unit in TIME_NS:
        return TIME_NS[unit], "ns"
    if unit in IEC:
        return float(IEC[unit]), "byte"
    for rate in ("/s", "ps"):
        if unit.endswith(rate):
            base = unit[: -len(rate)]
            if base in IEC:
                return float(IEC[base]), "byte/s"
            if base.endswith("B") and base[:-1] in DECIMAL:
                return DECIMAL[base[:-1]], "byte/s"
    if unit.endswith("B") and unit[:-1] in DECIMAL:
        return DECIMAL[unit[:-1]], "byte"
    raise ValueError(f"unknown nsys unit {unit!r}")
