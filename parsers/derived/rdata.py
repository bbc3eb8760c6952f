"""R data sets derived from nvprof runs (format ``r-dataset``, profiler ``derived``).

Layout (``../shared/real_profiles/README.md``, ``amaris_gpuperfpredict/datasets/*.csv``): a CSV
written by R's ``write.csv`` with one row per kernel launch (per input size) merged from nvprof
``--print-gpu-trace``, ``--metrics`` and ``--events`` runs.  The first header cell is ``""`` (the
column of R row names, not read); strings are quoted, numbers are not, ``NA`` is a missing value.
Columns read by name:

* ``name`` -> ``launches.name``; ``duration`` in SECONDS -> ``duration_ns``;
* ``grid.x``/``grid.y``/``grid.z``, ``block.x``/``block.y``/``block.z``, ``registers.per.thread``;
  absent ``*.z`` columns are taken as 1 (noted);
* ``static.smem`` / ``dynamic.smem``: nvprof printed these in B or KB per column and the data set
  dropped the units row, so the unit is read from the numbers: a column with a fractional value is
  in KB (``1.0625`` = 1088 B), a column of whole numbers in bytes (``1088``) -- noted;
* the device name: ``gpu_name`` when present (the data set's label, e.g. ``GTX-680``), else a
  textual ``device`` column (``"Tesla K40c (0)"`` is split into name and index) -> ``devices``;
* every other numeric column -> one per-launch ``metrics`` row per launch (``tool_metric`` = the R
  column name), text columns are skipped (noted).

Metric names are un-mangled where that is certain: R's ``make.names`` turns every character other
than a letter, digit, ``.`` or ``_`` (``(``, ``)``, space, ``-``, ``/``) into ``.``, and the data
set's authors lower-cased nvprof metric DESCRIPTIONS and joined their words with ``_``
(``L2 Throughput (Reads)`` -> ``l2_throughput_.reads.``).  Folding every run of characters other
than letters and digits to one ``_`` in both the R name and the nvprof names and descriptions of
``advisor/data/metric_map.csv`` undoes both; a folded name that two map entries share is not
mapped.  The data set dropped nvprof's units, so a matched column is converted only where nvprof's
unit is fixed: counts and ratios as they are, utilization levels (0..10) as ``level``,
percentages / 100 as ``frac`` (``achieved_occupancy`` is printed as a 0..1 ratio and stays as it
is).  Throughputs, sizes and times, which nvprof scales per value (GB/s or MB/s), keep their R
name and raw number (unit ``''``), and a provenance note says so.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from functools import cache

import pandas as pd

from advisor.metric_map import entries
from advisor.profile import Profile, Provenance
from parsers.names import split_device
from parsers.registry import Selection
from parsers.source import Source, csv_fields, is_preamble
from parsers.units import fits_int, is_missing, parse_number

R_DATASET = "r-dataset"
PROFILER = "derived"

_DIMS = {
    "grid.x": "grid_x", "grid.y": "grid_y", "grid.z": "grid_z",
    "block.x": "block_x", "block.y": "block_y", "block.z": "block_z",
    "registers.per.thread": "registers_per_thread",
}  # fmt: skip
_SMEM = {"static.smem": "static_shared_bytes", "dynamic.smem": "dynamic_shared_bytes"}
#: nvprof prints every percentage metric in % except this one, a 0..1 ratio (FORMATS.md §1.5)
_NVPROF_BARE_FRACTIONS = frozenset({"achieved_occupancy"})
_FOLD = re.compile(r"[^a-z0-9]+")
_KB = 1024.0


def sniff_r_dataset(head: Sequence[str]) -> bool:
    """The first data line is an R ``write.csv`` header: ``"",`` then columns that include
    ``duration`` and ``name``."""
    data = [line for line in head if line.strip() and not is_preamble(line)]
    if not data or not data[0].startswith('"",'):
        return False
    try:
        fields = csv_fields(data[0])
    except csv.Error:
        return False
    return "duration" in fields and "name" in fields


def fold_name(name: str) -> str:
    """The comparison key of a metric name: lower case, every run of characters other than
    letters and digits folded to one ``_``, no leading or trailing ``_``.

    ``'l2_throughput_.reads.'`` and ``'L2 Throughput (Reads)'`` -> ``'l2_throughput_reads'``.
    """
    return _FOLD.sub("_", name.lower()).strip("_")


@cache
def _nvprof_names() -> dict[str, tuple[str, str, str]]:
    """folded nvprof name or description -> (canonical, canonical unit, nvprof name), for the
    metric-map entries nvprof has; keys shared by two entries are left out."""
    index: dict[str, tuple[str, str, str]] = {}
    clashes: set[str] = set()
    for entry in entries():
        if not entry.nvprof:
            continue
        target = (entry.canonical, entry.unit, entry.nvprof)
        for name in (entry.nvprof, *entry.aliases):
            if "__" in name:  # an Nsight Compute metric name
                continue
            key = fold_name(name)
            if key in index and index[key] != target:
                clashes.add(key)
            index.setdefault(key, target)
    return {k: v for k, v in index.items() if k not in clashes}


def metric_for_column(column: str) -> tuple[str, str, float] | None:
    """(metric name, unit, scale) of an R column, or None when nvprof's unit for it is not
    fixed (throughputs, sizes, times).  Unknown columns keep their R name, unit ''."""
    found = _nvprof_names().get(fold_name(column))
    if found is None:
        return column, "", 1.0
    canonical, unit, nvprof = found
    if unit in ("", "level"):
        return canonical, unit, 1.0
    if unit == "frac":
        return canonical, "frac", 1.0 if nvprof in _NVPROF_BARE_FRACTIONS else 0.01
    return None


def read_r_dataset(src: Source, selected: Selection) -> Profile:
    """Read an R data set of nvprof runs: launches, per-launch metrics and the device name.

    ``selected`` (the registry's metric selection) is not used: :func:`parsers.read` applies it
    to the rows read."""
    data = [(i, line) for i, line in enumerate(src.lines) if line.strip() and not is_preamble(line)]
    header_at, header = data[0][0], _fields(src, *data[0])
    if len(set(header)) != len(header):
        dupes = sorted({h for h in header if header.count(h) > 1})
        raise src.malformed(header_at, f"duplicate column names {dupes}; expected unique names")
    rows: list[list[str]] = []
    line_at: list[int] = []
    for index, line in data[1:]:
        fields = _fields(src, index, line)
        if len(fields) != len(header):
            raise src.malformed(
                index, f"{len(fields)} fields; expected {len(header)} as in the header"
            )
        rows.append(fields)
        line_at.append(index)
    table = pd.DataFrame(rows, columns=header, dtype=object)
    reader = _Reader(src, table, line_at)
    return reader.profile()


def _fields(src: Source, index: int, line: str) -> list[str]:
    try:
        return csv_fields(line)
    except csv.Error as exc:
        raise src.malformed(index, f"not a CSV row ({exc}); expected an R write.csv row") from exc


class _Reader:
    """Builds the frames of one R data set (kept together for the line numbers and notes)."""

    def __init__(self, src: Source, table: pd.DataFrame, line_at: list[int]) -> None:
        self.src = src
        self.table = table
        self.line_at = line_at
        self.n = len(table)
        self.notes: list[str] = [
            "R data set derived from nvprof runs, one row per kernel launch; "
            "'duration' read in seconds"
        ]
        self.used: set[str] = {"", "name", "duration", *_DIMS, *_SMEM}

    def number(self, column: str, *, integer: bool = False) -> pd.Series:
        """The column as floats (NaN for NA); a cell that is no number is MalformedInput."""
        values: list[float] = []
        for pos, cell in enumerate(self.table[column]):
            value = parse_number(cell)
            bad = value != value and not is_missing(cell)
            if not bad and integer and value == value:
                bad = not fits_int(value)
            if bad:
                kind = "a whole number" if integer else "a number"
                raise self.src.malformed(
                    self.line_at[pos], f"column {column!r} is {cell!r}; expected {kind} or NA"
                )
            values.append(value)
        return pd.Series(values, dtype="float64")

    def profile(self) -> Profile:
        launches = pd.DataFrame({"launch_id": range(self.n)})
        names = [None if is_missing(c) else str(c).strip() for c in self.table["name"]]
        for pos, name in enumerate(names):
            if name is None:
                raise self.src.malformed(self.line_at[pos], "empty kernel name in column 'name'")
        launches["name"] = pd.array(names, dtype="string")
        launches["duration_ns"] = (self.number("duration") * 1e9).round(3)
        for column, target in _DIMS.items():
            if column in self.table.columns:
                launches[target] = self.number(column, integer=True)
        missing_z = [c for c in ("grid.z", "block.z") if c not in self.table.columns]
        for column in missing_z:
            launches[_DIMS[column]] = 1
        if missing_z:
            self.notes.append(f"no {'/'.join(missing_z)} column: taken as 1")
        for column, target in _SMEM.items():
            if column in self.table.columns:
                launches[target] = self.shared_bytes(column)
        devices = self.device_frame(launches)
        metrics = self.metric_frame(launches)
        provenance = Provenance(
            path=self.src.path, format=R_DATASET, profiler=PROFILER, modes=(R_DATASET,),
            notes=tuple(self.notes),
        )  # fmt: skip
        return Profile(
            provenance=(provenance,), launches=launches, metrics=metrics, devices=devices
        )

    def shared_bytes(self, column: str) -> pd.Series:
        values = self.number(column)
        known = values.dropna()
        if (known % 1 != 0).any():
            self.notes.append(f"{column!r} read as KB (it has fractional values; no units row)")
            return values * _KB
        if len(known):
            self.notes.append(f"{column!r} read as bytes (whole numbers; no units row)")
        return values

    def device_frame(self, launches: pd.DataFrame) -> pd.DataFrame:
        """Device name per launch from ``gpu_name`` or a textual ``device`` column."""
        source = None
        for column in ("gpu_name", "device"):
            if column in self.table.columns and not self._is_numeric(column):
                source = column
                break
        if source is None:
            return pd.DataFrame()
        self.used.add(source)
        split = [
            split_device(str(c)) if not is_missing(c) else ("", None) for c in self.table[source]
        ]
        launches["device"] = pd.array([s[0] or pd.NA for s in split], dtype="string")
        launches["device_id"] = pd.array([s[1] for s in split], dtype="Int64")
        self.notes.append(f"device name from the {source!r} column (the data set's label)")
        if "device" in self.table.columns and source != "device":
            self.notes.append(
                "the numeric 'device' column (the data set's GPU index, not a CUDA device id) "
                "is kept as a metric"
            )
        pairs = launches[["device_id", "device"]].dropna(subset=["device"]).drop_duplicates()
        return pairs.rename(columns={"device": "name"}).reset_index(drop=True)

    def _is_numeric(self, column: str) -> bool:
        cells = [c for c in self.table[column] if not is_missing(c)]
        return all(parse_number(c) == parse_number(c) for c in cells)

    def metric_frame(self, launches: pd.DataFrame) -> pd.DataFrame:
        """One per-launch metrics row per (launch, numeric column), in launch then column order."""
        chunks: list[pd.DataFrame] = []
        mapped = kept_raw = 0
        unscaled: list[str] = []
        text: list[str] = []
        for pos, column in enumerate(self.table.columns):
            if column in self.used:
                continue
            if not self._is_numeric(column):
                text.append(column)
                continue
            spec = metric_for_column(column)
            if spec is None:
                unscaled.append(column)
                spec = (column, "", 1.0)
            elif fold_name(column) in _nvprof_names():
                mapped += 1
            else:
                kept_raw += 1
            metric, unit, scale = spec
            values = self.number(column) * scale
            chunk = pd.DataFrame(
                {
                    "launch_id": range(self.n),
                    "kernel": launches["name"],
                    "device": launches.get("device"),
                    "metric": metric,
                    "tool_metric": column,
                    "unit": unit,
                    "value": values,
                    "_order": pos,
                }
            )
            chunks.append(chunk[chunk["value"].notna()])
        self.notes.append(
            f"{mapped} metric columns matched nvprof metric names or descriptions after "
            f"un-mangling their R names; {kept_raw + len(unscaled)} keep their R names"
        )
        if unscaled:
            self.notes.append(
                f"{len(unscaled)} columns that nvprof prints with a per-value unit "
                f"({', '.join(unscaled[:3])}{', ...' if len(unscaled) > 3 else ''}) keep their "
                "raw numbers: the data set dropped the units"
            )
        if text:
            self.notes.append(f"text columns not read: {', '.join(text)}")
        if not chunks:
            return pd.DataFrame()
        frame = pd.concat(chunks, ignore_index=True)
        frame = frame.sort_values(["launch_id", "_order"], kind="stable")
        return frame.drop(columns="_order").reset_index(drop=True)
