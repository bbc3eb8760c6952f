"""Pairing the kernels of two consecutive versions of a comparison
(:mod:`advisor.report.compare`).

Six stages, each among the kernels the earlier stages left unmatched (:func:`match_kernels`):
``forced`` (``--match OLD=NEW``, :func:`resolve_forced`), ``exact`` (the same name), ``base
name`` (:func:`base_name`: the same name without return type, template arguments and parameter
list, after demangling), ``operator`` (PyTorch profiler traces: the only remaining kernel the
same PyTorch operators launched), ``order+config`` (launch order and configuration of the
first launches, :func:`launch_facts`) and ``last left`` (the one kernel each version still has
unmatched: a kernel renamed and launched with another grid).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.errors import UsageError
from advisor.render import display
from advisor.render.display import shorten

#: how a kernel of one version was paired with one of the previous version, in stage order
FORCED = "forced"  # --match OLD=NEW
EXACT = "exact"  # the same name
BASE_NAME = "base name"  # the same name without template arguments and parameter list
OPERATOR = "operator"  # the only kernel left that the same PyTorch operators launched
ORDER_CONFIG = "order+config"  # launch order and launch configuration (grid and block sizes)
LAST_LEFT = "last left"  # the one kernel each version has left unmatched after the other stages
MATCH_METHODS = (FORCED, EXACT, BASE_NAME, OPERATOR, ORDER_CONFIG, LAST_LEFT)


@dataclass(frozen=True)
class KernelLaunch:
    """How a run launches a kernel first (the order+config stage of :func:`match_kernels`)."""

    order: int  # rank of the kernel's first launch among the run's kernels (0: launched first)
    grid_blocks: int | None  # blocks of that launch's grid (x * y * z)
    block_threads: int | None  # threads of its blocks (x * y * z)
    #: the PyTorch operators that launched it (a profiler trace's ``launches.operator``), sorted
    operators: tuple[str, ...] = ()

    @property
    def config(self) -> tuple[int, int] | None:
        """(grid blocks, block threads), None where either is unknown."""
        if self.grid_blocks is None or self.block_threads is None:
            return None
        return (self.grid_blocks, self.block_threads)


@dataclass(frozen=True)
class MatchedPair:
    """A kernel of the earlier version paired with one of the later version."""

    before: str
    after: str
    method: str  # one of MATCH_METHODS
    #: order+config: the (grid blocks, block threads) both first launches have
    config: tuple[int, int] | None = None


def match_kernels(
    before: Sequence[str],
    after: Sequence[str],
    before_launches: Mapping[str, KernelLaunch] | None = None,
    after_launches: Mapping[str, KernelLaunch] | None = None,
    forced: Sequence[tuple[str, str]] = (),
) -> list[MatchedPair]:
    """The kernels of two consecutive versions paired, in six stages, each among the kernels
    the earlier ones left unmatched:

    1. ``forced``: the ``(before, after)`` pairs given (names resolved by :func:`resolve_forced`);
    2. ``exact``: the same name;
    3. ``base name``: the same :func:`base_name`; several kernels of one base name (template
       instances) are paired in launch order;
    4. ``operator``: with both versions' launches known and naming their PyTorch operators, a
       kernel and the one of the other version launched by the same operators, where no other
       remaining kernel of either version has those operators (:func:`_operator_pairs`);
    5. ``order+config``: with both versions' launches known, the remaining kernels in the order
       of their first launch, aligned (:class:`difflib.SequenceMatcher`, order kept) where the
       grid size in blocks and the block size in threads of their first launches agree;
    6. ``last left``: where exactly one kernel of each version is still unmatched (one kernel in
       all, renamed and launched with another grid, say), those two.  The stage needs no
       launches, so it also pairs saved analyses.

    Without launches a version's order is its kernel list's (and stages 4 and 5 are skipped).
    """
    out: list[MatchedPair] = []
    taken_before: set[str] = set()
    taken_after: set[str] = set()

    def take(b: str, a: str, method: str, config: tuple[int, int] | None = None) -> None:
        out.append(MatchedPair(b, a, method, config))
        taken_before.add(b)
        taken_after.add(a)

    for b, a in forced:
        take(b, a, FORCED)
    later = set(after)
    for b in before:
        if b not in taken_before and b in later and b not in taken_after:
            take(b, b, EXACT)
    left_before = sorted(
        (n for n in before if n not in taken_before), key=_launch_rank(before, before_launches)
    )
    left_after = sorted(
        (n for n in after if n not in taken_after), key=_launch_rank(after, after_launches)
    )
    groups: dict[str, list[str]] = {}
    for a in left_after:
        groups.setdefault(base_name(a), []).append(a)
    for b in left_before:
        candidates = groups.get(base_name(b))
        if candidates:
            take(b, candidates.pop(0), BASE_NAME)
    if before_launches is not None and after_launches is not None:
        _launch_stages(
            left_before,
            left_after,
            before_launches,
            after_launches,
            taken_before,
            taken_after,
            take,
        )
    last_before = [n for n in left_before if n not in taken_before]
    last_after = [n for n in left_after if n not in taken_after]
    if len(last_before) == 1 and len(last_after) == 1:
        take(last_before[0], last_after[0], LAST_LEFT)
    return out


def _launch_stages(
    left_before: Sequence[str],
    left_after: Sequence[str],
    before_launches: Mapping[str, KernelLaunch],
    after_launches: Mapping[str, KernelLaunch],
    taken_before: set[str],
    taken_after: set[str],
    take: Callable[..., None],
) -> None:
    """Stages 4 (``operator``) and 5 (``order+config``) of :func:`match_kernels`, among the
    kernels still unmatched; ``take(before, after, method, config)`` records a pair."""
    left_before = [n for n in left_before if n not in taken_before]
    left_after = [n for n in left_after if n not in taken_after]
    for b, a in _operator_pairs(left_before, left_after, before_launches, after_launches):
        take(b, a, OPERATOR)
    left_before = [n for n in left_before if n not in taken_before]
    left_after = [n for n in left_after if n not in taken_after]
    keys_before = [
        _config_key(before_launches.get(n), "before", i) for i, n in enumerate(left_before)
    ]
    keys_after = [_config_key(after_launches.get(n), "after", i) for i, n in enumerate(left_after)]
    aligned = difflib.SequenceMatcher(None, keys_before, keys_after, autojunk=False)
    for block in aligned.get_matching_blocks():
        for k in range(block.size):
            b, a = left_before[block.a + k], left_after[block.b + k]
            take(b, a, ORDER_CONFIG, before_launches[b].config)


def _operator_pairs(
    before: Sequence[str],
    after: Sequence[str],
    before_launches: Mapping[str, KernelLaunch],
    after_launches: Mapping[str, KernelLaunch],
) -> list[tuple[str, str]]:
    """(before, after) kernels launched by the same PyTorch operators, where that set of
    operators belongs to exactly one kernel of ``before`` and one of ``after`` (several kernels
    of one operator are left to the order+config stage); in ``before``'s order."""

    def unique(
        names: Sequence[str], facts: Mapping[str, KernelLaunch]
    ) -> dict[tuple[str, ...], str]:
        seen: dict[tuple[str, ...], list[str]] = {}
        for n in names:
            fact = facts.get(n)
            if fact is not None and fact.operators:
                seen.setdefault(fact.operators, []).append(n)
        return {key: group[0] for key, group in seen.items() if len(group) == 1}

    later = unique(after, after_launches)
    return [(b, later[key]) for key, b in unique(before, before_launches).items() if key in later]


