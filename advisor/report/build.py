"""What the report shows, as plain frozen values (no markup): :func:`build` turns the criteria
engine's analysis (seed 002; MODELS.md §1-2) and the profile into a :class:`Report` that the HTML
and Markdown renderers (:mod:`advisor.render.report`) only lay out.

The values come from :func:`advisor.criteria.engine.analysis.to_json`, so NaN and infinities are
already ``None`` and the report shows exactly what ``report --json`` writes.  The report scales
with what the input holds and its size is bounded:

* the :class:`Verdict` says what to fix first (the application's first hint), what it buys and
  on how much GPU time, or why there is no estimate and what to collect;
* a kernel with at least one kernel criterion computed is a row of the criteria table; of those,
  the :data:`DETAIL_KERNELS` with the largest share of GPU time get a detail section.  A kernel
  without one (a profile of kernel times only) is a row of one compact table of its times, with
  the spread of its launch times (:class:`Spread`) when the profile has it;
* the commands that collect what is missing are gathered once (:class:`Collect`), not per kernel;
* notes that speak of a profiler the inputs do not come from (an nvprof limitation on nsys input)
  are left out: the JSON keeps them all;
* :data:`TABLE_KERNELS` kernels after the detailed ones are listed, the rest only counted; the
  timeline (:mod:`advisor.report.timeline`) keeps a bounded number of intervals.

Hints: the summary lists the application's hints as the engine ranks them
(:func:`advisor.criteria.engine.hints.rank`: one entry per criterion with the kernels that share
it, their combined share of GPU time and Amdahl gain; kernels under 1 % of the GPU time last);
each kernel section keeps that kernel's own hints.  Beside every potential speedup of a criterion
or hint stands NVIDIA Nsight Compute's estimate for the same bottleneck when the profile has one
(:mod:`advisor.report.nvidia`), in the same unit (x).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from advisor.criteria import CRITERIA
from advisor.criteria.engine.analysis import Analysis, to_json
from advisor.criteria.engine.hints import THRESHOLDS, kernels_of
from advisor.errors import InputError, UsageError
from advisor.profile import Profile
from advisor.render.display import compact, readable_name
from advisor.report.host_view import HostView, host_view
from advisor.report.missing import (
    TOOL_NAMES,
    Collect,
    for_inputs,
    metric_tools,
    profilers_of,
    timeline_tools,
    what_to_collect,
)
from advisor.report.nvidia import NvidiaEstimate, combined, estimate
from advisor.report.predictions import (
    ModelInputs,
    Predictions,
    build_predictions,
    database_device,
)
from advisor.report.roofline import Roofline, build_roofline
from advisor.report.spread import Spread, spreads
from advisor.report.timeline import Timeline, timeline

#: kernels shown in detail (charts, hints, evidence): enough for the kernels that matter
DETAIL_KERNELS = 20
#: kernels listed in the summary table after the detailed ones; the rest are only counted
TABLE_KERNELS = 200
#: hints listed in the summary, in the engine's ranking order
SUMMARY_HINTS = 5
#: kernel names written out in a grouped hint's sentence (the rest are counted)
GROUP_NAMES_SHOWN = 5


@dataclass(frozen=True)
class CriterionView:
    """One criterion of one kernel (or HOSTSYNC of the application) with how it was computed."""

    name: str
    status: str  # computed | not_computable | not_applicable
    value: float | None
    potential_speedup: float | None
    threshold: float | None
    below_threshold: bool
    method: str  # the formula / metric recipe the engine used
    inputs: tuple[tuple[str, float | None], ...]
    missing: tuple[str, ...]
    collect: tuple[tuple[str, str], ...]  # (profiler, command line that collects the inputs)
    notes: tuple[str, ...]
    nvidia: NvidiaEstimate | None = None  # Nsight Compute's estimate for the same bottleneck


@dataclass(frozen=True)
class HintView:
    """A criterion below its threshold, in plain words, with its evidence and actions."""

    criterion: str
    kernel: str | None
    kernel_display: str | None
    title: str
    value: float | None
    threshold: float | None
    potential_speedup: float | None
    application_speedup: float | None
    evidence: tuple[tuple[str, float | None], ...]
    actions: tuple[str, ...]
    method: str
    #: every kernel the hint concerns (one for a kernel's hint, several for an application
    #: entry that groups a criterion several kernels share; none for HOSTSYNC), best gain first
    kernels: tuple[str, ...] = ()
    kernels_display: tuple[str, ...] = ()
    share_of_gpu_time: float | None = None  # the kernels' combined share (None: application)
    value_min: float | None = None  # the criterion's lowest and highest value over the kernels
    value_max: float | None = None
    nvidia: NvidiaEstimate | None = None  # Nsight Compute's estimate (combined for a group)

    @property
    def kernel_count(self) -> int:
        return len(self.kernels)

    @property
    def grouped(self) -> bool:
        return len(self.kernels) > 1

    @property
    def value_text(self) -> str:
        """The criterion's value, or its range over a group's kernels (``0.03–0.06``)."""
        low, high = self.value_min, self.value_max
        if self.grouped and low is not None and high is not None and _num(low) != _num(high):
            return f"{_num(low)}–{_num(high)}"
        return _num(self.value)

    @property
    def where(self) -> str:
        """Which kernels: the name of one; count, combined share and names of a group."""
        if self.grouped:
            names = ", ".join(self.kernels_display[:GROUP_NAMES_SHOWN])
            rest = len(self.kernels) - GROUP_NAMES_SHOWN
            more = f" and {rest} more" if rest > 0 else ""
            share = (
                f", {_pct(self.share_of_gpu_time)} of GPU time"
                if self.share_of_gpu_time is not None
                else ""
            )
            return f"{len(self.kernels)} kernels ({names}{more}{share})"
        return self.kernel_display or ""

    @property
    def nvidia_text(self) -> str:
        """``NVIDIA: 1.96x (SharedMemoryConflicts)``, or ``NVIDIA: —`` without an estimate."""
        return f"NVIDIA: {self.nvidia.label if self.nvidia else '—'}"

    @property
    def sentence(self) -> str:
        """The hint in one line of plain words."""
        where = f"{self.where}: " if self.where else ""
        gain = (
            f" (up to {self.application_speedup:.2f}x on the whole GPU time)"
            if self.application_speedup is not None
            else ""
        )
        return f"{where}{self.title} [{self.criterion} = {self.value_text}]{gain}"


@dataclass(frozen=True)
class RuleView:
    """NVIDIA Nsight Compute's own rule result, shown beside the advisor's estimate."""

    section: str
    rule: str
    rule_type: str
    description: str
    estimated_speedup_frac: float | None
    speedup_type: str | None


@dataclass(frozen=True)
class KernelRow:
    """One kernel in the table: name, time and the criteria values."""

    rank: int
    name: str
    display_name: str
    launches: int
    duration_ns: float | None
    share_of_gpu_time: float | None
    bound: str | None
    potential_speedup: float | None
    values: tuple[float | None, ...]  # in CRITERIA order
    statuses: tuple[str | None, ...] = ()  # in CRITERIA order (None: the engine has no result)
    #: at least one kernel criterion (not the application's HOSTSYNC) has a value
    computed: bool = False
    spread: Spread | None = None


@dataclass(frozen=True)
class KernelDetail:
    row: KernelRow
    memory_frac: float | None
    compute_frac: float | None
    criteria: tuple[CriterionView, ...]
    hints: tuple[HintView, ...]
    rules: tuple[RuleView, ...]
    notes: tuple[str, ...]

    @property
    def not_computable(self) -> tuple[CriterionView, ...]:
        return tuple(c for c in self.criteria if c.status == "not_computable")

    @property
    def evaluated(self) -> tuple[CriterionView, ...]:
        """The criteria with a value or found not to apply (the rows of the criteria table)."""
        return tuple(c for c in self.criteria if c.status != "not_computable")


@dataclass(frozen=True)
class Summary:
    potential_speedup: float | None
    gpu_time_ns: float | None
    kernels: int
    launches: int
    kernels_without_estimate: int
    bound_mix: tuple[tuple[str, float], ...]  # (bound, share of GPU time), largest first
    top_hints: tuple[HintView, ...]
    hints_total: int
    hostsync: CriterionView
    device: str | None  # the characterization used (None: not identified)
    profile_devices: tuple[str, ...]  # the GPU names the profile states
    speedup_form: str


@dataclass(frozen=True)
class StreamsSequence:
    """The streams model's advice for one transfer-kernel-transfer sequence (seed 004)."""

    index: int
    model_title: str
    optimal_n: int
    measured_streams: int
    measured_ms: float | None
    predicted_1_ms: float | None
    predicted_optimal_ms: float | None
    saving_frac: float | None
    curve_ms: tuple[float | None, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    """The report's first line: what to fix first, what it buys and on how much GPU time; or,
    without an estimate, why and what to collect."""

    hint: HintView | None  # the application's first hint (None: no criterion below threshold)
    hint_time_ns: float | None  # GPU time of the kernels the hint concerns
    gpu_time_ns: float | None  # the run's GPU time (sum of the kernels' times)
    span_ns: float | None  # the timeline's span and idle time (HOSTSYNC's inputs)
    idle_ns: float | None
    potential_speedup: float | None  # the application's
    basis: str  # how the application's potential speedup was formed, or why it is missing
    needs: tuple[str, ...]  # what to collect for an estimate, in words (empty: nothing)
    kernels_with_criteria: int
    kernels: int


@dataclass(frozen=True)
class Report:
    title: str
    inputs: tuple[str, ...]
    criteria_names: tuple[str, ...]
    summary: Summary
    details: tuple[KernelDetail, ...]
    table: tuple[KernelRow, ...]  # every kernel shown (detailed ones first), at most bounded
    kernels_not_listed: int
    streams: tuple[StreamsSequence, ...]
    streams_notes: tuple[str, ...]
    timeline: Timeline | None
    notes: tuple[str, ...]
    analysis_json: Mapping[str, Any]
    predictions: Predictions | None = None
    roofline: Roofline | None = None
    verdict: Verdict | None = None
    collect: Collect = field(default_factory=lambda: Collect((), (), ()))
    profilers: tuple[str, ...] = ()  # the profilers of the inputs (nvprof, ncu, nsys)
    host: HostView | None = None  # a PyTorch profiler trace's host side (host_view.py)

    @property
    def criteria_rows(self) -> tuple[KernelRow, ...]:
        """The listed kernels with at least one kernel criterion computed."""
        return tuple(r for r in self.table if r.computed)

    @property
    def timing_rows(self) -> tuple[KernelRow, ...]:
        """The listed kernels without any kernel criterion: their times only."""
        return tuple(r for r in self.table if not r.computed)

    @property
    def criteria_columns(self) -> tuple[tuple[int, str], ...]:
        """(index in :attr:`criteria_names`, name) of the criteria with a value in at least one
        row of the criteria table: a criterion no kernel has is no column of n/c."""
        rows = self.criteria_rows
        return tuple(
            (i, c)
            for i, c in enumerate(self.criteria_names)
            if any(r.values[i] is not None for r in rows)
        )

    @property
    def criteria_absent(self) -> tuple[str, ...]:
        """The criteria no listed kernel has a value for, except those that do not apply to
        any of them (n/a everywhere: UM_MIGRATION without migrations): collecting more would
        not give them a value."""
        shown = {c for _, c in self.criteria_columns}
        rows = self.criteria_rows

        def may_apply(i: int) -> bool:
            return not rows or any(
                i >= len(r.statuses) or r.statuses[i] != "not_applicable" for r in rows
            )

        return tuple(
            c for i, c in enumerate(self.criteria_names) if c not in shown and may_apply(i)
        )

    @property
    def spread_columns(self) -> tuple[str, ...]:
        """The spread fields (``avg_ns``, ``median_ns``, ...) some timing row has."""
        fields = ("avg_ns", "median_ns", "min_ns", "max_ns", "stddev_ns")
        spreads = [r.spread for r in self.timing_rows if r.spread is not None]
        return tuple(f for f in fields if any(getattr(sp, f) is not None for sp in spreads))


def build(
    analysis: Analysis,
    profile: Profile,
    detail_kernels: int = DETAIL_KERNELS,
    table_kernels: int = TABLE_KERNELS,
    model_inputs: ModelInputs | None = None,
) -> Report:
    """The report of ``analysis`` (from :func:`advisor.criteria.evaluate` on ``profile``).

    ``model_inputs`` feed the predictions (:mod:`advisor.report.predictions`); without a device
    in them, the BSP model uses the database entry of the analysis' GPU."""
    data = to_json(analysis)
    app = data["application"]
    profilers = profilers_of(data)
    kernels = sorted(data["kernels"], key=lambda k: (-(k["share_of_gpu_time"] or 0.0), k["name"]))
    spread_of = spreads(profile)
    rows = [_row(i + 1, k, spread_of.get(k["name"])) for i, k in enumerate(kernels)]
    shown = rows[: detail_kernels + table_kernels]
    detailed = [(r, k) for r, k in zip(rows, kernels, strict=True) if r.computed]
    details = tuple(_detail(r, k, profilers) for r, k in detailed[:detail_kernels])
    by_name = {k["name"]: k for k in kernels}
    hints = [
        _app_hint(h, kernels_of(obj), data, by_name)
        for h, obj in zip(app["hints"], analysis.application.hints, strict=True)
    ]
    summary = Summary(
        potential_speedup=app["potential_speedup"],
        gpu_time_ns=app["gpu_time_ns"],
        kernels=app["kernels"],
        launches=app["launches"],
        kernels_without_estimate=app["kernels_without_estimate"],
        bound_mix=_bound_mix(kernels),
        top_hints=tuple(hints[:SUMMARY_HINTS]),
        hints_total=len(hints),
        hostsync=_criterion("HOSTSYNC", app["HOSTSYNC"], profilers=profilers),
        device=data["device"].get("name"),
        profile_devices=_profile_devices(profile),
        speedup_form=data["speedup_form"],
    )
    streams, streams_notes = _streams(profile)
    model_inputs = model_inputs or ModelInputs()
    if model_inputs.device is None:
        model_inputs = replace(model_inputs, device=database_device(data["device"]))
    inputs = tuple(str(i.get("path")) for i in data["inputs"])
    return Report(
        title="cuda-advisor report",
        inputs=inputs,
        criteria_names=CRITERIA,
        summary=summary,
        details=details,
        table=tuple(shown),
        kernels_not_listed=max(len(rows), int(app["kernels"])) - len(shown),  # folded: counted
        streams=streams,
        streams_notes=streams_notes,
        timeline=timeline(profile),
        notes=for_inputs([*data["notes"], *_device_notes(data["device"])], profilers),
        analysis_json=data,
        predictions=build_predictions(profile, kernels, model_inputs),
        roofline=build_roofline(profile, kernels, data["device"]),
        verdict=_verdict(summary, app, hints, rows, profilers),
        collect=what_to_collect(kernels, app["HOSTSYNC"], profilers),
        profilers=profilers,
        host=host_view(profile),
    )


def _verdict(
    summary: Summary,
    app: Mapping[str, Any],
    hints: list[HintView],
    rows: list[KernelRow],
    profilers: tuple[str, ...] = (),
) -> Verdict:
    """The first line: the application's first hint with the GPU time it concerns, and the
    application's potential speedup or what to collect for one."""
    hint = hints[0] if hints else None
    gpu = summary.gpu_time_ns
    share = hint.share_of_gpu_time if hint is not None else None
    inputs = dict(summary.hostsync.inputs)
    needs = []
    if summary.hostsync.status == "not_computable":
        tools = " or ".join(TOOL_NAMES[t] for t in timeline_tools(profilers))
        needs.append(f"a timeline of the launches ({tools}) for HOSTSYNC")
    if rows and not any(r.potential_speedup is not None for r in rows):
        tools = " or ".join(TOOL_NAMES[t] for t in metric_tools(profilers))
        what = "speedup estimates"
        if not any(r.computed for r in rows):
            what = "criteria and speedup estimates"
        needs.append(f"the kernels' hardware metrics ({tools}) for their {what}")
    return Verdict(
        hint=hint,
        hint_time_ns=gpu * share if gpu is not None and share is not None else None,
        gpu_time_ns=gpu,
        span_ns=inputs.get("span_ns"),
        idle_ns=inputs.get("idle_ns"),
        potential_speedup=summary.potential_speedup,
        basis=str(app.get("potential_speedup_basis") or ""),
        needs=tuple(needs) if summary.potential_speedup is None else (),
        kernels_with_criteria=sum(1 for r in rows if r.computed),
        kernels=len(rows),
    )


def display_name(name: str) -> str:
    """A kernel's name as the report shows it: demangled, without its return type, shortened
    (the full name stays in the tooltip and the JSON)."""
    return compact(readable_name(name))


def _row(rank: int, k: Mapping[str, Any], spread: Spread | None = None) -> KernelRow:
    crit = k["criteria"]
    return KernelRow(
        rank=rank,
        name=k["name"],
        display_name=display_name(k["name"]),
        launches=int(k["launches"]),
        duration_ns=k["duration_ns"],
        share_of_gpu_time=k["share_of_gpu_time"],
        bound=k["bound"],
        potential_speedup=k["potential_speedup"],
        values=tuple(crit[c]["value"] if c in crit else None for c in CRITERIA),
        statuses=tuple(crit[c]["status"] if c in crit else None for c in CRITERIA),
        computed=_computed(k),
        spread=spread,
    )


def _computed(k: Mapping[str, Any]) -> bool:
    """At least one criterion of the kernel's own (HOSTSYNC is the application's) has a value."""
    return any(
        c["status"] == "computed" and c.get("scope") != "application" and c["value"] is not None
        for c in k["criteria"].values()
    )


def _detail(row: KernelRow, k: Mapping[str, Any], profilers: tuple[str, ...] = ()) -> KernelDetail:
    crit = k["criteria"]
    methods = {name: c["method"] for name, c in crit.items()}
    return KernelDetail(
        row=row,
        memory_frac=k["throughputs"]["memory_frac"],
        compute_frac=k["throughputs"]["compute_frac"],
        criteria=tuple(
            _criterion(c, crit[c], estimate(k["ncu_rules"], c), profilers)
            for c in CRITERIA
            if c in crit
        ),
        hints=tuple(
            _hint(
                h,
                methods.get(h["criterion"], ""),
                kernels=(k["name"],),
                share=k["share_of_gpu_time"],
                nvidia=estimate(k["ncu_rules"], h["criterion"]),
            )
            for h in k["hints"]
        ),
        rules=tuple(_rule(r) for r in k["ncu_rules"]),
        notes=for_inputs(k["notes"], profilers),
    )


def _criterion(
    name: str,
    c: Mapping[str, Any],
    nvidia: NvidiaEstimate | None = None,
    profilers: tuple[str, ...] = (),
) -> CriterionView:
    threshold = THRESHOLDS.get(name)
    value = c["value"]
    return CriterionView(
        name=name,
        status=c["status"],
        value=value,
        potential_speedup=c["potential_speedup"],
        threshold=threshold,
        below_threshold=value is not None and threshold is not None and value < threshold,
        method=c["method"],
        inputs=tuple(sorted(c["inputs"].items())),
        missing=tuple(c["missing"]),
        collect=tuple(sorted(c["collect"].items())),
        notes=for_inputs(c["notes"], profilers),
        nvidia=nvidia,
    )


def _app_hint(
    h: Mapping[str, Any],
    engine_kernels: tuple[str, ...],
    data: Mapping[str, Any],
    by_name: Mapping[str, Mapping[str, Any]],
) -> HintView:
    """One entry of the application's hints: its kernels (the JSON's ``kernels`` of a grouped
    entry, else the engine's hint's), their combined share, the criterion's range over them and
    NVIDIA's estimates combined over them the way the advisor combines its own."""
    names = tuple(h.get("kernels") or engine_kernels)
    if h["kernel"] is None or not names:
        return _hint(h, _method(data, h))
    members = [by_name[n] for n in names if n in by_name]
    shares = [m["share_of_gpu_time"] for m in members]
    values = [
        own["value"]
        for m in members
        for own in m["hints"]
        if own["criterion"] == h["criterion"] and own["value"] is not None
    ]
    nvidia = combined(
        [(m["share_of_gpu_time"], estimate(m["ncu_rules"], h["criterion"])) for m in members]
    )
    known = [s for s in shares if s is not None]
    return _hint(
        h,
        _method(data, h),
        kernels=names,
        share=sum(known) if known and len(known) == len(names) else None,
        values=values,
        nvidia=nvidia,
    )


def _hint(
    h: Mapping[str, Any],
    method: str,
    kernels: tuple[str, ...] = (),
    share: float | None = None,
    values: list[float] | None = None,
    nvidia: NvidiaEstimate | None = None,
) -> HintView:
    kernel = h["kernel"]
    values = values or ([] if h["value"] is None else [h["value"]])
    return HintView(
        criterion=h["criterion"],
        kernel=kernel,
        kernel_display=display_name(kernel) if kernel is not None else None,
        title=h["title"],
        value=h["value"],
        threshold=h["threshold"],
        potential_speedup=h["potential_speedup"],
        application_speedup=h["application_speedup"],
        evidence=tuple(sorted(h["evidence"].items())),
        actions=tuple(h["actions"]),
        method=method,
        kernels=kernels,
        kernels_display=tuple(display_name(k) for k in kernels),
        share_of_gpu_time=share,
        value_min=min(values) if values else None,
        value_max=max(values) if values else None,
        nvidia=nvidia,
    )


def _method(data: Mapping[str, Any], h: Mapping[str, Any]) -> str:
    """The engine's method text of the criterion a hint comes from."""
    if h["kernel"] is None:
        return str(data["application"]["HOSTSYNC"]["method"])
    for k in data["kernels"]:
        if k["name"] == h["kernel"] and h["criterion"] in k["criteria"]:
            return str(k["criteria"][h["criterion"]]["method"])
    return ""


def _rule(r: Mapping[str, Any]) -> RuleView:
    return RuleView(
        section=str(r.get("section") or ""),
        rule=str(r.get("rule") or ""),
        rule_type=str(r.get("rule_type") or ""),
        description=str(r.get("description") or ""),
        estimated_speedup_frac=r.get("estimated_speedup_frac"),
        speedup_type=r.get("speedup_type"),
    )


def _bound_mix(kernels: list[Mapping[str, Any]]) -> tuple[tuple[str, float], ...]:
    """Share of GPU time per bound (``unknown`` when the engine could not classify)."""
    mix: dict[str, float] = {}
    for k in kernels:
        share = k["share_of_gpu_time"]
        if share is not None:
            key = k["bound"] or "unknown"
            mix[key] = mix.get(key, 0.0) + float(share)
    return tuple(sorted(mix.items(), key=lambda kv: (-kv[1], kv[0])))


def _streams(profile: Profile) -> tuple[tuple[StreamsSequence, ...], tuple[str, ...]]:
    """The streams advice (seed 004) when the profile has a transfer-kernel timeline."""
    from advisor.models.streams import analysis as streams_analysis

    try:
        analysis = streams_analysis.analyze_streams(profile)
    except InputError:
        return (), ()  # no transfer-kernel-transfer timeline: nothing to advise
    except UsageError as exc:  # the model lacks a device fact (compute capability)
        return (), (f"streams advice not available: {exc}",)
    number = streams_analysis.json_number  # the values of ``streams --json`` (to_dict)
    sequences = tuple(
        StreamsSequence(
            index=r.index,
            model_title=r.prediction.model.title,
            optimal_n=r.prediction.optimal_n,
            measured_streams=r.measured_streams,
            measured_ms=number(r.measured_ms),
            predicted_1_ms=number(r.prediction.predicted_1_ms),
            predicted_optimal_ms=number(r.prediction.predicted_optimal_ms),
            saving_frac=number(r.prediction.saving_frac),
            curve_ms=_finite_curve(r.prediction.curve_ms),
            notes=r.notes,
        )
        for r in analysis.results
    )
    return sequences, analysis.timeline.notes


def _finite_curve(curve: tuple[float, ...]) -> tuple[float | None, ...]:
    """The predicted curve with NaN and infinities as None (as ``streams --json`` writes it)."""
    if all(map(math.isfinite, curve)):
        return curve
    return tuple(None if not math.isfinite(v) else float(v) for v in curve)


def _profile_devices(profile: Profile) -> tuple[str, ...]:
    if profile.devices.empty or "name" not in profile.devices:
        return ()
    return tuple(sorted({str(n) for n in profile.devices["name"].dropna()}))


def _device_notes(device: Mapping[str, Any]) -> list[str]:
    return [str(n) for n in [device.get("note"), *device.get("notes", [])] if n]


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _pct(value: float | None) -> str:
    """A share as a percentage; two significant digits under 0.1 % (``0.0071%``), not 0.0 %."""
    if value is None:
        return "n/a"
    return f"{100 * value:.2g}%" if 0 < value < 0.001 else f"{100 * value:.1f}%"
