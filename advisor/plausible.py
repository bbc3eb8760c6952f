"""The plausibility ranges of every number read from a file the user gives.

A type says a value is a number; a range says it can be what its key claims.  A saved analysis
whose kernel time is 1e308 ns passes every type check, yet no GPU ran it: the report would print
a 309-digit time and a speedup of 1e302.  So each kind of figure gets a closed range, checked
where the file is read:

* side inputs and saved analyses (:mod:`advisor.sideinputs`, through the schemas' ``Meta``
  constraints) and raw microbenchmark samples (:mod:`advisor.microbench.raw`) refuse the file,
  exit 3, ``FILE: key.path: value outside [lo, hi], got V``;
* a profile row with a time or size outside its range is dropped with a note, like a negative
  or infinite one (:mod:`advisor.values`).

The bounds are far beyond anything real (the real profiles and tuning steps all read with the
same figures; largest seen in brackets) yet small enough that every sum, product and ratio the
report makes of them stays a number it can print:

=========================  =================  ==================================================
range                      bounds             why
=========================  =================  ==================================================
:data:`TIME_NS`            [0, 8.64e13] ns    a day (a kernel of 54.6 s, 929 s of GPU time)
:data:`TIMESTAMP_NS`       [0, 3.1536e16] ns  a year from the start of profiling (43 s)
:data:`BYTES`              [0, 1e15] B        a petabyte (one transfer of 1 GiB)
:data:`COUNT`              [0, 1e15]          operations, accesses, blocks, launches, cycles
                                              (a 10 GHz clock counts 8.64e14 cycles a day)
:data:`CYCLES_PER_OP`      [0, 1e6]           a latency or an operation's cycles (DRAM ~ 1,000)
:data:`UNITS`              (0, 1e6]           SMs, cores, warps, banks, threads or blocks per SM
:data:`CLOCK_HZ`           (0, 1e10] Hz       10 GHz (2.6 GHz)
:data:`MEMORY_CLOCK_HZ`    (0, 1e11] Hz       a memory's data rate (GDDR7: 14 GHz)
:data:`BANDWIDTH`          (0, 1e14] B/s      100 TB/s (7.7 TB/s)
:data:`SPEEDUP`            [0, 1e9]           1 / a criterion: 967,701 measured (a kernel at
                                              1e-6 of peak), so a thousand times that
:data:`FRACTION`           [0, 1]             criteria, shares, hit rates
=========================  =================  ==================================================

A kernel launch's configuration is bounded by CUDA itself: grid dimensions
[0, 2**31 - 1] (:data:`GRID`), block dimensions [0, 1024] (:data:`BLOCK`), registers per
thread [0, 255] (:data:`REGISTERS`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """A closed range ``[lo, hi]``; ``lo_open``: the low end itself is outside, ``(lo, hi]``."""

    lo: float
    hi: float
    lo_open: bool = False

    def holds(self, value: float) -> bool:
        """Whether ``value`` (finite) lies in the range."""
        above = value > self.lo if self.lo_open else value >= self.lo
        return above and value <= self.hi

    def text(self) -> str:
        """``[0, 8.64e+13]`` or ``(0, 1e+10]``."""
        return f"{'(' if self.lo_open else '['}{number(self.lo)}, {number(self.hi)}]"

    def outside(self, value: float) -> str:
        """The message for ``value`` outside the range."""
        return f"value outside {self.text()}, got {number(value)}"


def number(value: float) -> str:
    """A bound or a value as the messages write it: ``0``, ``1024``, ``8.64e+13``."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e7:
        return str(int(value))
    return f"{float(value):g}"


#: a duration: a kernel, a transfer, an API call, a summary's total, a kernel's time
TIME_NS = Range(0.0, 86_400e9)
#: a start time, relative to the start of profiling
TIMESTAMP_NS = Range(0.0, 365 * 86_400e9)
#: a size in bytes
BYTES = Range(0.0, 1e15)
#: a count of operations, accesses, blocks, threads, launches or cycles
COUNT = Range(0.0, 1e15)
#: cycles of one operation or access (a latency)
CYCLES_PER_OP = Range(0.0, 1e6)
#: a positive latency in cycles
LATENCY = Range(0.0, 1e6, lo_open=True)
#: SMs, cores per SM, warps / threads / blocks / registers per SM, banks, pipeline depth
UNITS = Range(0.0, 1e6, lo_open=True)
#: a clock in Hz
CLOCK_HZ = Range(0.0, 1e10, lo_open=True)
#: a memory clock in Hz, as profilers report it (the data rate: GDDR7 reads 14 GHz)
MEMORY_CLOCK_HZ = Range(0.0, 1e11, lo_open=True)
#: a bandwidth in bytes per second
BANDWIDTH = Range(0.0, 1e14, lo_open=True)
#: a potential speedup in the paper's level form (falls below 1, to 0)
SPEEDUP = Range(0.0, 1e9)
#: a potential speedup in the Amdahl form or a roofline bound (>= 1)
AMDAHL_SPEEDUP = Range(1.0, 1e9)
#: a criterion, a share, a hit rate
FRACTION = Range(0.0, 1.0)
#: a grid dimension (CUDA: at most 2**31 - 1 blocks in x)
GRID = Range(0.0, 2**31 - 1)
#: a block dimension (CUDA: at most 1024 threads a block)
BLOCK = Range(0.0, 1024.0)
#: registers per thread (CUDA: at most 255)
REGISTERS = Range(0.0, 255.0)
#: a measured time in milliseconds (a day)
TIME_MS = Range(0.0, 86_400e3, lo_open=True)
