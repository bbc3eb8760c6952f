"""cuda-advisor against Holistic Trace Analysis (HTA) on the same PyTorch profiler traces.

Run: ``python benchmarks/hta_agreement.py [--time K] [TRACE ...]`` (default: the NVIDIA traces
with a timeline under ``../shared/real_profiles/kineto``).  Needs HTA: ``pip install
'cuda-advisor[bench]'`` (``holistictraceanalysis``); without it the script says so and exits 2.

For each trace, HTA's ``TraceAnalysis`` (on a folder holding only that trace, every profiler
step included: ``include_last_profiler_step=True``) and cuda-advisor's
reader + host view (:mod:`advisor.report.host_view`) compute, side by side:

* GPU idle %: HTA ``get_temporal_breakdown`` ``idle_time_pctg``; cuda-advisor ``1 - union of the
  kernel, memcpy and memset intervals / span``;
* kernel time per kernel: HTA ``get_gpu_kernel_breakdown`` (``sum`` per name) against the sum of
  ``duration_ns`` per kernel name; the worst relative difference over the kernels is printed;
* per-stream busy time: the union of the activity intervals of each stream, from HTA's parsed
  trace frame (``stream != -1``) and from the profile; the worst relative difference;
* launch delay: HTA ``get_cuda_kernel_launch_stats`` ``launch_delay`` (GPU start - end of the
  runtime call) over the kernels, mean; cuda-advisor's ``mean_after_call_ns`` over the same
  kernels (its headline launch delay runs from the call's start);
* idle split: HTA ``get_idle_time_breakdown`` ``host_wait`` against cuda-advisor's host wait +
  launch delay (HTA's host wait is the whole gap), and HTA's ``kernel_wait + other`` against
  cuda-advisor's other.

With ``--time K`` each trace also gets the seconds both sides take for these figures (the
fastest of K runs in this process, imports done): cuda-advisor's reader, host view and busy time
per stream (:func:`advisor_side`) against HTA's ``TraceAnalysis`` and the five analyses
(:func:`hta_side`).

Each figure is marked ``ok`` when within :data:`TOLERANCE` (1 %) of HTA's, else ``DIFF``; the
README explains each difference.  Exit status 0 (a difference is reported, not an error).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import parsers  # noqa: E402
from advisor.models import host  # noqa: E402
from advisor.report.host_view import host_view  # noqa: E402

TOLERANCE = 0.01
KINETO = REPO.parent / "shared" / "real_profiles" / "kineto"
TRACES = (
    "critical_path/cuda_event_sync/event_sync_trace.json.gz",
    "critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    "critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "negative_queue_length_values_check/rank0.json.gz",
    "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "timeline_analysis/sampled_rank-0.json.gz",
    "trace_compare/base/base.json.gz",
    "trace_compare/test/test.json.gz",
    "triton_example/triton_example.json.gz",
)


def _hta() -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from hta.trace_analysis import TraceAnalysis
    except ImportError as exc:
        raise SystemExit(
            f"hta_agreement: Holistic Trace Analysis is not installed ({exc}); install it with "
            "pip install 'cuda-advisor[bench]' (or pip install holistictraceanalysis)"
        ) from None
    return TraceAnalysis


def _union(start: np.ndarray, end: np.ndarray) -> float:
    if not len(start):
        return 0.0
    s, e = host.blocks(start.astype(float), end.astype(float))
    return float((e - s).sum())


def _rel(ours: float, theirs: float) -> float:
    if theirs == 0:
        return 0.0 if ours == 0 else float("inf")
    return abs(ours - theirs) / abs(theirs)


def _mark(diff: float) -> str:
    return "ok" if diff <= TOLERANCE else "DIFF"


def advisor_side(path: Path) -> tuple[Any, Any, dict[tuple[Any, Any], float]]:
    """cuda-advisor's side: the profile, its host view and the busy time per stream."""
    profile = parsers.read(path)
    view = host_view(profile)
    assert view is not None
    return profile, view, host.stream_busy(profile)


def hta_side(path: Path, analysis: Callable[..., Any]) -> tuple[Any, ...]:
    """HTA's side: its trace frame, temporal breakdown, kernel breakdown, launch statistics,
    idle-time breakdown and communication overlap."""
    with tempfile.TemporaryDirectory(prefix="hta-") as folder:
        os.symlink(path, Path(folder) / path.name)
        hta = analysis(trace_dir=folder, include_last_profiler_step=True)
        rank = next(iter(hta.t.traces))
        frame = hta.t.get_trace(rank)
        temporal = hta.get_temporal_breakdown(visualize=False)
        kernels = hta.get_gpu_kernel_breakdown(visualize=False)[1]
        launch = hta.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)[rank]
        idle = hta.get_idle_time_breakdown(ranks=[rank], visualize=False)[0]
        overlap = hta.get_comm_comp_overlap(visualize=False)  # 0 % without NCCL kernels
    return frame, temporal, kernels, launch, idle, overlap


def timed(path: Path, analysis: Callable[..., Any], repeat: int) -> tuple[float, float]:
    """Seconds (fastest of ``repeat`` runs, in this process, imports done) of
    :func:`advisor_side` and of :func:`hta_side` on one trace."""
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, side in enumerate((lambda: advisor_side(path), lambda: hta_side(path, analysis))):
            t0 = time.perf_counter()
            side()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best[0], best[1]


