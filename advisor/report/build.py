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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from advisor.criteria import CRITERIA
from advisor.criteria.engine.analysis import Analysis, to_json
from advisor.criteria.engine.hints import THRESHOLDS, kernels_of
from advisor.criteria.engine.speedups import application_gain
from advisor.errors import InputError, UsageError
from advisor.profile import Profile
from advisor.render.display import (
    compact,
    counted,
    criterion_value,
    distinct_names,
    readable_name,
    share,
    speedup_text,
)
from advisor.report.headroom import FEWER_BYTES, roofline_headroom
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
from advisor.report.roofline import Roofline, build_roofline, kernel_metric_means
from advisor.report.spread import Spread, spreads
from advisor.report.where import (
    Stall,
    Where,
    branch_actions,
    stalls_json,
    stalls_of,
    where_json,
    where_of,
)

if TYPE_CHECKING:  # the timeline's module loads only where a page shows it (build, pages=True)
    from advisor.report.timeline import Timeline

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
    #: the engine's figure on the whole GPU time when the report capped it at the kernels'
    #: roofline headroom (:func:`cap_at_headroom`); None when not capped
    uncapped_speedup: float | None = None
    #: the kernels' roofline headroom on the whole GPU time, when it capped this fix
    headroom_speedup: float | None = None
    #: where in the code: the top locations of the criterion's waste in the hint's first kernel,
    #: or which cannot be shown (None: the input holds no per-instruction data, docs/locations.md)
    located: Where | None = None

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
            return f"{criterion_value(low, self.threshold)}–{criterion_value(high, self.threshold)}"
        return "n/a" if self.value is None else criterion_value(self.value, self.threshold)

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
            f" (this fix: up to {speedup_text(self.application_speedup)} on the whole GPU time)"
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
    #: the kernel's top stall reasons from PC sampling, where its locations were read
    stalls: tuple[Stall, ...] = ()

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
    without an estimate, why and what to collect.

    Built once here and rendered by both the HTML (``_verdict.html.j2``) and the Markdown
    (:mod:`advisor.render.markdown`), and written into ``report --json`` (:func:`verdict_json`),
    so the figures of a page cannot disagree (docs/report.md, "One verdict")."""

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
    #: fix (a hint leads) | headroom (no hint, but a kernel has roofline headroom) | nothing |
    #: no_estimate (no criterion computable) | no_kernels | limit (the first hint concerns kernels
    #: under 1 % of the GPU time and a hotter kernel's limiter leads, :func:`lead_with_limit`)
    kind: str = "nothing"
    #: the kernels' own criteria (HOSTSYNC and those not applicable left out): how many have a
    #: value and how many could have one -- "nothing to fix" says how few were computed
    criteria_computed: int = 0
    criteria_possible: int = 0
    #: the application's hints in the report's order (:func:`rank_hints`); the summary shows the
    #: first :data:`SUMMARY_HINTS`
    hints: tuple[HintView, ...] = ()
    #: the engine's application figure when the report shows another one (raised to a hint's
    #: figure, or n/a because none of its inputs is known); None when they are the same
    engine_potential_speedup: float | None = None
    #: kind "headroom": the kernel with the most roofline headroom on the whole GPU time
    headroom_kernel: str | None = None
    headroom_display: str | None = None
    headroom_share: float | None = None
    headroom: float | None = None  # that kernel's roofline headroom (1 / fraction of peak used)
    headroom_gpu: float | None = None  # the same seen on the whole GPU time (Amdahl)
    headroom_bound: str | None = None  # that kernel's bound (memory, compute, latency)
    #: why the first hint concerns kernels under 1 % of the GPU time (empty: it does not)
    lead_reason: str = ""
    #: the bound mix in words ("memory-bound kernels: 50.3% of GPU time, ...")
    bound_text: str = ""
    #: the device line: "NVIDIA B200", with "(the profile names ...)" only when it differs
    device_text: str = ""
    #: the limiting unit of the top kernel and of every kernel over :data:`LIMIT_SHARE` of the
    #: GPU time, where the profile has their Speed Of Light figures (:func:`limiting_units`)
    limits: tuple[LimitingUnit, ...] = ()
    #: kind "limit": the hot kernel whose limiter leads instead of a hint on kernels under
    #: :data:`MINOR_SHARE` of the GPU time (:func:`lead_with_limit`)
    limit: LimitingUnit | None = None

    @property
    def shown_limits(self) -> tuple[LimitingUnit, ...]:
        """The limits the facts line names: those with a unit, the :data:`LIMITS_SHOWN` hottest
        (the others are in the JSON and the kernel sections)."""
        with_unit = [u for u in self.limits if u.unit is not None]
        return tuple(sorted(with_unit, key=lambda u: -u.share)[:LIMITS_SHOWN])

    @property
    def headroom_advice(self) -> str:
        """What roofline headroom without a hint means, by the kernel's bound and, for a
        memory-bound kernel whose busiest memory unit is a cache, by that unit: the DRAM
        roofline is then not what holds it (a shared-memory-tiled matrix product: L1/TEX at
        91 % of peak, DRAM at 0.5 %)."""
        bound = self.headroom_bound
        if bound == "latency":
            return (
                "it is latency-bound (neither DRAM nor FLOPs near peak), which no criterion "
                "measures: raise the parallelism per SM or the instructions in flight per thread"
            )
        if bound == "memory":
            unit = next(
                (u for u in self.limits if u.kernel == self.headroom_kernel and u.unit), None
            )
            if unit is not None and unit.unit in CACHE_UNITS and unit.frac_of_peak is not None:
                return (
                    f"it is memory-bound on {unit.unit} ({unit.frac_of_peak * 100:.0f}% of "
                    f"peak), not on DRAM: issue fewer or wider {unit.unit} accesses (keep "
                    "reused values in registers) before the DRAM roofline can bound it"
                )
            return (
                "it is memory-bound below peak DRAM bandwidth: move fewer bytes or move them wider"
            )
        if bound == "compute":
            return "it is compute-bound below peak FLOPs: use wider or fused instructions"
        return "the criteria computed do not name its limiter"

    @property
    def limits_more(self) -> int:
        """Kernels with a limiting unit the facts line does not name."""
        return sum(1 for u in self.limits if u.unit is not None) - len(self.shown_limits)

    @property
    def limits_text(self) -> str:
        """The limits in words: "`k` (50.3% of GPU time): limited by DRAM at 87% of peak"."""
        text = "; ".join(
            f"{u.display} ({_pct(u.share)} of GPU time): {u.text}" for u in self.shown_limits
        )
        more = self.limits_more
        return text + (f"; {counted(more, 'more hot kernel')}" if more else "")

    @property
    def fix_speedup(self) -> float | None:
        """This fix (the first hint) on the whole GPU time."""
        return self.hint.application_speedup if self.hint is not None else None


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


#: ``build``'s host view when the caller gives none: build it from the profile
_NOT_GIVEN: Any = object()


def build(
    analysis: Analysis,
    profile: Profile,
    detail_kernels: int = DETAIL_KERNELS,
    table_kernels: int = TABLE_KERNELS,
    model_inputs: ModelInputs | None = None,
    locations: Mapping[str, Mapping[str, Any]] | None = None,
    host: HostView | None = _NOT_GIVEN,
    pages: bool = True,
) -> Report:
    """The report of ``analysis`` (from :func:`advisor.criteria.evaluate` on ``profile``).

    ``model_inputs`` feed the predictions (:mod:`advisor.report.predictions`); without a device
    in them, the BSP model uses the database entry of the analysis' GPU.  ``locations``: each
    kernel's ``locations`` of the analysis JSON (:func:`advisor.report.locations.attach`), by
    kernel name: the hints say where in the code and the limiters give their stall reasons.
    ``host``: the profile's host view when the caller has built it already (None: it has none);
    built here when not given.  ``pages``: False leaves out what only the HTML and Markdown
    pages show and ``report --json`` does not write (the streams advice, the timeline, the
    roofline chart, the spread of each kernel's launch times, the predictions unless
    :func:`_predictions_asked`): on a trace of a million launches the timeline alone holds
    some 100 MiB of arrays at the run's peak, and the spreads and the BSP model's launches
    take 50 and 35 ms."""
    data = to_json(analysis)
    app = data["application"]
    profilers = profilers_of(data)
    kernels = sorted(data["kernels"], key=lambda k: (-(k["share_of_gpu_time"] or 0.0), k["name"]))
    spread_of = spreads(profile) if pages else {}  # the timing table's columns only
    names = display_names(kernels)
    rows = [_row(i + 1, k, names, spread_of.get(k["name"])) for i, k in enumerate(kernels)]
    shown = rows[: detail_kernels + table_kernels]
    detailed = [(r, k) for r, k in zip(rows, kernels, strict=True) if r.computed]
    located = locations or {}
    details = tuple(
        _detail(r, k, names, profilers, located.get(k["name"]))
        for r, k in detailed[:detail_kernels]
    )
    by_name = {k["name"]: k for k in kernels}
    hints = rank_hints(
        [
            _located(
                cap_at_headroom(_app_hint(h, kernels_of(obj), data, by_name, names), by_name),
                located,
            )
            for h, obj in zip(app["hints"], analysis.application.hints, strict=True)
        ]
    )
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
    streams, streams_notes = _streams(profile) if pages else ((), ())
    model_inputs = model_inputs or ModelInputs()
    if model_inputs.device is None:
        model_inputs = replace(model_inputs, device=database_device(data["device"]))
    inputs = tuple(shown_path(str(i.get("path"))) for i in data["inputs"])
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
        timeline=_timeline(profile) if pages else None,
        notes=for_inputs([*data["notes"], *_device_notes(data["device"])], profilers),
        analysis_json=data,
        predictions=(
            build_predictions(profile, kernels, model_inputs)
            if pages or _predictions_asked(model_inputs)
            else None
        ),
        roofline=build_roofline(profile, kernels, data["device"]) if pages else None,
        verdict=lead_with_limit(
            replace(
                _verdict(
                    summary,
                    app,
                    hints,
                    rows,
                    profilers,
                    kernels,
                    compute_capability(data["device"]),
                    names,
                ),
                limits=tuple(
                    replace(u, stalls=stalls_of(located.get(u.kernel)))
                    for u in limiting_units(kernels, profile, located, names)
                ),
            )
        ),
        collect=what_to_collect(
            kernels, app["HOSTSYNC"], profilers, compute_capability(data["device"])
        ),
        profilers=profilers,
        host=host_view(profile) if host is _NOT_GIVEN else host,
    )


def _predictions_asked(inputs: ModelInputs) -> bool:
    """Whether the predictions are built without a page to show them: ``--predict-gpu`` carries
    them into the JSON (``bsp_other_gpus``), and a model description given on the command line
    (``--app``, ``--kernels``) is read against the profile whatever is written."""
    return (
        bool(inputs.predict_gpus) or inputs.app is not None or inputs.kernel_description is not None
    )


#: a kernel whose share of the GPU time is below this is ranked after the others and never
#: leads the verdict without a stated reason (the engine's ranking, hints.rank)
MINOR_SHARE = 0.01
#: roofline headroom on the whole GPU time from which a kernel without any hint is named in the
#: verdict ("no criterion below its threshold, but ... runs at N % of its roofline bound")
HEADROOM_NOTABLE = 1.10


def cap_at_headroom(h: HintView, by_name: Mapping[str, Mapping[str, Any]]) -> HintView:
    """``h`` with its figures capped at its kernels' roofline headroom (Decision P2): a fix that
    neither moves fewer DRAM bytes nor does fewer FLOPs cannot make a kernel faster than the
    roofline lets it, so "this fix" never promises more than "roofline headroom".  The kernels'
    Amdahl is recomputed with each at min(its own estimate for the criterion, its headroom);
    kernels without an estimate count as 1x, as in the engine's sum."""
    if h.criterion in FEWER_BYTES or not h.kernels or h.application_speedup is None:
        return h
    parts: list[tuple[float, float, float]] = []  # (share, fix, headroom)
    capped = False
    for name in h.kernels:
        k = by_name.get(name)
        share = k.get("share_of_gpu_time") if k is not None else None
        if k is None or share is None:
            return h  # a share unknown: the group's Amdahl cannot be redone
        own = [
            x["potential_speedup"]
            for x in k.get("hints") or ()
            if x["criterion"] == h.criterion and x.get("potential_speedup") is not None
        ]
        fix = float(own[0]) if own else 1.0
        head = roofline_headroom(k)
        if head is not None and head < fix:
            capped = True
        parts.append((float(share), fix, head if head is not None else math.inf))
    if not capped:
        return h
    total = sum(s for s, _, _ in parts)
    after = sum(s / min(fix, head) for s, fix, head in parts)
    roof = sum(s / head if math.isfinite(head) else s for s, _, head in parts)
    gpu = 1.0 / ((1.0 - total) + after) if after > 0 else None
    if gpu is None or gpu >= h.application_speedup:
        return h
    return replace(
        h,
        potential_speedup=total / after if after > 0 else h.potential_speedup,
        application_speedup=gpu,
        uncapped_speedup=h.application_speedup,
        headroom_speedup=1.0 / ((1.0 - total) + roof) if roof > 0 else None,
    )


