"""Seed 004's streams models applied to the sequences of a GPU timeline.

:func:`analyze_streams` takes a :class:`~advisor.profile.Profile` with a timeline, finds its
HtoD → kernel → DtoH sequences (:mod:`advisor.models.timeline`), measures t_Thd, t_E and t_Tdh per
sequence (sums of durations, ns → ms), picks the model by compute capability and t_sc by GPU
(:mod:`advisor.models.streams`) and predicts the time for n = 1 … max_streams.

Compute capability, first found: ``cc`` argument (``--cc``), the profile's devices table, the
device database (``advisor.devices.database.find_device``); otherwise a :class:`UsageError` asking
for ``--cc``.  t_sc: ``tsc_ms`` (``--tsc``), seed 004 Table 3, else
:data:`~advisor.models.streams.DEFAULT_TSC_MS` with a note.

Which sequences get advice.  Streams gain by overlapping one chunk's copies with another chunk's
kernels, so a sequence needs host<->device copies around its kernels: seed 004's unit is one
HtoD copy, one kernel launch and one DtoH copy (§2).  A sequence whose kernel launches outnumber
its copies more than :data:`MAX_LAUNCHES_PER_COPY` to one runs a loop on data that stay on the
GPU (time steps, iterations, a benchmark's repeats: 301 ``matrixMulCUDA`` launches between two
HtoD copies and one DtoH copy); its copies are paid once around the loop, and splitting the loop
into chunks is not what the model describes.  Such sequences are not modelled: they are listed in
:attr:`StreamsAnalysis.without_advice`, and one line saying why joins the timeline's notes
(:func:`no_advice_line`), which the report and the ``streams`` command print.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from advisor.devices.database import DeviceSpec, find_device
from advisor.errors import AdvisorError, UsageError
from advisor.models import streams
from advisor.models.timeline import Sequence, Timeline, find_sequences
from advisor.profile import Profile

NS_PER_MS = 1e6


@dataclass(frozen=True)
class DeviceFacts:
    """What the streams model needs to know about a device."""

    name: str
    cc: tuple[int, int]
    cc_source: str  # "--cc", "profile", "device database"
    t_sc_ms: float
    tsc_source: str  # "--tsc", "seed 004 Table 3", "default"
    sm_count: int | None


@dataclass(frozen=True)
class SequenceStreams:
    """One sequence, its device and the model's prediction for it."""

    index: int  # 1-based, in start-time order
    sequence: Sequence
    device: DeviceFacts
    prediction: streams.StreamPrediction
    notes: tuple[str, ...]

    @property
    def measured_ms(self) -> float:
        return self.sequence.measured_ns / NS_PER_MS

    @property
    def measured_streams(self) -> int:
        return len(self.sequence.streams)

    @property
    def predicted_at_measured_ms(self) -> float | None:
        """The model at the number of streams the trace already uses."""
        return self.prediction.at(self.measured_streams)

    @property
    def saving_vs_measured_ms(self) -> float:
        """Measured time minus the predicted time at the optimum (negative: no predicted gain)."""
        return self.measured_ms - self.prediction.predicted_optimal_ms


@dataclass(frozen=True)
class WithoutAdvice:
    """A sequence the streams model is not applied to (module docstring)."""

    index: int  # 1-based, in start-time order among all sequences
    sequence: Sequence


@dataclass(frozen=True)
class StreamsAnalysis:
    """The sequences of one profile: those advised on with their prediction, the others apart.

    ``timeline.notes`` ends with the line that says which sequences get no advice and why
    (:func:`no_advice_line`), when there are any."""

    path: str
    timeline: Timeline
    results: tuple[SequenceStreams, ...]
    without_advice: tuple[WithoutAdvice, ...] = ()


#: the most kernel launches per host<->device copy of a sequence that still gets streams advice:
#: seed 004's unit has one launch for two copies; four launches between one HtoD and one DtoH
#: copy are still a short chain of kernels over the data, more are a loop on data kept on the GPU
MAX_LAUNCHES_PER_COPY = 2


def copies_around_kernels(seq: Sequence) -> bool:
    """Whether ``seq`` has host<->device copies around its kernels for streams to overlap: at
    most :data:`MAX_LAUNCHES_PER_COPY` kernel launches per copy."""
    return seq.kernel_count <= MAX_LAUNCHES_PER_COPY * (seq.htod_count + seq.dtoh_count)


