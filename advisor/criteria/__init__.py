"""The criteria engine (seed 002; MODELS.md §1-2): score every kernel on the nine optimization
criteria, estimate what fixing each would buy, classify the bound, rank hints, and say what is
missing when a criterion cannot be computed.

Entry point: :func:`evaluate` ``(profile, device, speedup_form) -> Analysis``; JSON via
:func:`advisor.criteria.engine.analysis.to_json`.  One module per criterion, named after it
(``hostsync.py``, ``l1_granularity.py``, ...), each exposing ``SPEC``, a
:class:`~advisor.criteria.engine.spec.CriterionSpec`; this package discovers them into
:data:`SPECS` (the only list of criteria: :data:`CRITERIA`, :data:`KERNEL_CRITERIA`, the hint
tables, the collection commands, the needed metrics and the report's column labels derive from
it; docs/adding_a_criterion.md).  Code two criteria share is in :mod:`~advisor.criteria.engine`
(:mod:`~advisor.criteria.engine.levels`, :mod:`~advisor.criteria.engine.balance`), the shared
flow in :mod:`~advisor.criteria.engine.common`, value gathering in
:mod:`~advisor.criteria.engine.inputs`, speedups and the bound in
:mod:`~advisor.criteria.engine.speedups`, hints (thresholds and actions from the specs) in
:mod:`~advisor.criteria.engine.hints`, profiler command lines in
:mod:`~advisor.criteria.engine.collect`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from advisor import schema
from advisor.communication import (
    NOT_APPLICABLE_NOTE,
    NOT_FOR_COMMUNICATION,
    communication_kernels,
)
from advisor.criteria.engine.analysis import (
    NOT_APPLICABLE,
    Analysis,
    ApplicationAnalysis,
    CriterionResult,
    KernelAnalysis,
    OtherKernels,
    Speedups,
    Throughputs,
    to_json,
)
from advisor.criteria.engine.common import Context, Scored, score
from advisor.criteria.engine.folding import KERNELS_MAX, Folded, fold
from advisor.criteria.engine.gathering import gather
from advisor.criteria.engine.hints import hint_for, rank
from advisor.criteria.engine.inputs import DeviceView, KernelData, device_view, profilers
from advisor.criteria.engine.instruction_sums import needs_sums, with_sums
from advisor.criteria.engine.occupancy import limits_for
from advisor.criteria.engine.spec import APPLICATION, KERNEL, CriterionSpec
from advisor.criteria.engine.speedups import (
    AMDAHL,
    MIN_LAUNCH_NS,
    SM_SOL_LABEL,
    SPEEDUP_FORMS,
    amdahl_combine,
    application_potential,
    arithmetic_fraction_recipes,
    capped_at_launch,
    classify_bound,
    compute_fraction_recipes,
    dram_fraction_recipes,
    launch_cap,
    memory_fraction_recipes,
    overall_speedup,
    potential_bound,
    weighted_by_f,
)
from advisor.profile import Profile
from advisor.values import is_drop_note
from parsers import heap


def _discover() -> tuple[CriterionSpec, ...]:
    """The ``SPEC`` of every module of this package (the ``engine`` subpackage and ``_private``
    modules aside), in paper order; a module without one, or two specs with the same name or
    order, is an error."""
    specs: list[CriterionSpec] = []
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        spec = getattr(module, "SPEC", None)
        if not isinstance(spec, CriterionSpec):
            raise TypeError(f"{module.__name__} is a criterion module but has no SPEC")
        specs.append(spec)
    specs.sort(key=lambda s: s.order)
    for field in ("name", "order"):
        seen = [getattr(s, field) for s in specs]
        if len(set(seen)) != len(seen):
            raise ValueError(f"two criteria share a {field}: {seen}")
    return tuple(specs)


#: every criterion's spec, in the paper's order (one module per criterion: see
#: docs/adding_a_criterion.md); the engine reads it at call time
SPECS: tuple[CriterionSpec, ...] = _discover()

#: the criteria's names in the paper's order (seed 002's nine), from :data:`SPECS`
CRITERIA: tuple[str, ...] = tuple(s.name for s in SPECS)

#: per-kernel criteria -> evaluator (HOSTSYNC is per application), from :data:`SPECS`
KERNEL_CRITERIA: dict[str, Callable[[KernelData, Context], CriterionResult]] = {
    s.name: s.evaluate for s in SPECS if s.scope == KERNEL
}

__all__ = ["CRITERIA", "SPECS", "SPEEDUP_FORMS", "Analysis", "evaluate", "to_json"]


def evaluate(
    profile: Profile,
    device: Any = None,
    speedup_form: str = AMDAHL,
    device_note: str | None = None,
) -> Analysis:
    """Score every kernel of ``profile`` on every criterion.

    ``device`` is an ``advisor.devices.database.Characterization`` (or a :class:`DeviceView`, or
    None when the device is unknown: device-dependent inputs are then missing and said so).
    """
    if speedup_form not in SPEEDUP_FORMS:
        raise ValueError(f"speedup form must be one of {SPEEDUP_FORMS}, not {speedup_form!r}")
    view = (
        device
        if isinstance(device, DeviceView)
        else (device_view(device) if device is not None else DeviceView())
    )
    ctx = Context(
        device=view,
        extra=_device_values(view, profile),
        tools=profilers(profile),
        speedup_form=speedup_form,
    )
    scored, folded = fold(profile)
    kernels = gather(scored)
    heap.give_back()  # gathering's freed work arrays, before HOSTSYNC's pace adds its own
    specs = SPECS  # read at call time, so a criterion registered later is evaluated too
    app_results = {s.name: s.evaluate(profile) for s in specs if s.scope == APPLICATION}
    total_ns = sum(k.duration_ns for k in kernels if k.duration_ns is not None)
    total_ns += folded.duration_ns if folded is not None else 0.0
    rules = _rules_by_kernel(scored)
    comm = communication_kernels(scored)  # the kernels analysed (all rows of each are kept)
    sources = getattr(profile, "instruction_sources", None) or {}
    analyses = []
    for k in kernels:
        analysis = _kernel(k, ctx, specs, app_results, total_ns, rules, comm)
        wanted = needs_sums(specs, analysis.criteria) if sources else frozenset()
        if wanted:  # per-instruction data, read only for the criteria that lack counters
            filled = with_sums(k, sources, wanted)
            if filled is not None:
                analysis = _kernel(filled, ctx, specs, app_results, total_ns, rules, comm)
        analyses.append(analysis)
    analyses.sort(key=lambda a: (-(a.duration_ns or 0.0), a.name))
    return Analysis(
        inputs=tuple(_input(p) for p in profile.provenance),
        device=_device_json(view, ctx.extra, device_note),
        speedup_form=speedup_form,
        application=_application(analyses, app_results, total_ns, speedup_form, folded),
        kernels=tuple(analyses),
        notes=(
            *_notes(view, device_note),
            *_dropped_rows(profile),
            *_folded_note(folded, total_ns),
        ),
    )


def _dropped_rows(profile: Profile) -> list[str]:
    """The readers' notes on rows dropped for an infinite, negative or implausible value."""
    return [n for p in profile.provenance for n in p.notes if is_drop_note(n)]


