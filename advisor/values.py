"""Values and text of a profile, checked once where a reader's rows become a
:class:`advisor.profile.Profile` (its constructor calls :func:`checked_frames`), so no analysis,
chart or writer ever sees them.

* **Times and sizes.** A row whose time or size is infinite (``1e309``, ``inf``) or negative
  cannot be placed on a timeline or summed, nor can one beyond its plausibility range
  (:mod:`advisor.plausible`: a duration above a day, a start more than a year into the profile,
  a size above a petabyte, a grid or block dimension or a register count CUDA does not allow):
  it is dropped, with a note naming the file, the table's row (1-based, in the reader's order)
  and the value (``trace.csv: kernel launch row 3 (k): duration inf: dropped``, ``... duration
  1e+20 ns outside [0, 8.64e+13]: dropped``). The first :data:`NOTED_ROWS` rows get a note each,
  the rest one count. The metrics and rule rows of a dropped launch go with it. A trace row with
  a start but no duration (an empty or ``nan`` cell) keeps its place as a launch without a time
  (the schema's missing value: the launch counts, its time is unknown, nothing sums or draws
  it), with a note naming the first such row.
* **Text.**  A string that cannot be written as UTF-8 (lone surrogates: a damaged report's
  string, a file name that is not UTF-8) gets each such character written as its escape
  (``\\udcff``) by :func:`printable`: every writer (HTML, Markdown, JSON, the terminal) can
  then write it.  Readers whose strings come from foreign code call it where they take them
  (the Nsight Compute report module); the Profile applies it to every text column that holds
  Python strings and to its provenance.

Refusing the file (exit 3) is left to the caller when nothing usable remains: see
:func:`advisor.profile.Profile`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from advisor import plausible, schema
from advisor.plausible import Range
from advisor.text import printable as printable  # defined without pandas for the helper process

#: rows noted one by one; further dropped rows are counted in one note
NOTED_ROWS = 5

#: how every note on dropped rows ends (:func:`is_drop_note`)
DROPPED = ": dropped"
#: table -> (what one row is, the columns holding a time or a size that must be finite, >= 0
#: and within its range: :data:`RANGES`)
CHECKED: dict[str, tuple[str, tuple[str, ...]]] = {
    "launches": (
        "kernel launch",
        (
            "start_ns",
            "duration_ns",
            "grid_x",
            "grid_y",
            "grid_z",
            "block_x",
            "block_y",
            "block_z",
            "registers_per_thread",
            "static_shared_bytes",
            "dynamic_shared_bytes",
        ),
    ),
    "transfers": ("transfer", ("start_ns", "duration_ns", "bytes")),
    "api_calls": ("API call", ("start_ns", "duration_ns")),
    "kernel_summary": (
        "kernel summary",
        ("total_ns", "avg_ns", "min_ns", "max_ns", "median_ns", "stddev_ns"),
    ),
    "transfer_summary": (
        "transfer summary",
        (
            "total_ns",
            "avg_ns",
            "min_ns",
            "max_ns",
            "total_bytes",
            "avg_bytes",
            "min_bytes",
            "max_bytes",
        ),
    ),
    "api_summary": ("API summary", ("total_ns", "avg_ns", "min_ns", "max_ns", "median_ns")),
}
#: the plausibility range of a checked column (:mod:`advisor.plausible`); by its name otherwise:
#: ``*_ns`` a duration (:data:`advisor.plausible.TIME_NS`), ``*bytes*`` a size
RANGES: dict[str, Range] = {
    "start_ns": plausible.TIMESTAMP_NS,
    "grid_x": plausible.GRID,
    "grid_y": plausible.GRID,
    "grid_z": plausible.GRID,
    "block_x": plausible.BLOCK,
    "block_y": plausible.BLOCK,
    "block_z": plausible.BLOCK,
    "registers_per_thread": plausible.REGISTERS,
}


#: the device table's figures and their ranges: a value outside is left unknown, with a note
#: (the device keeps its name; the database's figure stands in)
DEVICE_RANGES: dict[str, Range] = {
    "sm_count": plausible.UNITS,
    "sm_clock_hz": plausible.CLOCK_HZ,
    "memory_clock_hz": plausible.MEMORY_CLOCK_HZ,
    "memory_bandwidth_bytes_per_s": plausible.BANDWIDTH,
    "l2_bytes": Range(0.0, plausible.BYTES.hi, lo_open=True),
    "max_warps_per_sm": plausible.UNITS,
    "max_threads_per_sm": plausible.UNITS,
    "max_blocks_per_sm": plausible.UNITS,
    "registers_per_sm": plausible.UNITS,
    "shared_bytes_per_sm": Range(0.0, plausible.BYTES.hi, lo_open=True),
}


def column_range(column: str) -> Range:
    """The plausibility range of a checked column."""
    if column in RANGES:
        return RANGES[column]
    return plausible.BYTES if "bytes" in column else plausible.TIME_NS


#: tables of timed rows (a row with a start but no duration is noted)
TRACES = ("launches", "transfers", "api_calls")
#: the column that names a row in a note
NAME_COLUMN = {
    "launches": "name",
    "transfers": "kind",
    "api_calls": "name",
    "kernel_summary": "name",
    "transfer_summary": "kind",
    "api_summary": "name",
}


def printable_column(series: pd.Series) -> pd.Series:
    """A text column (Python strings: object dtype, or a categorical of them) with
    :func:`printable` applied once per distinct value; other columns as they are."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        words = series.cat.categories
        if words.dtype != object or _ascii_texts(words):
            return series
        fixed = [printable(w) if isinstance(w, str) else w for w in words]
        if fixed == list(words):
            return series
        codes = series.cat.codes.to_numpy()
        values = np.array([*fixed, None], dtype=object)[codes]
        return pd.Series(values, index=series.index, dtype=object)
    if series.dtype != object or not len(series):
        return series
    codes, uniques = schema.factorize(series, use_na_sentinel=True)
    fixed = [printable(u) if isinstance(u, str) else u for u in uniques]
    if all(f is u for f, u in zip(fixed, uniques, strict=True)):
        return series
    values = np.array([*fixed, None], dtype=object)[codes]
    return pd.Series(values, index=series.index, dtype=object)


