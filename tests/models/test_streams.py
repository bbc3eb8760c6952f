"""CUDA streams models (seed 004 §3.2, MODELS.md §6 Decision 6) and the `streams` command.

Times are in ms, as in the paper.  Each hand computation is written out in the test's comment.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import parsers
from advisor import cli
from advisor.errors import InputError, UsageError
from advisor.models import streams
from advisor.models.streams.analysis import (
    analyze_streams,
    device_facts,
    sequence_notes,
    to_dict,
)
from advisor.models.timeline import busy_ns, find_sequences
from advisor.profile import Profile, Provenance

MAGUS = "csv/magus_nvprof"
MATRIXMUL = f"{MAGUS}/gtx1080ti/matrixMul_trace.csv"
TWO_CKE = f"{MAGUS}/gtx950_multistream/trace_2cke_23000.csv"
S3_5M = f"{MAGUS}/gtx950_multistream/trace_s3_5m.csv"
STREAM_SIMPLE = "reports/CudaProgramming/streamSimple.sqlite"


# --- seed 004's own numbers -----------------------------------------------------------------


def test_tsc_table_is_seed_004_table_3() -> None:
    # Table 3: 8800GTS512 0.30, 9800GX2 0.10, GTX260 0.10, GTX280 0.10, GTX480 0.03, GTX580 0.01
    assert list(streams.TSC_MS_BY_GPU.values()) == [0.30, 0.10, 0.10, 0.10, 0.03, 0.01]
    assert streams.tsc_for_gpu("NVIDIA GeForce GTX 480") == 0.03
    assert streams.tsc_for_gpu("GeForce 8800 GTS 512") == 0.30
    assert streams.tsc_for_gpu("GeForce GTX 285") is None  # no fuzzy matching
    assert streams.tsc_for_gpu("GeForce GTX 580") == streams.DEFAULT_TSC_MS


@pytest.mark.parametrize(
    ("cc", "model"),
    [
        # Table 2: 8800GTS512 and 9800GX2 1.1, GTX260/280 1.3, GTX480/580 2.0
        ("1.1", streams.CC1),
        ("1.3", streams.CC1),
        ("2.0", streams.CC2),
        ("2.1", streams.CC2),
        ("1.0", streams.NO_OVERLAP),  # §1: overlap only from cc 1.1
        ("3.0", streams.PIPELINE),  # not in the seed: Decision 6
        ("8.9", streams.PIPELINE),
    ],
)
def test_model_by_compute_capability(cc: str, model: streams.StreamModel) -> None:
    assert streams.model_for_cc(streams.parse_cc(cc)) == model


def test_only_the_seed_models_are_labelled_as_the_papers() -> None:
    assert streams.CC1.from_paper and streams.CC2.from_paper
    assert not streams.PIPELINE.from_paper and "Decision 6" in streams.PIPELINE.source
    assert not streams.NO_OVERLAP.from_paper


@pytest.mark.parametrize("text", ["6", "six.one", "6.1.2", ""])
def test_parse_cc_rejects_malformed(text: str) -> None:
    with pytest.raises(UsageError, match=r"MAJOR\.MINOR"):
        streams.parse_cc(text)


# --- cc 1.x: eq. (1)-(4) ---------------------------------------------------------------------


def test_cc1_dominant_kernel_eq3() -> None:
    # t_T = 4 + 6 = 10, t_E = 20, n = 4, t_sc = 0.1: 10 > 20 + 2.5 is false -> eq. (3)
    # t = 20 + 10/4 + 0.1*4 = 22.9
    assert streams.predict_cc1_ms(4.0, 20.0, 6.0, 4, 0.1) == pytest.approx(22.9)


def test_cc1_dominant_transfers_eq1() -> None:
    # t_T = 10, t_E = 8, n = 6: 10 > 8 + 10/6 = 9.67 -> eq. (1): t = 10 + 0.1*6 = 10.6
    assert streams.predict_cc1_ms(6.0, 8.0, 4.0, 6, 0.1) == pytest.approx(10.6)


def test_cc1_optimum_at_eq2_intersection() -> None:
    # §3.1.1: the best n is where the dominant-kernel estimate meets t_T: t_E + t_T/n = t_T,
    # n = t_T/(t_T - t_E) = 10/2 = 5 (eq. 2).  Curve with t_sc = 0.1 (GTX 280):
    # n=4: 8 + 2.5 + 0.4 = 10.9; n=5: 10 + 0.5 = 10.5; n=6: 10 + 0.6 = 10.6
    pred = streams.predict_streams(streams.CC1, 6.0, 8.0, 4.0, t_sc_ms=0.1)
    assert pred.optimal_n == 5
    assert pred.predicted_optimal_ms == pytest.approx(10.5)
    assert pred.closed_form.n == pytest.approx(5.0)
    assert pred.closed_form.equation.startswith("eq. (2)")
    assert pred.regime == "dominant transfers"


def test_cc1_optimum_eq4_minimises_eq3() -> None:
    # t_T = 10, t_E = 20, t_sc = 0.1: eq. (4) sqrt(10/0.1) = 10.
    # n=9: 20 + 1.111 + 0.9 = 22.011; n=10: 20 + 1 + 1 = 22.0; n=11: 20 + 0.909 + 1.1 = 22.009
    pred = streams.predict_streams(streams.CC1, 4.0, 20.0, 6.0, t_sc_ms=0.1)
    assert pred.optimal_n == 10
    assert pred.predicted_optimal_ms == pytest.approx(22.0)
    assert pred.closed_form.n == pytest.approx(10.0)
    assert pred.regime == "dominant kernel"


def test_cc1_eq4_when_it_comes_before_the_eq2_intersection() -> None:
    # t_T = 10 > t_E = 9.9, but eq. (2) 10/0.1 = 100 lies beyond eq. (4) sqrt(10/0.1) = 10:
    # the curve reaches its minimum on eq. (3) first.  At n = 10: 10 > 9.9 + 1 false -> eq. (3).
    pred = streams.predict_streams(streams.CC1, 5.0, 9.9, 5.0, t_sc_ms=0.1)
    assert pred.optimal_n == 10
    assert pred.closed_form.equation.startswith("eq. (4)")


# --- cc 2.x: eq. (5)-(8) ---------------------------------------------------------------------


def test_cc2_dominant_transfers_eq5_and_eq6() -> None:
    # t_Thd = 12 > t_E = 3, t_Tdh = 3, t_sc = 0.03 (GTX 480): eq. (6) sqrt(3/0.03) = 10
    # eq. (5) n=10: 12 + 0.3 + 3 + 0.3 = 15.6; n=9: 12 + 0.333 + 3 + 0.27 = 15.603
    assert streams.predict_cc2_ms(12.0, 3.0, 3.0, 10, 0.03) == pytest.approx(15.6)
    pred = streams.predict_streams(streams.CC2, 12.0, 3.0, 3.0, t_sc_ms=0.03)
    assert pred.optimal_n == 10
    assert pred.closed_form.n == pytest.approx(10.0)
    assert pred.closed_form.equation.startswith("eq. (6)")


def test_cc2_dominant_kernel_eq7_and_eq8() -> None:
    # t_Thd = 3 < t_E = 12: only the HtoD copy is hidden; eq. (8) sqrt(3/0.03) = 10
    # eq. (7) n=10: 0.3 + 12 + 3 + 0.3 = 15.6; n=1: 3 + 12 + 3 + 0.03 = 18.03
    assert streams.predict_cc2_ms(3.0, 12.0, 3.0, 10, 0.03) == pytest.approx(15.6)
    pred = streams.predict_streams(streams.CC2, 3.0, 12.0, 3.0, t_sc_ms=0.03)
    assert (pred.optimal_n, pred.regime) == (10, "dominant kernel")
    assert pred.closed_form.equation.startswith("eq. (8)")
    assert pred.saving_ms == pytest.approx(18.03 - 15.6)
    assert pred.saving_frac == pytest.approx((18.03 - 15.6) / 18.03)


def test_cc2_never_hides_the_dtoh_copy() -> None:
    # however many streams, t >= t_E + t_Tdh (eq. 7) — the implicit synchronization of §3.1.2
    curve = streams.predict_curve_ms(streams.CC2, 1.0, 5.0, 4.0, 0.001, 64)
    assert min(curve) > 5.0 + 4.0


# --- Decision 6 and cc 1.0 --------------------------------------------------------------------


def test_pipeline_decision_6() -> None:
    # t_Thd = 2, t_E = 4, t_Tdh = 2, n = 4, t_sc = 0.01: 8/4 + 3/4*4 + 0.04 = 5.04
    assert streams.predict_pipeline_ms(2.0, 4.0, 2.0, 4, 0.01) == pytest.approx(5.04)
    # optimum sqrt((8 - 4)/0.01) = 20: n=20: 0.4 + 3.8 + 0.2 = 4.4; n=19: 4.40053; n=21: 4.40048
    pred = streams.predict_streams(streams.PIPELINE, 2.0, 4.0, 2.0, t_sc_ms=0.01)
    assert pred.optimal_n == 20
    assert pred.predicted_optimal_ms == pytest.approx(4.4)
    assert pred.closed_form.n == pytest.approx(20.0)
    assert pred.regime == "kernel stage bound"


def test_no_overlap_on_cc_1_0_never_pays() -> None:
    # t = 1 + 2 + 3 + 0.1 n: smallest at n = 1
    pred = streams.predict_streams(streams.NO_OVERLAP, 1.0, 2.0, 3.0, t_sc_ms=0.1)
    assert pred.optimal_n == 1 and pred.saving_ms == 0.0


@pytest.mark.parametrize("model", [streams.NO_OVERLAP, streams.CC1, streams.CC2, streams.PIPELINE])
def test_one_stream_is_the_sequential_time_plus_one_tsc(model: streams.StreamModel) -> None:
    # §2: the sequential time is t_E + t_T; every model at n = 1 adds t_oh = t_sc only
    # 1.5 + 2.5 + 0.5 + 0.2 = 4.7
    curve = streams.predict_curve_ms(model, 1.5, 2.5, 0.5, 0.2, max_streams=3)
    assert curve[0] == pytest.approx(4.7)
    assert len(curve) == 3


def test_optimum_at_the_last_evaluated_n_is_flagged() -> None:
    # Decision 6 example above has its optimum at 20; evaluating only n <= 4 stops at 4
    prof = _profile([("HtoD", 7, 0, 2e6), ("k", 7, 2e6, 4e6), ("DtoH", 7, 6e6, 2e6)])
    (result,) = analyze_streams(prof, cc="7.0", max_streams=4).results
    assert result.prediction.optimal_n == 4
    assert any("raise --max-streams" in n for n in result.notes)


def test_optimal_streams_prefers_the_smaller_n_on_ties() -> None:
    assert streams.optimal_streams((3.0, 2.0, 2.0, 4.0)) == 2


@pytest.mark.parametrize("tsc", [0.0, -0.1, math.nan, math.inf])
def test_tsc_must_be_positive(tsc: float) -> None:
    with pytest.raises(UsageError, match="--tsc"):
        streams.predict_streams(streams.CC1, 1.0, 1.0, 1.0, t_sc_ms=tsc)


# --- finding sequences ------------------------------------------------------------------------

PROV = Provenance(path="hand.csv", format="test", profiler="nvprof")


def _profile(
    ops: list[tuple[str, int, float, float]], gpu: str = "Hand GPU", **devices: list[object]
) -> Profile:
    """ops: (kind or kernel name, stream, start_ns, duration_ns); devices: extra device columns."""
    kernels = [o for o in ops if o[0] not in ("HtoD", "DtoH", "memset")]
    copies = [o for o in ops if o[0] in ("HtoD", "DtoH", "memset")]

    def frame(rows: list[tuple[str, int, float, float]], first: str) -> pd.DataFrame:
        return pd.DataFrame(
            {
                first: [r[0] for r in rows],
                "device": gpu,
                "stream": [r[1] for r in rows],
                "start_ns": [r[2] for r in rows],
                "duration_ns": [r[3] for r in rows],
            }
        )

    launches = frame(kernels, "name").assign(grid_x=200, grid_y=1, grid_z=1)
    dev = pd.DataFrame({"device_id": [0], "name": [gpu], **devices}) if devices else None
    return Profile(
        provenance=(PROV,), launches=launches, transfers=frame(copies, "kind"), devices=dev
    )


def test_one_sequence_per_htod_kernel_dtoh_run() -> None:
    prof = _profile(
        [
            ("HtoD", 7, 0, 10),
            ("HtoD", 7, 10, 5),
            ("memset", 7, 16, 1),  # ignored: neither counted nor breaking the sequence
            ("k", 7, 20, 30),
            ("k", 7, 50, 20),
            ("DtoH", 7, 80, 8),
            ("k", 7, 100, 5),  # a kernel after the DtoH, with no HtoD before it: unmatched
            ("DtoH", 7, 110, 2),  # unmatched
            ("HtoD", 7, 200, 4),
            ("DtoH", 7, 210, 4),  # HtoD -> DtoH with no kernel: both unmatched
            ("HtoD", 7, 300, 1),
            ("k", 7, 301, 2),
            ("DtoH", 7, 303, 3),
        ]
    )
    tl = find_sequences(prof)
    first, second = tl.sequences
    # t_Thd = 10 + 5 = 15, t_E = 30 + 20 = 50, t_Tdh = 8, span 0 .. 88
    assert (first.htod_ns, first.kernel_ns, first.dtoh_ns) == (15, 50, 8)
    assert (first.htod_count, first.kernel_count, first.dtoh_count) == (2, 2, 1)
    assert first.measured_ns == 88 and first.streams == (7,)
    assert (second.htod_ns, second.kernel_ns, second.dtoh_ns) == (1, 2, 3)
    assert (tl.unmatched_htod, tl.unmatched_kernels, tl.unmatched_dtoh) == (1, 1, 2)


def test_sequences_are_per_stream() -> None:
    # stream 1 copies in, stream 2 computes, stream 1 copies out: no stream has the whole shape
    prof = _profile([("HtoD", 1, 0, 5), ("k", 2, 10, 5), ("DtoH", 1, 20, 5)])
    with pytest.raises(InputError, match="found 1 HtoD, 1 kernel, 1 DtoH"):
        find_sequences(prof)


def test_overlapping_streams_merge_into_one_sequence_with_busy_times() -> None:
    # stream 1: HtoD [0,10) k [10,30) DtoH [30,35); stream 2: HtoD [5,15) k [20,40) DtoH [40,45)
    # HtoD busy = union [0,15) = 15 (not 10 + 10), kernels [10,40) = 30, DtoH 5 + 5 = 10
    prof = _profile(
        [
            ("HtoD", 1, 0, 10),
            ("k", 1, 10, 20),
            ("DtoH", 1, 30, 5),
            ("HtoD", 2, 5, 10),
            ("k", 2, 20, 20),
            ("DtoH", 2, 40, 5),
        ]
    )
    (seq,) = find_sequences(prof).sequences
    assert seq.streams == (1, 2)
    assert (seq.htod_ns, seq.kernel_ns, seq.dtoh_ns, seq.measured_ns) == (15, 30, 10, 45)
    assert seq.grid_blocks == 400  # 200 blocks per stream's largest launch, summed


def test_busy_ns_is_the_union_length() -> None:
    # [0,4) + [2,6) -> [0,6) = 6; [10,11) -> 1; total 7
    assert busy_ns(((0, 4), (10, 11), (2, 6))) == 7
    assert busy_ns(()) == 0


def test_no_copies_is_an_input_error() -> None:
    prof = _profile([("k", 7, 0, 5)])
    with pytest.raises(InputError, match="no host<->device copies"):
        find_sequences(prof)


def test_no_start_times_is_an_input_error() -> None:
    prof = _profile([("k", 7, math.nan, 5), ("HtoD", 7, math.nan, 5)])
    with pytest.raises(InputError, match="no start times"):
        find_sequences(prof)


# --- analysis on hand-built profiles --------------------------------------------------------


def test_cc_and_tsc_come_from_the_profile_and_table_3() -> None:
    # a GTX 480 (cc 2.0 in the devices table): t_sc 0.03 from Table 3, eq. (5)-(8)
    prof = _profile(
        [("HtoD", 7, 0, 3e6), ("k", 7, 3e6, 12e6), ("DtoH", 7, 15e6, 3e6)],
        gpu="GeForce GTX 480",
        compute_capability=["2.0"],
    )
    (result,) = analyze_streams(prof).results
    assert result.device.cc == (2, 0) and result.device.cc_source == "profile"
    assert result.device.t_sc_ms == 0.03 and result.device.tsc_source == "seed 004 Table 3"
    # t_Thd = 3 < t_E = 12 ms: the cc 2.x example above, optimum 10 at 15.6 ms
    assert result.prediction.model == streams.CC2
    assert result.prediction.optimal_n == 10
    assert result.prediction.predicted_optimal_ms == pytest.approx(15.6)
    assert result.measured_ms == 18.0 and result.saving_vs_measured_ms == pytest.approx(2.4)


def test_unknown_cc_asks_for_the_option() -> None:
    prof = _profile([("HtoD", 7, 0, 1), ("k", 7, 1, 1), ("DtoH", 7, 2, 1)])
    with pytest.raises(UsageError, match="--cc"):
        analyze_streams(prof)
    assert analyze_streams(prof, cc="3.5").results[0].device.cc_source == "--cc"


def test_small_chunks_are_flagged() -> None:
    # 200 blocks per launch, 28 SMs, optimum n = 20 (Decision 6 example): 10 blocks a chunk < 28
    prof = _profile(
        [("HtoD", 7, 0, 2e6), ("k", 7, 2e6, 4e6), ("DtoH", 7, 6e6, 2e6)],
        sm_count=[28],
        compute_capability=["6.1"],
    )
    (result,) = analyze_streams(prof).results
    assert result.prediction.optimal_n == 20
    assert any("about 10 blocks for 28 SMs" in n for n in result.notes)
    assert any("t_sc 0.01 ms assumed" in n for n in result.notes)


# --- real traces ------------------------------------------------------------------------------


def test_matrixmul_trace_gtx1080ti(real_profiles: Path) -> None:
    # raw rows (ms): HtoD 1.028854 + 2.053933 = 3.082787; DtoH 1.944394; 301 matrixMulCUDA
    # launches between them; span 584.620743 .. 611.452752 + 1.944394 = 613.397146
    path = real_profiles / MATRIXMUL
    analysis = analyze_streams(parsers.read(path), cc="6.1")
    # 301 launches for 3 copies: more than 2 per copy, so no streams advice (a loop on data kept
    # on the GPU), and one line says why
    assert analysis.results == ()
    (skipped,) = analysis.without_advice
    seq = skipped.sequence
    assert skipped.index == 1
    assert (seq.htod_count, seq.kernel_count, seq.dtoh_count) == (2, 301, 1)
    assert seq.htod_ns / 1e6 == pytest.approx(3.082787)
    assert seq.dtoh_ns / 1e6 == pytest.approx(1.944394)
    assert seq.measured_ns / 1e6 == pytest.approx(613.397146 - 584.620743)
    with path.open(newline="") as handle:  # t_E recomputed from the raw CSV rows
        rows = list(csv.reader(handle))[5:]
    kernel_ms = sum(float(r[1]) for r in rows if r[-1].startswith("void matrixMulCUDA"))
    assert seq.kernel_ns / 1e6 == pytest.approx(kernel_ms)
    assert seq.kernel_ns / 1e6 == pytest.approx(23.031, abs=1e-3)
    assert analysis.timeline.notes == (
        "no streams advice for sequence 1: its 301 kernel launches run back to back on data "
        "already on the GPU, between 2 HtoD copies and 1 DtoH copy; streams gain by overlapping "
        "copies with kernels, which needs copies around the kernels (at most 2 launches per "
        "copy)",
    )
    # the model itself on these times (what the advice would have been): cc 6.1 -> Decision 6,
    # kernel-bound: sqrt((3.083 + 1.944)/0.01) = 22.4 -> n = 22
    pred = streams.predict_streams(
        streams.PIPELINE, seq.htod_ns / 1e6, seq.kernel_ns / 1e6, seq.dtoh_ns / 1e6, 0.01
    )
    assert pred.optimal_n == 22
    assert pred.closed_form.n == pytest.approx(math.sqrt((3.082787 + 1.944394) / 0.01))
    assert pred.saving_frac == pytest.approx(0.163, abs=1e-3)


def test_cc_and_sm_count_from_the_device_database(real_profiles: Path) -> None:
    # nvprof CSV has no compute capability; GTX 1080 Ti is cc 6.1 with 28 SMs in advisor/data.
    # matrixMul launches 20 x 10 = 200 blocks; at n = 22 a chunk has 200/22 = 9 blocks < 28 SMs
    prof = parsers.read(real_profiles / MATRIXMUL)
    (seq,) = find_sequences(prof).sequences
    device = device_facts(prof, seq.device, None, None)
    assert (device.cc, device.cc_source) == ((6, 1), "device database")
    assert device.sm_count == 28 and seq.grid_blocks == 200
    pred = streams.predict_streams(
        streams.model_for_cc(device.cc),
        seq.htod_ns / 1e6,
        seq.kernel_ns / 1e6,
        seq.dtoh_ns / 1e6,
        device.t_sc_ms,
    )
    assert any("about 9 blocks for 28 SMs" in n for n in sequence_notes(seq, device, pred))


def test_two_stream_trace_gtx950(real_profiles: Path) -> None:
    # raw rows (Start ms, Duration us):
    #   stream 13: HtoD 528.792247 16.704, HtoD 528.810167 16.480, kernel 528.970104 66.145,
    #              DtoH 529.039609 16.032
    #   stream 14: HtoD 528.827927 21.152, HtoD 528.850295 16.416, kernel 529.003769 79.040,
    #              DtoH 529.083737 15.905
    # the two streams overlap -> one sequence on streams 13,14.
    # t_Thd: the four HtoD do not overlap: 16.704 + 16.480 + 21.152 + 16.416 = 70.752 us
    # t_E: kernels overlap: 528.970104 .. 529.003769 + 0.079040 = 529.082809 -> 112.705 us
    # t_Tdh: 16.032 + 15.905 = 31.937 us; measured 528.792247 .. 529.099642 = 307.395 us
    prof = parsers.read(real_profiles / TWO_CKE)
    (result,) = analyze_streams(prof, cc="5.2").results
    seq, pred = result.sequence, result.prediction
    assert seq.streams == (13, 14)
    assert pred.t_thd_ms == pytest.approx(0.070752)
    assert pred.t_e_ms == pytest.approx(0.112705)
    assert pred.t_tdh_ms == pytest.approx(0.031937)
    assert result.measured_ms == pytest.approx(0.307395)
    assert result.measured_streams == 2
    # Decision 6 at n = 2: 0.215394/2 + 1/2 * 0.112705 + 0.02 = 0.18405
    assert result.predicted_at_measured_ms == pytest.approx(0.215394 / 2 + 0.112705 / 2 + 0.02)


def test_three_stream_trace_gtx950(real_profiles: Path) -> None:
    # the six 19 MB HtoD copies of streams 13-15 overlap each other (663.643539 .. 677.543140 +
    # 6.043646 = 683.586786): busy 19.943 ms, not the 47.4 ms their durations add up to
    prof = parsers.read(real_profiles / S3_5M)
    (result,) = analyze_streams(prof, cc="5.2").results
    assert result.sequence.streams == (13, 14, 15)
    assert result.prediction.t_thd_ms == pytest.approx(683.586786 - 663.643539)
    assert result.prediction.t_tdh_ms == pytest.approx(3.134561 + 3.135137 + 3.133921)
    assert result.measured_ms == pytest.approx(714.135936 + 3.133921 - 663.643539)


def test_trace_without_copies_says_what_is_needed(real_profiles: Path) -> None:
    # streamSimple: 16 kernels on 4 streams (RTX 4090, nsys SQLite), no memcpy at all
    result = CliRunner().invoke(cli.main, ["streams", str(real_profiles / STREAM_SIMPLE)])
    assert result.exit_code == 3
    assert "no host<->device copies" in result.output
    assert "print-gpu-trace" in result.output
    assert len(result.output.strip().splitlines()) == 1


# --- the command ------------------------------------------------------------------------------


def test_cli_text_on_the_synthetic_trace(samples: Path) -> None:
    # synthetic transpose: HtoD 5734.688 us, transposeNaive 415.232 + 412.480 + 412.896 =
    # 1240.608 us, DtoH 5912.416 us; the later kernels/DtoH have no HtoD of their own
    path = str(samples / "synthetic_nvprof_gputrace.csv")
    result = CliRunner().invoke(cli.main, ["streams", path, "--cc", "7.0"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "not in a sequence: 6 kernels, 2 DtoH" in out
    assert "t_Thd 5.735 ms, t_E 1.241 ms, t_Tdh 5.912 ms" in out
    assert "project extension, not the paper's" in out and "Decision 6" in out
    # DtoH-bound: sqrt((5.734688 + 1.240608)/0.01) = 26.4 -> n = 26
    assert "n = 26 (DtoH stage bound)" in out
    again = CliRunner().invoke(cli.main, ["streams", path, "--cc", "7.0"])
    assert again.output == out


def test_cli_paper_model_label_and_tsc(samples: Path) -> None:
    path = str(samples / "synthetic_nvprof_gputrace.csv")
    result = CliRunner().invoke(cli.main, ["streams", path, "--cc", "2.0", "--tsc", "0.03"])
    assert result.exit_code == 0, result.output
    assert "[paper: seed 004 §3.2.2 eq. (5)-(8)]" in result.output
    assert "t_sc        0.03 ms (--tsc)" in result.output


def test_cli_json_has_the_full_curve(samples: Path) -> None:
    path = str(samples / "synthetic_nsys_cuda_gpu_trace.csv")
    args = ["streams", path, "--cc", "1.3", "--max-streams", "16", "--json"]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 0, result.output
    (seq,) = json.loads(result.output)["sequences"]
    assert len(seq["curve_ms"]) == 16
    assert seq["model"] == "cc1.x" and seq["model_from_paper"] is True
    assert seq["curve_ms"][seq["optimal_n"] - 1] == min(seq["curve_ms"])
    assert seq["optimal_n"] < 16 and not any("--max-streams" in n for n in seq["notes"])
    assert seq["predicted_1_ms"] == pytest.approx(
        seq["t_thd_ms"] + seq["t_e_ms"] + seq["t_tdh_ms"] + seq["t_sc_ms"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cc", "seven"], "MAJOR.MINOR"),
        (["--cc", "7.0", "--tsc", "0"], "--tsc"),
        (["--cc", "7.0", "--max-streams", "0"], "max-streams"),
    ],
)
def test_cli_bad_options_exit_2(samples: Path, args: list[str], message: str) -> None:
    path = str(samples / "synthetic_nvprof_gputrace.csv")
    result = CliRunner().invoke(cli.main, ["streams", path, *args])
    assert result.exit_code == 2
    assert message in result.output


def test_cli_unknown_device_asks_for_cc(samples: Path, tmp_path: Path) -> None:
    text = (samples / "synthetic_nvprof_gputrace.csv").read_text()
    trace = tmp_path / "trace.csv"
    trace.write_text(text.replace("Tesla V100-SXM2-16GB", "Imaginary GPU 9000"))
    result = CliRunner().invoke(cli.main, ["streams", str(trace)])
    assert result.exit_code == 2
    assert "'Imaginary GPU 9000' unknown; pass --cc" in result.output


def test_cli_summary_file_exit_3(samples: Path) -> None:
    path = str(samples / "synthetic_nvprof_summary.csv")
    result = CliRunner().invoke(cli.main, ["streams", path])
    assert result.exit_code == 3
    assert "only summaries, no timeline" in result.output


def test_zero_durations_give_n_1_and_valid_json() -> None:
    # t = 0 + 0.01 n on every branch: n = 1, no saving, closed form sqrt(0/t_sc) = 0
    prof = _profile([("HtoD", 7, 0, 0), ("k", 7, 0, 0), ("DtoH", 7, 0, 0)])
    view = to_dict(analyze_streams(prof, cc="2.0"))
    json.dumps(view, allow_nan=False)
    (seq,) = view["sequences"]
    assert (seq["optimal_n"], seq["saving_ms"], seq["closed_form_n"]) == (1, 0.0, 0.0)


# --- which sequences get streams advice -------------------------------------------------------


def _run(
    kernels: int, htod: int = 1, dtoh: int = 1, stream: int = 7, at: float = 0
) -> list[tuple[str, int, float, float]]:
    """``htod`` HtoD copies, ``kernels`` launches and ``dtoh`` DtoH copies of 1 ms each, back to
    back on ``stream`` from ``at`` ns."""
    kinds = ["HtoD"] * htod + ["k"] * kernels + ["DtoH"] * dtoh
    return [(kind, stream, at + i * 1e6, 1e6) for i, kind in enumerate(kinds)]


@pytest.mark.parametrize(("kernels", "advised"), [(1, True), (3, True), (4, True), (5, False)])
def test_advice_needs_copies_around_the_kernels(kernels: int, advised: bool) -> None:
    # one HtoD and one DtoH copy: 2 copies allow at most 2 x 2 = 4 launches
    analysis = analyze_streams(_profile(_run(kernels)), cc="7.0")
    assert len(analysis.results) == int(advised)
    assert len(analysis.without_advice) == int(not advised)
    assert any(n.startswith("no streams advice") for n in analysis.timeline.notes) != advised


def test_a_loop_between_copies_gets_one_line_instead_of_advice() -> None:
    # HtoD, 5 launches, DtoH (5 > 2 x 2): the line names the counts
    analysis = analyze_streams(_profile(_run(5)), cc="7.0")
    (note,) = analysis.timeline.notes
    assert note == (
        "no streams advice for sequence 1: its 5 kernel launches run back to back on data "
        "already on the GPU, between 1 HtoD copy and 1 DtoH copy; streams gain by overlapping "
        "copies with kernels, which needs copies around the kernels (at most 2 launches per "
        "copy)"
    )


def test_advised_and_skipped_sequences_keep_their_indices() -> None:
    # sequence 1 (0 .. 3 ms): HtoD, k, DtoH -> advised; sequence 2 (from 10 ms): 2 HtoD,
    # 7 launches, 1 DtoH (7 > 2 x 3) -> none; sequence 3 (from 30 ms): 2 HtoD, 6 k, 1 DtoH
    # (6 <= 6) -> advised
    ops = _run(1) + _run(7, htod=2, at=10e6) + _run(6, htod=2, at=30e6)
    analysis = analyze_streams(_profile(ops), cc="7.0")
    assert [r.index for r in analysis.results] == [1, 3]
    assert [w.index for w in analysis.without_advice] == [2]
    assert analysis.timeline.notes[-1].startswith("no streams advice for sequence 2: its 7 ")
    view = to_dict(analysis)
    assert [s["index"] for s in view["sequences"]] == [1, 3]
    (skipped,) = view["without_advice"]
    assert (skipped["htod_count"], skipped["kernel_count"], skipped["dtoh_count"]) == (2, 7, 1)
    assert skipped["streams"] == [7] and skipped["start_ns"] == 10e6


def test_several_skipped_sequences_share_one_line() -> None:
    # three loops: 5 launches for 2 copies, 9 for 3 copies (ratio 3), 12 for 2 (ratio 6, the
    # worst, named in the line)
    ops = _run(5) + _run(9, htod=2, at=20e6) + _run(12, at=40e6)
    analysis = analyze_streams(_profile(ops), cc="7.0")
    assert analysis.results == ()
    (note,) = analysis.timeline.notes
    assert note.startswith(
        "no streams advice for 3 sequences (1, 2, 3): their kernels run back to back on data "
        "already on the GPU (up to 12 launches between 2 copies); "
    )


def test_only_skipped_sequences_need_no_compute_capability() -> None:
    # an unknown GPU and no --cc: nothing is modelled, so nothing asks for --cc
    analysis = analyze_streams(_profile(_run(9), gpu="Imaginary GPU 9000"))
    assert analysis.results == () and len(analysis.without_advice) == 1
    with pytest.raises(UsageError, match="--cc"):
        analyze_streams(_profile(_run(2), gpu="Imaginary GPU 9000"))


def test_cli_says_why_there_is_no_advice(real_profiles: Path) -> None:
    result = CliRunner().invoke(cli.main, ["streams", str(real_profiles / MATRIXMUL)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == "1 HtoD -> kernel -> DtoH sequence (1 without streams advice)"
    assert lines[2].startswith("note: no streams advice for sequence 1: its 301 kernel launches")
    assert "optimum" not in result.output
    view = json.loads(
        CliRunner().invoke(cli.main, ["streams", str(real_profiles / MATRIXMUL), "--json"]).output
    )
    assert view["sequences"] == [] and view["without_advice"][0]["kernel_count"] == 301


def test_report_streams_section_advises_only_where_copies_overlap(
    real_profiles: Path, samples: Path
) -> None:
    from advisor.criteria import evaluate
    from advisor.report import build as report

    # matrixMul: 301 launches between 3 copies -> no sequence advised, one line why
    loop = parsers.read(real_profiles / MATRIXMUL)
    built = report.build(evaluate(loop), loop)
    assert built.streams == ()
    (note,) = built.streams_notes
    assert note.startswith("no streams advice for sequence 1: its 301 kernel launches")
    # the synthetic transpose trace: HtoD, 3 launches, DtoH (3 <= 4) -> advised, no such line
    trace = parsers.read(samples / "synthetic_nvprof_gputrace.csv")
    built = report.build(evaluate(trace), trace)
    assert [s.index for s in built.streams] == [1]
    assert not any("no streams advice" in n for n in built.streams_notes)
