"""The report as a GitHub pull-request comment (``report --markdown``) that a reviewer reads in
ten seconds in GitHub's ~860 px comment column.

Layout, top to bottom:

1. the verdict, one line: what to fix first (the application's first hint: criterion, kernels,
   their share of GPU time), what it buys on the whole GPU time, and the application's potential
   speedup (``n/a`` with what to collect when there is none);
2. one line of facts: GPU time, kernels, launches, device, bound mix;
3. the top kernels, :data:`TOP_KERNELS` rows of six narrow columns (kernel, time, share of GPU
   time, worst criterion, potential speedup, NVIDIA's estimate for that criterion), the other
   listed kernels folded under it;
4. the hints, one line each, one per criterion (the kernels that share a criterion grouped),
   each with its gain on the whole GPU time;
5. everything else folded in ``<details>``: what each hint asks for, every kernel's criteria,
   predictions, the commands that collect missing metrics, notes, the full kernel names.

No table has more than six columns and no row more than :data:`ROW_CHARS` characters of visible
text (``tests/render/test_markdown_width.py`` renders the comment and checks it).

The kernels table shows only the columns some row has a value in (a profile of kernel times
has no criterion, speedup or NVIDIA column), and the kernel names get the width the other
columns leave: every kernel gets a distinct display name of :data:`MIN_NAME_CHARS` to
:data:`MAX_NAME_CHARS` characters (:func:`advisor.render.display.distinct_names`: demangled, no
return type, ``k<int>(…)`` and ``k<float>(…)`` told apart, else ``#2``); the full name is in the
last folded section.

Escaping: kernel names are code spans (:func:`md_code`): nothing in a code span is a link, a
mention, an issue reference, an emoji or markup, and ``<`` ``>`` ``&`` show as themselves.  Every
other string from a profile goes through :func:`md_escape`: HTML characters as entities,
Markdown punctuation backslash-escaped, ``@``, the colon of ``scheme://`` and the dot of
``www.`` as entities so they are no autolink.  Both show the characters that show nothing
(zero-width, direction marks and overrides, controls) as ``\\u200b``-style text
(:func:`advisor.render.display.visible_text`).  The comment stays under
:data:`MARKDOWN_MAX_CHARS` (GitHub refuses comments over 65,536 characters) by listing fewer
kernels in the folded sections first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from advisor.criteria.engine.hints import THRESHOLDS
from advisor.render.display import (
    counted,
    criterion_value,
    demangle,
    distinct_names,
    duration,
    readable_name,
    share,
    speedup_text,
    visible_text,
)
from advisor.report.build import FEW_COMPUTED, HEADROOM_NOTABLE, HintView, KernelRow, Report
from advisor.report.nvidia import NvidiaEstimate, estimate

#: GitHub refuses comments over 65,536 characters; stay well below
MARKDOWN_MAX_CHARS = 60_000
#: the report's comment stays well under GitHub's limit: long per-kernel lists are cut first
#: ("and N more"), the HTML report holds the rest
COMMENT_MAX_CHARS = 40_000
#: kernels in the top table; the other listed kernels are folded under it
TOP_KERNELS = 8
#: kernel display names get what the other columns leave of :data:`ROW_CHARS`, within these
MIN_NAME_CHARS = 30
MAX_NAME_CHARS = 60
#: the most visible characters of a table row: ~860 px of GitHub's comment column at ~7 px a
#: character, with the cells' padding
ROW_CHARS = 110
#: hint kernels written out in a hint's line (more: counted, listed under "What to do")
HINT_NAMES = 3
#: longest full name in the names section (the HTML report and the JSON have every character)
FULL_NAME_CHARS = 160
#: longest other string from a profile (a device name, a note)
TEXT_CHARS = 300

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")
#: what GitHub would turn into a link or a mention: a scheme's colon, ``www.``, ``@``
_SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*):(?=//)|\b(mailto|xmpp):")
_WWW = re.compile(r"(?i)\b(www)\.")


# --- escaping ------------------------------------------------------------------------------------


def md_escape(text: str) -> str:
    """Text safe in a GitHub Markdown paragraph or table cell: line breaks become spaces,
    characters that show nothing visible escapes (``\\u200b``), HTML characters entities,
    Markdown punctuation backslash-escaped, and ``@``, the colon of ``https://`` (any scheme,
    ``mailto:``) and the dot of ``www.`` entities, so GitHub links nothing."""
    text = visible_text(" ".join(str(text).split()))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace('"', "&quot;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = _SCHEME.sub(lambda m: f"{m.group(1) or m.group(2)}&#58;", text)
    text = _WWW.sub(r"\1&#46;", text)
    return text.replace("@", "&#64;")


def md_code(text: str, table: bool = False) -> str:
    """A kernel name as an inline code span: shown character for character, never a link, a
    mention, an issue reference or markup. White space folded, characters that show nothing as
    visible escapes; a fence longer than any run of backticks in the name. In a table cell
    (``table``) a ``|`` is written ``\\|`` (GitHub removes the backslash); a name with both a
    backslash and a pipe is written as :func:`md_escape` text instead (a backslash before the
    pipe would end the cell)."""
    text = visible_text(" ".join(str(text).split()))
    if not text:
        return "(no name)"
    if table and "|" in text:
        if "\\" in text:
            return md_escape(text)
        text = text.replace("|", "\\|")
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- numbers -------------------------------------------------------------------------------------


_x = speedup_text


def _pct(value: float | None) -> str:
    """A share of GPU time; two significant digits under 0.1 % (``0.0071%``), not 0.0 %."""
    return share(value)


def _num(value: float | None) -> str:
    return "n/c" if value is None else f"{value:.2f}"


def _count(n: int) -> str:
    """A launch count in at most four characters: ``13``, ``4.6k``, ``329k``, ``1.7M``."""
    if n < 1000:
        return str(n)
    if n < 999_500:
        return f"{n / 1e3:.3g}k"
    return f"{n / 1e6:.3g}M"


# --- the comment ---------------------------------------------------------------------------------


#: the kernels table's columns after the kernel: header, alignment, the text of "no value"
_COLUMNS = (
    ("time", "--:", None),
    ("share", "--:", None),
    ("worst criterion", "---", "n/c"),
    ("headroom", "--:", "n/a"),
    ("NVIDIA", "--:", "—"),
)


class _View:
    """What the sections share: the report, each kernel's JSON and detail, the kernels table's
    cells and columns, and every kernel's display name."""

    def __init__(self, report: Report) -> None:
        self.report = report
        kernels: Sequence[Mapping[str, Any]] = report.analysis_json.get("kernels", ())
        self.json: dict[str, Mapping[str, Any]] = {k["name"]: k for k in kernels}
        self.details = {d.row.name: d for d in report.details}
        self.cells = {r.name: self._cells(r) for r in report.table}
        #: some listed kernel has a criterion value (else the profile holds kernel times only)
        self.measured = any(v is not None for r in report.table for v in r.values)
        self.columns = [
            i
            for i, (_, _, empty) in enumerate(_COLUMNS)
            if empty is None or any(c[i] != empty for c in self.cells.values())
        ]
        widths = sum(
            max([len(_COLUMNS[i][0]), *(len(c[i]) for c in self.cells.values())])
            for i in self.columns
        )
        room = ROW_CHARS - widths - 3 * len(self.columns)
        self.name_chars = max(MIN_NAME_CHARS, min(MAX_NAME_CHARS, room))
        hint_kernels = [k for h in report.summary.top_hints for k in h.kernels]
        ordered = list(
            dict.fromkeys([r.name for r in report.table] + hint_kernels + list(self.json))
        )
        # the names as they will show (invisible characters escaped) are what must fit and differ
        shown = distinct_names([visible_text(n) for n in ordered], self.name_chars)
        self.names = {n: shown[visible_text(n)] for n in ordered}

    def name(self, kernel: str, table: bool = False) -> str:
        return md_code(self.names.get(kernel, kernel), table)

    def _cells(self, row: KernelRow) -> tuple[str, str, str, str, str]:
        worst, nvidia = self.worst(row.name)
        return (
            _time(row),
            _pct(row.share_of_gpu_time),
            worst,
            _x(row.potential_speedup),
            _nvidia(nvidia),
        )

    def worst(self, kernel: str) -> tuple[str, NvidiaEstimate | None]:
        """The kernel's worst criterion (its first hint: the largest potential speedup) with its
        value, and NVIDIA's estimate for it; ``none`` when no criterion is below its threshold,
        ``n/c`` when none is computable."""
        k = self.json.get(kernel)
        if k is None:
            return "n/c", None
        hints = k.get("hints") or []
        if hints:
            h = hints[0]
            nvidia = estimate(k.get("ncu_rules") or (), h["criterion"])
            value = h["value"]
            text = "n/c" if value is None else criterion_value(value, h.get("threshold"))
            return f"{h['criterion']} {text}", nvidia
        criteria = k.get("criteria") or {}
        computed = any(
            c.get("value") is not None and c.get("scope") != "application"
            for c in criteria.values()
        )
        return ("none" if computed else "n/c"), None


