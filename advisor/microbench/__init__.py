"""Microbenchmarks that characterize a GPU (seed 002 section III; MODELS.md section 2).

The CUDA sources ship in this package (``*.cu``, ``microbench.cuh``) so that an installed
cuda-advisor can build them:

* :mod:`~advisor.microbench.build` -- compile with nvcc for several architectures, keeping PTX
  and cubins (``cuda-advisor microbench build``);
* :mod:`~advisor.microbench.checks` -- the paper's Fig. 2 checks: the measured instructions are
  still in the timed regions of the PTX and the SASS (``cuda-advisor microbench check``);
* :mod:`~advisor.microbench.run` -- run on the local GPU, collect raw samples
  (``cuda-advisor microbench run``);
* :mod:`~advisor.microbench.fit` -- samples -> quantized, monotonically interpolated
  characterization functions and latencies, as the device characterization JSON of
  :mod:`advisor.devices.characterization` (``cuda-advisor microbench fit``).
"""

from __future__ import annotations

from advisor.microbench.build import (
    DEFAULT_ARCHS,
    DEFAULT_BUILD_DIR,
    BuildResult,
    build_microbenchmarks,
)
from advisor.microbench.checks import EXPECTATIONS, CheckReport, check_build, check_text
from advisor.microbench.fit import fit_characterization
from advisor.microbench.raw import RawRun, read_raw
from advisor.microbench.run import run_microbenchmarks

__all__ = [
    "DEFAULT_ARCHS",
    "DEFAULT_BUILD_DIR",
    "EXPECTATIONS",
    "BuildResult",
    "CheckReport",
    "RawRun",
    "build_microbenchmarks",
    "check_build",
    "check_text",
    "fit_characterization",
    "read_raw",
    "run_microbenchmarks",
]