def no_advice_line(without: tuple[WithoutAdvice, ...]) -> str:
    """One line naming the sequences without streams advice and why."""
    why = (
        "streams gain by overlapping copies with kernels, which needs copies around the kernels "
        f"(at most {MAX_LAUNCHES_PER_COPY} launches per copy)"
    )
    if len(without) == 1:
        (only,) = without
        seq = only.sequence
        return (
            f"no streams advice for sequence {only.index}: its {seq.kernel_count} kernel "
            "launches run back to back on data already on the GPU, between "
            f"{_count(seq.htod_count, 'HtoD copy', 'HtoD copies')} and "
            f"{_count(seq.dtoh_count, 'DtoH copy', 'DtoH copies')}; {why}"
        )
    worst = max(
        without,
        key=lambda w: w.sequence.kernel_count / (w.sequence.htod_count + w.sequence.dtoh_count),
    ).sequence
    copies = worst.htod_count + worst.dtoh_count
    return (
        f"no streams advice for {len(without)} sequences ({_indices(without)}): their kernels "
        "run back to back on data already on the GPU (up to "
        f"{worst.kernel_count} launches between {_count(copies, 'copy', 'copies')}); {why}"
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _indices(without: tuple[WithoutAdvice, ...]) -> str:
    numbers = [str(w.index) for w in without]
    return ", ".join(numbers if len(numbers) <= 5 else [*numbers[:4], "...", numbers[-1]])


def analyze_streams(
    profile: Profile,
    cc: str | None = None,
    tsc_ms: float | None = None,
    max_streams: int = streams.DEFAULT_MAX_STREAMS,
) -> StreamsAnalysis:
    """Predict the streamed time of every sequence of ``profile`` (module docstring)."""
    cc_option = streams.parse_cc(cc) if cc is not None else None
    if tsc_ms is not None:
        streams.check_tsc(tsc_ms)
    if max_streams < 1:
        raise UsageError(f"--max-streams {max_streams}: must be at least 1")
    timeline = find_sequences(profile)
    advised = [i for i, seq in enumerate(timeline.sequences) if copies_around_kernels(seq)]
    facts: dict[str, DeviceFacts] = {}
    for i in advised:  # in sequence order: the first device lacking a fact fails
        seq = timeline.sequences[i]
        if seq.device not in facts:
            facts[seq.device] = device_facts(profile, seq.device, cc_option, tsc_ms)
    predictions: dict[int, streams.StreamPrediction] = {}
    for name, device in facts.items():
        on = [i for i in advised if timeline.sequences[i].device == name]
        found = streams.predict_streams_many(
            streams.model_for_cc(device.cc),
            [timeline.sequences[i].htod_ns / NS_PER_MS for i in on],
            [timeline.sequences[i].kernel_ns / NS_PER_MS for i in on],
            [timeline.sequences[i].dtoh_ns / NS_PER_MS for i in on],
            device.t_sc_ms,
            max_streams,
        )
        predictions.update(zip(on, found, strict=True))
    results = []
    for i in advised:
        seq = timeline.sequences[i]
        device, prediction = facts[seq.device], predictions[i]
        notes = sequence_notes(seq, device, prediction)
        results.append(SequenceStreams(i + 1, seq, device, prediction, notes))
    chosen = set(advised)
    without = tuple(
        WithoutAdvice(i + 1, seq) for i, seq in enumerate(timeline.sequences) if i not in chosen
    )
    if without:
        timeline = replace(timeline, notes=(*timeline.notes, no_advice_line(without)))
    return StreamsAnalysis(profile.path, timeline, tuple(results), without)


def device_facts(
    profile: Profile, name: str, cc: tuple[int, int] | None, tsc_ms: float | None
) -> DeviceFacts:
    """Compute capability, t_sc and SM count of device ``name`` (order in module docstring)."""
    row = _profile_device(profile, name)
    spec = _database_device(name)
    cc_source = "--cc"
    if cc is None:
        cc, cc_source = _cc_value(row.get("compute_capability") if row else None), "profile"
    if cc is None:
        cc, cc_source = _cc_value(spec.compute_capability if spec else None), "device database"
    if cc is None:
        shown = name or "(unnamed)"
        raise UsageError(
            f"{profile.path}: compute capability of device {shown!r} unknown; "
            "pass --cc MAJOR.MINOR (e.g. --cc 6.1)"
        )
    if tsc_ms is not None:
        t_sc, tsc_source = tsc_ms, "--tsc"
    elif (table := streams.tsc_for_gpu(spec.name if spec else name)) is not None:
        t_sc, tsc_source = table, "seed 004 Table 3"
    else:
        t_sc, tsc_source = streams.DEFAULT_TSC_MS, "default"
    sm_count = _int_or_none(row.get("sm_count") if row else None)
    if sm_count is None and spec is not None:
        sm_count = spec.sm_count
    return DeviceFacts(name, cc, cc_source, t_sc, tsc_source, sm_count)


def _profile_device(profile: Profile, name: str) -> dict[str, Any] | None:
    devices = profile.devices
    rows = devices[(devices["name"] == name).fillna(False).astype(bool)]
    if len(rows) == 0 and len(devices) == 1 and profile.launches["device"].nunique() <= 1:
        rows = devices  # one device, named differently by the two tables
    return dict(rows.iloc[0]) if len(rows) else None


def _database_device(name: str) -> DeviceSpec | None:
    """``advisor.devices.database.find_device(name)``, or ``None`` when the database does not know
    it."""
    if not name:
        return None
    try:
        return find_device(name)
    except AdvisorError:
        return None


def _cc_value(value: Any) -> tuple[int, int] | None:
    """A compute capability given as "6.1", 6.1 or (6, 1); ``None`` when absent or unreadable."""
    if isinstance(value, tuple) and len(value) == 2:
        return int(value[0]), int(value[1])
    if value is None or isinstance(value, tuple) or pd.isna(value):
        return None
    try:
        return streams.parse_cc(str(value))
    except UsageError:
        return None


def _int_or_none(value: Any) -> int | None:
    if value is None or pd.isna(value):
        return None
    return int(value)


#: the paper's requirement (seed 004 §2): each chunk's B/nStreams blocks must keep every SM busy
MIN_BLOCKS_PER_SM = 1


def sequence_notes(
    seq: Sequence, device: DeviceFacts, prediction: streams.StreamPrediction
) -> tuple[str, ...]:
    """Caveats for one sequence: assumed t_sc, chunks too small for the GPU, existing streams."""
    notes = []
    if device.tsc_source == "default":
        notes.append(
            f"t_sc {device.t_sc_ms:g} ms assumed: {device.name or 'this device'} is not in "
            "seed 004 Table 3 (GTX 580's value); measure it and pass --tsc"
        )
    n_opt = prediction.optimal_n
    if seq.grid_blocks and device.sm_count and n_opt > 1:
        per_chunk = seq.grid_blocks / n_opt
        if per_chunk < MIN_BLOCKS_PER_SM * device.sm_count:
            notes.append(
                f"at n={n_opt} a chunk has about {math.floor(per_chunk)} blocks for "
                f"{device.sm_count} SMs; seed 004 §2 needs B/nStreams blocks to keep the GPU "
                "busy, so the real optimum is likely lower"
            )
    if len(seq.streams) > 1:
        notes.append(
            f"the trace already spreads this workload over {len(seq.streams)} streams "
            "(overlapping sequences merged); compare the measured time with the model at that n"
        )
    if n_opt == 1:
        notes.append("streams do not pay here: the model's best is n = 1")
    elif n_opt == len(prediction.curve_ms):
        notes.append(
            f"the best n is the largest evaluated ({n_opt}); the predicted time may still fall "
            "beyond it (raise --max-streams)"
        )
    return tuple(notes)


def to_dict(analysis: StreamsAnalysis) -> dict[str, Any]:
    """A JSON-ready view (NaN/inf → None) with the full predicted curve per sequence."""
    tl = analysis.timeline
    return {
        "file": analysis.path,
        "unmatched": {
            "kernels": tl.unmatched_kernels,
            "htod": tl.unmatched_htod,
            "dtoh": tl.unmatched_dtoh,
        },
        "notes": list(tl.notes),
        "sequences": [_result_dict(r) for r in analysis.results],
        "without_advice": [_without_dict(w) for w in analysis.without_advice],
    }


def _without_dict(w: WithoutAdvice) -> dict[str, Any]:
    seq = w.sequence
    return {
        "index": w.index,
        "device": seq.device,
        "streams": list(seq.streams),
        "start_ns": json_number(seq.start_ns),
        "end_ns": json_number(seq.end_ns),
        "htod_count": seq.htod_count,
        "kernel_count": seq.kernel_count,
        "dtoh_count": seq.dtoh_count,
        "kernels": list(seq.kernels),
    }


def _result_dict(r: SequenceStreams) -> dict[str, Any]:
    seq, p, dev = r.sequence, r.prediction, r.device
    return {
        "index": r.index,
        "device": dev.name,
        "compute_capability": f"{dev.cc[0]}.{dev.cc[1]}",
        "compute_capability_source": dev.cc_source,
        "streams": list(seq.streams),
        "start_ns": json_number(seq.start_ns),
        "end_ns": json_number(seq.end_ns),
        "htod_count": seq.htod_count,
        "kernel_count": seq.kernel_count,
        "dtoh_count": seq.dtoh_count,
        "kernels": list(seq.kernels),
        "grid_blocks": seq.grid_blocks,
        "sm_count": dev.sm_count,
        "t_thd_ms": json_number(p.t_thd_ms),
        "t_e_ms": json_number(p.t_e_ms),
        "t_tdh_ms": json_number(p.t_tdh_ms),
        "t_sc_ms": json_number(p.t_sc_ms),
        "t_sc_source": dev.tsc_source,
        "model": p.model.key,
        "model_title": p.model.title,
        "model_source": p.model.source,
        "model_from_paper": p.model.from_paper,
        "regime": p.regime,
        "optimal_n": p.optimal_n,
        "closed_form_n": json_number(p.closed_form.n),
        "closed_form_equation": p.closed_form.equation,
        "predicted_1_ms": json_number(p.predicted_1_ms),
        "predicted_optimal_ms": json_number(p.predicted_optimal_ms),
        "saving_ms": json_number(p.saving_ms),
        "saving_frac": json_number(p.saving_frac),
        "measured_ms": json_number(r.measured_ms),
        "measured_streams": r.measured_streams,
        "predicted_at_measured_ms": json_number(r.predicted_at_measured_ms),
        "saving_vs_measured_ms": json_number(r.saving_vs_measured_ms),
        "curve_ms": [json_number(v) for v in p.curve_ms],
        "notes": list(r.notes),
    }


def json_number(value: float | None) -> float | None:
    """``value`` as a float for JSON, ``None`` when absent, NaN or infinite."""
    return None if value is None or not math.isfinite(value) else float(value)