def severity(h: HintView) -> float:
    """What a hint ranks by: its gain on the whole GPU time; without one (its speedup estimate's
    inputs missing) the gain its criterion's value would give if the kernels' time scaled with
    it, 1 / ((1 - share) + share x value) -- an ordering key only, never shown as a speedup, so
    a severe value without an estimate (L1_GRANULARITY 0.12) ranks above a 1.00x hint."""
    if h.application_speedup is not None:
        return float(h.application_speedup)
    value, share = h.value_min if h.value_min is not None else h.value, h.share_of_gpu_time
    if value is None or share is None:
        return 1.0
    rest = (1.0 - share) + share * max(float(value), 1e-3)
    return 1.0 / rest if rest > 0 else 1.0


def rank_hints(hints: list[HintView]) -> list[HintView]:
    """The report's order of the application's hints: kernels under :data:`MINOR_SHARE` of the
    GPU time last (as the engine ranks), then by :func:`severity`, largest first; ties by
    criterion and kernel, so the order is deterministic."""

    def key(h: HintView) -> tuple[bool, float, str, str]:
        minor = h.share_of_gpu_time is not None and h.share_of_gpu_time < MINOR_SHARE
        return (minor, -round(severity(h), 9), h.criterion, h.kernel or "")

    return sorted(hints, key=key)