def markdown(report: Report, max_chars: int = COMMENT_MAX_CHARS) -> str:
    """The pull-request comment: verdict, facts, top kernels, hints, then the folded details;
    at most ``max_chars`` characters (the folded sections list fewer kernels first)."""
    from advisor.render.host_markdown import host_section  # imports this module's helpers

    view = _View(report)
    head = "".join(
        (
            _verdict(view),
            _facts(view),
            _top_kernels(view),
            _hints(view),
            _stalls(view),
            host_section(report),
        ),
    )
    listed = len(report.table)
    while True:
        text = (head + _folded(view, listed)).rstrip("\n") + "\n"
        if len(text) <= max_chars:
            return text
        if listed == 0:
            break
        listed //= 2
    return _cut(head + _folded(view, 0, brief=True), max_chars)


def _cut(text: str, max_chars: int) -> str:
    """Last resort for an oversized comment: whole lines up to the limit, open blocks closed."""
    tail = "\n\n(cut to GitHub's comment size: the HTML report has everything)\n"
    room = max_chars - len(tail) - 40
    kept = text[: max(room, 0)].rsplit("\n", 1)[0]
    closing = ""
    if kept.count("\n```") % 2:
        closing += "\n```"
    opened = kept.count("<details>") - kept.count("</details>")
    closing += "\n\n</details>" * max(opened, 0)
    return (kept + closing + tail)[:max_chars]


