"""The version comparison (:mod:`advisor.report.compare`) as self-contained HTML and as Markdown,
with the same escaping and CSP as the report (:mod:`advisor.render.report`)."""

from __future__ import annotations

from advisor.render import charts
from advisor.render.display import shorten
from advisor.render.report import (
    CSP,
    MARKDOWN_MAX_CHARS,
    environment,
    fmt_ms,
    fmt_num,
    fmt_x,
    md_escape,
)
from advisor.report.compare import (
    COMPARE_KERNELS,
    IMPROVED_MIN_DELTA,
    LEDGER_CHECK_NOTE,
    Comparison,
    KernelTrack,
    PairCheck,
    PairMatch,
    pair_display,
)
from advisor.report.matching import EXACT, MATCH_METHODS, MatchedPair
from advisor.validation import BoundSummary, Summary

#: a location is listed when it moved by this much (advisor.report.compare_locations.MIN_CHANGE)
MIN_LOCATION_CHANGE = 0.05
#: kernels given a grouped criteria chart
CHART_KERNELS = 10
#: unmatched kernel names listed per version pair (the JSON lists them all)
UNMATCHED_NAMES = 30
#: the columns of the scored ledger's summary table, after "from → to" and "prediction"
CHECK_SUMMARY_COLUMNS = (
    "n",
    "median error factor",
    "within ±25 %",
    "sign agreement",
    "measured within the bound",
)
#: the two rows of that table: the addressed criterion's prediction, the roofline headroom bound
ADDRESSED_ROW = "addressed criterion (prediction)"
BOUND_ROW = "roofline headroom (upper bound)"
#: what the first version shows in place of its speedup versus itself
BASELINE = "baseline"
#: how kernels are matched, for the HTML and the Markdown
MATCHING_NOTE = (
    "Kernels are matched for each pair of consecutive versions, in six stages: forced "
    "(--match OLD=NEW), exact (the same name), base name (the same name without return type, "
    "template arguments and parameter list, mangled names demangled), operator (PyTorch "
    "profiler traces: the only remaining kernel launched by the same PyTorch operators), "
    "order+config (the remaining kernels in launch order where the grid size in blocks and the "
    "block size in threads of their first launches agree; needs the profiles, not saved "
    "analyses), then last left (the one kernel each version still has unmatched, say a kernel "
    "renamed and launched with another grid). A kernel no stage matched has no speedup; pair it "
    "with --match OLD=NEW."
)
#: under the operator table of two or more PyTorch profiler traces
OPERATORS_NOTE = (
    "GPU time of the kernels each PyTorch operator launched (the outermost operator of the "
    "launch call), operators matched by name across the versions; speedup = earlier time / "
    "later time."
)
#: the columns of the matching summary, after "from → to"
MATCH_SUMMARY_COLUMNS = (*MATCH_METHODS, "only in from", "only in to")
#: the columns of the scored ledger's kernel table, after "kernel" and "from → to"
CHECK_KERNEL_COLUMNS = (
    "measured",
    "roofline headroom (bound)",
    "measured within the bound",
    "addressed criterion",
    "predicted",
    "error factor",
)
#: a step whose time changed although no criterion rose: the kernel table's criterion cell
NO_CRITERION_ROSE = "none rose (see what changed)"


def locations_note() -> str:
    """How ``compare`` matches locations between versions (docs/locations.md)."""
    from advisor.report import compare_locations as cl

    return (
        "Per kernel matched between two versions whose profiles hold per-instruction data "
        "(Nsight Compute's SourceCounters section): source lines match by file name and line "
        "number when both versions have line info (nvcc -lineinfo); otherwise instructions "
        "match by function and SASS opcode sequence (aligned in PC order). Counts: "
        "instructions executed, excess global sectors, excess shared wavefronts, inactive lanes "
        "(lanes that issued nothing x instructions); samples: shares of the kernel's PC "
        f"samples. Listed: the {cl.TOP_CHANGED} locations that moved most, by at least "
        f"{100 * cl.MIN_CHANGE:.0f} % of the larger kernel total (a count) or "
        f"{100 * cl.MIN_CHANGE:.0f} points (a share)."
    )