def compute_capability(device: Mapping[str, Any]) -> float | None:
    """The device's compute capability as a number (``8.0``), None when not known."""
    try:
        return float(str(device.get("compute_capability")))
    except ValueError:
        return None


def shown_path(path: str) -> str:
    """An input path as the report shows it: as the user gave it when relative; an absolute path
    (of this machine) is written as its base name, so the artifact holds no local directory
    (:func:`advisor.report.local_paths.shown_path`)."""
    from advisor.report import local_paths

    return local_paths.shown_path(path)


def _bound_text(mix: tuple[tuple[str, float], ...]) -> str:
    """The bound mix in words: each class of kernels and its share of the GPU time."""
    words = {"unknown": "kernels of unknown bound (no throughput figures)"}
    parts = [f"{words.get(b, f'{b}-bound kernels')}: {_pct(f)}" for b, f in mix[:3]]
    return (", ".join(parts) + " of GPU time") if parts else ""


def _same_device(a: str, b: str) -> bool:
    """Two names of one GPU (``GeForce GTX 1660 SUPER`` and ``NVIDIA GeForce GTX 1660 SUPER``)."""

    def norm(x: str) -> str:
        x = " ".join(x.lower().split())
        return x[len("nvidia ") :] if x.startswith("nvidia ") else x

    return norm(a) == norm(b)


