"""Properties every report must hold, as pure functions over what ``report`` writes: the analysis
JSON (``report --json``, with its ``verdict``) and the Markdown comment.  They run on any input
(``benchmarks/report_invariants.py`` walks folders of profiles; ``tests/invariants/`` runs them on
the real inputs and the samples).

Each predicate returns a list of violations in words (empty: the property holds);
:func:`check` runs every predicate of :data:`PREDICATES`.  docs/report.md ("One verdict") states
the properties.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

Predicate = Callable[[Mapping[str, Any], str | None], list[str]]

#: a hint's kernels under this share of the GPU time may lead only with a stated reason
MINOR_SHARE = 0.01
#: tolerance of a comparison of two rounded figures (the reports write two decimals)
_EPS = 5e-3


def _verdict(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return data.get("verdict") or {}


def hint_not_above_application(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """No hint's figure on the whole GPU time is above the whole application's figure (a fix is
    part of the application), and none is shown beside an application figure of n/a... unless the
    application is n/a for want of inputs, which no hint figure contradicts."""
    v = _verdict(data)
    app = v.get("the_whole_application")
    if app is None:
        return []
    out = []
    for h in v.get("hints") or ():
        fix = h.get("this_fix_on_the_whole_gpu_time")
        if fix is not None and fix > app + _EPS:
            out.append(
                f"hint {h['criterion']}: {fix:.2f}x on the whole GPU time above the whole "
                f"application's {app:.2f}x"
            )
    return out


def no_figure_from_nothing(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """No application figure where its inputs are n/a: without a kernel's potential speedup,
    HOSTSYNC's value and any hint's figure, the application's figure is None (n/a), not 1.00x."""
    v = _verdict(data)
    kernels = data.get("kernels") or ()
    hostsync = ((data.get("application") or {}).get("HOSTSYNC") or {}).get("value")
    figures = [
        h.get("this_fix_on_the_whole_gpu_time")
        for h in v.get("hints") or ()
        if h.get("this_fix_on_the_whole_gpu_time") is not None
    ]
    known = any(k.get("potential_speedup") is not None for k in kernels)
    unknown = not known and hostsync is None and not any(f > 1.0 for f in figures)
    if unknown and v.get("the_whole_application") is not None:
        return [
            f"the whole application reads {v['the_whole_application']:.2f}x but no kernel "
            "has a potential speedup, HOSTSYNC is n/c and no hint has a figure"
        ]
    return []


def lead_hint_on_hot_kernel(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """The first hint concerns kernels of at least 1 % of the GPU time, or the verdict states why
    it does not (``lead_reason``)."""
    v = _verdict(data)
    first = v.get("first_hint")
    if not first:
        return []
    share = first.get("share_of_gpu_time")
    if share is not None and share < MINOR_SHARE and not v.get("lead_reason"):
        return [
            f"the first hint ({first['criterion']}) concerns {100 * share:.2g}% of the GPU time "
            "and the verdict gives no reason"
        ]
    return []


def nothing_to_fix_means_no_headroom(
    data: Mapping[str, Any], markdown: str | None = None
) -> list[str]:
    """The Markdown never says "nothing to fix" while a kernel's roofline headroom buys at least
    10 % on the whole GPU time."""
    if not markdown or "nothing to fix" not in markdown.lower():
        return []
    v = _verdict(data)
    gain = v.get("roofline_headroom_on_the_whole_gpu_time")
    if gain is not None and gain >= 1.10:
        return [f"'nothing to fix' beside a roofline headroom of {gain:.2f}x on the GPU time"]
    return []


#: ``1.37x``, ``up to **1.37x**``, ``1,208x`` (from 100x on without decimals); and percentages
#: ``48.4%`` (a share of GPU time)
_SPEEDUP = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d{3,})x\b")
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)%")
#: a criterion's value as the Markdown writes it: ``HOSTSYNC 0.32``, ``**DIVERGENCE** = 0.75``,
#: ``LOADBALANC_SM = 0.01–0.73``, ``LOADBALANC_SM 0.797`` (just below its threshold)
_CRITERION_VALUE = re.compile(
    r"\b([A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+|HOSTSYNC|DEVICESYNC|DIVERGENCE)\**(?: =)? "
    r"(\d\.\d{2,4})(?:–(\d\.\d{2,4}))?(?![\dx%])"
)
#: a duration as the report writes it (``190 ms``, ``5.25 µs``, ``1.23 s``)
_DURATION = re.compile(r"(?<![\w.,+-])(\d[\d,]*(?:\.\d+)?) (ns|µs|ms|s)\b")
_UNIT_NS = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9}


