"""Side inputs at scale: a large ``--kernels`` description against a large profile.

Prints, for K described kernels against an nvprof trace of L launches (generated, seeded, in a
temporary folder):

* matching: the per-kernel scan of every launch (the reader before the measured-time index,
  kept here as the reference) against :func:`advisor.models.maxsum.measured.measured_like` on
  the same kernels; and measured_like's time at K over its time at K / 10 (linear: about 10);
* reading: the bounded decode + schema check of a description of K kernels against plain
  ``json.loads`` of the same text (the cost of the limits and the schema).

Run ``python benchmarks/side_inputs.py [--kernels K] [--launches L]`` (defaults 145,000 and
100,000: a 43 MB description).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


import parsers
from advisor import jsonfile, sideinputs
from advisor.models.maxsum.measured import measured_like
from advisor.profile import Profile
from benchmarks.gen_nvprof import write_nvprof_gputrace

#: kernels the reference scan is timed on (it is far too slow for all of them)
REFERENCE_KERNELS = 300


def description(kernels: int) -> dict[str, object]:
    kernel = {
        "blocks": 390, "threads_per_block": 512, "measured_ms": 1.5, "ops": {"int_add": 2},
        "global": [{"count": 264, "coalesced": False}, {"count": 1, "stride": 2, "offset": 0}],
        "shared": [{"count": 2, "conflict_degree": 2}],
    }  # fmt: skip
    return {
        "gpu": {"name": "GTX 280", "compute_capability": "1.3", "clock_hz": 1.3e9,
                "sm_count": 30, "cores_per_sm": 8, "pipeline_depth": 4},
        "kernels": [
            dict(kernel, name=f"k{i}", profile_name=("gemm", "reduce", "none")[i % 3] + str(i % 50))
            for i in range(kernels)
        ],
    }  # fmt: skip


def reference_scan(profile: Profile, wanted: str) -> float | None:
    """One scan of every launch per described kernel (the cost the index removes)."""
    launches = profile.launches
    hit = launches[launches["name"].str.contains(wanted, case=False, regex=False, na=False)]
    durations = hit["duration_ns"].dropna()
    if durations.empty:
        summary = profile.kernel_summary
        hit = summary[summary["name"].str.contains(wanted, case=False, regex=False, na=False)]
        durations = hit["avg_ns"].dropna()
    return None if durations.empty else float(durations.mean())


def timed(work: object) -> float:
    start = time.perf_counter()
    work()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=145_000)
    parser.add_argument("--launches", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.csv"
        write_nvprof_gputrace(trace, args.launches)
        profile = parsers.read(str(trace))
        doc = description(args.kernels)
        names = [str(k["profile_name"]) for k in doc["kernels"]]  # type: ignore[index]
        small = names[:REFERENCE_KERNELS]
        scan = timed(lambda: [reference_scan(profile, n) for n in small])
        index = timed(lambda: measured_like(profile, small))
        print(f"matching {len(small)} kernels x {len(profile.launches):,} launches: "
              f"per-kernel scan {scan:.2f} s, index {index:.3f} s, ratio {scan / index:.0f}x; "
              f"scan extrapolated to {args.kernels:,} kernels: "
              f"{scan / len(small) * args.kernels:.0f} s")  # fmt: skip
        tenth = timed(lambda: measured_like(profile, names[: args.kernels // 10]))
        full = timed(lambda: measured_like(profile, names))
        print(f"index at {args.kernels:,} kernels: {full:.3f} s; "
              f"time(K) / time(K/10) = {full / tenth:.1f} (linear: about 10)")  # fmt: skip
        path = Path(folder) / "kernels.json"
        path.write_text(json.dumps(doc), "utf-8")
        plain = timed(lambda: json.loads(path.read_text("utf-8")))

        def checked() -> None:
            data = jsonfile.load(path, "kernel description")
            jsonfile.validate(data, sideinputs.kernels_schema(data), path)

        bounded = timed(checked)
        print(f"reading {path.stat().st_size / 1e6:.0f} MB: json.loads {plain:.2f} s, "
              f"limits + schema {bounded:.2f} s, ratio {bounded / plain:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
