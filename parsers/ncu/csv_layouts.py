"""The three table layouts of Nsight Compute ``--csv`` output, each read into frames.

* :func:`_details`: ``--page details`` (FORMATS.md §2.2), long, one row per (launch, section,
  metric) plus rule rows; each distinct ``ID`` (per process) is a launch.
* :func:`_summary`: ``--print-summary per-kernel`` (§2.4), one group per (kernel, launch shape),
  ``Minimum``/``Maximum``/``Average`` with a unit per row.
* :func:`_raw`: ``--page raw`` (§2.3), wide, one row per launch, one column per metric (every
  name with ``__``), a units row below the header.

Launch ids start at 0 within a table; :mod:`parsers.ncu.csv` offsets them when a file holds
several tables.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from advisor import schema
from parsers.ncu.frames import build_devices, device_ids, launch_rows
from parsers.ncu.raw import FileRows, Rows, convert_raw_cells, read_raw_cells
from parsers.ncu.values import (
    IMPLIED_UNITS,
    blank_cells,
    decimal_comma_style,
    id_number,
    int_or_na,
    metric_columns,
)
from parsers.source import Source

_SUMMARY_VALUES = ("Section Name", "Metric Name", "Metric Unit", "Minimum", "Maximum", "Average")
_METRIC_COLUMN = re.compile(r"^[A-Za-z0-9_]+__[A-Za-z0-9_.]*$")
#: raw-page metric columns without a ``unit__`` prefix: the per-instruction (source counter)
#: metrics that Nsight Compute 2025 prints on the raw page as their kernel totals -- the same
#: totals a report file gives for them (the ideal / actual global sectors and shared wavefronts
#: that the granularity and shared-efficiency criteria read first).  Their per-instruction codes
#: (``memory_type``, ``memory_access_type``, ``memory_access_size_type``) and the rule scripts'
#: ``derived_tempMetricN`` are not totals and stay out.
_SOURCE_TOTALS = frozenset(
    {
        "inst_executed",
        "thread_inst_executed",
        "thread_inst_executed_true",
        "memory_l1_tag_requests_global",
        "memory_l1_wavefronts_shared",
        "memory_l1_wavefronts_shared_ideal",
        "memory_l2_theoretical_sectors_global",
        "memory_l2_theoretical_sectors_global_ideal",
        "memory_l2_theoretical_sectors_local",
    }
)


@dataclass
class Table:
    layout: str
    header: list[str]
    header_line: int  # 0-based
    rows: list[list[str]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # raw layout: the lines, split when read
    #: raw layout read from the bytes: the file's bytes from the first row on (texts unused)
    data: memoryview | None = None
    #: details layout read by columns (parsers.ncu.csv.one_details_table): the rows, padded
    #: (with ``launches``: the columns of :data:`DETAILS_ROW_COLUMNS` only)
    frame: pd.DataFrame | None = None
    #: with ``frame``: every column of each launch's first row, in the order of those rows
    launches: pd.DataFrame | None = None


@dataclass
class Frames:
    """What one table adds to the profile; launch ids start at 0 within the table."""

    launches: pd.DataFrame
    metrics: pd.DataFrame
    devices: pd.DataFrame
    rules: pd.DataFrame | None = None
    kernel_summary: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)


def read_table(src: Source, table: Table, selected: Callable[[str], bool] | None) -> Frames:
    """The frames of one table, read by its layout; ``selected``, the metric selection of the
    read (:data:`parsers.registry.Selection`), is used by the raw page's columnar reader."""
    header = table.header
    dupes = sorted(h for h, n in Counter(header).items() if h and n > 1)
    if dupes:
        raise src.malformed(table.header_line, f"duplicate header columns {dupes}")
    if table.layout == "raw":
        return _raw(src, table, selected)
    if table.layout == "details" and "Metric Unit" not in header:
        raise src.malformed(table.header_line, 'details header without a "Metric Unit" column')
    last = "Average" if table.layout == "summary-per-kernel" else "Metric Value"
    launches = None
    if table.frame is not None:
        frame, table.frame = table.frame, None
        launches, table.launches = table.launches, None
    else:
        rows = _checked(src, table, header.index(last) + 1)
        frame = pd.DataFrame(rows, columns=header, dtype=object)
    if table.layout == "summary-per-kernel":
        return _summary(frame)
    return _details(frame, launches)