def resolve_forced(
    forced: Sequence[tuple[str, str]],
    before: Sequence[str],
    after: Sequence[str],
    before_version: str = "",
    after_version: str = "",
) -> list[tuple[int, str, str]]:
    """(index in ``forced``, kernel of ``before``, kernel of ``after``) of every ``--match
    OLD=NEW`` that names a kernel of each version: its full name, or the base name of exactly
    one kernel of that version.  A base name shared by several kernels, or a kernel forced
    into two pairs, is a usage error."""
    out: list[tuple[int, str, str]] = []
    used: dict[tuple[str, str], str] = {}
    for j, (old, new) in enumerate(forced):
        b = _resolve(old, before, f"--match {old}={new}", before_version)
        a = _resolve(new, after, f"--match {old}={new}", after_version)
        if b is None or a is None:
            continue
        for side, name in (("before", b), ("after", a)):
            key = (side, name)
            if key in used:
                raise UsageError(
                    f"--match {old}={new}: {shorten(name)} is already paired by --match {used[key]}"
                )
            used[key] = f"{old}={new}"
        out.append((j, b, a))
    return out


def _resolve(text: str, names: Sequence[str], what: str, version: str) -> str | None:
    if text in names:
        return text
    wanted = base_name(text)
    found = [n for n in names if base_name(n) == wanted]
    if len(found) > 1:
        listed = ", ".join(shorten(n) for n in found[:5])
        raise UsageError(
            f"{what}: {text} is the base name of {len(found)} kernels of {version or 'a version'}"
            f" ({listed}{', ...' if len(found) > 5 else ''}); give the full name"
        )
    return found[0] if found else None


