"""Streamed execution time and the optimal number of CUDA streams (seed 004; MODELS.md §6).

Seed ``004_ed0d89054b836cf2.txt`` (Gómez-Luna et al., "Performance models for CUDA streams on
NVIDIA GeForce series") models a workload that copies its input to the GPU (t_Thd), runs a kernel
(t_E) and copies the result back (t_Tdh), split into ``nStreams`` chunks.  All times are in ms, as
in the paper; t_T = t_Thd + t_Tdh and the stream overhead is t_oh = t_sc · nStreams (§3.2).

Which model applies depends on the compute capability (cc):

* cc 1.0: no overlap of copies and kernels (seed 004 §1: ``cudaMemcpyAsync`` overlaps only from
  cc 1.1), so streams only add overhead.  The project's reading of the seed, not a paper model.
* cc 1.1 – 1.x: equations (1)–(4), §3.2.1 (one DMA engine, no implicit synchronization).
* cc 2.x: equations (5)–(8), §3.2.2 (one DMA engine, implicit synchronization: only the HtoD copy
  overlaps the kernels).  The paper validates cc 1.1, 1.3 and 2.0 boards (Table 2).
* cc ≥ 3.0: not covered by the seed.  **Decision 6** (MODELS.md §6): a three-stage pipeline
  (two copy engines), the project's extension, not the paper's.

Every predictor is a pure function of (t_Thd, t_E, t_Tdh, n, t_sc).  The optimal n is found by
evaluating the model for n = 1 … max_streams (ties → the smaller n); the paper's closed-form
estimate is reported beside it.  Zero-denominator policy: t_sc must be > 0 (:func:`check_tsc`);
a closed form with a zero denominator is never chosen (eq. (2) needs t_T > t_E).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from advisor.errors import UsageError

SEED = "seed 004 (004_ed0d89054b836cf2.txt)"

#: t_sc (ms) per GPU, seed 004 Table 3 ("Values of t_sc for devices in Table 2"); the boards'
#: compute capabilities are in its Table 2 (1.1, 1.1, 1.3, 1.3, 2.0, 2.0).
TSC_MS_BY_GPU: dict[str, float] = {
    "GeForce 8800 GTS 512": 0.30,
    "GeForce 9800 GX2": 0.10,
    "GeForce GTX 260": 0.10,
    "GeForce GTX 280": 0.10,
    "GeForce GTX 480": 0.03,
    "GeForce GTX 580": 0.01,
}

#: t_sc for a GPU not in Table 3: the newest board there (GTX 580) has the smallest value, and
#: stream creation has not become slower since; measure your own and pass --tsc.
DEFAULT_TSC_MS = 0.01

#: the paper evaluates nStreams up to 64 ("divisors of 15 M between 2 and 64", §3.1.1)
DEFAULT_MAX_STREAMS = 64


@dataclass(frozen=True)
class StreamModel:
    """Which equations predict the streamed time, and whose they are."""

    key: str  # "cc1.0", "cc1.x", "cc2.x", "pipeline"
    title: str
    source: str
    from_paper: bool  # False: the project's extension or reading, not an equation of the seed


NO_OVERLAP = StreamModel(
    "cc1.0",
    "no copy/kernel overlap (cc 1.0)",
    "seed 004 §1: copy/kernel overlap needs cc >= 1.1",
    False,
)
CC1 = StreamModel("cc1.x", "cc 1.x, one DMA engine", "seed 004 §3.2.1 eq. (1)-(4)", True)
CC2 = StreamModel(
    "cc2.x",
    "cc 2.x, one DMA engine, implicit synchronization",
    "seed 004 §3.2.2 eq. (5)-(8)",
    True,
)
PIPELINE = StreamModel(
    "pipeline",
    "three-stage pipeline, two copy engines (cc >= 3.0)",
    "MODELS.md §6 Decision 6; seed 004 does not cover two copy engines",
    False,
)


def parse_cc(text: str) -> tuple[int, int]:
    """``"6.1"`` → (6, 1); a :class:`UsageError` for anything else."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", str(text))
    if not match:
        raise UsageError(f"compute capability {text!r}: expected MAJOR.MINOR, e.g. 6.1")
    return int(match.group(1)), int(match.group(2))


def model_for_cc(cc: tuple[int, int]) -> StreamModel:
    """The model for compute capability ``cc`` (cut-offs in the module docstring)."""
    major, minor = cc
    if major <= 1:
        return NO_OVERLAP if minor == 0 else CC1
    if major == 2:
        return CC2
    return PIPELINE