def _folded_note(folded: Folded | None, total_ns: float) -> list[str]:
    if folded is None:
        return []
    share = f" ({100 * folded.duration_ns / total_ns:.2g}% of the GPU time)" if total_ns else ""
    return [
        f"{folded.kernels:,} kernels with the least GPU time{share} are folded into "
        f"application.other_kernels: the {KERNELS_MAX:,} kernels with the most GPU time are "
        "scored one by one"
    ]


def _kernel(
    kernel: KernelData,
    ctx: Context,
    specs: tuple[CriterionSpec, ...],
    app_results: Mapping[str, CriterionResult],
    total_ns: float,
    rules: Mapping[str, pd.DataFrame],
    communication: frozenset[str] = frozenset(),
) -> KernelAnalysis:
    """Every criterion in paper order (the application's results as they are, the kernel's
    evaluated; the launch-configuration and occupancy ones not applicable to a communication
    kernel, :mod:`advisor.communication`); the hints of the kernel-scope ones."""
    comm = kernel.name in communication
    results = [
        app_results[s.name]
        if s.scope == APPLICATION
        else _not_for_communication(s.name)
        if comm and s.name in NOT_FOR_COMMUNICATION
        else s.evaluate(kernel, ctx)
        for s in specs
    ]
    share = kernel.duration_ns / total_ns if kernel.duration_ns is not None and total_ns else None
    launch_ns = (
        kernel.duration_ns / kernel.launches
        if kernel.duration_ns is not None and kernel.launches
        else None
    )
    results = [r if r.scope == APPLICATION else _at_launch_floor(r, launch_ns) for r in results]
    throughputs = _throughputs(kernel, ctx)
    bound = classify_bound(throughputs.memory_frac, throughputs.compute_frac)
    hints = [
        h
        for s, r in zip(specs, results, strict=True)
        if s.scope == KERNEL
        and (h := hint_for(r, kernel.name, ctx.speedup_form, share)) is not None
    ]
    return KernelAnalysis(
        name=kernel.name,
        launches=kernel.launches,
        duration_ns=kernel.duration_ns,
        share_of_gpu_time=share,
        bound=bound,
        throughputs=throughputs,
        potential_speedup=overall_speedup(throughputs.bound_frac, launch_ns),
        criteria=tuple(results),
        hints=rank(hints),
        ncu_rules=ncu_rules(rules.get(kernel.name)),
    )