#: short rows are padded to the header's width; the padding may add at most this many cells
#: per field present plus :data:`PADDING_LIMIT_CELLS` (real exports pad a few trailing cells)
PADDING_LIMIT_FACTOR = 10
PADDING_LIMIT_CELLS = 100_000


def _checked(src: Source, table: Table, minimum: int) -> list[list[str]]:
    """Rows padded to the header's width; a row too short or too long is malformed."""
    width = len(table.header)
    where = f"the header on line {table.header_line + 1}"
    given = sum(len(fields) for fields in table.rows)
    if width * len(table.rows) - given > PADDING_LIMIT_FACTOR * given + PADDING_LIMIT_CELLS:
        # padding would cost memory out of proportion to the file (a damaged or hostile header)
        raise src.malformed(
            table.header_line,
            f"the header has {width} columns but its {len(table.rows)} rows have "
            f"{given / max(len(table.rows), 1):.0f} fields on average: not an Nsight Compute table",
        )
    out: list[list[str]] = []
    for fields, line in zip(table.rows, table.lines, strict=True):
        if len(fields) > width and any(f.strip() for f in fields[width:]):
            raise src.malformed(line, f"{len(fields)} fields, more than the {width} of {where}")
        if len(fields) < minimum:
            raise src.malformed(
                line,
                f"{len(fields)} fields, expected at least {minimum} "
                f"(up to {table.header[minimum - 1]!r} of {where})",
            )
        out.append((fields + [""] * width)[:width])
    return out


#: the columns of a details page whose every cell the frames use (:func:`_details`); of the
#: others (``Context``, ``Stream``, ``Block Size``, ``Device``, ``CC``, NVTX ...) only each
#: launch's first row is used
DETAILS_ROW_COLUMNS = frozenset(
    {
        "ID", "Process ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit",
        "Metric Value", "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type",
        "Estimated Speedup",
    }
)  # fmt: skip


def _details(frame: pd.DataFrame, launches: pd.DataFrame | None = None) -> Frames:
    """--page details (FORMATS.md §2.2): metrics and rules rows keyed by launch ``ID``.

    ``launches``: every column of each launch's first row, when ``frame`` holds only the
    columns of :data:`DETAILS_ROW_COLUMNS` (the columnar reading); else taken from ``frame``."""
    keys = [c for c in ("Process ID", "ID") if c in frame.columns]
    frame["_launch"] = _codes(frame, keys)
    firsts = frame.drop_duplicates("_launch") if launches is None else launches
    ids = _as_objects(firsts.reset_index(drop=True))
    rows = frame[~blank_cells(frame["Metric Name"])]
    speedups = frame.get("Estimated Speedup", pd.Series([], dtype=object))
    comma, mixed = decimal_comma_style(rows["Metric Value"], speedups)
    metrics = metric_columns(
        rows["Metric Name"], rows["Metric Unit"], rows["Metric Value"], decimal_comma=comma
    )
    metrics["launch_id"] = rows["_launch"].to_numpy()
    # a categorical column (read by columns) stays one: its names are stored once
    metrics["kernel"] = rows["Kernel Name"].array
    metrics["section"] = rows["Section Name"].array
    launches = launch_rows(ids, metrics)
    metrics["device_id"] = launches["device_id"].array.take(metrics["launch_id"].to_numpy())
    return Frames(
        launches=launches,
        metrics=metrics,
        devices=build_devices(launches["device_id"], ids.get("CC"), metrics),
        rules=_rules(frame, comma),
        notes=_style_notes(comma, mixed),
    )


def _codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """0, 1, ... per distinct combination of ``columns``, in order of first appearance.

    Each column is numbered by its distinct texts (a categorical column by its codes, without
    building a text per row) and the numbers combined a column at a time; columns that are all
    categoricals by :func:`_category_codes`."""
    fast = _category_codes(frame, columns)
    if fast is not None:
        return fast
    key = np.zeros(len(frame), dtype=np.int64)
    for column in columns:
        cells = frame[column]
        if not isinstance(cells.dtype, pd.CategoricalDtype):
            cells = cells.astype(str)
        codes, uniq = pd.factorize(cells, use_na_sentinel=False)
        key = pd.factorize(key * len(uniq) + codes)[0]
    return key