def _verdict(view: _View) -> str:
    """The report's verdict (:class:`advisor.report.build.Verdict`, the same values the HTML
    shows): what to fix first and what this fix buys on the whole GPU time, or the kernel with
    roofline headroom when no criterion is below its threshold, and the whole application's
    figure (``n/a`` with what to collect when none of its inputs is known)."""
    v = view.report.verdict
    s = view.report.summary
    if v is None or v.kind == "no_kernels" or not s.kernels:
        return (
            "**cuda-advisor: no kernel in the profile**: nothing to estimate; profile the "
            "kernels (`cuda-advisor metrics --tool ncu` prints the command).\n\n"
        )
    app = _application(view)
    if v.kind == "fix" and v.hint is not None:
        h = v.hint
        if h.application_speedup is None:
            gain = "this fix: no estimate (its inputs are missing; ranked by its value)"
        else:
            gain = f"this fix: up to **{_x(h.application_speedup)}** on the whole GPU time"
            if h.uncapped_speedup is not None:
                gain += (
                    f" (the estimate {_x(h.uncapped_speedup)} capped at the roofline headroom "
                    "of its kernels)"
                )
        note = ""
        if h.criterion == "HOSTSYNC" and view.report.host is not None:
            from advisor.render.host_markdown import hostsync_note  # imports this module

            note = " " + md_escape(hostsync_note(view.report.host))
        reason = f" It leads because {_reason(view)}." if v.lead_reason else ""
        return (
            f"**cuda-advisor: fix {h.criterion} first**{_where(view, h)}: {md_escape(h.title)} — "
            f"{gain}; {app}.{reason}{note}\n\n"
        )
    if v.kind == "limit" and v.limit is not None and v.hint is not None:
        u, h = v.limit, v.hint
        stall = ""
        if u.stalls:
            st = u.stalls[0]
            at = f" at {md_code(st.top[0].short)}" if st.top else ""
            stall = (
                f"; its warps wait most on {st.reason} ({_pct_whole(st.share)} of the stall "
                f"samples{at}): {md_escape(st.explanation)}"
            )
        gain = _x(h.application_speedup) if h.application_speedup is not None else "no estimate"
        return (
            f"**cuda-advisor: {view.name(u.kernel)} ({_pct(u.share)} of GPU time): {u.text}**"
            f"{stall}; {app}. The first hint, {h.criterion}{_where(view, h)}, concerns kernels "
            f"under 1% of the GPU time (this fix on the whole GPU time: {gain}).\n\n"
        )
    if v.kind == "headroom" and v.headroom_kernel is not None:
        return (
            f"**cuda-advisor: no criterion is below its threshold, but "
            f"{view.name(v.headroom_kernel)} ({_pct(v.headroom_share)} of GPU time) has a "
            f"roofline headroom of {_x(v.headroom)}** ({_x(v.headroom_gpu)} on the whole GPU "
            f"time): {v.headroom_advice}; {app}.\n\n"
        )
    if v.kind == "no_estimate":
        top = view.report.table[0] if view.report.table else None
        longest = (
            f" The longest kernel: {view.name(top.name)}, {_pct(top.share_of_gpu_time)} of GPU "
            "time."
            if top is not None and top.share_of_gpu_time is not None
            else ""
        )
        return f"**cuda-advisor: no estimate yet**: {_missing_estimate(view)}.{longest}\n\n"
    if v.potential_speedup is None:
        return (
            "**cuda-advisor: no estimate yet**: no computed criterion is below its threshold, "
            f"but too few were computed and no kernel has a roofline headroom; {app}.\n\n"
        )
    if v.criteria_possible and v.criteria_computed < FEW_COMPUTED * v.criteria_possible:
        return (
            "**cuda-advisor: nothing to fix among the criteria computed**: none of the "
            f"{v.criteria_computed} computed (of {v.criteria_possible} that apply to the "
            "kernels; *Collect the missing metrics* says what the others need) is below its "
            f"threshold, and no kernel has {_x(HEADROOM_NOTABLE)} of roofline headroom on the "
            f"whole GPU time; {app}.\n\n"
        )
    return (
        "**cuda-advisor: nothing to fix first**: no criterion is below its threshold and no "
        f"kernel has {_x(HEADROOM_NOTABLE)} of roofline headroom on the whole GPU time; "
        f"{app}.\n\n"
    )


