"""Gathering a :class:`~advisor.profile.Profile` into the units the criteria read (the contract
is in :mod:`advisor.criteria.engine.inputs`), on columns.

Launches of one kernel whose inputs are identical (the same launch configuration, the same
presence of a duration, no metric row of their own) give identical criterion values: they are one
:class:`~advisor.criteria.engine.inputs.Unit` of ``count`` launches that keeps each launch's place
and duration, so a 1,000,000-launch trace of a few dozen kernels is a few dozen units, and every
mean stays the mean over the launches (MODELS.md §1).  Launches with unified-memory migrations
(:mod:`.migrations`) differ in their fault time and are units of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from advisor import schema
from advisor.criteria.engine import migrations
from advisor.criteria.engine.inputs import KernelData, Members, Unit, Values, _has, _number
from advisor.criteria.engine.unit_columns import RowSource, RowValues
from advisor.profile import Profile

#: the launch configuration values, from the ``launches`` columns
CONFIG = (
    "launch.block_threads",
    "launch.grid_blocks",
    "launch.registers_per_thread",
    "launch.shared_bytes_per_block",
    "launch.um_fault_share",
    "launch.um_migrated_bytes_per_s",
    "launch.duration_ns",
)


def gather(profile: Profile) -> list[KernelData]:
    """One :class:`KernelData` per kernel name found in the profile (sorted by name)."""
    metrics = profile.metrics
    has_launch = metrics["launch_id"].notna().to_numpy()
    summary = metrics[~has_launch] if not has_launch.all() else metrics.iloc[:0]
    rows = _PerLaunch(metrics, has_launch)
    summary_values = _summary_values(summary)
    launches = profile.launches
    names_column = launches["name"]  # the schema's categorical: its codes are the kernels
    codes = names_column.cat.codes.to_numpy()  # the categorical's own (int8 for < 128 names)
    uniq = names_column.cat.categories
    by_name = _positions(codes, uniq)
    config = _config_columns(launches, profile.transfers)
    ids = launches["launch_id"].astype("Int64").to_numpy(dtype=np.int64, na_value=-1)
    own = np.isin(ids, np.fromiter(rows.values, dtype=np.int64, count=len(rows.values)))
    group = _groups(codes, config, own)
    known_config = _known_config(codes, len(uniq), config)
    code_of = {str(u): k for k, u in enumerate(uniq)}
    once = _read_once(ids, codes, code_of, rows.ids_of)
    starts = launches["start_ns"].to_numpy(dtype=float, na_value=np.nan)
    durations = launches["duration_ns"].to_numpy(dtype=float, na_value=np.nan)  # inf kept
    kernels: list[KernelData] = []
    for name in profile.kernel_names():
        at = by_name.get(name, np.array([], dtype=np.int64))
        base = summary_values.get(name, {})
        source = _KernelRows.of(rows, base, config, at, ids) if once else None
        units = _launch_units(at, base, config, ids, group, rows.values, source)
        kernel_ids = rows.ids_of.get(name, [])
        seen = set(ids[at].tolist()) if kernel_ids else set()
        extra = [lid for lid in kernel_ids if lid not in seen]
        for k, lid in enumerate(extra):  # metric rows whose launch is not in ``launches``
            values = {**base, **rows.values.get(lid, {})}
            units.append(Unit(lid, values.get("gpu_time_duration"), values, position=len(at) + k))
        if not units and base:
            units.append(Unit(None, base.get("gpu_time_duration"), dict(base)))
        count, duration = _count_and_duration(
            profile, name, units, summary, starts[at], durations[at]
        )
        names = rows.finite_names(units)
        code = code_of.get(name)
        names |= {k for k in CONFIG if code is not None and known_config[k][code]}
        names |= {k for k in base if any(_has(u.values, {}, k) for u in units)}
        kernels.append(
            KernelData(
                name=name,
                units=tuple(units),
                launches=count,
                duration_ns=duration,
                per_launch_metrics=bool(kernel_ids),
                known=frozenset(names),
            )
        )
    _LISTS.clear()  # the columns (and their lists) do not outlive the analysis
    return kernels


def _launch_units(
    at: np.ndarray,
    base: dict[str, float],
    config: dict[str, np.ndarray],
    ids: np.ndarray,
    group: np.ndarray,
    metric_values: Mapping[int, dict[str, float]],
    source: _KernelRows | None = None,
) -> list[Unit]:
    """The units of a kernel's launches ``at`` (rows of ``launches``), in launch order: a launch
    with metric rows alone, the others one unit per group of identical inputs.  ``source``:
    each launch's metric values are read here only (:func:`_read_once`), and a unit of one
    launch reads its values from there (:class:`_KernelRows`)."""
    if not len(at):
        return []
    g = group[at]
    by_place = _stable_order(g)  # members of each group together, each group in launch order
    ordered = g[by_place]
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(ordered)) + 1, [len(g)]])
    uniq, first, counts = ordered[cuts[:-1]], by_place[cuts[:-1]], np.diff(cuts)
    durations = config["launch.duration_ns"]
    heads: list[tuple[int, Unit]] = []
    for k, (gid, pos, n) in enumerate(
        zip(uniq.tolist(), first.tolist(), counts.tolist(), strict=True)
    ):
        members = by_place[cuts[k] : cuts[k + 1]]
        if gid < 0:  # launches with their own metric rows (group -1): one unit each
            heads += _singles(members, at, base, config, ids, metric_values, source)
            continue
        i = int(at[pos])
        if n == 1:
            heads.append((pos, _single(i, pos, base, config, ids, metric_values, source)))
            continue
        rows_k = at[members]
        durs = durations[rows_k]
        weight = float(durs.sum()) if bool(np.isfinite(durs).all()) else None
        unit = Unit(
            launch_id=int(ids[i]),
            weight_ns=weight,
            values={**base, **_config_at(config, i)},
            count=int(n),
            position=int(pos),
            members=Members(
                positions=members.astype(np.int64), launch_ids=ids[rows_k], durations=durs
            ),
        )
        heads.append((int(pos), unit))
    heads.sort(key=lambda h: h[0])
    return [u for _, u in heads]


def _singles(
    members: np.ndarray,
    at: np.ndarray,
    base: dict[str, float],
    config: dict[str, np.ndarray],
    ids: np.ndarray,
    metric_values: Mapping[int, dict[str, float]],
    source: _KernelRows | None,
) -> list[tuple[int, Unit]]:
    """:func:`_single` of each of the kernel's launches ``members`` (places in ``at``), with
    their places: the ids and durations read for all of them at once (a raw page's ten
    thousand launches are ten thousand units)."""
    if source is None:
        return [(p, _single(at[p], p, base, config, ids, metric_values)) for p in members.tolist()]
    rows = at[members]
    durations = config["launch.duration_ns"][rows]
    finite = np.isfinite(durations).tolist()
    return [
        (p, Unit(lid, d if f else None, RowValues(source, p), position=p))
        for p, lid, d, f in zip(
            members.tolist(), ids[rows].tolist(), durations.tolist(), finite, strict=True
        )
    ]


def _single(
    i: int,
    pos: int,
    base: dict[str, float],
    config: dict[str, np.ndarray],
    ids: np.ndarray,
    metric_values: Mapping[int, dict[str, float]],
    source: _KernelRows | None = None,
) -> Unit:
    """The unit of launches row ``i``, the kernel's launch ``pos`` (``at[pos] == i``)."""
    lid = int(ids[i])
    values: Values
    if source is not None:
        values = RowValues(source, int(pos))
    else:
        values = {**base, **_config_at(config, i), **metric_values.get(lid, {})}
    return Unit(lid, _number(config["launch.duration_ns"][i]), values, position=int(pos))