def _device_text(device: str | None, profile: tuple[str, ...]) -> str:
    text = device or "not identified"
    other = [p for p in profile if not (device and _same_device(p, device))]
    return text + (f" (the profile names {', '.join(other)})" if other else "")


def _application(
    app: Mapping[str, Any], kernels: list[Mapping[str, Any]], hints: list[HintView]
) -> tuple[float | None, str]:
    """The application's figure the report shows, and its basis (Decision A1 with two report
    rules): n/a when none of its inputs is known (no kernel has a headroom, no timeline for
    HOSTSYNC, no hint has a figure), never the 1.00x the engine's fallback then gives; and never
    below a hint's figure on the whole GPU time (a hint's fix is part of the application)."""
    engine = app.get("potential_speedup")
    basis = str(app.get("potential_speedup_basis") or "")
    figures = [h.application_speedup for h in hints if h.application_speedup is not None]
    hostsync = (app.get("HOSTSYNC") or {}).get("value")
    unknown = not any(k.get("potential_speedup") is not None for k in kernels)
    if unknown and hostsync is None and (not figures or max(figures) <= 1.0):
        computed = sum(
            1
            for k in kernels
            for c in k["criteria"].values()
            if c["status"] == "computed" and c.get("scope") != "application"
        )
        criteria = (
            f"only {counted(computed, 'kernel criterion', 'kernel criteria')} computed"
            if computed
            else "no kernel criterion computed"
        )
        return None, (
            "not computable: no kernel has a roofline headroom (no DRAM or FLOP figures), "
            f"no timeline for HOSTSYNC and no hint, {criteria}"
        )
    best = max(figures, default=None)
    if engine is None:
        return None, basis  # the engine's n/a stands: a hint's figure is no application figure
    if best is not None and best > engine:
        lead = next(h for h in hints if h.application_speedup == best)
        return best, (
            f"raised to the {lead.criterion} fix's figure on the whole GPU time: the "
            f"application figure ({_x(engine)}: {basis}) counts the kernels at a headroom below "
            "what that fix estimates"
        )
    return engine, basis


