"""Hints: every criterion below its threshold, with the evidence, the gain and what to do.

Thresholds, titles and actions are fields of each criterion's spec (``SPEC`` in its module of
:mod:`advisor.criteria`, with the reason for the threshold's value); :data:`THRESHOLDS`,
:data:`TITLES` and :data:`ACTIONS` are read-only views over the specs.  Actions are those the papers
name (seed 002, sections IV-VI; MODELS.md "Hints") plus the modern equivalents users expect
(CUDA graphs, cooperative-groups grid sync, vectorized loads, swizzling).

A kernel's hints are ranked by potential speedup (largest first; hints without an estimate last,
then in criterion order).  The application's hints (``rank(..., by_application=True)``) are
first grouped, one entry per criterion (:func:`group`: the kernels that share it, their combined
share of GPU time and the Amdahl gain over them), then ranked by that gain on the whole GPU time,
an entry under :data:`MIN_SHARE_OF_GPU_TIME` after every entry above it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from advisor.criteria.engine.analysis import CriterionResult, Hint
from advisor.criteria.engine.spec import BY_NAME, SpecView
from advisor.criteria.engine.speedups import application_gain

#: criterion -> threshold below which it becomes a hint (each spec's ``threshold``; the reason
#: for each value is the spec's ``threshold_reason``)
THRESHOLDS: Mapping[str, float] = SpecView(lambda spec: spec.threshold)
#: criterion -> the hint's title
TITLES: Mapping[str, str] = SpecView(lambda spec: spec.title)
#: criterion -> what to do
ACTIONS: Mapping[str, tuple[str, ...]] = SpecView(lambda spec: spec.actions)

#: Application hints of kernels (or groups of kernels) under this share of the GPU time rank
#: after every hint of kernels above it, whatever their gain.  Reason: a kernel that is 0.2 % of
#: the GPU time cannot buy more than 0.2 % even if it became free (Amdahl: the gain is at most
#: 1 / (1 - share)), yet one-block or one-thread marker kernels have criteria near 0 and
#: per-kernel speedups of 30x-500x; 1 % is where fixing the kernel stops being worth a look
#: before anything else, and the Amdahl gain of such a hint is at most 1.0101x.
MIN_SHARE_OF_GPU_TIME = 0.01


@dataclass(frozen=True)
class KernelsHint(Hint):
    """A hint with the kernels it concerns and their share of GPU time.

    One kernel's hint (from :func:`hint_for`) has ``kernels == (kernel,)`` and that kernel's
    share; an application entry of :func:`group` has every kernel with that criterion below its
    threshold, their combined share, and the gain over all of them.  HOSTSYNC's hint concerns
    the application: no kernels, no share."""

    kernels: tuple[str, ...] = ()
    share_of_gpu_time: float | None = None


def hint_for(
    result: CriterionResult,
    kernel: str | None,
    form: str,
    share_of_gpu_time: float | None,
) -> Hint | None:
    """The hint of one criterion result, or None when it is fine (or not computed)."""
    spec = BY_NAME[result.name]
    threshold = spec.threshold
    if result.value is None or result.value >= threshold:
        return None
    speedup = result.speedups.pick(form)
    gain = speedup if kernel is None else application_gain(share_of_gpu_time, speedup)
    title, actions = spec.variants.get(result.variant, (spec.title, spec.actions))
    evidence = {"value": result.value, **dict(result.inputs)}
    if result.level_share_frac is not None:
        evidence["level_share_frac"] = result.level_share_frac
    return KernelsHint(
        criterion=result.name,
        kernel=kernel,
        value=result.value,
        threshold=threshold,
        potential_speedup=speedup,
        application_speedup=gain,
        title=title,
        evidence=evidence,
        actions=actions,
        kernels=() if kernel is None else (kernel,),
        share_of_gpu_time=None if kernel is None else share_of_gpu_time,
    )


def kernels_of(hint: Hint) -> tuple[str, ...]:
    """The kernels a hint concerns (one, several for a grouped entry, none for HOSTSYNC)."""
    kernels: tuple[str, ...] = getattr(hint, "kernels", ())
    if kernels:
        return kernels
    return () if hint.kernel is None else (hint.kernel,)


def share_of(hint: Hint) -> float | None:
    """The share of GPU time of the kernels a hint concerns (None: unknown or application)."""
    share: float | None = getattr(hint, "share_of_gpu_time", None)
    return share


def _amdahl_parts(
    parts: Sequence[tuple[float | None, float | None]],
) -> tuple[float, float] | None:
    """(Σ share, Σ share / SP) over the kernels with a known share, a kernel without an estimate
    counting as 1x; None when no kernel has both a share and an estimate."""
    known = [(s, sp) for s, sp in parts if s is not None]
    if not any(sp is not None and sp > 0 for _, sp in known):
        return None
    total = sum(s for s, _ in known)
    return total, sum(s / sp if sp is not None and sp > 0 else s for s, sp in known)


def combined_gain(parts: Sequence[tuple[float | None, float | None]]) -> float | None:
    """Amdahl over several kernels, each (share of GPU time, potential speedup):
    ``1 / ((1 - Σ share) + Σ share_k / SP_k)``, the gain on the whole GPU time of fixing them all.
    A kernel without an estimate counts as 1x; None when no kernel has both a share and an
    estimate.  One kernel: :func:`~advisor.criteria.engine.speedups.application_gain`."""
    sums = _amdahl_parts(parts)
    if sums is None:
        return None
    remaining = (1.0 - sums[0]) + sums[1]
    return 1.0 / remaining if remaining > 0 else None


def combined_speedup(parts: Sequence[tuple[float | None, float | None]]) -> float | None:
    """The speedup of the kernels' own time together, ``Σ share_k / Σ (share_k / SP_k)``
    (kernels without an estimate count as 1x; None as in :func:`combined_gain`)."""
    sums = _amdahl_parts(parts)
    if sums is None:
        return None
    return sums[0] / sums[1] if sums[1] > 0 else None


def group(hints: Sequence[Hint]) -> tuple[Hint, ...]:
    """One entry per criterion: the kernel hints of a criterion that several kernels share become
    one :class:`KernelsHint` listing them (best application gain first, then larger share, then
    name), with their combined share of GPU time, ``potential_speedup`` the speedup of their time
    together and ``application_speedup`` the Amdahl gain over them (:func:`combined_gain`);
    ``kernel``, ``value`` and ``evidence`` are the first kernel's.

    Kernels under :data:`MIN_SHARE_OF_GPU_TIME` join the entry of the kernels above it only when
    together they reach it; otherwise they form an entry of their own (which :func:`rank` puts
    last), so a 0.01 % marker kernel is never listed as a reason to fix a 99 % one.  Application
    hints (HOSTSYNC) and criteria of one kernel pass unchanged; the order is the input's (first
    occurrence)."""
    buckets: dict[str, list[Hint]] = {}
    out: list[Hint | str] = []
    for h in hints:
        if h.kernel is None:
            out.append(h)
            continue
        if h.criterion not in buckets:
            buckets[h.criterion] = []
            out.append(h.criterion)
        buckets[h.criterion].append(h)
    entries: list[Hint] = []
    for item in out:
        if isinstance(item, Hint):
            entries.append(item)
            continue
        members = buckets[item]
        small = [h for h in members if below_min_share(h)]
        large = [h for h in members if not below_min_share(h)]
        small_share = sum(share_of(h) or 0.0 for h in small)
        if not large or not small or small_share >= MIN_SHARE_OF_GPU_TIME:
            entries.append(_merge(members))
        else:
            entries += [_merge(large), _merge(small)]
    return tuple(entries)


def _merge(members: list[Hint]) -> Hint:
    if len(members) == 1:
        return members[0]

    def order(h: Hint) -> tuple[int, float, float, str]:
        gain, share = h.application_speedup, share_of(h)
        return (0 if gain is not None else 1, -(gain or 0.0), -(share or 0.0), h.kernel or "")

    members = sorted(members, key=order)
    lead = members[0]
    parts = [(share_of(h), h.potential_speedup) for h in members]
    shares = [s for s, _ in parts if s is not None]
    gain, speedup = combined_gain(parts), combined_speedup(parts)
    return KernelsHint(  # without shares (hints not from hint_for): the first kernel's figures
        criterion=lead.criterion,
        kernel=lead.kernel,
        value=lead.value,
        threshold=lead.threshold,
        potential_speedup=speedup if speedup is not None else lead.potential_speedup,
        application_speedup=gain if gain is not None else lead.application_speedup,
        title=lead.title,
        evidence=lead.evidence,
        actions=lead.actions,
        kernels=tuple(k for h in members for k in kernels_of(h)),
        share_of_gpu_time=sum(shares) if len(shares) == len(members) else None,
    )


def below_min_share(hint: Hint) -> bool:
    """Whether a hint's kernels are known to be under :data:`MIN_SHARE_OF_GPU_TIME` of the GPU
    time (an application hint, or one of unknown share, is not)."""
    share = share_of(hint)
    return share is not None and share < MIN_SHARE_OF_GPU_TIME


def rank(hints: Sequence[Hint], by_application: bool = False) -> tuple[Hint, ...]:
    """Largest potential speedup first; hints without an estimate last, in criterion order.

    ``by_application``: the application's list: hints grouped one per criterion (:func:`group`),
    ranked by the gain on the whole GPU time, and every entry under
    :data:`MIN_SHARE_OF_GPU_TIME` after every entry above it."""
    order = {name: i for i, name in enumerate(BY_NAME)}
    if by_application:
        hints = group(hints)

    def key(h: Hint) -> tuple[int, int, float, int, str]:
        gain = h.application_speedup if by_application else h.potential_speedup
        return (
            1 if by_application and below_min_share(h) else 0,
            0 if gain is not None else 1,
            -(gain or 0.0),
            order[h.criterion],
            h.kernel or "",
        )

    return tuple(sorted(hints, key=key))


__all__ = [
    "ACTIONS",
    "MIN_SHARE_OF_GPU_TIME",
    "THRESHOLDS",
    "TITLES",
    "KernelsHint",
    "below_min_share",
    "combined_gain",
    "combined_speedup",
    "group",
    "hint_for",
    "kernels_of",
    "rank",
]