def _application(view: _View) -> str:
    """``the whole application: up to 10.67x``, or ``n/a`` with why."""
    v = view.report.verdict
    if v is None or v.potential_speedup is None:
        return f"the whole application: n/a ({_missing_estimate(view)})"
    return f"the whole application: up to {_x(v.potential_speedup)}"


def _reason(view: _View) -> str:
    """Why the first hint concerns kernels under 1 % of the GPU time, kernel names as code."""
    v = view.report.verdict
    assert v is not None
    text = "every hint concerns kernels under 1% of the GPU time"
    if v.headroom_kernel is not None:
        text += (
            f"; {view.name(v.headroom_kernel)} ({_pct(v.headroom_share)} of GPU time) has a "
            f"roofline headroom of {_x(v.headroom)} and no criterion below its threshold"
        )
    return text


def _where(view: _View, h: HintView) -> str:
    """`` in `k()` (48.4% of GPU time)``, `` in 3 kernels (…)``; empty for HOSTSYNC."""
    if not h.kernels:
        return ""
    share = f" ({_pct(h.share_of_gpu_time)} of GPU time)" if h.share_of_gpu_time is not None else ""
    return _in_kernels(view, h.kernels) + share


def _in_kernels(view: _View, kernels: Sequence[str]) -> str:
    """`` in `k()` `` for one kernel, `` in 3 kernels`` for several, empty for none."""
    if len(kernels) == 1:
        return f" in {view.name(kernels[0])}"
    return f" in {len(kernels)} kernels" if kernels else ""


def _missing_estimate(view: _View) -> str:
    """Why the application has no potential speedup and what to collect."""
    s = view.report.summary
    if s.kernels and s.kernels_without_estimate >= s.kernels:
        what = "speedup estimate" if view.measured else "criterion computable"
        which = "the kernel" if s.kernels == 1 else f"any of the {s.kernels:,} kernels"
        without = f"no {what} for {which}"
    elif s.kernels_without_estimate:
        without = f"no estimate for {s.kernels_without_estimate} of {counted(s.kernels, 'kernel')}"
    else:
        without = "no estimate"
    their = "its" if s.kernels == 1 else "their"
    return (
        f"{without}; collect {their} metrics (`cuda-advisor metrics --tool ncu` prints the "
        "command, *Collect the missing metrics* below says what is missing)"
    )


def _facts(view: _View) -> str:
    s = view.report.summary
    if not s.kernels:
        return ""
    parts = [
        f"{duration(s.gpu_time_ns)} of GPU time in {counted(s.kernels, 'kernel')} "
        f"({counted(s.launches, 'launch')})"
    ]
    v = view.report.verdict
    device = v.device_text if v is not None else (s.device or "not identified")
    parts.append("device: " + md_escape(_clip(device, TEXT_CHARS)))
    if v is not None and v.bound_text:
        parts.append(md_escape(v.bound_text))
    if v is not None and v.shown_limits:  # the hottest kernels' limiting units (Speed Of Light)
        more = f"; {v.limits_more} more hot kernel{'s' if v.limits_more > 1 else ''}"
        parts.append(
            "; ".join(
                f"{md_code(_clip(u.display, TEXT_CHARS))} ({_pct(u.share)} of GPU time): {u.text}"
                for u in v.shown_limits
            )
            + (more if v.limits_more else "")
        )
    # HOSTSYNC is the application's: said here once, not in every kernel's line
    parts.append(f"HOSTSYNC (kernel time / timeline span) {_num(s.hostsync.value)}")
    return " · ".join(parts) + "\n\n"


