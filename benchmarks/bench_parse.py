"""Parsing speed and memory on the largest real profiles, as ratios against targets.

Run: ``python benchmarks/bench_parse.py [--repeat N]`` (needs ../shared/real_profiles).

For each file it prints the parse time per MiB of input and the peak Python memory (tracemalloc)
per byte of input, each divided by its target, so a ratio <= 1.0 meets the target.  Targets:

* ``TARGET_S_PER_MIB``: 2.0 s per MiB of CSV/text on one core, so the 3.3 MiB traces read in
  under about 7 s;
* ``TARGET_MEM_PER_BYTE``: peak memory at most 60x the file size (pandas frames of strings
  cost several times the text they come from).

Exit status 1 if any ratio exceeds 1.0.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import parsers  # noqa: E402

REAL = REPO.parent / "shared" / "real_profiles"
FILES = [
    "csv/amaris_gpuperfpredict/rodinia_traces/lud-traces-1.csv",
    "csv/magus_nvprof/gtx1080ti/traces_shoc_lev1stencil2d.csv",
    "csv/nanzifan_nvprof_titanxp/cfd_csv/print-gpu-trace.csv",
    "csv/amaris_gpuperfpredict/rodinia_traces/hotspot-traces-1.csv",
    "csv/magus_nvprof/gtx950/s3d_metrics.csv",
    "csv/magus_nvprof/gtx1080ti/radixSortThrust_trace.csv",
    "csv/roofline_analysis_ncu_b200/flashinfer_paged_decode__gqa_bf16_b128_ctx2k_p64.ncu.csv",
]
TARGET_S_PER_MIB = 2.0
TARGET_MEM_PER_BYTE = 60.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per file (best is kept)")
    args = ap.parse_args()
    if not REAL.is_dir():
        print(f"real profiles not found at {REAL}", file=sys.stderr)
        return 2
    worst = 0.0
    print(f"{'file':<72} {'MiB':>6} {'s/MiB':>7} {'time':>6} {'mem/B':>6} {'mem':>6}")
    for rel in FILES:
        path = REAL / rel
        size = path.stat().st_size
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            parsers.read(path)
            best = min(best, time.perf_counter() - t0)
        tracemalloc.start()
        parsers.read(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        mib = size / 2**20
        s_per_mib = best / mib
        mem_per_byte = peak / size
        r_time = s_per_mib / TARGET_S_PER_MIB
        r_mem = mem_per_byte / TARGET_MEM_PER_BYTE
        worst = max(worst, r_time, r_mem)
        timing = f"{mib:6.2f} {s_per_mib:7.3f} {r_time:6.2f}"
        memory = f"{mem_per_byte:6.1f} {r_mem:6.2f}"
        print(f"{rel[-72:]:<72} {timing} {memory}")
    print(f"worst ratio {worst:.2f} (<= 1.00 meets the targets)")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