def location_changes(location: object) -> str:
    """The measures of a location that moved (``excess sectors 4.6 M → 0; ...``)."""
    from advisor.report import compare_locations as cl

    text = cl.describe(location)  # type: ignore[arg-type]
    return text.split(": ", 1)[1] if ": " in text else text


def fmt_factor(value: float | None) -> str:
    """A speedup or error factor as ``1.24×``."""
    return "n/a" if value is None else f"{value:.2f}×"


def fmt_share(value: float | None) -> str:
    """A share in [0, 1] as ``71 %``."""
    return "n/a" if value is None else f"{100 * value:.0f} %"


def summary_cells(summary: Summary) -> list[str]:
    """The :data:`CHECK_SUMMARY_COLUMNS` cells of the addressed criterion's predictions."""
    sign = (
        f"{summary.sign_agree}/{summary.sign_counted} ({fmt_share(summary.sign_share)})"
        if summary.sign_counted
        else "n/a"
    )
    return [
        str(summary.n),
        fmt_factor(summary.median_error_factor),
        fmt_share(summary.within_25),
        sign,
        "—",
    ]


def bound_cells(bounds: BoundSummary) -> list[str]:
    """The :data:`CHECK_SUMMARY_COLUMNS` cells of the roofline headroom: a bound, so no error
    factor, tolerance or sign, only how many measured speedups stayed within it."""
    within = f"{bounds.within}/{bounds.n} ({fmt_share(bounds.share)})" if bounds.n else "n/a"
    return [str(bounds.n), "—", "—", "—", within]


def summary_rows(check: PairCheck) -> list[tuple[str, list[str]]]:
    """(row label, cells) for the addressed criterion's prediction and the roofline headroom
    bound of a version pair."""
    return [
        (ADDRESSED_ROW, summary_cells(check.addressed)),
        (BOUND_ROW, bound_cells(check.overall)),
    ]


def yes_no(value: bool | None) -> str:
    return "n/a" if value is None else "yes" if value else "no"


def changed_kernels(comparison: Comparison) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(``from → to``, full name, display name, what changed) of every matched kernel whose time
    changed although no criterion rose (:func:`advisor.report.compare.what_changed`), the first
    :data:`COMPARE_KERNELS` of each version pair."""
    return [
        (
            f"{check.from_version} → {check.to_version}",
            pair_display(k.kernel, k.to_kernel, short=False),
            k.display_name,
            (f"measured {fmt_factor(k.measured_speedup)}", *k.changes),
        )
        for check in comparison.checks
        for k in check.kernels[:COMPARE_KERNELS]
        if k.changes
    ]


def kernel_cells(check: PairCheck) -> list[tuple[str, str, list[str]]]:
    """(full name, display name, :data:`CHECK_KERNEL_COLUMNS` cells) of the first
    :data:`COMPARE_KERNELS` matched kernels of a version pair."""
    return [
        (
            pair_display(k.kernel, k.to_kernel, short=False),
            k.display_name,
            [
                fmt_factor(k.measured_speedup),
                fmt_factor(k.overall_bound),
                yes_no(k.within_bound),
                k.addressed or (NO_CRITERION_ROSE if k.changes else "none"),
                fmt_factor(k.addressed_predicted),
                fmt_factor(k.addressed_error),
            ],
        )
        for k in check.kernels[:COMPARE_KERNELS]
    ]


def vs_first_cell(track: KernelTrack, i: int) -> str:
    """The kernel table's "vs first" cell: ``baseline`` in the first version."""
    if i == 0:
        return BASELINE if track.durations_ns[0] is not None else "n/a"
    return fmt_x(track.speedup_vs_first[i])