# --- the top kernels -----------------------------------------------------------------------------


def _time(row: KernelRow) -> str:
    launches = f" ×{_count(row.launches)}" if row.launches > 1 else ""
    return duration(row.duration_ns) + launches


def _nvidia(e: NvidiaEstimate | None) -> str:
    if e is None:
        return "—"
    return e.cell


def _table(view: _View, rows: Iterable[KernelRow]) -> str:
    heads = ["kernel", *(_COLUMNS[i][0] for i in view.columns)]
    rules = ["---", *(_COLUMNS[i][1] for i in view.columns)]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(rules) + "|"]
    for r in rows:
        cells = view.cells.get(r.name) or view._cells(r)
        lines.append(
            "| "
            + " | ".join([view.name(r.name, table=True), *(cells[i] for i in view.columns)])
            + " |"
        )
    return "\n".join(lines) + "\n"


#: what the headroom's cap is, on both pages (Decision L1: no estimate promises a launch
#: shorter than :data:`advisor.criteria.engine.speedups.MIN_LAUNCH_NS`, the shortest launch
#: seen in real profiles; the pages' figures are the JSON's, so the floor is named, not printed)
LAUNCH_FLOOR = "no estimate promises a launch shorter than the shortest seen in real profiles"


def _legend(view: _View) -> str:
    parts = ["Time: all launches (×N: N launches)."]
    if 2 in view.columns:
        parts.append("Worst criterion: the one whose fix buys the kernel most (1 = best).")
    if 3 in view.columns:
        parts.append(
            "Headroom: 1 / the fraction of peak the kernel already uses (DRAM or FLOPs, else its "
            f"busiest unit), capped at the launch floor ({LAUNCH_FLOOR})."
        )
    if 4 in view.columns:
        parts.append(
            "NVIDIA: Nsight Compute's estimate for the worst criterion, in parentheses when "
            "NVIDIA calls it local (of a part of the kernel)."
        )
    return " ".join(parts)


def _top_kernels(view: _View) -> str:
    rows = view.report.table[:TOP_KERNELS]
    if not rows:
        return ""
    return f"#### Top kernels\n\n{_table(view, rows)}\n{_legend(view)}\n\n"


# --- hints ---------------------------------------------------------------------------------------


def _hint_line(view: _View, number: int, h: HintView) -> str:
    if len(h.kernels) == 1:
        where = f" in {view.name(h.kernels[0])}"
    elif h.kernels:
        names = ", ".join(view.name(k) for k in h.kernels[:HINT_NAMES])
        more = f" and {len(h.kernels) - HINT_NAMES} more" if len(h.kernels) > HINT_NAMES else ""
        where = f" in {len(h.kernels)} kernels ({names}{more})"
    else:
        where = ""
    share = f", {_pct(h.share_of_gpu_time)} of GPU time" if h.share_of_gpu_time is not None else ""
    gain = (
        _x(h.application_speedup) if h.application_speedup is not None else "n/a (ranked by value)"
    )
    return (
        f"{number}. **{h.criterion}** = {h.value_text}{where}{share}: {md_escape(h.title)} — "
        f"this fix on the whole GPU time: {gain} ({md_escape(h.nvidia_text)})"
    )


def _hints(view: _View) -> str:
    s = view.report.summary
    if not s.top_hints:
        why = (
            "no criterion is below its threshold"
            if view.measured
            else "no criterion is computable (*Collect the missing metrics* says what to collect)"
        )
        return f"#### Hints\n\nNone: {why}.\n\n"
    lines = [
        _hint_line(view, i, h) + _where_line(view, h) for i, h in enumerate(s.top_hints, start=1)
    ]
    more = s.hints_total - len(s.top_hints)
    tail = f"\n\n{more} more under *What to do*." if more > 0 else ""
    return "#### Hints, best gain first\n\n" + "\n".join(lines) + tail + "\n\n"


def _where_line(view: _View, h: HintView) -> str:
    """The hint's "where" under its line: the top location of its criterion's waste
    (``50% of the excessive shared wavefronts: `sharedMemory.cu:22` (ST.E)``), or which
    locations cannot be shown and how to get them; empty where the input has no
    per-instruction data at all (docs/locations.md)."""
    w = h.located
    if w is None:
        return ""
    if not w.top:
        return f"\n   - where: {w.cannot}" if w.cannot else ""
    where = f" in {view.name(w.kernel)}" if len(h.kernels) > 1 else ""
    t = w.top[0]
    what = f" ({md_escape(_few_opcodes(t.opcodes))})" if t.opcodes else ""
    sass = f" {md_code(t.sass)}" if t.sass and not t.line else ""
    text = f"{_pct_whole(t.share)} of the {w.measure}: {md_code(t.short)}{what}{sass}"
    lacking = f"; {w.cannot}" if w.cannot else ""
    return f"\n   - where{where}: {text}{lacking}"


