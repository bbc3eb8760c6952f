"""The sequences of a GPU timeline merged and measured on arrays (:mod:`advisor.models.timeline`).

:func:`merged_sequences` computes what the operation-by-operation path of
:func:`advisor.models.timeline.find_sequences` computes, for every sequence at once: the merge of
sequences of one device whose spans overlap, each merged sequence's span, operation counts,
distinct kernel names, grid blocks and the busy time of each stage (:func:`~advisor.models.
timeline.busy_ns`: the union of the intervals).  The values are the same floats, not merely
close ones: minima, maxima and comparisons are exact, each interval's end is the same
``start + duration``, and the busy time adds the same run lengths in the same order (one after
the other, as :func:`~advisor.models.timeline.busy_ns` does).

Precondition (checked by the caller): every time is finite and no duration is negative, so a
sequence's end is never before its start.  Under it, "starts before the merged group's end" is
"starts before the latest end of the device's earlier sequences", a running maximum.
"""

from __future__ import annotations

import functools
import itertools
import operator
from dataclasses import dataclass

import numpy as np
import pandas as pd

_STAGES = 3  # HtoD, kernel, DtoH: the operation ranks 0, 1, 2


@dataclass(frozen=True)
class Merged:
    """One entry per merged sequence, in start-time order (then device)."""

    place: list[int]  # device index
    streams: list[tuple[int | None, ...]]
    names: list[list[int]]  # kernel name indices, first-seen order
    grid_blocks: list[int | None]
    start_ns: list[float]
    end_ns: list[float]
    busy_ns: list[tuple[float, float, float]]  # HtoD, kernel, DtoH
    counts: list[tuple[int, int, int]]  # HtoD, kernel, DtoH operations


def merged_sequences(
    rank: np.ndarray,
    place: np.ndarray,
    stream: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    name: np.ndarray,
    blocks: np.ndarray,
    heads: np.ndarray,
    ends: np.ndarray,
) -> Merged:
    """Merge and measure the sequences ``heads[i]:ends[i]`` of the operation arrays (each a
    run of HtoD copies, a run of kernels and a run of DtoH copies of one stream, in the
    (device, stream, time) order of the arrays; ``heads`` in that order too)."""
    lengths = ends - heads
    offsets = _offsets(lengths)
    member = _ranges(heads, lengths)
    raw_start = np.minimum.reduceat(start[member], offsets)
    raw_end = np.maximum.reduceat(end[member], offsets)
    raw_place = place[heads]
    raw_stream = np.where(stream[heads] < 0, -1, stream[heads])
    # merge order: device, start, stream (stable: ties keep the (device, stream, time) order)
    m_order = np.lexsort((raw_stream, raw_start, raw_place))
    m_place, m_start, m_end = raw_place[m_order], raw_start[m_order], raw_end[m_order]
    new = np.ones(len(m_order), dtype=bool)
    new[1:] = (m_place[1:] != m_place[:-1]) | ~(m_start[1:] < _device_reach(m_place, m_end)[:-1])
    group = np.cumsum(new) - 1
    group_heads = np.flatnonzero(new)
    n_groups = len(group_heads)
    g_start = np.minimum.reduceat(m_start, group_heads)
    g_end = np.maximum.reduceat(m_end, group_heads)
    g_place = m_place[group_heads]

    m_lengths = lengths[m_order]
    ops = _ranges(heads[m_order], m_lengths)  # the operations, sequences in merge order
    op_group = np.repeat(group, m_lengths)
    op_rank = rank[ops]
    counts = np.bincount(op_group * _STAGES + op_rank, minlength=_STAGES * n_groups)
    busy = _busy(op_group * _STAGES + op_rank, start[ops], end[ops], _STAGES * n_groups)
    is_kernel = op_rank == 1
    names = _first_seen(op_group[is_kernel], name[ops][is_kernel], n_groups)
    blocks_of = _blocks(blocks[ops][is_kernel], _kernel_counts(is_kernel, m_lengths))
    streams_of = [None if s < 0 else int(s) for s in raw_stream[m_order].tolist()]

    stream_sets: list[tuple[int | None, ...]] = []
    grid: list[int | None] = []
    bounds = [*group_heads.tolist(), len(m_order)]
    for a, b in itertools.pairwise(bounds):
        stream_sets.append(tuple(sorted(set(streams_of[a:b]), key=_none_first)))
        known = [v for v in blocks_of[a:b] if v is not None]
        grid.append(sum(known) if known else None)
    final = np.lexsort((g_place, g_start)).tolist()  # by start, then device; stable
    busy3 = busy.reshape(n_groups, _STAGES).tolist()
    counts3 = counts.reshape(n_groups, _STAGES).tolist()
    starts, ends_ns, places = g_start.tolist(), g_end.tolist(), g_place.tolist()
    return Merged(
        place=[places[g] for g in final],
        streams=[stream_sets[g] for g in final],
        names=[names[g] for g in final],
        grid_blocks=[grid[g] for g in final],
        start_ns=[starts[g] for g in final],
        end_ns=[ends_ns[g] for g in final],
        busy_ns=[tuple(busy3[g]) for g in final],
        counts=[tuple(counts3[g]) for g in final],
    )