def total_cells(comparison: Comparison, i: int) -> tuple[str, str]:
    """A version's total GPU-time speedup versus the previous and the first version."""
    if i == 0:
        return (BASELINE, BASELINE)
    v = comparison.versions[i]
    return (fmt_x(v.speedup_vs_previous), fmt_x(v.speedup_vs_first))


def match_summary_cells(match: PairMatch) -> list[str]:
    """The :data:`MATCH_SUMMARY_COLUMNS` cells of a version pair."""
    counts = [str(match.count(method)) for method in MATCH_METHODS]
    return [*counts, str(len(match.only_in_from)), str(len(match.only_in_to))]


def inexact_pairs(match: PairMatch) -> list[MatchedPair]:
    """The pairs of a version pair matched other than by the same name (the first
    :data:`COMPARE_KERNELS`)."""
    return [p for p in match.pairs if p.method != EXACT][:COMPARE_KERNELS]


def method_cell(pair: MatchedPair) -> str:
    """How a pair was matched, with the configuration an order+config pair agrees on."""
    if pair.config is None:
        return pair.method
    return f"{pair.method} ({pair.config[0]:,} blocks × {pair.config[1]:,} threads)"


def more_inexact(match: PairMatch) -> int:
    return max(0, sum(1 for p in match.pairs if p.method != EXACT) - COMPARE_KERNELS)


def html(comparison: Comparison) -> str:
    names = [v.name for v in comparison.versions]
    shown = comparison.kernels[:CHART_KERNELS]
    return (
        environment()
        .get_template("compare.html.j2")
        .render(
            c=comparison,
            csp=CSP,
            improved_min=IMPROVED_MIN_DELTA,
            kernels_shown=comparison.kernels[:COMPARE_KERNELS],
            charts_shown=len(shown),
            charts=[charts.grouped_criteria_chart(t.criteria, names) for t in shown],
            check_note=LEDGER_CHECK_NOTE,
            matching_note=MATCHING_NOTE,
            operators_note=OPERATORS_NOTE,
            summary_columns=CHECK_SUMMARY_COLUMNS,
            kernel_columns=CHECK_KERNEL_COLUMNS,
            match_columns=MATCH_SUMMARY_COLUMNS,
            summary_rows=summary_rows,
            kernel_cells=kernel_cells,
            changed=changed_kernels(comparison),
            no_rise=no_rise,
            vs_first_cell=vs_first_cell,
            total_cells=total_cells,
            match_summary_cells=match_summary_cells,
            inexact_pairs=inexact_pairs,
            method_cell=method_cell,
            more_inexact=more_inexact,
            pair_display=pair_display,
            compare_kernels=COMPARE_KERNELS,
            unmatched_names=UNMATCHED_NAMES,
            locations_note=locations_note() if comparison.locations else "",
            location_changes=location_changes,
            min_change=f"{100 * MIN_LOCATION_CHANGE:.0f} %",
        )
    )