#: opcodes a Markdown location names (the line's heaviest first); the HTML lists them all
MD_OPCODES = 4


def _few_opcodes(opcodes: str) -> str:
    """``opcodes`` (space-separated, heaviest first) cut to :data:`MD_OPCODES`, saying how many
    more the line has: ``I2F.U32.RP MUFU.RCP F2I.FTZ.U32.TRUNC.NTZ IMAD.IADD +12 more``."""
    ops = opcodes.split()
    if len(ops) <= MD_OPCODES:
        return opcodes
    return " ".join(ops[:MD_OPCODES]) + f" +{len(ops) - MD_OPCODES} more"


def _pct_whole(value: float) -> str:
    """A location's share as a whole percentage (``72%``)."""
    return f"{value * 100:.0f}%"


def _stalls(view: _View) -> str:
    """Each hot kernel's top stall reasons from PC sampling with their top line, and, folded,
    what each reason means and its usual remedies (:data:`advisor.report.where.STALL_REASONS`).
    Empty where no hot kernel has PC samples."""
    v = view.report.verdict
    limits = [u for u in (v.limits if v is not None else ()) if u.stalls]
    if not limits:
        return ""
    lines = []
    lineless = lined = False
    reasons: dict[str, tuple[str, tuple[str, ...]]] = {}
    for u in limits:
        parts = []
        for st in u.stalls:
            top = st.top[0] if st.top else None
            what = (
                f" ({md_escape(_few_opcodes(top.opcodes))})"
                if top is not None and top.opcodes
                else ""
            )
            at = f" at {md_code(top.short)}{what}" if top is not None else ""
            lineless = lineless or (top is not None and not top.line)
            lined = lined or (top is not None and bool(top.line))
            parts.append(f"{st.reason} {_pct_whole(st.share)}{at}")
            reasons.setdefault(st.reason, (st.explanation, st.remedies))
        lines.append(f"- {view.name(u.kernel)}: {u.text}; stalls: {', '.join(parts)}")
    if lineless and lined:  # the report has lines, but not for every instruction
        lines.append(
            "\nAn offset (+0x…) is the instruction's place in the kernel's code: the compiler gave "
            "that instruction no source line."
        )
    elif lineless:
        from advisor.report.locations import HOW

        lines.append(
            "\nAn offset (+0x…) is the instruction's place in the kernel's code: the report has no "
            f"source lines ({HOW['line_info']})."
        )
    meaning = "\n".join(
        f"- **{r}**: {md_escape(e)}" + (f". Remedies: {md_escape('; '.join(rs))}." if rs else ".")
        for r, (e, rs) in reasons.items()
    )
    return (
        "#### What limits the top kernels (share of the stall samples)\n\n"
        + "\n".join(lines)
        + "\n\n"
        + _details("What the stall reasons mean", meaning)
    )


# --- folded --------------------------------------------------------------------------------------


def _details(summary: str, body: str) -> str:
    """A folded section; ``summary`` is the advisor's own text (no string from a profile)."""
    return f"<details><summary>{summary}</summary>\n\n{body.strip()}\n\n</details>\n\n"


def _folded(view: _View, listed: int, brief: bool = False) -> str:
    """The folded sections; the per-kernel ones list the first ``listed`` kernels."""
    report = view.report
    rows = report.table[:listed]
    parts = []
    rest = rows[TOP_KERNELS:]
    unlisted = report.summary.kernels - max(len(rows), min(TOP_KERNELS, len(report.table)))
    if rest:
        more = f"\n{counted(unlisted, 'more kernel')} in the HTML report.\n" if unlisted > 0 else ""
        parts.append(_details(counted(len(rest), "more kernel"), _table(view, rest) + more))
    elif unlisted > 0 and not brief:
        parts.append(f"{counted(unlisted, 'more kernel')} in the HTML report.\n\n")
    parts.append(_what_to_do(view, brief))
    if rows and view.measured:
        parts.append(_details("Criteria of every kernel (1 = best)", _criteria(view, rows)))
    parts.append(_details("Predictions", _predictions(report)))
    collect = _collect(view)
    if collect:
        parts.append(_details("Collect the missing metrics", collect))
    parts.append(_details("Notes", _notes(report, brief)))
    names = _full_names(view, rows)
    if names:
        parts.append(_details("Full kernel names", names))
    return "".join(parts)