def _at_launch_floor(result: CriterionResult, launch_ns: float | None) -> CriterionResult:
    """``result`` with its potential speedups no larger than the launch floor allows
    (:func:`advisor.criteria.engine.speedups.launch_cap`, Decision L1): a launch of 5 µs cannot
    run in under 0.4 µs, so no fix of it buys more than 12.5x, and the note says so.  Where one
    form's figure is capped and the other's is below the cap (the paper form's 1 / value is the
    larger), the note names the form capped: a report in the other form shows its figure as
    it is, and the note does not claim that figure was capped."""
    cap = launch_cap(launch_ns)
    sp = result.speedups
    forms = [(form, x) for form, x in (("paper", sp.paper), ("amdahl", sp.amdahl)) if x is not None]
    over = [form for form, x in forms if cap is not None and x > cap]
    if not over:
        return result
    assert launch_ns is not None
    capped = Speedups(
        paper=capped_at_launch(sp.paper, launch_ns), amdahl=capped_at_launch(sp.amdahl, launch_ns)
    )
    what = "potential speedup"
    if len(over) < len(forms):  # the other form's figure is below the cap
        what = f"the {over[0]} form's {what}"
    note = (
        f"{what} capped at the launch floor: a launch of {launch_ns / 1e3:.3g} µs "
        f"cannot run in under {MIN_LAUNCH_NS:.0f} ns"
    )
    return replace(result, speedups=capped, notes=(*result.notes, note))


def _not_for_communication(name: str) -> CriterionResult:
    """A launch-configuration or occupancy criterion of a communication kernel: n/a, and why."""
    return CriterionResult(name=name, status=NOT_APPLICABLE, notes=(NOT_APPLICABLE_NOTE,))


def _throughputs(kernel: KernelData, ctx: Context) -> Throughputs:
    dram = score(kernel, dram_fraction_recipes(), ctx)
    dram_frac = weighted_by_f(dram.raw, ctx, "F_DRAMThr") if isinstance(dram, Scored) else None
    sol = score(kernel, memory_fraction_recipes()[:1], ctx)
    memory = dram_frac
    method = dram.recipe.label if isinstance(dram, Scored) else ""
    if isinstance(sol, Scored) and (memory is None or sol.raw > memory):
        memory, method = sol.raw, sol.recipe.label
    compute = score(kernel, compute_fraction_recipes(), ctx)
    compute_frac: float | None = None
    if isinstance(compute, Scored):
        # F_ARITHThr is measured on FLOP rates (x = FLOP/s over peak FP32): it weighs nvprof's
        # FLOP efficiencies and FLOP counts, never the SM's busy share of Speed Of Light, which
        # like the Memory SOL above stays as measured (weighed, an H200's F_ARITHThr turned a
        # shared-memory-bound 70 % into 1.00 and the kernel into "compute-bound")
        busy = compute.recipe.label == SM_SOL_LABEL
        compute_frac = compute.raw if busy else weighted_by_f(compute.raw, ctx, "F_ARITHThr")
    flops = score(kernel, arithmetic_fraction_recipes(), ctx)
    arithmetic = weighted_by_f(flops.raw, ctx, "F_ARITHThr") if isinstance(flops, Scored) else None
    bound_frac, bound_method = potential_bound(dram_frac, arithmetic, memory, compute_frac)
    return Throughputs(
        memory_frac=memory,
        dram_frac=dram_frac,
        compute_frac=compute_frac,
        memory_method=method,
        compute_method=compute.recipe.label if isinstance(compute, Scored) else "",
        arithmetic_frac=arithmetic,
        bound_frac=bound_frac,
        bound_method=bound_method,
    )