def _category_codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray | None:
    """:func:`_codes` of columns that are all categoricals (a details page read by columns),
    else None: the categories' codes combined into one integer per row
    (:func:`advisor.schema.combined_codes`; a missing cell one more code), which is numbered only
    where it changes from the row before (a launch's rows follow each other: some 75,000 runs
    for a million rows) and each run given its number."""
    cells = [frame[c] for c in columns]
    if not cells or not all(isinstance(c.dtype, pd.CategoricalDtype) for c in cells):
        return None
    key = schema.combined_codes(
        ((c.cat.codes.to_numpy().astype(np.int64) + 1, len(c.cat.categories) + 1) for c in cells),
        len(frame),
    )[0]
    if not len(key):
        return pd.factorize(key)[0]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    numbers = pd.factorize(key[starts])[0]  # the first row of a combination starts a run
    return np.repeat(numbers, np.diff(np.append(starts, len(key))))


def _as_objects(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its categorical columns as object columns of their texts (the few rows
    whose cells are parsed one by one: a launch's identification columns, the rule rows)."""
    categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.astype({c: object for c in categorical}) if categorical else frame


#: the columns of a rule row that ``rules`` keeps
_RULE_COLUMNS = (
    "Section Name", "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type",
    "Estimated Speedup",
)  # fmt: skip


def _rules(frame: pd.DataFrame, comma: bool) -> pd.DataFrame | None:
    """Rule rows (``Rule Name`` or ``Rule Type`` set) -> ``rules``; the speedup is a percentage.

    An export names every rule; the plain-text output (:mod:`parsers.ncu.text`) prints only the
    type, so a rule row without a name keeps ``rule`` empty."""
    if "Rule Name" not in frame.columns:
        return None
    named = ~blank_cells(frame["Rule Name"])
    if "Rule Type" in frame.columns:
        named |= ~blank_cells(frame["Rule Type"])
    used = [c for c in ("_launch", "Kernel Name", *_RULE_COLUMNS) if c in frame.columns]
    rows = frame.loc[named, used].reset_index(drop=True)
    blank = pd.Series([""] * len(rows), dtype=object)

    def column(name: str) -> pd.Series:
        values = rows[name] if name in rows.columns else blank
        return _texts(values)

    speedups = rows.get("Estimated Speedup", blank)
    if isinstance(speedups.dtype, pd.CategoricalDtype):  # one parse per distinct cell
        same = np.zeros(len(rows), dtype=np.int8)
        names = pd.Series(
            pd.Categorical.from_codes(same, categories=pd.Index(["Estimated Speedup"]))
        )
        units = pd.Series(pd.Categorical.from_codes(same, categories=pd.Index(["%"])))
    else:
        names = pd.Series(["Estimated Speedup"] * len(rows))
        units = pd.Series(["%"] * len(rows))
    speedup = metric_columns(names, units, speedups, decimal_comma=comma)
    return pd.DataFrame(
        {
            "launch_id": rows["_launch"],
            "kernel": _texts(rows["Kernel Name"], strip=False),
            "section": column("Section Name"),
            "rule": column("Rule Name"),
            "rule_type": column("Rule Type"),
            "description": column("Rule Description"),
            "speedup_type": column("Estimated Speedup Type"),
            "estimated_speedup_frac": speedup["value"],
        }
    )


def _texts(cells: pd.Series, strip: bool = True) -> pd.Series:
    """A rule column's texts: ``strip``: each stripped, an empty one missing; else as they are.
    An object column (the row-by-row reading) stays objects, which the schema converts text by
    text; a categorical one (a details page read by columns) goes into the schema's text dtype
    (:data:`advisor.schema.STR`) with each category converted once (a million-row details
    page's 48,000 rule rows: about 60 ms of conversions fewer).  The same values either way."""
    if not isinstance(cells.dtype, pd.CategoricalDtype):
        return cells.str.strip().replace("", None) if strip else cells
    import pyarrow as pa  # type: ignore[import-untyped]  # (as pandas' string dtype does)

    texts = [str(w) for w in cells.cat.categories]
    words: list[str | None] = [w.strip() or None for w in texts] if strip else list(texts)
    codes = cells.cat.codes.to_numpy().astype(np.int64)
    codes[codes < 0] = len(words)  # a missing cell: the last slot
    table = pa.array([*words, None], type=pa.large_string())
    return pd.Series(pd.arrays.ArrowStringArray(table.take(pa.array(codes))), copy=False)


def _summary(frame: pd.DataFrame) -> Frames:
    """--print-summary per-kernel (FORMATS.md §2.4): metrics per (kernel, launch shape) group,
    with units per row; a kernel_summary row per group with a duration (total = avg * calls)."""
    keys = [c for c in frame.columns if c not in _SUMMARY_VALUES]
    frame["_group"] = _codes(frame, keys)
    groups = frame.drop_duplicates("_group").reset_index(drop=True)
    group_devices = device_ids(groups)
    rows = frame[frame["Metric Name"].str.strip() != ""]
    comma, mixed = decimal_comma_style(
        pd.concat([rows["Minimum"], rows["Maximum"], rows["Average"]])
    )
    metrics = metric_columns(
        rows["Metric Name"], rows["Metric Unit"], rows["Average"], decimal_comma=comma,
        extra={"minimum": rows["Minimum"], "maximum": rows["Maximum"]},
    )  # fmt: skip
    group = rows["_group"].to_numpy()
    metrics["kernel"] = rows["Kernel Name"].to_numpy()
    metrics["section"] = rows["Section Name"].to_numpy() if "Section Name" in rows else None
    metrics["invocations"] = int_or_na(rows["Invocations"].map(id_number)).to_numpy()
    metrics["device_id"] = group_devices.to_numpy()[group]
    metrics["launch_id"] = pd.NA
    durations = metrics[(metrics["metric"] == "gpu_time_duration") & (metrics["unit"] == "ns")]
    durations = durations[~pd.Series(group[durations.index]).duplicated().to_numpy()]
    calls = durations["invocations"].astype("Float64").astype(float)
    summary = pd.DataFrame(
        {
            "name": durations["kernel"],
            "device_id": durations["device_id"],
            "calls": durations["invocations"],
            "total_ns": durations["value"] * calls,
            "avg_ns": durations["value"],
            "min_ns": durations["minimum"],
            "max_ns": durations["maximum"],
        }
    ).reset_index(drop=True)
    total = summary["total_ns"].sum()
    summary["time_frac"] = summary["total_ns"] / total if total > 0 else np.nan
    return Frames(
        launches=schema.empty("launches"),
        metrics=metrics,
        devices=build_devices(group_devices, groups.get("CC"), metrics),
        kernel_summary=summary,
        notes=_style_notes(comma, mixed),
    )


def _raw(src: Source, table: Table, selected: Callable[[str], bool] | None) -> Frames:
    """--page raw (FORMATS.md §2.3): one row per launch, one column per metric, units row.

    Read by columns (:mod:`parsers.ncu.raw`, which reads only the metric columns the selection
    ``selected`` keeps), from the file's bytes when the table runs to its end (the bytes are
    released once its cells are read); row by row, every column, when that reader declines the
    table, which also names the line of a malformed row."""
    header, alone = table.header, table.data is not None
    is_metric = [bool(_METRIC_COLUMN.match(h)) or h in _SOURCE_TOTALS for h in header]
    rows: Rows = table.texts if table.data is None else table.data
    at_file = _file_rows(src, table.data) if alone else None
    if at_file is not None:  # the bytes let go before pyarrow parses the rows from the file
        rows, table.data = at_file, None
        src.release()
    cells = read_raw_cells(header, rows, is_metric, selected)
    table.data = None
    del rows  # no reference left to the file's bytes, which are released below
    if alone and cells is not None:
        src.release()
    page = convert_raw_cells(cells, alone) if cells is not None else None
    if page is None:
        if alone:
            _split_lines(src, table)
        return _raw_rows(src, table, is_metric)
    launches = launch_rows(page.ids, page.facts)
    metrics = page.metrics
    metrics["device_id"] = launches["device_id"].array.take(metrics["launch_id"].to_numpy())
    return Frames(
        launches=launches,
        metrics=metrics,
        devices=build_devices(launches["device_id"], page.ids.get("CC"), page.facts),
        notes=page.notes,
    )


def _file_rows(src: Source, data: memoryview | None) -> FileRows | None:
    """The rows ``data`` (the end of the file's bytes) as the same bytes of the file, when the
    file on disk is the one read (its size that of the bytes held); None otherwise."""
    if data is None or src.raw is None:
        return None
    try:
        size = os.stat(src.path).st_size
    except (OSError, ValueError):
        return None
    return FileRows(src.path, size - len(data)) if size == len(src.raw) else None


def _split_lines(src: Source, table: Table) -> None:
    """Fill ``texts``/``lines`` of a table found in the bytes (:attr:`Table.data`): every line
    after its header up to the end of the file, the last one when it is not empty."""
    first = table.header_line + 1
    lines = src.lines[first:]
    if lines and not lines[-1]:
        lines = lines[:-1]
    table.texts = [line.strip() for line in lines]
    table.lines = list(range(first, first + len(lines)))


def _split(src: Source, table: Table) -> list[list[str]]:
    """The fields of the raw table's lines (csv quoting rules)."""
    rows: list[list[str]] = []
    for text, line in zip(table.texts, table.lines, strict=True):
        try:
            rows.append(next(csv.reader([text], strict=True)))
        except csv.Error as exc:
            raise src.malformed(line, f"bad CSV quoting ({exc})") from exc
    return rows


def _raw_rows(src: Source, table: Table, is_metric: list[bool]) -> Frames:
    """The row-by-row reading of a raw page (see :func:`_raw`)."""
    header, width = table.header, len(table.header)
    where = f"the {width} of the header on line {table.header_line + 1}"
    rows, lines = _split(src, table) if table.texts else table.rows, table.lines
    for fields, line in zip(rows, lines, strict=True):
        if len(fields) < width or any(f.strip() for f in fields[width:]):
            raise src.malformed(line, f"{len(fields)} fields, expected {where}")
    rows = [f[:width] for f in rows]
    id_at = header.index("ID")
    notes: list[str] = []
    if rows and not rows[0][id_at].strip():
        units, rows, lines = rows[0], rows[1:], lines[1:]
    else:
        units = [""] * width
        notes.append("raw page without a units row: metric values taken as printed")
    for fields, line in zip(rows, lines, strict=True):
        if not fields[id_at].strip():
            raise src.malformed(line, 'empty "ID" in a raw-page row (a second units row?)')
    grid = np.array(rows, dtype=object).reshape(len(rows), width)
    ids = pd.DataFrame(
        grid[:, [not m for m in is_metric]],
        columns=[h for h, m in zip(header, is_metric, strict=True) if not m],
    )
    names = np.array([h for h, m in zip(header, is_metric, strict=True) if m], dtype=object)
    unit_row = np.array([u for u, m in zip(units, is_metric, strict=True) if m], dtype=object)
    cells = pd.Series(grid[:, is_metric].ravel(), dtype=object)
    keep = (cells.str.strip() != "").to_numpy()
    launch = np.repeat(np.arange(len(rows)), len(names))[keep]
    cells = cells[keep]
    comma, mixed = decimal_comma_style(cells)
    metrics = metric_columns(
        pd.Series(np.tile(names, len(rows))[keep]), pd.Series(np.tile(unit_row, len(rows))[keep]),
        cells, decimal_comma=comma,
    )  # fmt: skip
    metrics["launch_id"] = launch
    metrics["kernel"] = ids["Kernel Name"].to_numpy()[launch]
    launches = launch_rows(ids, metrics)
    metrics["device_id"] = launches["device_id"].to_numpy()[launch]
    implied = {IMPLIED_UNITS[n] for n, u in zip(names, unit_row, strict=True)
               if n in IMPLIED_UNITS and not u.strip()}  # fmt: skip
    if "Khz" in implied:
        notes.append("device clock attributes with a blank unit read as kHz (CUDA's unit)")
    return Frames(
        launches=launches,
        metrics=metrics,
        devices=build_devices(launches["device_id"], ids.get("CC"), metrics),
        notes=notes + _style_notes(comma, mixed),
    )


def _style_notes(comma: bool, mixed: bool) -> list[str]:
    if comma:
        return ["numbers read with a decimal comma (locale-formatted export)"]
    if mixed:
        return ["numbers in two locale styles: the decimal-comma cells were kept as text"]
    return []