def _what_to_do(view: _View, brief: bool) -> str:
    s = view.report.summary
    if not s.top_hints:
        return ""
    blocks = []
    for i, h in enumerate(s.top_hints, start=1):
        head = (
            f"**{i}. {h.criterion}** = {h.value_text} (threshold {_num(h.threshold)}): "
            f"this fix: {_x(h.potential_speedup)}"
            + (" on its kernels" if h.kernels else "")
            + f", {_x(h.application_speedup)} on the whole GPU time"
        )
        if len(h.kernels) > 1 and not brief:
            head += "; kernels: " + ", ".join(view.name(k) for k in h.kernels)
        actions = "\n".join(f"- {md_escape(a)}" for a in h.actions)
        blocks.append(head + ("\n\n" + actions if actions else ""))
    v = view.report.verdict
    later = list(v.hints[len(s.top_hints) :]) if v is not None else []
    if later:
        lines = []
        for i, h in enumerate(later, start=len(s.top_hints) + 1):
            lines.append(
                f"{i}. **{h.criterion}**{_in_kernels(view, h.kernels)}: {md_escape(h.title)} — "
                f"this fix on the whole GPU time {_x(h.application_speedup)}"
            )
        blocks.append("\n".join(lines))
    return _details("What to do", "\n\n".join(blocks))


def _criteria(view: _View, rows: Sequence[KernelRow]) -> str:
    names = view.report.criteria_names
    lines = []
    for r in rows:
        detail = view.details.get(r.name)
        nvidia = {c.name: c.nvidia for c in detail.criteria} if detail else {}
        values = []
        for name, value in zip(names, r.values, strict=False):
            if value is None or name == "HOSTSYNC":  # the application's, in the facts line
                continue
            threshold = THRESHOLDS.get(name)
            text = f"{name} {criterion_value(value, threshold)}"
            if threshold is not None and value < threshold:
                text = f"**{text}**"
                e = nvidia.get(name)
                if e is not None:
                    text += f" (NVIDIA {_nvidia(e).strip('()')}{', local' if e.local else ''})"
            values.append(text)
        absent = [
            (n, s)
            for n, v, s in zip(names, r.values, r.statuses, strict=False)
            if v is None and n != "HOSTSYNC"
        ]
        missing = [n for n, s in absent if s != "not_applicable"]
        inapplicable = [n for n, s in absent if s == "not_applicable"]
        facts = (
            f"{_time(r)}, {_pct(r.share_of_gpu_time)} of GPU time, bound "
            f"{md_escape(r.bound or 'unknown')}, roofline headroom {_x(r.potential_speedup)}"
        )
        body = " · ".join(values) if values else "no criterion computable"
        nc = f" · n/c: {', '.join(missing)}" if values and missing else ""
        na = f" · n/a: {', '.join(inapplicable)}" if values and inapplicable else ""
        lines.append(f"- {view.name(r.name)} — {facts}: {body}{nc}{na}")
    return (
        "\n".join(lines)
        + "\n\nBold: below its threshold (a hint). n/c: not computable (its metrics were not "
        "collected). n/a: does not apply to the kernel."
    )


def _predictions(report: Report) -> str:
    """The BSP λ and the kernels' predicted/measured, the application's BSP prediction, MAX/SUM,
    roofline and streams, one line each."""
    lines = []
    p, rf = report.predictions, report.roofline
    if p is not None and p.bsp is not None and p.bsp.kernels:
        ratios = [k.ratio for k in p.bsp.kernels if k.ratio is not None]
        # λ is fitted to these kernels' own times: a ratio of 1.00 everywhere says nothing
        spread = (
            f", predicted/measured {min(ratios):.2f}–{max(ratios):.2f}"
            if ratios and f"{min(ratios):.2f}" != f"{max(ratios):.2f}"
            else ""
        )
        lines.append(
            f"BSP λ = {p.bsp.lam:.4g} fitted to {counted(len(p.bsp.kernels), 'kernel')}{spread}"
        )
        for o in p.bsp.other_gpus:  # report --predict-gpu (default form, Decisions B1, B2)
            times = ", ".join(
                f"#{rank} {duration(ms * 1e6)} ({part}, {form} form"
                + (f", raised to the {up} floor)" if up else ")")
                for (rank, _, ms), (_, part), (_, form), (_, up) in zip(
                    o.predicted_ms, o.dominant, o.forms, o.raised, strict=True
                )
            )
            lines.append(
                f"BSP on {md_escape(o.gpu)} ({o.form} form, η_arch {o.eta_arch:.3g}; "
                f"limiter in brackets): {times or 'no kernel'}"
            )
    else:
        lines.append("BSP: per-thread counts not in the profile")
    if p is not None and p.bsp is not None and p.bsp.app is not None:
        a = p.bsp.app
        unscaled = "n/a" if a.unscaled_ms is None else duration(a.unscaled_ms * 1e6)
        lines.append(f"BSP of {md_escape(a.kernel)}: {unscaled} at λ = 1")
    if p is not None and p.maxsum is not None:
        lines.append(f"MAX/SUM for {counted(len(p.maxsum.kernels), 'described kernel')}")
    if rf is not None and rf.points:
        lines.append(f"roofline of {counted(len(rf.points), 'kernel')}")
    else:
        lines.append("roofline: no FLOP and DRAM byte counts")
    if report.streams:
        lines.append(
            f"streams: {counted(len(report.streams), 'transfer-kernel-transfer sequence')}"
        )
    return "\n".join(f"- {line}" for line in lines) + "\n\nCharts and details: the HTML report."


