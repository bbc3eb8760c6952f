"""The memory terms of a MAX/SUM thread: one global or shared access entry -> its cycle cost.

An entry of a kernel description's ``global`` list gives ``count`` (accesses per thread) and one
of: ``threads_per_transaction`` (k), ``coalesced: false`` (k = 1), or an access pattern
(``stride`` / ``offset`` / ``word_bytes``, or ``index``, with optional ``constants`` and
``active``) whose k comes from the coalescing calculator of the GPU's compute capability
(:mod:`advisor.models.access`).  A ``shared`` entry gives ``count`` and ``conflict_degree`` or a
pattern, whose degree comes from the bank calculator.  Costs: seed 001 §3.2.2 (see
:func:`advisor.models.maxsum.global_access_cycles` and ``shared_access_cycles``).

Every function raises ValueError with a message meant to follow the entry's JSON path.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from advisor.errors import UsageError
from advisor.models import maxsum
from advisor.models.access import bank_conflicts, coalesce, default_banks, protocol_for_cc
from advisor.models.access.pattern import WARP_SIZE, AccessPattern, build_pattern, parse_active
from advisor.models.maxsum import CostTerm

PATTERN_KEYS = frozenset({"stride", "offset", "word_bytes", "index", "constants", "active"})
GLOBAL_KEYS = PATTERN_KEYS | {"count", "coalesced", "threads_per_transaction", "description"}
SHARED_KEYS = PATTERN_KEYS | {"count", "conflict_degree", "description"}


def pattern_from_entry(entry: dict[str, Any]) -> AccessPattern:
    """The :class:`AccessPattern` an entry describes (ValueError when a part is invalid)."""
    constants = entry.get("constants", {})
    if not isinstance(constants, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in constants.values()
    ):
        raise ValueError("'constants' must map names to integers")
    active = entry.get("active")
    try:
        return build_pattern(
            word_bytes=_integer(entry.get("word_bytes", 4), "word_bytes"),
            stride_words=None if "stride" not in entry else _integer(entry["stride"], "stride"),
            offset_words=_integer(entry.get("offset", 0), "offset"),
            index=None if entry.get("index") is None else str(entry["index"]),
            constants=constants,
            active=None if active is None else parse_active(str(active)),
        )
    except UsageError as exc:
        raise ValueError(str(exc)) from None


def global_term(
    entry: dict[str, Any], compute_capability: str | None, latency_cycles: float
) -> CostTerm:
    """The cost term of one ``global`` entry: count × (L + k)/k (or L when k = 1)."""
    count = _count(entry)
    if "threads_per_transaction" in entry:
        k = _positive(entry["threads_per_transaction"], "threads_per_transaction")
        label = f"global, k={k:g} threads/transaction (given)"
    elif PATTERN_KEYS & set(entry):
        pattern = pattern_from_entry(entry)
        cc = _need_cc(compute_capability)
        try:
            result = coalesce(
                pattern.byte_addresses(WARP_SIZE), pattern.word_bytes, protocol_for_cc(cc)
            )
        except UsageError as exc:
            raise ValueError(str(exc)) from None
        if result.threads_per_transaction is None:
            raise ValueError("no active thread in the pattern")
        k = result.threads_per_transaction
        label = (
            f"global, {pattern.describe()}: {result.transactions} transactions/warp "
            f"on cc {cc}, k={k:g}"
        )
    elif entry.get("coalesced") is False:
        k, label = 1.0, "global, not coalesced (given)"
    else:
        raise ValueError(
            "give a pattern (stride/offset/word_bytes or index), "
            "threads_per_transaction, or coalesced: false"
        )
    return CostTerm("global", label, count, maxsum.global_access_cycles(k, latency_cycles))


def shared_term(
    entry: dict[str, Any],
    compute_capability: str | None,
    banks: int | None,
    latency_cycles: float,
) -> CostTerm:
    """The cost term of one ``shared`` entry: count × 4 · degree."""
    count = _count(entry)
    if "conflict_degree" in entry:
        degree = _positive(entry["conflict_degree"], "conflict_degree")
        label = f"shared, {degree:g}-way conflict (given)"
    elif PATTERN_KEYS & set(entry):
        pattern = pattern_from_entry(entry)
        try:
            n_banks = banks or default_banks(_need_cc(compute_capability))
            result = bank_conflicts(pattern.byte_addresses(WARP_SIZE), pattern.word_bytes, n_banks)
        except UsageError as exc:
            raise ValueError(str(exc)) from None
        degree = float(max(result.degree, 1))
        label = f"shared, {pattern.describe()}: {n_banks} banks, degree {degree:g}"
    else:
        raise ValueError("give a pattern (stride/offset/word_bytes or index) or conflict_degree")
    return CostTerm("shared", label, count, maxsum.shared_access_cycles(degree, latency_cycles))


def _need_cc(compute_capability: str | None) -> str:
    if compute_capability is None:
        raise ValueError("a pattern needs gpu.compute_capability (or --gpu NAME)")
    return compute_capability


def _count(entry: dict[str, Any]) -> float:
    value = entry.get("count")
    if not _finite(value) or value < 0:
        raise ValueError(f"'count' must be a number >= 0 (accesses per thread), got {value!r}")
    return float(value)


def _positive(value: Any, key: str) -> float:
    if not _finite(value) or not value > 0:
        raise ValueError(f"'{key}' must be a number > 0, got {value!r}")
    return float(value)


def _integer(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"'{key}' must be an integer, got {value!r}")
    return value


def _finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