def check_tsc(t_sc_ms: float) -> float:
    """Return ``t_sc_ms`` if it is a finite positive time, else raise :class:`UsageError`."""
    if not (math.isfinite(t_sc_ms) and t_sc_ms > 0):
        raise UsageError(f"--tsc {t_sc_ms}: the stream-creation time must be > 0 ms")
    return t_sc_ms


def _gpu_key(name: str) -> str:
    """Lower-case alphanumerics without vendor words: "NVIDIA GeForce GTX 480" → "gtx480"."""
    words = re.sub(r"[^0-9a-z]+", " ", name.lower()).split()
    return "".join(w for w in words if w not in ("nvidia", "geforce"))


def tsc_for_gpu(name: str) -> float | None:
    """t_sc (ms) of ``name`` from seed 004 Table 3, ``None`` when the board is not there."""
    wanted = _gpu_key(name)
    for gpu, t_sc in TSC_MS_BY_GPU.items():
        if _gpu_key(gpu) == wanted:
            return t_sc
    return None


def predict_no_overlap_ms(
    t_thd_ms: float, t_e_ms: float, t_tdh_ms: float, n_streams: int, t_sc_ms: float
) -> float:
    """t = t_Thd + t_E + t_Tdh + t_sc·n: nothing overlaps, streams only cost t_oh (cc 1.0)."""
    return t_thd_ms + t_e_ms + t_tdh_ms + t_sc_ms * n_streams


def predict_cc1_ms(
    t_thd_ms: float, t_e_ms: float, t_tdh_ms: float, n_streams: int, t_sc_ms: float
) -> float:
    """Streamed time on cc 1.x, seed 004 §3.2.1.

    eq. (1) if t_T > t_E + t_T/n:  t = t_T + t_oh          (dominant transfers)
    eq. (3) otherwise:             t = t_E + t_T/n + t_oh  (dominant kernel)
    with t_T = t_Thd + t_Tdh, t_oh = t_sc·n.  The condition depends on n, so both regimes can
    occur on one curve; at equality (1) and (3) give the same value.
    """
    t_t = t_thd_ms + t_tdh_ms
    t_oh = t_sc_ms * n_streams
    if t_t > t_e_ms + t_t / n_streams:
        return t_t + t_oh
    return t_e_ms + t_t / n_streams + t_oh


def predict_cc2_ms(
    t_thd_ms: float, t_e_ms: float, t_tdh_ms: float, n_streams: int, t_sc_ms: float
) -> float:
    """Streamed time on cc 2.x, seed 004 §3.2.2 (only the HtoD copy overlaps the kernels).

    eq. (5) if t_Thd > t_E:  t = t_Thd + t_E/n + t_Tdh + t_oh  (dominant transfers)
    eq. (7) otherwise:       t = t_Thd/n + t_E + t_Tdh + t_oh  (dominant kernel)
    The paper writes ``<`` for (7); at t_Thd = t_E both give the same value.
    """
    t_oh = t_sc_ms * n_streams
    if t_thd_ms > t_e_ms:
        return t_thd_ms + t_e_ms / n_streams + t_tdh_ms + t_oh
    return t_thd_ms / n_streams + t_e_ms + t_tdh_ms + t_oh


def predict_pipeline_ms(
    t_thd_ms: float, t_e_ms: float, t_tdh_ms: float, n_streams: int, t_sc_ms: float
) -> float:
    """Streamed time with two copy engines (cc >= 3.0): MODELS.md §6 **Decision 6**.

    t = (t_Thd + t_E + t_Tdh)/n + (n − 1)/n · max(t_Thd, t_E, t_Tdh) + t_oh: the first chunk
    passes all three stages, the other n − 1 chunks leave at the pace of the slowest stage.
    The project's extension; seed 004 does not cover devices with two copy engines.
    """
    total = t_thd_ms + t_e_ms + t_tdh_ms
    slowest = max(t_thd_ms, t_e_ms, t_tdh_ms)
    return total / n_streams + (n_streams - 1) / n_streams * slowest + t_sc_ms * n_streams


PREDICTORS: dict[str, Callable[[float, float, float, int, float], float]] = {
    NO_OVERLAP.key: predict_no_overlap_ms,
    CC1.key: predict_cc1_ms,
    CC2.key: predict_cc2_ms,
    PIPELINE.key: predict_pipeline_ms,
}


@dataclass(frozen=True)
class ClosedForm:
    """A closed-form optimum and the equation it comes from."""

    n: float
    equation: str


