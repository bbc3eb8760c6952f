"""Access-pattern calculators: global-memory coalescing and shared-memory bank conflicts.

Sources: seed 003 §III (the GTX 280 half-warp protocol and the shared-memory broadcast procedure),
seed 001 §3.2.2 (coalesced reads, bank contention), ``docs/MODELS.md`` §5.

Global memory, one request = one warp instruction:

* cc 1.2 / 1.3 (``halfwarp-segments``): each half-warp is served on its own.  Find the segment
  holding the address of the lowest-numbered active thread (32 B for 1-byte words, 64 B for
  2-byte, 128 B for 4/8/16-byte); shrink 128 -> 64 -> 32 B while only the lower or upper half is
  used; issue it; mark the threads it served; repeat (seed 003 §III, steps 1-3).
* cc 2.x / 3.x (``l1-lines-128``): the full warp; one transaction per distinct 128 B line
  (global loads cached in L1).
* cc >= 5.0 (``sectors-32``): the full warp; one transaction per distinct 32 B sector.
  **Decision** (MODELS.md §5 says only "newer devices: 32 B sectors, 128 B lines"): Maxwell and
  Pascal are counted with 32 B sectors like Volta+, since their global loads are served at 32 B
  granularity when not cached in L1.
* cc 1.0 / 1.1 are not modelled: the seeds describe only the 1.2/1.3 protocol.

Shared memory: 16 banks per half-warp (cc 1.x) or 32 banks per warp (cc >= 2.0), 4-byte bank
words.  The conflict degree of a request group is the largest number of distinct 4-byte words
asked of one bank; threads asking for the same word share it (broadcast), MODELS.md §5.  For
cc 1.x the literal procedure of seed 003 §III is also counted (``passes_cc1``): per step one
broadcast word (that of the lowest-numbered remaining thread) plus one address per other bank;
it is at least the degree and exceeds it when several words are each shared by several threads.

Zero-denominator policy: with no active thread there is no request; efficiencies and
threads-per-transaction are then None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.errors import UsageError
from advisor.models.access.pattern import WARP_SIZE

HALF_WARP = 16
"""cc 1.x serves global and shared requests per half-warp (seed 003 §III)."""

CC1_SEGMENT_BYTES = {1: 32, 2: 64, 4: 128, 8: 128, 16: 128}
"""Segment size by word size on cc 1.2/1.3 (seed 003 §III, step 1)."""

CC1_MIN_SEGMENT_BYTES = 32
"""The protocol never shrinks a transaction below 32 B (seed 003 §III, step 1b)."""

L1_LINE_BYTES = 128
"""Fermi/Kepler L1 cache line: one global transaction per line touched."""

SECTOR_BYTES = 32
"""Maxwell+ memory sector: one global transaction per sector touched."""

BANK_WORD_BYTES = 4
"""Bank width on every architecture the seeds cover (4-byte words)."""

PROTOCOLS = ("halfwarp-segments", "l1-lines-128", "sectors-32")

_Serve = Callable[[list[tuple[int, int | None]], int], tuple["Transaction", ...]]


@dataclass(frozen=True)
class Transaction:
    """One global-memory transaction: ``size_bytes`` from ``start_byte``, serving ``threads``."""

    start_byte: int
    size_bytes: int
    threads: tuple[int, ...]


@dataclass(frozen=True)
class CoalescingResult:
    """Transactions of one access by ``threads`` threads, grouped by request group."""

    protocol: str
    word_bytes: int
    threads: int
    active_threads: int
    group_threads: int
    groups: tuple[tuple[Transaction, ...], ...]

    @property
    def transactions(self) -> int:
        return sum(len(g) for g in self.groups)

    @property
    def bytes_moved(self) -> int:
        return sum(t.size_bytes for g in self.groups for t in g)

    @property
    def bytes_requested(self) -> int:
        """Bytes the active threads ask for (a word each; shared words count once per thread)."""
        return self.active_threads * self.word_bytes

    @property
    def efficiency_frac(self) -> float | None:
        """Requested / moved (MODELS.md Decision 1 direction); may exceed 1 with shared words."""
        moved = self.bytes_moved
        return self.bytes_requested / moved if moved else None

    @property
    def requests(self) -> int:
        """Warp-level requests: one per warp (partial warps count as one)."""
        return -(-self.threads // WARP_SIZE)

    @property
    def transactions_per_request(self) -> float:
        return self.transactions / self.requests

    @property
    def threads_per_transaction(self) -> float | None:
        """k of seed 001 §3.2.2: active threads served per transaction, on average."""
        count = self.transactions
        return self.active_threads / count if count else None


def protocol_for_cc(compute_capability: str) -> str:
    """The global coalescing protocol of a compute capability ("1.3", "7.0", ...)."""
    major, minor = parse_cc(compute_capability)
    if major == 1:
        if minor < 2:
            raise UsageError(
                f"compute capability {compute_capability}: the cc 1.0/1.1 coalescing rules are "
                "not modelled (the seeds describe only cc 1.2/1.3); use --cc 1.3"
            )
        return "halfwarp-segments"
    return "l1-lines-128" if major in (2, 3) else "sectors-32"


def parse_cc(text: str) -> tuple[int, int]:
    """``"7.5"`` -> (7, 5); UsageError when it is not MAJOR.MINOR."""
    major, _, minor = str(text).strip().partition(".")
    try:
        value = (int(major), int(minor or "0"))
    except ValueError:
        raise UsageError(
            f"compute capability {text!r}: give MAJOR.MINOR, e.g. 1.3 or 7.0"
        ) from None
    if value[0] < 1:
        raise UsageError(f"compute capability {text!r}: must be 1.0 or higher")
    return value


def coalesce(addresses: Sequence[int | None], word_bytes: int, protocol: str) -> CoalescingResult:
    """Transactions for per-thread byte ``addresses`` (None: inactive thread) by ``protocol``."""
    serve: _Serve
    if protocol == "halfwarp-segments":
        group, serve = HALF_WARP, _cc1_group
    elif protocol == "l1-lines-128":
        group, serve = WARP_SIZE, _unit_group(L1_LINE_BYTES)
    elif protocol == "sectors-32":
        group, serve = WARP_SIZE, _unit_group(SECTOR_BYTES)
    else:
        raise UsageError(f"protocol {protocol!r}: choose one of {', '.join(PROTOCOLS)}")
    groups = tuple(
        serve(
            [(tid, addresses[tid]) for tid in range(start, min(start + group, len(addresses)))],
            word_bytes,
        )
        for start in range(0, len(addresses), group)
    )
    return CoalescingResult(
        protocol=protocol,
        word_bytes=word_bytes,
        threads=len(addresses),
        active_threads=sum(a is not None for a in addresses),
        group_threads=group,
        groups=groups,
    )


def _cc1_group(threads: list[tuple[int, int | None]], word_bytes: int) -> tuple[Transaction, ...]:
    """The cc 1.2/1.3 protocol for one half-warp (seed 003 §III, steps 1-3)."""
    segment = CC1_SEGMENT_BYTES[word_bytes]
    remaining = {tid: addr for tid, addr in threads if addr is not None}
    issued: list[Transaction] = []
    while remaining:
        lowest = min(remaining)
        start = remaining[lowest] // segment * segment
        served = sorted(t for t, a in remaining.items() if start <= a < start + segment)
        size = segment
        while size > CC1_MIN_SEGMENT_BYTES:
            half = size // 2
            lower = any(remaining[t] < start + half for t in served)
            upper = any(remaining[t] + word_bytes > start + half for t in served)
            if lower and upper:
                break
            if upper:
                start += half
            size = half
        issued.append(Transaction(start, size, tuple(served)))
        for tid in served:
            del remaining[tid]
    return tuple(issued)


def _unit_group(unit: int) -> _Serve:
    """A serve function counting distinct ``unit``-byte blocks touched by one warp."""

    def serve(threads: list[tuple[int, int | None]], word_bytes: int) -> tuple[Transaction, ...]:
        by_unit: dict[int, list[int]] = {}
        for tid, addr in threads:
            if addr is None:
                continue
            for block in range(addr // unit, (addr + word_bytes - 1) // unit + 1):
                by_unit.setdefault(block, []).append(tid)
        return tuple(Transaction(b * unit, unit, tuple(by_unit[b])) for b in sorted(by_unit))

    return serve


@dataclass(frozen=True)
class BankConflictResult:
    """Shared-memory bank conflicts of one access by ``threads`` threads."""

    banks: int
    word_bytes: int
    threads: int
    active_threads: int
    group_threads: int
    group_degrees: tuple[int, ...]
    group_passes_cc1: tuple[int, ...] | None

    @property
    def degree(self) -> int:
        """Conflict degree: max over groups of the max distinct words asked of one bank."""
        return max(self.group_degrees, default=0)

    @property
    def passes(self) -> int:
        """Serialized passes over all groups (the sum of the group degrees)."""
        return sum(self.group_degrees)

    @property
    def replays(self) -> int:
        """Extra passes a conflict-free access would not need: sum of (degree - 1) per group."""
        return sum(d - 1 for d in self.group_degrees if d > 0)

    @property
    def efficiency_frac(self) -> float | None:
        """Ideal passes (one per active group) / actual passes, like nvprof shared_efficiency."""
        ideal = sum(1 for d in self.group_degrees if d > 0)
        return ideal / self.passes if self.passes else None


def bank_conflicts(
    addresses: Sequence[int | None], word_bytes: int, banks: int, *, cc1_procedure: bool = False
) -> BankConflictResult:
    """Conflict degree of per-thread byte ``addresses`` over ``banks`` banks of 4-byte words.

    Request groups are half-warps for 16 banks and warps otherwise (MODELS.md §5).  A word wider
    than 4 bytes occupies consecutive banks; a 1- or 2-byte word lies in its 4-byte bank word.
    ``cc1_procedure`` also counts the seed 003 §III step procedure per group.
    """
    if banks < 1:
        raise UsageError(f"--banks {banks}: must be >= 1")
    group = HALF_WARP if banks == HALF_WARP else WARP_SIZE
    degrees: list[int] = []
    passes: list[int] = []
    for start in range(0, len(addresses), group):
        words = {
            tid: _bank_words(addr, word_bytes)
            for tid in range(start, min(start + group, len(addresses)))
            if (addr := addresses[tid]) is not None
        }
        degrees.append(_degree(words, banks))
        if cc1_procedure:
            passes.append(_cc1_passes(words, banks))
    return BankConflictResult(
        banks=banks,
        word_bytes=word_bytes,
        threads=len(addresses),
        active_threads=sum(a is not None for a in addresses),
        group_threads=group,
        group_degrees=tuple(degrees),
        group_passes_cc1=tuple(passes) if cc1_procedure else None,
    )


def _bank_words(addr: int, word_bytes: int) -> tuple[int, ...]:
    first = addr // BANK_WORD_BYTES
    last = (addr + word_bytes - 1) // BANK_WORD_BYTES
    return tuple(range(first, last + 1))


def _degree(words: dict[int, tuple[int, ...]], banks: int) -> int:
    per_bank: dict[int, set[int]] = {}
    for touched in words.values():
        for word in touched:
            per_bank.setdefault(word % banks, set()).add(word)
    return max((len(s) for s in per_bank.values()), default=0)


def _cc1_passes(words: dict[int, tuple[int, ...]], banks: int) -> int:
    """Steps of the seed 003 §III procedure: one broadcast word plus one address per bank."""
    pending = [(tid, word) for tid in sorted(words) for word in words[tid]]
    steps = 0
    while pending:
        steps += 1
        broadcast = pending[0][1]
        taken_banks = {broadcast % banks}
        left: list[tuple[int, int]] = []
        for tid, word in pending:
            if word == broadcast:
                continue
            bank = word % banks
            if bank in taken_banks:
                left.append((tid, word))
            else:
                taken_banks.add(bank)
        pending = left
    return steps


def default_banks(compute_capability: str) -> int:
    """16 banks on cc 1.x, 32 from cc 2.0 on (FORMATS.md §5)."""
    major, _ = parse_cc(compute_capability)
    return HALF_WARP if major == 1 else WARP_SIZE