def compare(path: Path, analysis: Callable[..., Any]) -> list[tuple[str, str, str, str]]:
    """(figure, HTA, cuda-advisor, mark) rows of one trace."""
    profile, view, busy = advisor_side(path)
    frame, temporal, kernels, launch, idle, overlap = hta_side(path, analysis)
    rows = []
    theirs = float(temporal["idle_time_pctg"].iloc[0])
    ours = 100 * view.idle_frac
    rows.append(("GPU idle %", f"{theirs:.2f}", f"{ours:.2f}", _mark(abs(ours - theirs) / 100)))
    per_kernel = profile.launches.groupby(profile.launches["name"].astype(str))["duration_ns"]
    mine = per_kernel.sum() / 1000.0
    hta_kernels = kernels.set_index("name")["sum (us)"]
    hta_kernels = hta_kernels[hta_kernels.index.isin(mine.index)]
    worst = max((_rel(mine[n], float(v)) for n, v in hta_kernels.items()), default=0.0)
    rows.append(
        (
            f"kernel time, {len(hta_kernels)} kernels (us, total)",
            f"{hta_kernels.sum():.1f}",
            f"{mine[hta_kernels.index].sum():.1f}",
            f"{_mark(worst)} (worst {100 * worst:.2f}%)",
        )
    )
    gpu = frame[frame["stream"].ne(-1)]
    worst = 0.0
    total_h = total_o = 0.0
    for stream, g in gpu.groupby("stream"):
        theirs_b = _union(g["ts"].to_numpy(), (g["ts"] + g["dur"]).to_numpy())
        ours_b = sum(v for (_, s), v in busy.items() if s == stream) / 1000.0
        worst = max(worst, _rel(ours_b, theirs_b))
        total_h, total_o = total_h + theirs_b, total_o + ours_b
    rows.append(
        (
            f"busy time, {gpu['stream'].nunique()} streams (us, total)",
            f"{total_h:.1f}",
            f"{total_o:.1f}",
            f"{_mark(worst)} (worst {100 * worst:.2f}%)",
        )
    )
    kernel_corr = set(profile.launches["correlation_id"].dropna().astype(int))
    hta_delay = launch[launch["correlation"].isin(kernel_corr)]["launch_delay"]
    delay = view.launch_delay
    if delay is not None and delay.mean_after_call_ns is not None and len(hta_delay):
        ours_d, theirs_d = delay.mean_after_call_ns / 1000.0, float(hta_delay.mean())
        rows.append(
            (
                f"launch delay after the call, mean, {len(hta_delay)} kernels (us)",
                f"{theirs_d:.2f}",
                f"{ours_d:.2f}",
                _mark(_rel(ours_d, theirs_d)),
            )
        )
    by_kind = idle.groupby("idle_category")["idle_time"].sum()
    t = host.IdleSplit(  # HTA sums its categories over streams: so do these figures
        None,
        None,
        sum(s.host_wait_ns for s in view.idle_streams),
        sum(s.launch_delay_ns for s in view.idle_streams),
        sum(s.other_ns for s in view.idle_streams),
    )
    host_h = float(by_kind.get("host_wait", 0.0))
    host_o = (t.host_wait_ns + t.launch_delay_ns) / 1000.0
    rows.append(
        ("idle: host wait (us)", f"{host_h:.1f}", f"{host_o:.1f}", _mark(_rel(host_o, host_h)))
    )
    other_h = float(by_kind.get("kernel_wait", 0.0) + by_kind.get("other", 0.0))
    rows.append(
        ("idle: other (us)", f"{other_h:.1f}", f"{t.other_ns / 1000.0:.1f}",
         _mark(_rel(t.other_ns / 1000.0, other_h)))
    )  # fmt: skip
    comm = view.communication
    if comm is not None and comm.overlap_frac is not None:
        theirs_c = float(overlap["comp_comm_overlap_pctg"].iloc[0])
        ours_c = 100 * comm.overlap_frac
        rows.append(
            ("comm./comp. overlap %", f"{theirs_c:.2f}", f"{ours_c:.2f}",
             _mark(abs(ours_c - theirs_c) / 100))
        )  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*", type=Path)
    ap.add_argument(
        "--time",
        type=int,
        metavar="K",
        default=0,
        help="also time both sides on each trace (fastest of K runs) and print the ratio",
    )
    args = ap.parse_args()
    analysis = _hta()
    logging.disable(logging.WARNING)
    traces = args.traces or [KINETO / t for t in TRACES]
    for path in traces:
        print(f"\n{path.relative_to(KINETO) if path.is_relative_to(KINETO) else path}")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = compare(path.resolve(), analysis)
        except Exception as exc:  # HTA raises many kinds on traces it cannot analyse
            print(f"  HTA or cuda-advisor failed: {type(exc).__name__}: {exc}")
            continue
        print(f"  {'figure':<44} {'HTA':>14} {'cuda-advisor':>14}  agreement")
        for figure, hta_figure, our_figure, mark in rows:
            print(f"  {figure:<44} {hta_figure:>14} {our_figure:>14}  {mark}")
        if args.time > 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mine, hta_s = timed(path.resolve(), analysis, args.time)
            print(
                f"  {'seconds (fastest of ' + str(args.time) + ')':<44} {hta_s:>14.3f} "
                f"{mine:>14.3f}  ratio {mine / hta_s:.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