def _headroom_kernel(kernels: list[Mapping[str, Any]]) -> tuple[Mapping[str, Any], float] | None:
    """The kernel whose roofline headroom buys the most on the whole GPU time."""
    best: tuple[Mapping[str, Any], float] | None = None
    for k in kernels:
        gain = application_gain(k.get("share_of_gpu_time"), roofline_headroom(k))
        if gain is not None and (best is None or gain > best[1] + 1e-12):
            best = (k, gain)
    return best


def _verdict(
    summary: Summary,
    app: Mapping[str, Any],
    hints: list[HintView],
    rows: list[KernelRow],
    profilers: tuple[str, ...] = (),
    kernels: list[Mapping[str, Any]] | None = None,
    cc: float | None = None,
    names: Mapping[str, str] | None = None,
) -> Verdict:
    """The first line: the application's first hint with the GPU time it concerns, and the
    application's potential speedup or what to collect for one."""
    kernels = kernels or []
    hint = hints[0] if hints else None
    gpu = summary.gpu_time_ns
    share = hint.share_of_gpu_time if hint is not None else None
    inputs = dict(summary.hostsync.inputs)
    potential, basis = _application(app, kernels, hints)
    needs = []
    if summary.hostsync.status == "not_computable":
        tools = " or ".join(TOOL_NAMES[t] for t in timeline_tools(profilers, cc))
        needs.append(f"a timeline of the launches ({tools}) for HOSTSYNC")
    if rows and not any(r.potential_speedup is not None for r in rows):
        tools = " or ".join(TOOL_NAMES[t] for t in metric_tools(profilers, cc))
        what = "speedup estimates"
        if not any(r.computed for r in rows):
            what = "criteria and speedup estimates"
        needs.append(f"the kernels' hardware metrics ({tools}) for their {what}")
    top = _headroom_kernel(kernels)
    computed, possible = _coverage(rows)
    kind = "no_kernels" if not rows else "nothing"
    if hint is not None:
        kind = "fix"
    elif top is not None and top[1] >= HEADROOM_NOTABLE:
        kind = "headroom"
    elif rows and not any(r.computed for r in rows):
        kind = "no_estimate"
    reason = ""
    if hint is not None and share is not None and share < MINOR_SHARE:
        reason = "every hint concerns kernels under 1% of the GPU time"
        if top is not None and top[1] >= HEADROOM_NOTABLE:
            k = top[0]
            reason += (
                f"; {display_name(k['name'], names)} ({_pct(k['share_of_gpu_time'])} of GPU time) "
                f"has a roofline headroom of {_x(roofline_headroom(k))} and no criterion "
                "below its threshold"
            )
    named = top if kind == "headroom" or reason else None
    return Verdict(
        hint=hint,
        hint_time_ns=gpu * share if gpu is not None and share is not None else None,
        gpu_time_ns=gpu,
        span_ns=inputs.get("span_ns"),
        idle_ns=inputs.get("idle_ns"),
        potential_speedup=potential,
        basis=basis,
        needs=tuple(needs) if potential is None else (),
        kernels_with_criteria=sum(1 for r in rows if r.computed),
        kernels=len(rows),
        kind=kind,
        criteria_computed=computed,
        criteria_possible=possible,
        hints=tuple(hints),
        engine_potential_speedup=(
            app.get("potential_speedup") if potential != app.get("potential_speedup") else None
        ),
        headroom_kernel=named[0]["name"] if named else None,
        headroom_display=display_name(named[0]["name"], names) if named else None,
        headroom_share=named[0]["share_of_gpu_time"] if named else None,
        headroom=roofline_headroom(named[0]) if named else None,
        headroom_gpu=named[1] if named else None,
        headroom_bound=named[0].get("bound") if named else None,
        lead_reason=reason,
        bound_text=_bound_text(summary.bound_mix),
        device_text=_device_text(summary.device, summary.profile_devices),
    )


#: a kernel over this share of the GPU time gets its limiting unit named in the verdict (the top
#: kernel always does)
LIMIT_SHARE = 0.10
#: the facts line names the limiting units of at most this many kernels (the hottest)
LIMITS_SHOWN = 3
#: the Speed Of Light figures a limiting unit is chosen from: (unit, canonical metric); Nsight
#: Compute's GPU Speed Of Light and Memory Workload sections (advisor/data/metric_map.csv)
SPEED_OF_LIGHT: tuple[tuple[str, str], ...] = (
    ("DRAM", "dram_throughput_pct_of_peak"),
    ("L2", "l2_throughput_pct_of_peak"),
    ("L1/TEX", "l1tex_throughput_pct_of_peak"),
    ("SM", "compute_throughput_pct_of_peak"),
)