def markdown(comparison: Comparison) -> str:
    lines = [
        "## cuda-advisor comparison",
        "",
        f"Baseline: {md_escape(comparison.baseline)} (the first version). GPU time: the sum of "
        "the kernel durations; speedup = earlier time / later time (above 1: faster).",
        "",
        "| version | GPU time | total speedup vs previous | vs first | "
        "predicted potential speedup |",
        "|---|---:|---:|---:|---:|",
    ]
    for i, v in enumerate(comparison.versions):
        previous, first = total_cells(comparison, i)
        lines.append(
            f"| {md_escape(v.name)} | {fmt_ms(v.gpu_time_ns)} | {previous} | {first} | "
            f"{fmt_x(v.potential_speedup)} |"
        )
    lines += _md_track_table(
        comparison,
        "Kernels",
        "kernel",
        [
            (md_escape(t.display_name), t.durations_ns, t.speedup_vs_previous)
            for t in comparison.kernels[:COMPARE_KERNELS]
        ],
    )
    if comparison.kernels_not_shown:
        lines += ["", f"{comparison.kernels_not_shown} more kernels are in the JSON output."]
    if comparison.operators:
        lines += _md_operators(comparison)
    if comparison.matches:
        lines += _md_matching(comparison.matches)
    if comparison.ledger:
        lines += [
            "",
            "### Prediction ledger",
            "",
            "| kernel | criterion | from → to | value | predicted | measured |",
            "|---|---|---|---:|---:|---:|",
        ]
        lines += [
            f"| {md_escape(e.display_name)} | {e.criterion} | {md_escape(e.from_version)} → "
            f"{md_escape(e.to_version)} | {fmt_num(e.value_before)} → {fmt_num(e.value_after)} | "
            f"{fmt_x(e.predicted_speedup)} | {fmt_x(e.measured_speedup)} |"
            for e in comparison.ledger
        ]
    changed = changed_kernels(comparison)
    if not comparison.ledger and comparison.checks:
        lines += ["", no_rise(bool(changed))]
    if changed:
        lines += ["", "### What changed where no criterion rose", ""]
        lines += [
            f"- {md_escape(display)} ({md_escape(pair)}): " + "; ".join(changes)
            for pair, _, display, changes in changed
        ]
    if comparison.checks:
        lines += _md_checks(comparison.checks)
    if comparison.locations:
        lines += _md_locations(comparison)
    return ("\n".join(lines) + "\n")[:MARKDOWN_MAX_CHARS]


def _md_locations(comparison: Comparison) -> list[str]:
    """Where the code changed: per kernel pair, its locations that moved most."""
    from advisor.report import compare_locations as cl

    lines = ["", "### Where the code changed", "", locations_note(), ""]
    for p in comparison.locations:
        versions = f"{md_escape(p.from_version)} → {md_escape(p.to_version)}"
        head = f"- {md_escape(p.display_name)} ({versions})"
        if p.not_read:
            lines.append(f"{head}: {p.not_read}")
        elif not p.locations:
            lines.append(
                f"{head}: no location moved by {100 * cl.MIN_CHANGE:.0f} % or more "
                f"({p.compared} compared, matched by {p.matched_by})"
            )
        else:
            lines.append(f"{head}, matched by {p.matched_by}:")
            lines += [f"  - {md_escape(cl.describe(loc))}" for loc in p.locations]
    return lines


def no_rise(changed: bool) -> str:
    """The line in place of an empty prediction ledger."""
    tail = (
        "; the kernels whose time changed list what did change"
        if changed
        else "; no matched kernel's time changed by 10 % or more"
    )
    rise = fmt_num(IMPROVED_MIN_DELTA)
    return f"No criterion's value rose by {rise} or more between versions{tail}."


