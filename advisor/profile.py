"""The normalised profile: one :class:`Profile` per input file, and :func:`merge` for several
inputs of one application run (say a gpu-trace, an api-trace and a metrics export).

A Profile holds the frames named in :mod:`advisor.schema` plus its provenance.  Its constructor
validates every frame, so a Profile that exists is well-formed: text that UTF-8 cannot write is
escaped and rows with infinite, negative or (on a timeline) missing times are dropped with a
note naming the row (:mod:`advisor.values`); a file none of whose kernel rows is usable is
refused (:class:`~advisor.errors.NoKernelData`, exit 3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from advisor import schema, values
from advisor.errors import NoKernelData
from advisor.values import printable as printable  # for the readers (parsers import profile)


@dataclass(frozen=True)
class Provenance:
    """Where a profile came from."""

    path: str
    format: str  # registry key of the parser, e.g. "nvprof-csv"
    profiler: str  # nvprof | ncu | nsys | derived
    modes: tuple[
        str, ...
    ] = ()  # tables found, e.g. ("gpu-trace",) or ("summary", "unified-memory")
    profiler_version: str | None = None
    notes: tuple[str, ...] = ()  # assumptions taken while reading (e.g. an assumed time unit)

    def __post_init__(self) -> None:
        """Text every writer can write (a path that is not UTF-8: ``\\udcff`` escapes)."""
        object.__setattr__(self, "path", values.printable(self.path))
        object.__setattr__(self, "notes", tuple(values.printable(n) for n in self.notes))
        if self.profiler_version is not None:
            version = values.printable(self.profiler_version)
            object.__setattr__(self, "profiler_version", version)


@dataclass
class Profile:
    """Normalised frames of one input (or of several merged inputs of one run)."""

    provenance: tuple[Provenance, ...]
    launches: pd.DataFrame = field(default_factory=lambda: schema.empty("launches"))
    kernel_summary: pd.DataFrame = field(default_factory=lambda: schema.empty("kernel_summary"))
    transfers: pd.DataFrame = field(default_factory=lambda: schema.empty("transfers"))
    transfer_summary: pd.DataFrame = field(default_factory=lambda: schema.empty("transfer_summary"))
    api_calls: pd.DataFrame = field(default_factory=lambda: schema.empty("api_calls"))
    api_summary: pd.DataFrame = field(default_factory=lambda: schema.empty("api_summary"))
    metrics: pd.DataFrame = field(default_factory=lambda: schema.empty("metrics"))
    rules: pd.DataFrame = field(default_factory=lambda: schema.empty("rules"))
    devices: pd.DataFrame = field(default_factory=lambda: schema.empty("devices"))
    #: launch id -> where that launch's per-instruction data can be read on demand (a
    #: :class:`parsers.ncu.source_counters.SourceRef`; Nsight Compute reports with the
    #: SourceCounters section only; docs/locations.md)
    instruction_sources: dict[int, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for table in schema.TABLES:
            frame = values.printable_frame(getattr(self, table))
            setattr(self, table, schema.validate(table, frame))
        self._drop_invalid_rows()
        ids = self.launches["launch_id"]
        if ids.isna().any():
            self.launches["launch_id"] = pd.array(range(len(ids)), dtype="Int64")
        elif not _unique(ids):
            raise schema.SchemaError("launches.launch_id must be unique")

    def _drop_invalid_rows(self) -> None:
        """Rows with invalid times or sizes dropped, with notes (:mod:`advisor.values`); a
        profile left without kernel data by that is refused."""
        path = self.path or "profile"
        had_kernels = self.has_kernel_data()
        frames, notes = values.checked_frames(self.frames, path)
        if not notes:
            return
        for table, frame in frames.items():
            setattr(self, table, frame)
        if had_kernels and not self.has_kernel_data():
            first_drop = next(n for n in notes if values.is_drop_note(n))
            raise NoKernelData(
                path,
                "no usable kernel data: every kernel row has an infinite, negative or "
                f"implausible value ({first_drop.removeprefix(path + ': ')})",
            )
        known = {n for p in self.provenance for n in p.notes}  # a merge checks rows again
        notes = [n for n in dict.fromkeys(notes) if n not in known]
        if self.provenance and notes:
            first = self.provenance[0]
            self.provenance = (replace(first, notes=(*first.notes, *notes)), *self.provenance[1:])

    @classmethod
    def of(cls, provenance: tuple[Provenance, ...], frames: dict[str, pd.DataFrame]) -> Profile:
        """A profile of ``frames`` (table name -> frame, :data:`advisor.schema.TABLES`), the
        readers' way to build one: the frames fill the tables, nothing else."""
        unknown = set(frames) - set(schema.TABLES)
        if unknown:
            raise ValueError(f"not profile tables: {sorted(unknown)}")
        tables: dict[str, Any] = dict(frames)
        return cls(provenance=provenance, **tables)

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        return {t: getattr(self, t) for t in schema.TABLES}

    @property
    def path(self) -> str:
        return " + ".join(p.path for p in self.provenance)

    def kernel_names(self) -> list[str]:
        """Distinct kernel names found in launches, kernel summaries, metrics and rules, sorted.

        When one table alone names kernels and its column is in the schema's form (a
        categorical whose categories are texts, sorted), they are its categories that rows
        use, read off without hashing or sorting them again (a trace of 900,000 distinct names,
        benchmarks/bench_scale.py ``nsys-distinct-names-csv``: 0.8 -> 0.12 s)."""
        columns = (
            self.launches["name"],
            self.kernel_summary["name"],
            self.metrics["kernel"],
            self.rules["kernel"],
        )
        held = [c for c in columns if len(c)]
        if len(held) == 1:
            used = _used_sorted_texts(held[0])
            if used is not None:
                return used
        names: set[str] = set()
        for column in held:
            names.update(column.dropna().unique())
        return sorted(names)

    def has_kernel_data(self) -> bool:
        return bool(len(self.launches) or len(self.kernel_summary) or len(self.metrics))