def lexsort(keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """``np.lexsort(keys)`` (the last key first, stable) where the last key is a time that
    rarely ties: one stable sort of it (fast on times that are nearly in order), the other keys
    compared only among the operations that tie."""
    primary = keys[-1]
    order = np.argsort(primary, kind="stable")
    if len(keys) == 1 or len(order) < 2:
        return order
    sorted_primary = primary[order]
    tie = sorted_primary[1:] == sorted_primary[:-1]
    if not tie.any():
        return order
    member = np.zeros(len(order), dtype=bool)
    member[1:] |= tie
    member[:-1] |= tie
    at = np.flatnonzero(member)
    run = np.cumsum(np.concatenate([[True], ~tie]))[at]  # equal primary values, one run
    tied = order[at]
    order[at] = tied[np.lexsort((*(k[tied] for k in keys[:-1]), run))]
    return order


def group_order(place: np.ndarray, stream: np.ndarray) -> np.ndarray:
    """``np.lexsort((stream, place))`` for a few devices and streams: one stable sort of a
    combined key (a radix sort when it fits 16 bits)."""
    if len(place) == 0:
        return np.arange(0, dtype=np.int64)
    codes, values = pd.factorize(stream, sort=True)
    key = place.astype(np.int64) * len(values) + codes
    if int(key.max()) < 2**15:
        key = key.astype(np.int16)
    return np.argsort(key, kind="stable")


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """Where each of consecutive blocks of ``lengths`` starts."""
    out = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=out[1:])
    return out


def _ranges(heads: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``heads[i], heads[i] + 1, ..., heads[i] + lengths[i] - 1`` for each i, concatenated."""
    total = int(lengths.sum())
    return np.repeat(heads - _offsets(lengths), lengths) + np.arange(total, dtype=np.int64)


def _device_reach(place: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The latest end so far among the sequences of the same device (``place`` grouped)."""
    reach = np.empty_like(end)
    bounds = [*np.flatnonzero(np.diff(place) != 0).tolist(), len(place) - 1]
    a = 0
    for last in bounds:
        reach[a : last + 1] = np.maximum.accumulate(end[a : last + 1])
        a = last + 1
    return reach


def _busy(segment: np.ndarray, start: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:
    """:func:`~advisor.models.timeline.busy_ns` of each segment's intervals (every segment
    0 .. n-1 non-empty): sorted by (start, end), cut into runs where a start lies beyond the
    latest end so far, the run lengths added one after the other."""
    order = np.lexsort((end, start, segment))
    seg, s, e = segment[order], start[order], end[order]
    head = np.ones(len(seg), dtype=bool)
    head[1:] = seg[1:] != seg[:-1]
    reach = pd.Series(e).groupby(seg, sort=False).cummax().to_numpy(dtype=float)
    run = head.copy()
    run[1:] |= s[1:] > reach[:-1]
    run_heads = np.flatnonzero(run)
    run_last = np.concatenate([run_heads[1:] - 1, [len(seg) - 1]])
    lengths = (reach[run_last] - s[run_heads]).tolist()
    cuts = [*np.flatnonzero(head[run_heads]).tolist(), len(run_heads)]
    add = functools.partial(functools.reduce, operator.add)
    totals = [add(lengths[a:b], 0.0) for a, b in itertools.pairwise(cuts)]
    assert len(totals) == n
    return np.array(totals, dtype=float)


def _kernel_counts(is_kernel: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Kernels per sequence (``lengths`` operations each, consecutive in ``is_kernel``)."""
    return np.add.reduceat(is_kernel.astype(np.int64), _offsets(lengths))


def _blocks(kernel_blocks: np.ndarray, per_sequence: np.ndarray) -> list[int | None]:
    """Blocks of each sequence's largest launch whose size is known, None if none is."""
    largest = np.fmax.reduceat(kernel_blocks, _offsets(per_sequence))
    return [None if v != v else int(v) for v in largest.tolist()]  # v != v: NaN


def _first_seen(group: np.ndarray, name: np.ndarray, n_groups: int) -> list[list[int]]:
    """Distinct names per group in first-seen order (``group`` non-decreasing)."""
    out: list[list[int]] = [[] for _ in range(n_groups)]
    if len(name) == 0:
        return out
    key = group.astype(np.int64) * (int(name.max()) + 1) + name
    _, first = np.unique(key, return_index=True)
    first.sort()
    for g, n in zip(group[first].tolist(), name[first].tolist(), strict=True):
        out[g].append(n)
    return out


def _none_first(stream: int | None) -> float:
    return -np.inf if stream is None else float(stream)