def parse_match(text: str) -> tuple[str, str]:
    """``OLD=NEW``: split at the one ``=`` outside brackets (a C++ name may hold one inside)."""
    cut = display.top_level(text, "=")
    old, new = (text[: cut[0]].strip(), text[cut[0] + 1 :].strip()) if len(cut) == 1 else ("", "")
    if not old or not new:
        raise UsageError(f"--match {text!r}: expected OLD=NEW (two kernel names or base names)")
    return old, new


def launch_facts(launches: Any) -> dict[str, KernelLaunch]:
    """Per kernel name, the rank and configuration of its first launch in a profile's
    ``launches`` table (by start time, then launch id; launches without a start time last)."""
    if launches is None or len(launches) == 0:
        return {}
    frame = launches.reset_index(drop=True)
    frame = frame.assign(_row=range(len(frame))).sort_values(
        ["start_ns", "launch_id", "_row"], na_position="last", kind="stable"
    )
    first = frame.drop_duplicates("name", keep="first")
    operators: dict[str, tuple[str, ...]] = {}
    if "operator" in frame.columns and frame["operator"].notna().any():
        named = frame[frame["operator"].notna()]
        for name, ops in named.groupby(named["name"].astype(str), sort=False)["operator"]:
            operators[str(name)] = tuple(sorted({str(o) for o in ops}))
    out: dict[str, KernelLaunch] = {}
    for order, row in enumerate(first.to_dict("records")):
        out[str(row["name"])] = KernelLaunch(
            order=order,
            grid_blocks=_size(row.get("grid_x"), row.get("grid_y"), row.get("grid_z")),
            block_threads=_size(row.get("block_x"), row.get("block_y"), row.get("block_z")),
            operators=operators.get(str(row["name"]), ()),
        )
    return out


def _size(x: Any, y: Any, z: Any) -> int | None:
    """x * y * z with an unknown y or z taken as 1; None when x is unknown or a size is not
    positive."""
    known = [_count(v) for v in (x, y, z)]
    if known[0] is None:
        return None
    sizes = [v if v is not None else 1 for v in known]
    return sizes[0] * sizes[1] * sizes[2] if all(v > 0 for v in sizes) else None


def _count(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number == number and number not in (float("inf"), float("-inf")) else None


def _launch_rank(names: Sequence[str], launches: Mapping[str, KernelLaunch] | None) -> Any:
    """A sort key: launch order where known, then the kernel list's order."""
    position = {n: i for i, n in enumerate(names)}

    def key(name: str) -> tuple[int, int, int]:
        fact = launches.get(name) if launches is not None else None
        return (0, fact.order, position[name]) if fact is not None else (1, position[name], 0)

    return key


def _config_key(fact: KernelLaunch | None, side: str, i: int) -> tuple[Any, ...]:
    """What must agree for the order+config stage; an unknown configuration agrees with none."""
    config = fact.config if fact is not None else None
    return ("config", *config) if config is not None else ("unknown", side, i)


@functools.lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    """:func:`advisor.render.display.demangle`, cached (matching asks for every name often)."""
    return display.demangle(name)


_ANONYMOUS = display.ANONYMOUS


#: qualifiers that may follow a demangled parameter list or precede a name
_QUALIFIERS = frozenset(("const", "volatile", "&", "&&", "noexcept", "static", "__global__"))
_CLONE_SUFFIX = re.compile(r"\s*\[clone [^\]]*\]")


@functools.lru_cache(maxsize=65536)
def base_name(name: str) -> str:
    """A kernel's name without return type, template arguments and parameter list, after
    :func:`demangle`: ``void sgemm_naive<32>(int, float*)`` and ``sgemm_naive(int, float*)``
    both give ``sgemm_naive``; ``ns::k<T>::run(int)`` gives ``ns::k::run``."""
    text = _CLONE_SUFFIX.sub("", demangle(name.strip())).replace(_ANONYMOUS, "{anonymous}")
    out, depth = [], 0
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    tokens = [t for t in "".join(out).split() if t not in _QUALIFIERS]
    return tokens[-1] if tokens else name.strip()


def distinct(names: Sequence[str | None]) -> list[str]:
    """The names in order, None and repeats of the previous name left out."""
    out: list[str] = []
    for n in names:
        if n is not None and (not out or out[-1] != n):
            out.append(n)
    return out