def _numbers(node: Any) -> Iterator[float]:
    if isinstance(node, bool):
        return
    if isinstance(node, int | float):
        if math.isfinite(node):
            yield float(node)
    elif isinstance(node, Mapping):
        for value in node.values():
            yield from _numbers(value)
    elif isinstance(node, list | tuple):
        for value in node:
            yield from _numbers(value)


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def markdown_numbers_in_json(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """Every speedup (``N.NNx``) and every percentage of the Markdown is a number of the JSON,
    compared as written: a JSON number rounds to the speedup at its decimals, or, times 100, to
    the percentage at its decimals (``48.4%`` for a share of 0.4837; ``0.0071%`` at two
    significant digits); every criterion value (``HOSTSYNC 0.32``) at its two decimals; every
    duration (``190 ms``, ``5.25 µs``) as a time in ns (or ms) of the JSON to its shown digits.
    Counts and the text of notes and commands are not compared."""
    if not markdown:
        return []
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)  # commands are not figures
    text = re.sub(r"`[^`]*`", "", text)  # nor kernel names
    values = sorted(set(_numbers(data)))
    out: list[str] = []

    def found(shown: str, scale: float) -> bool:
        target, digits = float(shown), _decimals(shown)
        half = 0.5 * 10.0**-digits + 1e-9
        if digits == 0 or (target < 1.0 and scale == 100.0):  # 2 significant digits under 0.1 %
            half = max(half, abs(target) * 0.05 + 1e-9)
        return any(abs(v * scale - target) <= half for v in values)

    for m in _SPEEDUP.finditer(text):
        if not found(m.group(1).replace(",", ""), 1.0):
            out.append(f"the Markdown's {m.group(0)} is no number of the JSON")
    for m in _PERCENT.finditer(text):
        if not found(m.group(1), 100.0) and not found(m.group(1), 1.0):
            out.append(f"the Markdown's {m.group(0)} is no share of the JSON")
    for m in _CRITERION_VALUE.finditer(text):
        for shown in filter(None, (m.group(2), m.group(3))):
            if not found(shown, 1.0):
                out.append(f"the Markdown's {m.group(1)} {shown} is no value of the JSON")
    for m in _DURATION.finditer(text):
        shown, unit = m.group(1).replace(",", ""), _UNIT_NS[m.group(2)]
        target = float(shown) * unit
        half = max(0.5 * 10.0 ** -_decimals(shown) * unit, 0.005 * target) + 1e-9
        # JSON times are in ns, or in ms where the key says so (predicted_ms, floor_ms)
        if not any(abs(v - target) <= half or abs(v * 1e6 - target) <= half for v in values):
            out.append(f"the Markdown's {m.group(0)} is no time of the JSON")
    return sorted(set(out))


