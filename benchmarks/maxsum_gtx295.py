"""MAX/SUM bounds (seed 001) against real GT200 measurements: matMul on a GeForce GTX 295.

Run: ``python benchmarks/maxsum_gtx295.py`` (needs ../shared/real_profiles).

Data: ``real_profiles/csv/amaris_bspgpu/gtx-295/matMul-{Gm,Gm-Un,Sm,Sm-Un}-SP.txt``, kernel times
in ms of the four matMul variants of the BSPGPU experiments, read with ``parsers.read``; the
measured time of a size is the median of its row (this also drops a corrupt 1.84e+13 ms cell of
``matMul-Gm-Un-SP.txt``).  Row k is N = 2^(7+k), N = 128 .. 8192; values of 1000 ms or more carry
3 significant digits.

The GPU: ``find_device("GeForce GTX 295")`` from the device database (one GT200 of the board:
cc 1.3, 30 SMs of 8 cores, 1242 MHz shader clock), D = 4 from the GT200 op-cycle table.

Kernel descriptions (built here for each N, read by
:func:`advisor.models.maxsum.description.from_dict`): 16 × 16 thread blocks, (N/16)^2 blocks, so
N_B = ceil((N/16)^2 / 30) and N_w = 8.  Per-thread operation counts per loop iteration are read off
the authors' PTX (``src/matMul/ptx/sm_21/`` of github.com/marcosamaris/BSPGPU, CUDA 5.5; the GT200
build may differ by a few integer instructions):

* global-memory variants (N iterations): 1 float_mad, 5 int_add (2 index adds, 2 64-bit address
  adds, the loop counter), 1 int_mul32 + its add (mad.lo), 2 int_shift (×4 byte offsets),
  1 int_compare; 2 global loads; one global store after the loop;
* shared-memory variants (N/16 iterations): 16 float_mad, 6 int_add, 1 int_mul32, 3 int_shift,
  1 int_compare; 2 global loads, 2 shared stores, 32 shared loads; one global store after the
  loop.  ``__syncthreads`` is not counted (seed 001 §3.1 leaves barriers out).

Access patterns (tid = ty·16 + tx in a warp, block offsets dropped), from the same PTX: in the
coalesced variants consecutive tx read consecutive words (``tid%16``) or one broadcast word; the
"Un" variants swap the roles of tx and ty, so consecutive tx are W = N words apart, and their
shared tiles are written and read down a column (16 words apart: 16-way conflicts on 16 banks).
The coalescing and bank calculators turn each pattern into k and the conflict degree.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import parsers  # noqa: E402
from advisor.devices.database import find_device  # noqa: E402
from advisor.models import maxsum  # noqa: E402
from advisor.models.maxsum import description as maxsum_input  # noqa: E402
from advisor.models.timing import median_duration_by_row_ns  # noqa: E402

REAL = REPO.parent / "shared" / "real_profiles"
FOLDER = "csv/amaris_bspgpu/gtx-295"
BOARD = "GeForce GTX 295"  # advisor/data/gpus.csv: per GPU 30 SMs × 8 cores, 1242 MHz shader
GLOBAL_OPS = {"float_mad": 1, "int_add": 5, "int_mul32": 1, "int_shift": 2, "int_compare": 1}
SHARED_OPS = {"float_mad": 16, "int_add": 6, "int_mul32": 1, "int_shift": 3, "int_compare": 1}
ROW = "(tid//16)*W + tid%16"  # consecutive tx -> consecutive words
COLUMN = "(tid%16)*W + tid//16"  # consecutive tx -> W words apart

#: variant -> (ops per iteration, iterations(N), [(count per iteration, global pattern)],
#: [(count per iteration, shared pattern)], pattern of the final store)
VARIANTS: dict[
    str, tuple[dict[str, int], int, list[tuple[int, str]], list[tuple[int, str]], str]
] = {
    "matMul-Gm-SP": (GLOBAL_OPS, 1, [(1, "(tid//16)*W"), (1, "tid%16")], [], ROW),
    "matMul-Gm-Un-SP": (GLOBAL_OPS, 1, [(1, "(tid%16)*W"), (1, "tid//16")], [], COLUMN),
    "matMul-Sm-SP": (
        SHARED_OPS,
        16,
        [(2, ROW)],
        [(2, "(tid//16)*16 + tid%16"), (16, "(tid//16)*16"), (16, "tid%16")],
        ROW,
    ),
    "matMul-Sm-Un-SP": (
        SHARED_OPS,
        16,
        [(2, COLUMN)],
        [(2, "(tid%16)*16 + tid//16"), (16, "(tid%16)*16"), (16, "tid//16")],
        COLUMN,
    ),
}


@dataclass(frozen=True)
class Point:
    variant: str
    n: int
    max_ms: float
    sum_ms: float
    measured_ms: float
    verdict: str

    @property
    def ratio_to_max(self) -> float:
        return self.measured_ms / self.max_ms


def description(variant: str, n: int) -> dict[str, Any]:
    """The kernel description of ``variant`` at size ``n`` (a dict for ``from_dict``)."""
    ops, per_tile, loads, shared, store = VARIANTS[variant]
    iterations = n // per_tile
    consts = {"W": n}
    return {
        "kernels": [
            {
                "name": f"{variant} N={n}",
                "blocks": (n // 16) ** 2,
                "threads_per_block": 256,
                "ops": {op: count * iterations for op, count in ops.items()},
                "global": [
                    {"count": c * iterations, "index": p, "constants": consts} for c, p in loads
                ]
                + [{"count": 1, "index": store, "constants": consts}],
                "shared": [{"count": c * iterations, "index": p} for c, p in shared],
            }
        ],
    }


def measured_rows(path: Path) -> dict[int, float]:
    """Median time (ms) per row of a timing table."""
    medians = median_duration_by_row_ns(parsers.read(str(path)))
    return {row: value / 1e6 for row, value in medians.items()}


def reproduce(root: Path = REAL) -> list[Point]:
    """Every (variant, N) point: both bounds and the measured median."""
    device = find_device(BOARD)
    points = []
    for variant in VARIANTS:
        for row, measured in measured_rows(root / FOLDER / f"{variant}.txt").items():
            n = 2 ** (7 + row)
            desc = maxsum_input.from_dict(description(variant, n), f"{variant} N={n}", device)
            bounds = maxsum.predict_program(desc.kernels, desc.gpu, measured / 1e3)
            points.append(
                Point(
                    variant=variant,
                    n=n,
                    max_ms=bounds.total_max_s * 1e3,
                    sum_ms=bounds.total_sum_s * 1e3,
                    measured_ms=measured,
                    verdict=str(bounds.verdict),
                )
            )
    return points


def render(points: list[Point]) -> str:
    lines = [
        f"MAX/SUM bounds (seed 001) vs measured matMul times on a {BOARD} (GT200, cc 1.3)",
        f"{'variant':<16} {'N':>5} {'MAX ms':>10} {'SUM ms':>10} {'measured':>10} "
        f"{'meas/MAX':>8}  verdict",
    ]
    for p in points:
        lines.append(
            f"{p.variant:<16} {p.n:>5} {p.max_ms:>10.4g} {p.sum_ms:>10.4g} {p.measured_ms:>10.4g} "
            f"{p.ratio_to_max:>8.3f}  {p.verdict}"
        )
    lines.append("")
    for variant in VARIANTS:
        mine = [p for p in points if p.variant == variant]
        inside = sum(p.verdict == maxsum.BETWEEN for p in mine)
        ratios = [p.ratio_to_max for p in mine]
        lines.append(
            f"{variant:<16} between MAX and SUM: {inside}/{len(mine)}; measured/MAX "
            f"{min(ratios):.3f} .. {max(ratios):.3f} (geometric mean "
            f"{math.exp(statistics.fmean(math.log(r) for r in ratios)):.3f})"
        )
    total = sum(p.verdict == maxsum.BETWEEN for p in points)
    lines.append(f"all variants: {total}/{len(points)} points between MAX and SUM")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the points as JSON")
    args = ap.parse_args()
    if not REAL.is_dir():
        print(f"real profiles not found at {REAL}", file=sys.stderr)
        return 2
    points = reproduce()
    if args.json:
        doc = [p.__dict__ | {"ratio_to_max": p.ratio_to_max} for p in points]
        print(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False))
    else:
        print(render(points), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