#: the Speed Of Light memory units that are caches (shared memory is served by L1/TEX)
CACHE_UNITS = frozenset({"L1/TEX", "L2"})
#: a unit at or above this fraction of its peak limits the kernel; with every unit below it the
#: kernel is latency-bound (Nsight Compute's Speed Of Light rule: below 60 % of peak in both
#: compute and memory, latency issues are likely)
NEAR_PEAK = 0.6


@dataclass(frozen=True)
class LimitingUnit:
    """The unit a kernel runs closest to its peak on: the largest of its Speed Of Light figures
    (:data:`SPEED_OF_LIGHT`, each the mean over the kernel's launches, as a fraction of peak)."""

    kernel: str
    display: str
    share: float  # of the GPU time
    #: DRAM | L2 | L1/TEX | SM; None where the profile has no Speed Of Light figure for the
    #: kernel but PC-sampling stall reasons (an nvprof database's source-level tables)
    unit: str | None
    frac_of_peak: float | None
    #: every unit's figure the profile has, in :data:`SPEED_OF_LIGHT` order
    units: tuple[tuple[str, float], ...] = ()
    #: the kernel's top stall reasons from PC sampling, with their lines (docs/locations.md)
    stalls: tuple[Stall, ...] = ()

    @property
    def text(self) -> str:
        """In words, "limited by DRAM at 87% of peak"; below :data:`NEAR_PEAK` no unit limits it,
        and the busiest unit is named as such."""
        if self.unit is None or self.frac_of_peak is None:
            return "no Speed Of Light figures: its warps' stall reasons say what it waits on"
        at = f"{self.unit} at {self.frac_of_peak * 100:.0f}% of peak"
        if self.frac_of_peak >= NEAR_PEAK:
            return f"limited by {at}"
        return f"no unit near its peak (busiest: {at}): latency-bound"


def _timeline(profile: Profile) -> Timeline | None:
    """:func:`advisor.report.timeline.timeline` (its module loaded only here)."""
    from advisor.report.timeline import timeline

    return timeline(profile)