def _application(
    kernels: list[KernelAnalysis],
    app_results: Mapping[str, CriterionResult],
    total_ns: float,
    form: str,
    folded: Folded | None = None,
) -> ApplicationAnalysis:
    """The application's figures; ``folded`` kernels count in its totals and, as kernels
    without an estimate (1x), in its potential speedup."""
    parts = [(k.duration_ns, _estimate(k, form)) for k in kernels if k.duration_ns is not None]
    if folded is not None and folded.duration_ns > 0:
        parts.append((folded.duration_ns, None))
    kernels_sp = (
        amdahl_combine(parts) if any(sp is not None for _, sp in parts) else None
    )  # n/a, not 1x, when no kernel has an estimate
    potential, basis = application_potential(app_results["HOSTSYNC"].value, kernels_sp)
    app_hints = [
        h for r in app_results.values() if (h := hint_for(r, None, form, None)) is not None
    ]
    app_hints += [h for k in kernels for h in k.hints]
    other = (
        OtherKernels(
            kernels=folded.kernels,
            launches=folded.launches,
            duration_ns=folded.duration_ns,
            share_of_gpu_time=folded.duration_ns / total_ns if total_ns else None,
        )
        if folded is not None
        else None
    )
    return ApplicationAnalysis(
        gpu_time_ns=total_ns if total_ns else None,
        kernels=len(kernels) + (folded.kernels if folded is not None else 0),
        launches=sum(k.launches for k in kernels) + (folded.launches if folded is not None else 0),
        hostsync=app_results["HOSTSYNC"],
        potential_speedup=potential,
        kernels_without_estimate=sum(1 for k in kernels if k.potential_speedup is None)
        + (folded.kernels if folded is not None else 0),
        hints=rank(app_hints, by_application=True),
        kernels_potential_speedup=kernels_sp,
        potential_speedup_basis=basis,
        other_kernels=other,
    )


def _estimate(kernel: KernelAnalysis, form: str) -> float | None:
    """What a kernel counts with in the application's figure: its overall potential speedup, else
    (no DRAM or FLOP figures to bound it) the largest potential speedup of its computed criteria,
    so the application never reads less than one of its own hints promises."""
    if kernel.potential_speedup is not None:
        return kernel.potential_speedup
    found = [
        sp
        for c in kernel.criteria
        if c.scope != APPLICATION and (sp := c.speedups.pick(form)) is not None
    ]
    return max(found) if found else None


def _rules_by_kernel(profile: Profile) -> dict[str, pd.DataFrame]:
    """NVIDIA's rule rows of each kernel, grouped once (a profile can hold thousands of
    kernels)."""
    rules = profile.rules
    if rules.empty:
        return {}
    return {str(name): group for name, group in rules.groupby("kernel", sort=False)}