def _collect(view: _View) -> str:
    """The report's :class:`advisor.report.missing.Collect` (the same the HTML shows): the runs
    that collect every missing criterion, then per criterion for how many kernels, what it misses
    and the commands of the profilers that fit the inputs and the device."""
    col = view.report.collect
    if col.empty:
        return ""
    blocks = []
    if col.commands:
        runs = "\n".join(f"# {what}\n{cmd}" for what, cmd in col.commands)
        blocks.append(
            f"One run per line collects what the criteria below miss:\n\n```sh\n{runs}\n```"
        )
    if col.other_tool:
        blocks.append(
            f"On a GPU before Volta, `cuda-advisor metrics --tool {col.other_tool}` prints the "
            "nvprof command."
        )
    if col.device_facts:
        blocks.append(
            "The device was not identified: give `--device NAME` for "
            + ", ".join(md_code(f) for f in col.device_facts)
            + "."
        )
    for item in col.items:
        who = "the application" if not item.kernels else counted(item.kernels, "kernel")
        inputs = ", ".join(md_code(m) for m in item.missing[:6]) or "device facts only"
        more = f" and {len(item.missing) - 6} more" if len(item.missing) > 6 else ""
        block = f"**{item.criterion}** ({who}) misses {inputs}{more}"
        commands = "\n".join(f"# {tool}\n{line}" for tool, line in item.commands)
        if commands:
            block += f"\n\n```sh\n{commands}\n```"
        blocks.append(block)
    return "\n\n".join(blocks)


_LATENCY_NOTE = re.compile(r"^(shared|l1|l2|dram) latency (\d+) cycles: ")


def _notes(report: Report, brief: bool) -> str:
    """The notes, the device's assumed latencies (one note per level, with its source) said in
    one line: their sources are in the HTML report and the JSON."""
    raw = [*report.notes, *report.streams_notes]
    latencies = [m.groups() for n in raw if (m := _LATENCY_NOTE.match(n))]
    kept = [n for n in raw if not _LATENCY_NOTE.match(n)]
    if latencies:
        kept.append(
            "latencies assumed: "
            + ", ".join(f"{level} {cycles} cycles" for level, cycles in latencies)
            + " (their sources: the HTML report)"
        )
    notes = [md_escape(_clip(n, TEXT_CHARS)) for n in kept]
    if brief:
        notes = notes[:5]
    return "\n".join(f"- {n}" for n in notes) or "- none"


def _full_names(view: _View, rows: Sequence[KernelRow]) -> str:
    """Display name -> full name (demangled, and the mangled one) of every kernel shown whose
    display name is not its full name."""
    kernels = list(dict.fromkeys([*(r.name for r in rows), *view.names]))
    shown = {r.name for r in view.report.table[:TOP_KERNELS]} | {r.name for r in rows}
    shown |= {k for h in view.report.summary.top_hints for k in h.kernels}
    lines, cut = [], False
    for k in kernels:
        full = demangle(k)
        whole = (visible_text(k), readable_name(visible_text(k)))
        if k not in shown or (full == k and view.names.get(k) in whole):
            continue  # the display name is the whole name (less a return type)
        line = f"- {view.name(k)}: {md_code(_clip(full, FULL_NAME_CHARS))}"
        if full != k:
            line += f" (mangled: {md_code(_clip(k, FULL_NAME_CHARS))})"
        lines.append(line)
        cut = cut or max(len(full), len(k)) > FULL_NAME_CHARS
    if not lines:
        return ""
    note = (
        f"\n\nNames over {FULL_NAME_CHARS} characters are cut here; the HTML report and the JSON "
        "have them whole."
    )
    return "\n".join(lines) + (note if cut else "")