def limiting_units(
    kernels: Sequence[Mapping[str, Any]],
    profile: Profile,
    located: Mapping[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> tuple[LimitingUnit, ...]:
    """The limiting unit of the top kernel (by GPU time) and of each kernel over
    :data:`LIMIT_SHARE` of it: the unit of the largest Speed Of Light figure (% of peak) the
    profile holds for it.  A kernel without any of these figures (nvprof, nsys, a trace, an ncu
    export without the SpeedOfLight section) is left out: nothing is claimed for it, unless its
    ``located`` locations hold PC-sampling stall reasons (then it is listed without a unit,
    its stalls saying what it waits on)."""
    ranked = [k for k in kernels if k.get("share_of_gpu_time") is not None]
    chosen = [k for i, k in enumerate(ranked) if i == 0 or k["share_of_gpu_time"] > LIMIT_SHARE]
    if not chosen:
        return ()
    means = kernel_metric_means(profile, [k["name"] for k in chosen])
    out = []
    for k in chosen:
        metrics = means.get(k["name"], {})
        units = tuple(
            (unit, float(metrics[m]))
            for unit, m in SPEED_OF_LIGHT
            if m in metrics and math.isfinite(metrics[m])
        )
        share = float(k["share_of_gpu_time"])
        if not units:
            stalls = stalls_of((located or {}).get(k["name"]))
            if stalls:
                out.append(
                    LimitingUnit(
                        k["name"], display_name(k["name"], names), share, None, None, (), stalls
                    )
                )
            continue
        unit, frac = max(units, key=lambda u: u[1])  # the first in SPEED_OF_LIGHT on a tie
        shown = display_name(k["name"], names)
        out.append(LimitingUnit(k["name"], shown, share, unit, frac, units))
    return tuple(out)


def lead_with_limit(v: Verdict) -> Verdict:
    """``v`` led by the limiter of its hottest kernel (kind ``limit``) where its first hint
    concerns kernels under :data:`MINOR_SHARE` of the GPU time while a kernel of at least that
    share has a limiting unit: the verdict never leads with a kernel under 1 % of the GPU time
    while a hotter kernel has a limiter (docs/report.md, "One verdict").  The hint stays the
    first hint, named after the limiter, and ``lead_reason`` says why it is not the lead."""
    share = v.hint.share_of_gpu_time if v.hint is not None else None
    if v.kind != "fix" or share is None or share >= MINOR_SHARE:
        return v
    hot = [u for u in v.limits if u.share >= MINOR_SHARE and u.unit is not None]
    if not hot:
        return v
    return replace(v, kind="limit", limit=max(hot, key=lambda u: u.share))


def _limits_json(v: Verdict) -> list[dict[str, Any]]:
    return [
        {
            "kernel": u.kernel,
            "share_of_gpu_time": u.share,
            "unit": u.unit,
            "fraction_of_peak": u.frac_of_peak,
            "speed_of_light": {name: frac for name, frac in u.units},
            "text": u.text,
            "stalls": stalls_json(u.stalls),
        }
        for u in v.limits
    ]


def _hint_json(h: HintView) -> dict[str, Any]:
    return {
        "criterion": h.criterion,
        "kernels": list(h.kernels),
        "value": h.value,
        "value_min": h.value_min,
        "value_max": h.value_max,
        "threshold": h.threshold,
        "share_of_gpu_time": h.share_of_gpu_time,
        "this_fix_on_its_kernels": h.potential_speedup,
        "this_fix_on_the_whole_gpu_time": h.application_speedup,
        "uncapped_on_the_whole_gpu_time": h.uncapped_speedup,
        "roofline_headroom_on_the_whole_gpu_time": h.headroom_speedup,
        "ranked_by": round(severity(h), 6),
        "nvidia_speedup": h.nvidia.speedup if h.nvidia is not None else None,
        "nvidia_rules": list(h.nvidia.rules) if h.nvidia is not None else [],
        "title": h.title,
        "where": where_json(h.located),
        "actions": list(h.actions),
    }


def _nvidia_json(analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Nsight Compute's estimate for each kernel and criterion its rules speak to, as the
    report shows it (the speedup ``1 / (1 - fraction)``, or that a rule fired without one)."""
    out = []
    for k in analysis.get("kernels") or ():
        rules = k.get("ncu_rules") or ()
        if not rules:
            continue
        for criterion in CRITERIA:
            e = estimate(rules, criterion)
            if e is None:
                continue
            out.append(
                {
                    "kernel": k.get("name"),
                    "criterion": criterion,
                    "speedup": e.speedup,
                    "fraction": e.fraction,
                    "rules": list(e.rules),
                    "local": e.local,
                }
            )
    return out


def verdict_json(report: Report) -> dict[str, Any]:
    """The verdict as ``report --json`` writes it (key ``verdict``): the same values the HTML
    and the Markdown render, every figure named for what it is."""
    v = report.verdict
    if v is None:
        return {}
    c = report.collect
    return {
        "kind": v.kind,
        "first_hint": _hint_json(v.hint) if v.hint is not None else None,
        "hints": [_hint_json(h) for h in v.hints],
        "the_whole_application": v.potential_speedup,
        "the_whole_application_basis": v.basis,
        "engine_application_figure": v.engine_potential_speedup,
        "gpu_time_ns": v.gpu_time_ns,
        "hint_time_ns": v.hint_time_ns,
        "idle_ns": v.idle_ns,
        "span_ns": v.span_ns,
        "kernels": v.kernels,
        "kernels_with_criteria": v.kernels_with_criteria,
        "criteria_computed": v.criteria_computed,
        "criteria_possible": v.criteria_possible,
        "headroom_kernel": v.headroom_kernel,
        "headroom_share_of_gpu_time": v.headroom_share,
        "roofline_headroom": v.headroom,
        "roofline_headroom_on_the_whole_gpu_time": v.headroom_gpu,
        "lead_reason": v.lead_reason,
        "needs": list(v.needs),
        "headroom_notable": HEADROOM_NOTABLE,
        "nvidia_estimates": _nvidia_json(report.analysis_json),
        "bound_mix": [[b, f] for b, f in report.summary.bound_mix],
        "bound_text": v.bound_text,
        "limits": _limits_json(v),
        "limit_kernel": v.limit.kernel if v.limit is not None else None,
        "limits_text": v.limits_text,
        "device_text": v.device_text,
        "collect": {
            "commands": [[w, cmd] for w, cmd in c.commands],
            "device_facts": list(c.device_facts),
            "other_tool": c.other_tool,
            "items": [
                {
                    "criterion": i.criterion,
                    "kernels": i.kernels,
                    "missing": list(i.missing),
                    "commands": [[t, cmd] for t, cmd in i.commands],
                }
                for i in c.items
            ],
        },
    }


_x = speedup_text


def display_name(name: str, names: Mapping[str, str] | None = None) -> str:
    """A kernel's name as the report shows it: its entry in ``names`` (:func:`display_names`),
    else demangled, without its return type, shortened (the full name stays in the tooltip and
    the JSON)."""
    shown = names.get(name) if names is not None else None
    return shown if shown is not None else compact(readable_name(name))


def display_names(kernels: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Every kernel's display name, distinct kernels reading differently wherever the report
    names them (:func:`advisor.render.display.distinct_names`: the template arguments in which
    two names differ, else `` #2``, ``#3`` in the order of ``kernels``, the largest first)."""
    return distinct_names(k["name"] for k in kernels)


def _row(
    rank: int, k: Mapping[str, Any], names: Mapping[str, str], spread: Spread | None = None
) -> KernelRow:
    crit = k["criteria"]
    return KernelRow(
        rank=rank,
        name=k["name"],
        display_name=display_name(k["name"], names),
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


def _coverage(rows: Sequence[KernelRow]) -> tuple[int, int]:
    """(criteria computed, criteria that apply) over the kernels' own criteria: not the
    application's HOSTSYNC, not those ``not_applicable`` to a kernel."""
    pairs = [
        st
        for r in rows
        for c, st in zip(CRITERIA, r.statuses, strict=False)
        if c != "HOSTSYNC" and st in ("computed", "not_computable")
    ]
    return pairs.count("computed"), len(pairs)


#: below this share of its possible kernel criteria computed, "nothing to fix" says how few
FEW_COMPUTED = 0.5


def _computed(k: Mapping[str, Any]) -> bool:
    """At least one criterion of the kernel's own (HOSTSYNC is the application's) has a value."""
    return any(
        c["status"] == "computed" and c.get("scope") != "application" and c["value"] is not None
        for c in k["criteria"].values()
    )


def _located(h: HintView, locations: Mapping[str, Mapping[str, Any]]) -> HintView:
    """``h`` with its :class:`~advisor.report.where.Where`: the locations of its criterion in
    its first kernel that has them (the kernels are in best-gain order), or, where none has,
    in its first kernel; and DIVERGENCE's actions led by what its branches test."""
    found = [
        w
        for name in h.kernels
        if (w := where_of(locations.get(name), name, h.criterion)) is not None
    ]
    if not found:
        return h
    best = next((w for w in found if w.top), found[0])
    return replace(h, located=best, actions=branch_actions(best, h.actions))


def _detail(
    row: KernelRow,
    k: Mapping[str, Any],
    names: Mapping[str, str],
    profilers: tuple[str, ...] = (),
    locations: Mapping[str, Any] | None = None,
) -> KernelDetail:
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
            _located(
                cap_at_headroom(
                    _hint(
                        h,
                        methods.get(h["criterion"], ""),
                        kernels=(k["name"],),
                        share=k["share_of_gpu_time"],
                        nvidia=estimate(k["ncu_rules"], h["criterion"]),
                        names=names,
                    ),
                    {k["name"]: k},
                ),
                {k["name"]: locations} if locations is not None else {},
            )
            for h in k["hints"]
        ),
        rules=tuple(_rule(r) for r in k["ncu_rules"]),
        notes=for_inputs(k["notes"], profilers),
        stalls=stalls_of(locations),
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
    names: Mapping[str, str] | None = None,
) -> HintView:
    """One entry of the application's hints: its kernels (the JSON's ``kernels`` of a grouped
    entry, else the engine's hint's), their combined share, the criterion's range over them and
    NVIDIA's estimates combined over them the way the advisor combines its own."""
    concerned = tuple(h.get("kernels") or engine_kernels)
    if h["kernel"] is None or not concerned:
        return _hint(h, _method(data, h), names=names)
    members = [by_name[n] for n in concerned if n in by_name]
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
        kernels=concerned,
        share=sum(known) if known and len(known) == len(concerned) else None,
        values=values,
        nvidia=nvidia,
        names=names,
    )


def _hint(
    h: Mapping[str, Any],
    method: str,
    kernels: tuple[str, ...] = (),
    share: float | None = None,
    values: list[float] | None = None,
    nvidia: NvidiaEstimate | None = None,
    names: Mapping[str, str] | None = None,
) -> HintView:
    kernel = h["kernel"]
    values = values or ([] if h["value"] is None else [h["value"]])
    return HintView(
        criterion=h["criterion"],
        kernel=kernel,
        kernel_display=display_name(kernel, names) if kernel is not None else None,
        title=h["title"],
        value=h["value"],
        threshold=h["threshold"],
        potential_speedup=h["potential_speedup"],
        application_speedup=h["application_speedup"],
        evidence=tuple(sorted(h["evidence"].items())),
        actions=tuple(h["actions"]),
        method=method,
        kernels=kernels,
        kernels_display=tuple(display_name(k, names) for k in kernels),
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
    return share(value)