def _used_sorted_texts(column: pd.Series) -> list[str] | None:
    """The categories of a categorical column of texts that its rows use, when they are sorted
    (then in the order ``sorted`` gives them); None for any other column."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return None
    words = column.cat.categories
    if not schema.sorted_texts(words):
        return None
    codes = column.cat.codes.to_numpy()
    used = np.bincount(codes[codes >= 0], minlength=len(words)) > 0
    return list(words[used])


def _unique(ids: pd.Series) -> bool:
    """No id twice (the readers number launches in order: a strictly increasing column is
    checked without hashing)."""
    values = ids.to_numpy(dtype=np.int64)
    return bool((np.diff(values) > 0).all()) or not ids.duplicated().any()


def merge(profiles: Sequence[Profile]) -> Profile:
    """Combine several profiles of one application run into one.

    Frames are concatenated in input order; launch ids are renumbered so they stay unique
    (metrics and rules follow their launches); devices are de-duplicated on (device_id, name).
    """
    if not profiles:
        raise ValueError("merge() needs at least one profile")
    if len(profiles) == 1:
        return profiles[0]
    frames: dict[str, list[pd.DataFrame]] = {t: [] for t in schema.TABLES}
    sources: dict[int, Any] = {}
    offset = 0
    for prof in profiles:
        mapping = {int(old): offset + i for i, old in enumerate(prof.launches["launch_id"])}
        offset += len(mapping)
        sources.update(
            (mapping[old], ref) for old, ref in prof.instruction_sources.items() if old in mapping
        )
        for table, frame in prof.frames.items():
            if "launch_id" in frame.columns and len(frame):
                frame = frame.copy()
                frame["launch_id"] = _remap(frame["launch_id"], mapping)
            frames[table].append(frame)
    merged = {t: _concat(fs, t) for t, fs in frames.items()}
    merged["devices"] = merged["devices"].drop_duplicates(
        subset=["device_id", "name"], keep="first"
    )
    provenance = tuple(p for prof in profiles for p in prof.provenance)
    return Profile(provenance=provenance, instruction_sources=sources, **merged)


def _remap(ids: pd.Series, mapping: dict[int, int]) -> pd.Series:
    values = [mapping.get(int(v)) if pd.notna(v) else pd.NA for v in ids]
    return pd.Series(values, index=ids.index, dtype="Int64")


def _concat(frames: Iterable[pd.DataFrame], table: str) -> pd.DataFrame:
    non_empty = [f for f in frames if len(f)]
    if not non_empty:
        return schema.empty(table)
    return pd.concat(non_empty, ignore_index=True)