def _prediction_rows(data: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(where, row)`` for every kernel prediction of the JSON that carries its floor."""
    for gpu in data.get("bsp_other_gpus") or ():
        for row in gpu.get("kernels") or ():
            yield f"{gpu.get('gpu')}: {row.get('name')}", row
    for key in ("predictions", "bsp"):
        block = data.get(key)
        rows = block.get("kernels") if isinstance(block, Mapping) else None
        for row in rows or ():
            if isinstance(row, Mapping):
                yield f"{key}: {row.get('name')}", row


def predictions_not_under_floor(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """No predicted kernel time is under its physical floor on the GPU it is predicted for: the
    measured DRAM bytes at that GPU's peak bandwidth, or the instructions at its peak issue rate
    (``floor_ms``, :mod:`advisor.models.bsp.floor`)."""
    out = []
    for where, row in _prediction_rows(data):
        predicted, floor = row.get("predicted_ms"), row.get("floor_ms")
        if predicted is None or floor is None:
            continue
        if predicted < floor * (1.0 - 1e-9):
            out.append(f"{where}: predicted {predicted:.4g} ms under its floor {floor:.4g} ms")
    return out


def _summed_idle(block: Mapping[str, Any]) -> float:
    return sum(float(block.get(k) or 0.0) for k in ("host_wait_ns", "launch_delay_ns", "other_ns"))


def waits_within_span(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """No idle or wait figure exceeds the span it lies in: the host view's idle total (host wait +
    launch delay + other, a union over time) is at most the devices' spans together, each
    stream's idle at most its device's span, HOSTSYNC's idle at most its span, and communication
    (exposed ≤ communication ≤ span) likewise."""
    out: list[str] = []
    slack = 1.0 + 1e-9
    host = data.get("host") or {}
    spans = {d.get("device_id"): float(d.get("span_ns") or 0.0) for d in host.get("devices") or ()}
    total_span = float(host.get("span_ns") or 0.0) or sum(spans.values())
    idle = host.get("idle") or {}
    if idle and total_span:
        summed = _summed_idle(idle)
        if summed > total_span * slack:
            out.append(
                f"host wait + launch delay + other idle = {summed / 1e6:.4g} ms, above the "
                f"{total_span / 1e6:.4g} ms span"
            )
        if float(idle.get("idle_ns") or 0.0) > total_span * slack:
            out.append(
                f"idle {idle['idle_ns'] / 1e6:.4g} ms above the {total_span / 1e6:.4g} ms span"
            )
    for stream in host.get("idle_by_stream") or ():
        span = spans.get(stream.get("device_id"), total_span)
        if span and float(stream.get("idle_ns") or 0.0) > span * slack:
            out.append(
                f"stream {stream.get('stream')}: idle {stream['idle_ns'] / 1e6:.4g} ms above its "
                f"device's {span / 1e6:.4g} ms span"
            )
    inputs = (((data.get("application") or {}).get("HOSTSYNC") or {}).get("inputs")) or {}
    if inputs.get("span_ns") and float(inputs.get("idle_ns") or 0.0) > inputs["span_ns"] * slack:
        out.append("HOSTSYNC: idle time above the span")
    comm = data.get("communication") or {}
    for block in [comm, *(comm.get("devices") or ())] if comm else ():
        exposed, total = block.get("exposed_ns"), block.get("communication_ns")
        span = block.get("span_ns")
        if exposed is not None and total is not None and exposed > total * slack:
            out.append("communication: exposed time above the communication time")
        if total is not None and span and total > span * slack:
            out.append("communication: communication time above the span")
    return out


#: hint titles that judge a launch configuration (their criteria aside)
_LAUNCH_WORDS = re.compile(r"grid too small|partial warps|occupancy|blocks than SMs", re.IGNORECASE)


def no_launch_hint_on_collectives(
    data: Mapping[str, Any], markdown: str | None = None
) -> list[str]:
    """No communication kernel (NCCL/RCCL/MSCCL collective or send/recv,
    :mod:`advisor.communication`) gets a launch-configuration or occupancy hint: its grid is sized
    by the library and its time is mostly waiting for the other ranks."""
    from advisor.communication import NOT_FOR_COMMUNICATION, is_communication_name

    collectives = set((data.get("communication") or {}).get("kernels") or ())
    out = []
    for kernel in data.get("kernels") or ():
        name = kernel.get("name")
        if not (is_communication_name(name) or name in collectives):
            continue
        for hint in kernel.get("hints") or ():
            launch = hint.get("criterion") in NOT_FOR_COMMUNICATION
            if launch or _LAUNCH_WORDS.search(str(hint.get("title") or "")):
                out.append(f"communication kernel {name}: {hint.get('criterion')} hint")
    for hint in (data.get("application") or {}).get("hints") or ():
        if hint.get("criterion") not in NOT_FOR_COMMUNICATION:
            continue
        named = [hint.get("kernel"), *(hint.get("kernels") or ())]
        for name in named:
            if isinstance(name, str) and (is_communication_name(name) or name in collectives):
                out.append(
                    f"application hint {hint['criterion']} names communication kernel {name}"
                )
    return sorted(set(out))


def no_launch_under_floor(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """No kernel speedup (overall potential, a criterion's, a hint's) promises a launch shorter
    than the shortest a kernel launch runs (:data:`MIN_LAUNCH_NS`, Decision L1): the kernel's
    mean launch time over the speedup is at least that floor (or the speedup is at most 1)."""
    from advisor.criteria.engine.speedups import MIN_LAUNCH_NS

    out = []
    for k in data.get("kernels") or ():
        duration, launches = k.get("duration_ns"), k.get("launches")
        if not duration or not launches:
            continue
        launch = float(duration) / float(launches)
        figures = [("overall potential", k.get("potential_speedup"))]
        figures += [(c, r.get("potential_speedup")) for c, r in (k.get("criteria") or {}).items()
                    if r.get("scope") != "application"]  # fmt: skip
        figures += [(f"hint {h.get('criterion')}", h.get("potential_speedup"))
                    for h in k.get("hints") or ()]  # fmt: skip
        for what, speedup in figures:
            floor = MIN_LAUNCH_NS * (1 - 1e-9)
            if speedup is not None and speedup > 1.0 and launch / speedup < floor:
                out.append(
                    f"{k.get('name')}: {what} {speedup:.2f}x makes a {launch:.0f} ns launch "
                    f"{launch / speedup:.0f} ns, under the {MIN_LAUNCH_NS:.0f} ns floor"
                )
    return out


#: the properties :func:`check` runs, in this order
PREDICATES: list[Predicate] = [
    hint_not_above_application,
    no_figure_from_nothing,
    lead_hint_on_hot_kernel,
    nothing_to_fix_means_no_headroom,
    markdown_numbers_in_json,
    predictions_not_under_floor,
    waits_within_span,
    no_launch_hint_on_collectives,
    no_launch_under_floor,
]


def check(data: Mapping[str, Any], markdown: str | None = None) -> list[str]:
    """Every violation of every property of :data:`PREDICATES` (empty: the report holds them)."""
    return [f"{p.__name__}: {text}" for p in PREDICATES for text in p(data, markdown)]


__all__ = [
    "PREDICATES",
    "check",
    "hint_not_above_application",
    "lead_hint_on_hot_kernel",
    "markdown_numbers_in_json",
    "no_figure_from_nothing",
    "no_launch_hint_on_collectives",
    "no_launch_under_floor",
    "nothing_to_fix_means_no_headroom",
    "predictions_not_under_floor",
    "waits_within_span",
]
