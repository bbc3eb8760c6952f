"""The normalised profile: one :class:`Profile` per input file, and :func:`merge` for several
inputs of one application run (say a gpu-trace, an api-trace and a metrics export).

A Profile holds the frames named in :mod:`advisor.schema` plus its provenance.  Its constructor
validates every frame, so a Profile that exists is well-formed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from advisor import schema


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

    def __post_init__(self) -> None:
        for table in schema.TABLES:
            setattr(self, table, schema.validate(table, getattr(self, table)))
        ids = self.launches["launch_id"]
        if ids.isna().any():
            self.launches["launch_id"] = pd.array(range(len(ids)), dtype="Int64")
        elif not _unique(ids):
            raise schema.SchemaError("launches.launch_id must be unique")

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        return {t: getattr(self, t) for t in schema.TABLES}

    @property
    def path(self) -> str:
        return " + ".join(p.path for p in self.provenance)

    def kernel_names(self) -> list[str]:
        """Distinct kernel names found in launches, kernel summaries, metrics and rules, sorted."""
        names: set[str] = set()
        names.update(self.launches["name"].dropna().unique())
        names.update(self.kernel_summary["name"].dropna().unique())
        names.update(self.metrics["kernel"].dropna().unique())
        names.update(self.rules["kernel"].dropna().unique())
        return sorted(names)

    def has_kernel_data(self) -> bool:
        return bool(len(self.launches) or len(self.kernel_summary) or len(self.metrics))


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
    offset = 0
    for prof in profiles:
        mapping = {int(old): offset + i for i, old in enumerate(prof.launches["launch_id"])}
        offset += len(mapping)
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
    return Profile(provenance=provenance, **merged)


def _remap(ids: pd.Series, mapping: dict[int, int]) -> pd.Series:
    values = [mapping.get(int(v)) if pd.notna(v) else pd.NA for v in ids]
    return pd.Series(values, index=ids.index, dtype="Int64")


def _concat(frames: Iterable[pd.DataFrame], table: str) -> pd.DataFrame:
    non_empty = [f for f in frames if len(f)]
    if not non_empty:
        return schema.empty(table)
    return pd.concat(non_empty, ignore_index=True)