def ncu_rules(rules: pd.DataFrame | None) -> tuple[Mapping[str, Any], ...]:
    """NVIDIA's own rule results of one kernel (its rows of the rules table), one entry per
    (section, rule, type, message head), with the number of launches and the largest
    estimated speedup."""
    if rules is None or rules.empty:
        return ()
    # the rows numbered by their key, each distinct key's entry built from its first row (a
    # details page repeats a few dozen rule results over tens of thousands of launches)
    texts = {c: rules[c].astype("string").fillna("") for c in ("section", "rule", "rule_type")}
    description = rules["description"].astype("string")
    head = description.fillna("").str.slice(0, 60)
    group = np.zeros(len(rules), dtype=np.int64)
    for part in (*texts.values(), head):
        codes, found = schema.factorize(part.to_numpy(dtype=object), use_na_sentinel=False)
        group = schema.factorize(group * max(len(found), 1) + codes)[0]
    first = np.unique(group, return_index=True)[1]  # each key's first row, by key
    launches = np.bincount(group)
    best = pd.Series(rules["estimated_speedup_frac"].to_numpy(dtype=float, na_value=np.nan))
    largest = best.groupby(group).max().to_numpy()  # NaN where no row of the key has one
    out: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    full = description.fillna("")
    kinds = rules["speedup_type"].astype("string").fillna("")
    section, rule, rule_type = texts.values()
    for k, row in enumerate(first.tolist()):
        key = (str(section.iat[row]), str(rule.iat[row]), str(rule_type.iat[row]))
        rule_key = (*key, str(head.iat[row]))
        out[rule_key] = {
            "section": key[0],
            "rule": key[1],
            "rule_type": key[2],
            "description": str(full.iat[row]),
            "speedup_type": str(kinds.iat[row]) or None,
            "estimated_speedup_frac": None if np.isnan(largest[k]) else float(largest[k]),
            "launches": int(launches[k]),
        }
    return tuple(out[k] for k in sorted(out))


def _device_values(view: DeviceView, profile: Profile) -> dict[str, float]:
    """device.* values: the characterization first, the profile's device table as fallback."""
    values = view.values()
    devices = profile.devices
    if len(devices):
        row = devices.iloc[0]
        cc = pd.to_numeric(pd.Series([row["compute_capability"]]), errors="coerce").iloc[0]
        if "device.compute_capability" not in values and not pd.isna(cc):
            values["device.compute_capability"] = float(cc)
        if "device.sm_count" not in values and not pd.isna(row["sm_count"]):
            values["device.sm_count"] = float(row["sm_count"])
        if "device.boost_clock_hz" not in values and not pd.isna(row["sm_clock_hz"]):
            values["device.boost_clock_hz"] = float(row["sm_clock_hz"])
        bw = row["memory_bandwidth_bytes_per_s"]
        if "device.peak_dram_bytes_per_s" not in values and not pd.isna(bw):
            values["device.peak_dram_bytes_per_s"] = float(bw)
    limits = limits_for(values.get("device.compute_capability"))
    if "device.max_warps_per_sm" not in values and limits is not None:
        values["device.max_warps_per_sm"] = float(limits.max_warps)
    return values


def _device_json(view: DeviceView, values: Mapping[str, float], note: str | None) -> dict[str, Any]:
    """The device as the JSON gives it; its compute capability is the characterization's, else
    the one the profile's device table states (an unidentified GPU's ``values`` carry it, and
    the two fields must not disagree)."""
    cc = view.compute_capability
    if cc is None and "device.compute_capability" in values:
        cc = f"{values['device.compute_capability']:.1f}"
    return {
        "name": view.name,
        "identified": view.name is not None,
        "source": view.source or None,
        "measured": view.measured,
        "compute_capability": cc,
        "values": dict(sorted(values.items())),
        "latencies_cycles": dict(sorted(view.latencies_cycles.items())),
        "characterization": (
            "measured characterization (F functions and latencies from microbenchmarks)"
            if view.measured
            else "defaults: F = 1 and per-architecture latencies (no measured characterization)"
        ),
        "note": note,
        "notes": list(view.notes),
    }


def _input(provenance: Any) -> dict[str, Any]:
    return {
        "path": provenance.path,
        "format": provenance.format,
        "profiler": provenance.profiler,
        "profiler_version": provenance.profiler_version,
        "modes": list(provenance.modes),
    }


def _notes(view: DeviceView, device_note: str | None = None) -> tuple[str, ...]:
    """The analysis' general notes; that the device was not identified only where no
    ``device_note`` (the device's own ``note``, which says why and what to pass) says it."""
    notes = [
        "criteria are in [0, 1], 1 = best; launches of a kernel are aggregated weighted by "
        "duration; a criterion without its inputs is not computable (never 0 or 1)",
    ]
    if view.name is None and device_note is None:
        notes.append(
            "the device was not identified: peak bandwidth, latencies and limits come only "
            "from the profile; pass --device NAME or a characterization file"
        )
    return tuple(notes)