def closed_form_optimum(
    model: StreamModel, t_thd_ms: float, t_e_ms: float, t_tdh_ms: float, t_sc_ms: float
) -> ClosedForm:
    """The paper's closed-form nStreams_op (a real number; the evaluated optimum is an integer).

    cc 1.x (seed 004 §3.2.1): eq. (4) √(t_T/t_sc) minimises eq. (3); when t_T > t_E the curve
    switches to eq. (1), which grows with n, at n = t_T/(t_T − t_E), eq. (2), the optimum the
    paper observes with dominant transfers.  So eq. (2) when t_T > t_E and it is the smaller of
    the two, else eq. (4).
    cc 2.x (§3.2.2): eq. (6) √(t_E/t_sc) if t_Thd > t_E, else eq. (8) √(t_Thd/t_sc).
    Pipeline: √((t_Thd + t_E + t_Tdh − max)/t_sc), the project's derivation (d t/dn = 0 of
    Decision 6).  cc 1.0: n = 1 (streams only add t_oh).
    """
    t_t = t_thd_ms + t_tdh_ms
    if model.key == CC1.key:
        eq4 = math.sqrt(t_t / t_sc_ms)
        if t_t > t_e_ms and t_t / (t_t - t_e_ms) <= eq4:
            return ClosedForm(t_t / (t_t - t_e_ms), "eq. (2) t_T/(t_T - t_E)")
        return ClosedForm(eq4, "eq. (4) sqrt(t_T/t_sc)")
    if model.key == CC2.key:
        if t_thd_ms > t_e_ms:
            return ClosedForm(math.sqrt(t_e_ms / t_sc_ms), "eq. (6) sqrt(t_E/t_sc)")
        return ClosedForm(math.sqrt(t_thd_ms / t_sc_ms), "eq. (8) sqrt(t_Thd/t_sc)")
    if model.key == PIPELINE.key:
        hidden = t_thd_ms + t_e_ms + t_tdh_ms - max(t_thd_ms, t_e_ms, t_tdh_ms)
        return ClosedForm(math.sqrt(hidden / t_sc_ms), "sqrt((t_Thd+t_E+t_Tdh-max)/t_sc)")
    return ClosedForm(1.0, "no overlap: n = 1")


def regime(model: StreamModel, t_thd_ms: float, t_e_ms: float, t_tdh_ms: float, n: int) -> str:
    """Which branch of the model applies at ``n`` streams, in the paper's words.

    cc 1.x at t_T = t_E + t_T/n, where eq. (1) and (3) coincide, is called dominant transfers.
    """
    if model.key == CC1.key:
        t_t = t_thd_ms + t_tdh_ms
        return "dominant transfers" if t_t >= t_e_ms + t_t / n else "dominant kernel"
    if model.key == CC2.key:
        return "dominant transfers" if t_thd_ms > t_e_ms else "dominant kernel"
    if model.key == PIPELINE.key:
        slowest = max((t_e_ms, "kernel"), (t_thd_ms, "HtoD"), (t_tdh_ms, "DtoH"))
        return f"{slowest[1]} stage bound"
    return "no overlap"


def predict_curve_ms(
    model: StreamModel,
    t_thd_ms: float,
    t_e_ms: float,
    t_tdh_ms: float,
    t_sc_ms: float,
    max_streams: int = DEFAULT_MAX_STREAMS,
) -> tuple[float, ...]:
    """Predicted time (ms) for n = 1 … ``max_streams``; element i is n = i + 1."""
    predict = PREDICTORS[model.key]
    return tuple(predict(t_thd_ms, t_e_ms, t_tdh_ms, n, t_sc_ms) for n in range(1, max_streams + 1))


def optimal_streams(curve_ms: tuple[float, ...]) -> int:
    """The n with the smallest predicted time (the smaller n on ties)."""
    best = min(range(len(curve_ms)), key=lambda i: (curve_ms[i], i))
    return best + 1


@dataclass(frozen=True)
class StreamPrediction:
    """A model evaluated for n = 1 … len(curve_ms) streams."""

    model: StreamModel
    t_thd_ms: float
    t_e_ms: float
    t_tdh_ms: float
    t_sc_ms: float
    curve_ms: tuple[float, ...]
    optimal_n: int
    closed_form: ClosedForm
    regime: str  # at the optimum

    @property
    def predicted_1_ms(self) -> float:
        return self.curve_ms[0]

    @property
    def predicted_optimal_ms(self) -> float:
        return self.curve_ms[self.optimal_n - 1]

    @property
    def saving_ms(self) -> float:
        """Predicted time at n = 1 minus predicted time at the optimum (≥ 0)."""
        return self.predicted_1_ms - self.predicted_optimal_ms

    @property
    def saving_frac(self) -> float | None:
        """saving / time at n = 1; ``None`` when that time is 0."""
        if self.predicted_1_ms == 0:
            return None
        return self.saving_ms / self.predicted_1_ms

    def at(self, n_streams: int) -> float | None:
        """Predicted time at ``n_streams``, ``None`` outside the evaluated range."""
        return self.curve_ms[n_streams - 1] if 1 <= n_streams <= len(self.curve_ms) else None