def _ascii_texts(words: pd.Index) -> bool:
    """Whether every word is a ``str`` of ASCII characters (which :func:`printable` returns as
    they are), looked at without a Python call per word (900,000 distinct kernel names,
    benchmarks/bench_scale.py ``nsys-distinct-names-csv``: 0.14 -> 0.04 s)."""
    return schema.only_texts(words) and all(map(str.isascii, words.to_numpy()))


def printable_frame(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """``frame`` with :func:`printable_column` on each column of Python strings."""
    if frame is None:
        return None
    given = {c: frame[c] for c in frame.columns if _holds_objects(frame[c])}
    fixed = {c: printable_column(series) for c, series in given.items()}
    changed = {c: values for c, values in fixed.items() if values is not given[c]}
    if not changed:  # (frame[c] is a new Series each time: compare with the ones given)
        return frame
    return frame.assign(**changed)


def _holds_objects(series: pd.Series) -> bool:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return bool(series.cat.categories.dtype == object)
    return bool(series.dtype == object)


def checked_frames(
    frames: Mapping[str, pd.DataFrame], path: str
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """``frames`` (validated by the schema) without the rows whose times or sizes are invalid
    (see the module docstring), and the notes saying which rows went."""
    out = dict(frames)
    notes: list[str] = []
    dropped_launches: pd.api.extensions.ExtensionArray | None = None
    for table, (what, columns) in CHECKED.items():
        frame = out[table]
        if not len(frame):
            continue
        bad, reasons = _invalid_rows(table, frame, columns)
        if not bad.any():
            continue
        rows = np.flatnonzero(bad)
        notes.extend(_row_notes(path, table, what, frame, rows, reasons))
        if table == "launches":
            dropped_launches = frame["launch_id"].array[rows]  # Int64: no object copy
        out[table] = frame[~bad].reset_index(drop=True)
    for table in TRACES:
        notes.extend(_untimed_note(path, table, out[table]))
    if "devices" in out:
        out["devices"], device_notes = _checked_devices(out["devices"], path)
        notes.extend(device_notes)
    if dropped_launches is not None:
        for table in ("metrics", "rules"):
            frame = out[table]
            linked = frame["launch_id"].isin(dropped_launches).to_numpy(dtype=bool)
            if linked.any():
                out[table] = frame[~linked].reset_index(drop=True)
    return out, notes


def _checked_devices(frame: pd.DataFrame, path: str) -> tuple[pd.DataFrame, list[str]]:
    """The device table with each figure outside its :data:`DEVICE_RANGES` range (infinite,
    negative, zero, a 1e20 Hz clock) made unknown, and a note on each."""
    notes: list[str] = []
    changed: dict[str, pd.Series] = {}
    for column, bounds in DEVICE_RANGES.items():
        if column not in frame.columns or not len(frame):
            continue
        values = frame[column].to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            wrong = ~np.isnan(values) & ~np.array([bounds.holds(v) for v in values.tolist()])
        if not wrong.any():
            continue
        for row in np.flatnonzero(wrong).tolist():
            name = frame["name"].iloc[row] if "name" in frame.columns else None
            named = f" ({printable(str(name))})" if isinstance(name, str) and name else ""
            notes.append(
                f"{path}: device row {row + 1}{named}: {column} "
                f"{plausible.number(values[row])} outside {bounds.text()}: left unknown"
            )
        changed[column] = frame[column].mask(pd.Series(wrong, index=frame.index))
    return (frame.assign(**changed) if changed else frame), notes


def _invalid_rows(
    table: str, frame: pd.DataFrame, columns: tuple[str, ...]
) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """(rows to drop, [(column, its values) for each checked column]) of ``frame``."""
    bad = np.zeros(len(frame), dtype=bool)
    reasons: list[tuple[str, np.ndarray]] = []
    for column in columns:
        if column not in frame.columns:
            continue
        values = frame[column].to_numpy(dtype=np.float64, na_value=np.nan)
        bounds = column_range(column)
        with np.errstate(invalid="ignore"):
            wrong = np.isinf(values) | (values < 0) | (values > bounds.hi)
        if wrong.any():
            bad |= wrong
            reasons.append((column, values))
    return bad, reasons


def _row_notes(
    path: str,
    table: str,
    what: str,
    frame: pd.DataFrame,
    rows: np.ndarray,
    reasons: list[tuple[str, np.ndarray]],
) -> list[str]:
    names = frame[NAME_COLUMN[table]]
    notes = []
    for row in rows[:NOTED_ROWS].tolist():
        name = names.iloc[row]
        named = f" ({printable(str(name))})" if isinstance(name, str) and name else ""
        found = [
            f"{_field(column)} {_value(column, values[row])}"
            for column, values in reasons
            if _wrong(column, values[row])
        ]
        notes.append(f"{path}: {what} row {row + 1}{named}: {', '.join(found)}{DROPPED}")
    if len(rows) > NOTED_ROWS:
        notes.append(
            f"{path}: {len(rows) - NOTED_ROWS:,} more {what} rows with an infinite, negative or "
            f"implausible value{DROPPED}"
        )
    return notes


def _untimed_note(path: str, table: str, frame: pd.DataFrame) -> list[str]:
    """The note on the rows of a trace ``table`` with a start but no duration, if any."""
    if not len(frame):
        return []
    starts = frame["start_ns"].to_numpy(dtype=np.float64, na_value=np.nan)
    durations = frame["duration_ns"].to_numpy(dtype=np.float64, na_value=np.nan)
    rows = np.flatnonzero(np.isnan(durations) & ~np.isnan(starts))
    if not len(rows):
        return []
    what, _ = CHECKED[table]
    name = frame[NAME_COLUMN[table]].iloc[int(rows[0])]
    named = f" ({printable(str(name))})" if isinstance(name, str) and name else ""
    more = f" and {len(rows) - 1:,} more" if len(rows) > 1 else ""
    return [
        f"{path}: {what} row {int(rows[0]) + 1}{named}{more}: a start but no duration: "
        "counted without a time"
    ]


def is_drop_note(note: str) -> bool:
    """Whether ``note`` is one of :func:`checked_frames`' notes on dropped rows."""
    return note.endswith(DROPPED)


def _wrong(column: str, value: float) -> bool:
    return math.isinf(value) or value < 0 or value > column_range(column).hi


def _field(column: str) -> str:
    """``duration_ns`` -> ``duration``, ``total_bytes`` -> ``total bytes``."""
    return column.removesuffix("_ns").replace("_", " ")


def _value(column: str, value: float) -> str:
    if math.isnan(value):
        return "missing"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    unit = " ns" if column.endswith("_ns") else " B" if "bytes" in column else ""
    bounds = column_range(column)
    beyond = f" outside {bounds.text()}" if value > bounds.hi else ""
    return f"{value:g}{unit}{beyond}"