class _KernelRows(RowSource):
    """The values of a kernel's launches ``at`` (rows of ``launches``) where each launch's
    metric rows are read by its own unit alone (:func:`_read_once`): launch ``p`` of the kernel
    has the values ``{**base, **launch.* of launches row at[p], **its metric rows}``, as a dict
    (:meth:`values`) or, for many launches at once, as columns (:meth:`column`) without any
    dict (:class:`~advisor.criteria.engine.unit_columns.RowValues`)."""

    def __init__(
        self, rows: _PerLaunch, base: dict[str, float], config: dict[str, np.ndarray],
        blocks: np.ndarray,
    ) -> None:  # fmt: skip
        self._rows, self._base, self._config, self._blocks = rows, base, config, blocks

    @classmethod
    def of(
        cls, rows: _PerLaunch, base: dict[str, float], config: dict[str, np.ndarray],
        at: np.ndarray, ids: np.ndarray,
    ) -> _KernelRows | None:  # fmt: skip
        """The rows of launches ``at``; None when none has metric rows of its own (a trace:
        its units are groups of launches, and the config columns are not copied)."""
        blocks = rows.blocks_of(ids[at])
        if not bool((blocks >= 0).any()):
            return None
        return cls(rows, base, {k: c[at] for k, c in config.items()}, blocks)

    def values(self, row: int) -> dict[str, float]:
        """As ``{**base, **_config_at(config, i), **own}`` of the per-launch code."""
        config = {}
        for key, array in self._config.items():
            x = float(array[row])
            if x == x:  # not NaN
                config[key] = x
        block = int(self._blocks[row])
        own = self._rows.block_values(block) if block >= 0 else {}
        return {**self._base, **config, **own}

    def column(self, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The dict's precedence on columns: a metric row over ``launch.*`` over ``base``."""
        value = np.full(len(rows), np.nan)
        present = np.zeros(len(rows), dtype=bool)
        if name in self._base:
            value[:] = self._base[name]
            present[:] = True
        config = self._config.get(name)
        if config is not None:
            x = config[rows]
            known = ~np.isnan(x)
            value[known] = x[known]
            present |= known
        own = self._rows.by_block(name)
        if own is not None:
            blocks = self._blocks[rows]
            has = blocks >= 0
            here = np.zeros(len(rows), dtype=bool)
            here[has] = own[1][blocks[has]]
            value[here] = own[0][blocks[here]]
            present |= here
        return value, present


def _config_at(config: dict[str, np.ndarray], i: int) -> dict[str, float]:
    """The ``launch.*`` values of launches row ``i`` (absent where unknown)."""
    out = {}
    lists = _as_lists(config)
    if lists is None:  # few rows asked for so far: each value converted on its own
        for key, array in config.items():
            x = float(array[i])
            if x == x:  # not NaN
                out[key] = x
        return out
    for key, column in lists.items():
        x = column[i]
        if x == x:  # not NaN
            out[key] = x
    return out


#: the config columns seen last (id -> [columns, rows asked for, the columns as lists or None])
_LISTS: dict[int, list[Any]] = {}
#: the columns become lists once this fraction (1 / it) of their rows has been asked for
_LIST_AFTER = 16


def _as_lists(config: dict[str, np.ndarray]) -> dict[str, list[float]] | None:
    """``config``'s columns as Python floats, converted once (not one element at a time), once
    a sixteenth of the rows has been asked for (a raw Nsight Compute page: a unit per launch);
    None before (a trace: a few units over a million launches, whose columns as lists would
    take 32 bytes per row and column)."""
    hit = _LISTS.get(id(config))
    if hit is None or hit[0] is not config:
        _LISTS.clear()
        hit = _LISTS[id(config)] = [config, 0, None]
    if hit[2] is None:
        hit[1] += 1
        rows = max((len(c) for c in config.values()), default=0)
        if hit[1] * _LIST_AFTER >= rows:
            hit[2] = {k: c.astype(float).tolist() for k, c in config.items()}
    lists: dict[str, list[float]] | None = hit[2]
    return lists


def _read_once(
    ids: np.ndarray, codes: np.ndarray, code_of: dict[str, int], ids_of: dict[str, list[int]]
) -> bool:
    """Whether each launch's metric values are read once, by its own unit, so the unit can take
    them over (their dict freed as the unit's is built, not held with every unit till the end):
    the launches rows' ids are distinct and no kernel's metric rows name another kernel's
    launch.

    Looked up on the sorted ids (a million launches of a trace are not made a dict of Python
    ints: about 100 MiB and 0.3 s)."""
    by_id = np.argsort(ids, kind="stable")
    sorted_ids = ids[by_id]
    if bool((sorted_ids[1:] == sorted_ids[:-1]).any()):
        return False
    for name, lids in ids_of.items():
        code = code_of.get(name, -2)
        wanted = np.asarray(lids, dtype=np.int64)
        at = np.minimum(np.searchsorted(sorted_ids, wanted), max(len(sorted_ids) - 1, 0))
        found = (sorted_ids[at] == wanted) if len(sorted_ids) else np.zeros(len(wanted), bool)
        if bool((codes[by_id[at[found]]] != code).any()):  # a launch of another kernel
            return False
    return True


def _groups(codes: np.ndarray, config: dict[str, np.ndarray], own: np.ndarray) -> np.ndarray:
    """A group number per launches row, equal for rows of one kernel (``codes``: the kernel
    codes, -1 for none) with identical inputs (the launch configuration, whether the duration is
    known and > 0); -1 for rows with metrics.  The parts are combined into one integer key
    (renumbered only when the next part could overflow it) and numbered once at the end."""
    duration = config["launch.duration_ns"]
    flags = np.isfinite(duration).astype(np.int8)
    flags += duration > 0
    columns = [config[k] for k in CONFIG[:-1]]

    def parts() -> Iterator[tuple[np.ndarray, int]]:  # each part numbered as it is combined
        yield codes.astype(np.int64) + 1, int(codes.max(initial=0)) + 2
        for column in [*columns, flags]:
            part, found = schema.factorize(column, use_na_sentinel=False)
            yield part, len(found)
            del part

    key = schema.combined_codes(parts(), len(codes))[0]
    numbers = schema.factorize(key)[0]
    del key
    group = numbers.astype(np.int32 if len(numbers) < 2**31 else np.int64)  # half the memory
    del numbers
    group[own] = -1
    return group


def _config_columns(launches: pd.DataFrame, transfers: pd.DataFrame) -> dict[str, np.ndarray]:
    """The ``launch.*`` values of every launches row as columns (NaN where unknown): the launch
    configuration, the unified-memory migrations during the launch (:mod:`.migrations`) and
    the duration."""

    def column(name: str) -> np.ndarray:  # a copy of its own, changed in place below
        return launches[name].to_numpy(dtype=float, na_value=np.nan, copy=True)

    def product(names: tuple[str, str, str]) -> np.ndarray:
        """x * y * z, a y or z that is not finite taken as 1 (x's NaN stays NaN)."""
        out = column(names[0])
        for name in names[1:]:
            factor = column(name)
            factor[~np.isfinite(factor)] = 1.0
            out *= factor
        return out

    static, dynamic = column("static_shared_bytes"), column("dynamic_shared_bytes")
    neither = ~np.isfinite(static)
    static[neither] = 0.0
    absent = ~np.isfinite(dynamic)
    dynamic[absent] = 0.0
    neither &= absent
    del absent
    static += dynamic
    del dynamic
    static[neither] = np.nan
    out = {
        "launch.block_threads": product(("block_x", "block_y", "block_z")),
        "launch.grid_blocks": product(("grid_x", "grid_y", "grid_z")),
        "launch.registers_per_thread": column("registers_per_thread"),
        "launch.shared_bytes_per_block": static,
    }
    for values in out.values():  # infinite: unknown
        values[np.isinf(values)] = np.nan
    # the durations read in place (read-only) unless one is infinite (a copy is 8 bytes a
    # launch held through the analysis)
    duration = launches["duration_ns"].to_numpy(dtype=float, na_value=np.nan)
    if bool(np.isinf(duration).any()):
        duration = np.where(np.isinf(duration), np.nan, duration)
    out["launch.duration_ns"] = duration
    out.update(migrations.per_launch(launches, transfers))  # finite or NaN already
    return {k: out[k] for k in CONFIG}


def _known_config(
    codes: np.ndarray, n: int, config: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Per ``launch.*`` value, per kernel code (``codes``: the factorised names, ``n`` of them):
    whether any launch of the kernel has it."""
    named = codes >= 0
    every: np.ndarray | None = None  # the kernels with a launch, found once
    out = {}
    for key, column in config.items():
        finite = np.isfinite(column)
        if bool(finite.all()):  # every launch has it (a trace's configuration columns)
            if every is None:
                every = np.bincount(codes[named] if not named.all() else codes, minlength=n) > 0
            out[key] = every.copy()
            continue
        known = np.zeros(n, dtype=bool)
        known[codes[named & finite]] = True
        out[key] = known
    return out


def _stable_order(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` of non-negative or -1 integers, as 16-bit integers
    where they fit (numpy's stable sort is then a radix sort)."""
    if len(values) and values.min() >= -1 and values.max() < 2**15 - 1:
        return np.argsort(values.astype(np.int16), kind="stable")
    return np.argsort(values, kind="stable")


def _positions(codes: np.ndarray, uniq: pd.Index) -> dict[str, np.ndarray]:
    """Kernel name -> positions of its rows (in row order), from the kernel codes."""
    order = _stable_order(codes)
    if len(order) < 2**31:  # positions kept as 32-bit integers: half the memory of a trace's
        order = order.astype(np.int32)  # million launches held through the analysis
    bounds = np.searchsorted(codes[order], np.arange(len(uniq) + 1))
    return {str(u): order[bounds[k] : bounds[k + 1]] for k, u in enumerate(uniq)}


class _PerLaunch:
    """The per-launch metrics rows by launch: ``values`` (launch id -> {metric: value}, the
    first numeric row of each (launch, metric); each dict built when asked for,
    :class:`_Blocks`), ``ids_of`` (kernel -> sorted launch ids) and the names with a finite
    value per launch, computed on columns.  The rows are kept sorted by launch, one block of
    rows per launch (:meth:`block_values`, :meth:`by_block`)."""

    def __init__(self, metrics: pd.DataFrame, has_launch: np.ndarray) -> None:
        value = metrics["value"].to_numpy(dtype=float, na_value=np.nan)
        lid_all = metrics["launch_id"].to_numpy(dtype=float, na_value=np.nan)
        codes, self._names = _codes(metrics["metric"])
        kcodes, kernels = _codes(metrics["kernel"])
        with_id = np.flatnonzero(has_launch)
        self.ids_of = _ids_of(lid_all[with_id], kcodes[with_id], kernels)
        del kcodes
        rows = with_id[~np.isnan(value[with_id])]
        del with_id
        width = max(len(self._names), 1) + 1
        # the first row of each (launch, metric), rows kept in their order, then by launch
        first = _first_of_pairs(lid_all[rows], codes[rows], width)
        if first is not None:  # already by launch (a raw page, melted launch by launch)
            rows = rows[first]
        else:  # the distinct keys' first places (a sort, not a hash table of every row)
            key = lid_all[rows].astype(np.int64) * width + codes[rows]
            rows = rows[np.sort(np.unique(key, return_index=True)[1])]
            del key
            rows = rows[np.argsort(lid_all[rows], kind="stable")]
        del first
        self._lid = lid_all[rows].astype(np.int64)
        self._code = codes[rows]
        self._value = value[rows]
        self._labels: list[Any] = np.asarray(self._names, dtype=object).tolist()
        del value, lid_all, codes
        cuts = np.flatnonzero(np.diff(self._lid)) + 1
        self._starts = np.concatenate([[0], cuts]).astype(np.int64)
        self._ends = np.concatenate([cuts, [len(rows)]]).astype(np.int64)
        if not len(rows):
            self._starts = self._ends = np.zeros(0, dtype=np.int64)
        self._block_ids = self._lid[self._starts]  # each block's launch id, ascending
        self._where = {lid: k for k, lid in enumerate(self._block_ids.tolist())}
        self.values: Mapping[int, dict[str, float]] = _Blocks(self)
        self._by_block: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
        self._code_of = {label: k for k, label in enumerate(self._labels)}

    def block_values(self, block: int) -> dict[str, float]:
        """The values of one launch's rows (block ``block``) as ``{metric: value}`` (a row
        without a metric name under ``None``, as the rows' labels are)."""
        a, b = int(self._starts[block]), int(self._ends[block])
        labels = self._labels
        keys: list[Any] = [labels[c] if c >= 0 else None for c in self._code[a:b].tolist()]
        return dict(zip(keys, self._value[a:b].tolist(), strict=True))

    def by_block(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(value, present) of metric ``name`` per block (launch), or None when no row has
        the name; the values those of :meth:`block_values`."""
        if name not in self._by_block:
            hit = None
            code = self._code_of.get(name)
            if code is not None:
                rows = np.flatnonzero(self._code == code)
                blocks = np.searchsorted(self._starts, rows, side="right") - 1
                value = np.full(len(self._starts), np.nan)
                present = np.zeros(len(self._starts), dtype=bool)
                value[blocks] = self._value[rows]
                present[blocks] = True
                hit = (value, present)
            self._by_block[name] = hit
        return self._by_block[name]

    def blocks_of(self, lids: np.ndarray) -> np.ndarray:
        """Per launch id, its block (-1: the launch has no metric rows)."""
        n = len(self._block_ids)
        if not n:
            return np.full(len(lids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._block_ids, lids), n - 1)
        return np.where(self._block_ids[at] == lids, at, -1).astype(np.int64)

    def finite_names(self, units: Sequence[Unit]) -> set[str]:
        """Metric names with a finite value in the per-launch rows of ``units``."""
        blocks = np.array(
            [self._where[u.launch_id] for u in units if u.launch_id in self._where], dtype=np.int64
        )
        if not len(blocks):
            return set()
        # the rows of every block, block after block (the aranges of the blocks, concatenated)
        lengths = self._ends[blocks] - self._starts[blocks]
        shift = self._starts[blocks] - (np.cumsum(lengths) - lengths)
        picked = np.repeat(shift, lengths) + np.arange(int(lengths.sum()))
        picked = picked[np.isfinite(self._value[picked]) & (self._code[picked] >= 0)]
        return {str(self._names[c]) for c in np.unique(self._code[picked])}


def _codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """The column's codes (-1 where missing) and the names they stand for: a categorical's own
    (the schema's metrics ``kernel`` and ``metric``, no new array of 8 bytes a row), else
    :func:`pandas.factorize`'s."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories
    codes, names = schema.factorize(column, use_na_sentinel=True)
    return codes, pd.Index(names)


def _first_of_pairs(lid: np.ndarray, code: np.ndarray, width: int) -> np.ndarray | None:
    """Per row, whether it is the first of its (launch, metric) pair, for rows with launch ids
    ``lid`` (floats, none missing) already by launch (ids never decreasing) and metric codes
    ``code`` (-1 .. ``width`` - 2); None when the ids decrease somewhere or a table of launches
    x metrics would be much larger than the rows (the caller then sorts them).  The pairs are
    placed in that table rather than sorted: a raw page, melted launch by launch, is by launch
    already."""
    n = len(lid)
    if n and not bool((lid[1:] >= lid[:-1]).all()):
        return None
    launches = int((lid[1:] != lid[:-1]).sum()) + 1 if n else 0
    size = launches * width
    if size > 4 * n + 1024 or size >= 2**31:
        return None
    slot = np.zeros(n, dtype=np.int32)  # each row's place in the table
    np.cumsum(lid[1:] != lid[:-1], out=slot[1:])
    slot *= width
    slot += code
    slot += 1
    place = np.arange(n, dtype=np.int32)
    first = np.full(size, n, dtype=np.int32)
    np.minimum.at(first, slot, place)
    return first[slot] == place


def _ids_of(lid: np.ndarray, kcode: np.ndarray, kernels: pd.Index) -> dict[str, list[int]]:
    """Kernel name -> the distinct launch ids of its rows, ascending (``lid``: each row's
    launch id, ``kcode``: its kernel's code, -1 for none); the (launch, kernel) pairs found by
    sorting one integer key per row, once a row repeating the pair of the row before it is left
    out (the rows of a launch usually follow each other)."""
    if len(lid) > 1:
        new = np.empty(len(lid), dtype=bool)
        new[0] = True
        np.not_equal(lid[1:], lid[:-1], out=new[1:])
        new[1:] |= kcode[1:] != kcode[:-1]
        lid, kcode = lid[new], kcode[new]
    lid = lid.astype(np.int64)
    width = len(kernels) + 1
    pairs = np.unique(lid * width + (kcode.astype(np.int64) + 1))  # by launch, then kernel
    launch, kernel = pairs // width, pairs % width - 1
    named = kernel >= 0
    launch, kernel = launch[named], kernel[named]
    by_kernel = np.argsort(kernel, kind="stable")  # each kernel's launches stay ascending
    cuts = np.flatnonzero(np.diff(kernel[by_kernel])) + 1
    return {
        str(kernels[int(kernel[part[0]])]): launch[part].tolist()
        for part in np.split(by_kernel, cuts)
        if len(part)
    }


class _Blocks(Mapping[int, dict[str, float]]):
    """Launch id -> that launch's metric values, each dict built when asked for
    (:meth:`_PerLaunch.block_values`), in ascending launch id."""

    def __init__(self, rows: _PerLaunch) -> None:
        self._rows = rows

    def __getitem__(self, lid: int) -> dict[str, float]:
        return self._rows.block_values(self._rows._where[lid])

    def __contains__(self, lid: object) -> bool:
        return lid in self._rows._where

    def __iter__(self) -> Iterator[int]:
        return iter(self._rows._where)

    def __len__(self) -> int:
        return len(self._rows._where)


def _summary_values(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    numeric = frame[frame["value"].notna() & frame["kernel"].notna()]
    for kernel, metric, value in zip(
        numeric["kernel"], numeric["metric"], numeric["value"], strict=True
    ):
        out.setdefault(str(kernel), {}).setdefault(str(metric), float(value))
    return out


def _count_and_duration(
    profile: Profile,
    name: str,
    units: Sequence[Unit],
    summary: pd.DataFrame,
    starts: np.ndarray,
    durations: np.ndarray,
) -> tuple[int, float | None]:
    """The kernel's launches and total time, from its launches rows' ``starts`` and
    ``durations`` when it has any, else from the summaries."""
    timed = ~np.isnan(starts)
    if 0 < timed.sum() < len(starts):  # a timeline merged with replayed (ncu) launches: trust it
        durations = durations[timed]
    if len(durations):
        known = durations[~np.isnan(durations)]
        return len(durations), float(known.sum()) if len(known) else None
    ks = profile.kernel_summary[profile.kernel_summary["name"] == name]
    if len(ks):
        calls = int(ks["calls"].fillna(0).sum())
        total = ks["total_ns"].dropna()
        return calls, float(total.sum()) if len(total) else None
    if units and units[0].launch_id is not None:
        weights = [u.weight_ns for u in units if u.weight_ns is not None]
        return len(units), float(sum(weights)) if weights else None
    rows_k = summary[summary["kernel"] == name]
    calls = int(rows_k["invocations"].dropna().max()) if rows_k["invocations"].notna().any() else 0
    avg = units[0].values.get("gpu_time_duration") if units else None
    return calls, (avg * calls if avg is not None and calls else None)