def predict_streams(
    model: StreamModel,
    t_thd_ms: float,
    t_e_ms: float,
    t_tdh_ms: float,
    t_sc_ms: float,
    max_streams: int = DEFAULT_MAX_STREAMS,
) -> StreamPrediction:
    """Evaluate ``model`` for n = 1 … ``max_streams`` and pick the optimum (module docstring)."""
    check_tsc(t_sc_ms)
    if max_streams < 1:
        raise UsageError(f"--max-streams {max_streams}: must be at least 1")
    curve = predict_curve_ms(model, t_thd_ms, t_e_ms, t_tdh_ms, t_sc_ms, max_streams)
    best = optimal_streams(curve)
    return StreamPrediction(
        model=model,
        t_thd_ms=t_thd_ms,
        t_e_ms=t_e_ms,
        t_tdh_ms=t_tdh_ms,
        t_sc_ms=t_sc_ms,
        curve_ms=curve,
        optimal_n=best,
        closed_form=closed_form_optimum(model, t_thd_ms, t_e_ms, t_tdh_ms, t_sc_ms),
        regime=regime(model, t_thd_ms, t_e_ms, t_tdh_ms, best),
    )


def _curves_ms(
    model: StreamModel, thd: np.ndarray, e: np.ndarray, tdh: np.ndarray, t_sc: float, n: np.ndarray
) -> np.ndarray:
    """The predictors above for many sequences (rows) and n (columns) at once: the same
    operations in the same order on float64, so every value equals the scalar predictor's."""
    thd, e, tdh = thd[:, None], e[:, None], tdh[:, None]
    t_oh = t_sc * n
    if model.key == CC1.key:
        t_t = thd + tdh
        return np.where(t_t > e + t_t / n, t_t + t_oh, e + t_t / n + t_oh)
    if model.key == CC2.key:
        return np.where(thd > e, thd + e / n + tdh + t_oh, thd / n + e + tdh + t_oh)
    if model.key == PIPELINE.key:
        total = thd + e + tdh
        slowest = np.maximum(np.maximum(thd, e), tdh)
        return total / n + (n - 1) / n * slowest + t_oh
    return thd + e + tdh + t_oh


def predict_streams_many(
    model: StreamModel,
    t_thd_ms: Sequence[float],
    t_e_ms: Sequence[float],
    t_tdh_ms: Sequence[float],
    t_sc_ms: float,
    max_streams: int = DEFAULT_MAX_STREAMS,
) -> list[StreamPrediction]:
    """:func:`predict_streams` for each (t_Thd[i], t_E[i], t_Tdh[i]), the curves evaluated
    together on arrays (same values); sequences with a time that is not finite take
    :func:`predict_streams` one by one."""
    check_tsc(t_sc_ms)
    if max_streams < 1:
        raise UsageError(f"--max-streams {max_streams}: must be at least 1")
    thd, e, tdh = (np.asarray(v, dtype=float) for v in (t_thd_ms, t_e_ms, t_tdh_ms))
    if not (np.isfinite(thd).all() and np.isfinite(e).all() and np.isfinite(tdh).all()):
        return [
            predict_streams(model, a, b, c, t_sc_ms, max_streams)
            for a, b, c in zip(t_thd_ms, t_e_ms, t_tdh_ms, strict=True)
        ]
    n = np.arange(1, max_streams + 1, dtype=float)
    curves = _curves_ms(model, thd, e, tdh, float(t_sc_ms), n)
    best = (np.argmin(curves, axis=1) + 1).tolist()  # first minimum: the smaller n on ties
    return [
        StreamPrediction(
            model=model,
            t_thd_ms=a,
            t_e_ms=b,
            t_tdh_ms=c,
            t_sc_ms=t_sc_ms,
            curve_ms=tuple(curve),
            optimal_n=n_opt,
            closed_form=closed_form_optimum(model, a, b, c, t_sc_ms),
            regime=regime(model, a, b, c, n_opt),
        )
        for a, b, c, curve, n_opt in zip(
            t_thd_ms, t_e_ms, t_tdh_ms, curves.tolist(), best, strict=True
        )
    ]