def _md_track_table(
    comparison: Comparison,
    heading: str,
    label: str,
    rows: list[tuple[str, tuple[float | None, ...], tuple[float | None, ...]]],
) -> list[str]:
    """A table of time per version with the speedup vs the previous version, one row per
    (escaped label, times in ns, speedups vs previous)."""
    names = [md_escape(v.name) for v in comparison.versions]
    lines = [
        "",
        f"### {heading} (speedup vs previous version)",
        "",
        f"| {label} | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for shown, times, speedups in rows:
        cells = [
            f"{fmt_ms(d)} ({fmt_x(s)})"
            if s is not None
            else f"{fmt_ms(d)} ({BASELINE})"
            if i == 0 and d is not None
            else fmt_ms(d)
            for i, (d, s) in enumerate(zip(times, speedups, strict=True))
        ]
        lines.append(f"| {shown} | " + " | ".join(cells) + " |")
    return lines


def _md_operators(comparison: Comparison) -> list[str]:
    """The operator table of PyTorch profiler traces: time per version (speedup vs previous)."""
    shown = comparison.operators[:COMPARE_KERNELS]
    lines = _md_track_table(
        comparison,
        "By PyTorch operator",
        "operator",
        [(md_escape(shorten(o.operator)), o.gpu_time_ns, o.speedup_vs_previous) for o in shown],
    )
    more = len(comparison.operators) - COMPARE_KERNELS
    if more > 0:
        lines += ["", f"{more} more operators are in the JSON output."]
    return lines


def _md_matching(matches: tuple[PairMatch, ...]) -> list[str]:
    lines = [
        "",
        "### Kernel matching",
        "",
        md_escape(MATCHING_NOTE),
        "",
        "| from → to | " + " | ".join(MATCH_SUMMARY_COLUMNS) + " |",
        "|---|" + "---:|" * len(MATCH_SUMMARY_COLUMNS),
    ]
    for m in matches:
        pair = f"{md_escape(m.from_version)} → {md_escape(m.to_version)}"
        lines.append(f"| {pair} | " + " | ".join(match_summary_cells(m)) + " |")
    inexact = [(m, p) for m in matches for p in inexact_pairs(m)]
    if inexact:
        lines += [
            "",
            "| from → to | kernel in from | kernel in to | matched by |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {md_escape(m.from_version)} → {md_escape(m.to_version)} | "
            f"{md_escape(shorten(p.before))} | {md_escape(shorten(p.after))} | {method_cell(p)} |"
            for m, p in inexact
        ]
    notes = []
    for m in matches:
        pair = f"{md_escape(m.from_version)} → {md_escape(m.to_version)}"
        if more_inexact(m):
            notes.append(f"{pair}: {more_inexact(m)} more inexact pairs are in the JSON output.")
        for version, only in ((m.from_version, m.only_in_from), (m.to_version, m.only_in_to)):
            if only:
                notes.append(
                    f"{pair}: unmatched, only in {md_escape(version)} ({len(only)}): "
                    + _md_names(only)
                )
    if notes:
        lines += ["", *(f"- {n}" for n in notes)]
    return lines


def _md_checks(checks: tuple[PairCheck, ...]) -> list[str]:
    lines = [
        "",
        "### Predictions against measured speedups",
        "",
        md_escape(LEDGER_CHECK_NOTE),
        "",
        "| from → to | prediction | " + " | ".join(CHECK_SUMMARY_COLUMNS) + " |",
        "|---|---|" + "---:|" * len(CHECK_SUMMARY_COLUMNS),
    ]
    for check in checks:
        pair = f"{md_escape(check.from_version)} → {md_escape(check.to_version)}"
        lines += [
            f"| {pair} | {label} | " + " | ".join(cells) + " |"
            for label, cells in summary_rows(check)
        ]
    lines += [
        "",
        "| kernel | from → to | " + " | ".join(CHECK_KERNEL_COLUMNS) + " |",
        "|---|---|---:|---:|---|---|---:|---:|",
    ]
    for check in checks:
        pair = f"{md_escape(check.from_version)} → {md_escape(check.to_version)}"
        lines += [
            f"| {md_escape(display)} | {pair} | " + " | ".join(cells) + " |"
            for _, display, cells in kernel_cells(check)
        ]
    notes = []
    for check in checks:
        pair = f"{md_escape(check.from_version)} → {md_escape(check.to_version)}"
        more = len(check.kernels) - COMPARE_KERNELS
        if more > 0:
            notes.append(f"{pair}: {more} more matched kernels are in the JSON output.")
    if notes:
        lines += ["", *(f"- {n}" for n in notes)]
    return lines


def _md_names(names: tuple[str, ...]) -> str:
    text = ", ".join(md_escape(shorten(n)) for n in names[:UNMATCHED_NAMES])
    more = len(names) - UNMATCHED_NAMES
    return text + (f" and {more} more (JSON output)" if more > 0 else "")
