"""Event and metric tables of nvprof ``--csv`` output -> ``metrics`` (and ``launches``) rows.

* Summaries (``--metrics`` / ``--events``, FORMATS.md §1.5, §1.6): one row per (device, kernel,
  metric) with ``Invocations`` and ``Min``/``Max``/``Avg`` (+ ``Total`` for events).  Every cell
  carries its own glued unit (``190.706924GB/s``, ``976.562500KB/s``, ``97.5%``, ``"Low (1)"``),
  so cells are converted one by one with :func:`parsers.units.nvprof_cell` (binary prefixes).
* Per-launch trace (``--print-gpu-trace --events/--metrics``, §1.7): one row per launch,
  ``Device``, ``Context``, ``Stream``, ``Kernel`` (``Correlation_ID`` in newer toolkits), then one
  column per event and metric, and a units row that is empty except for ``%``, ``GB/s``...
  CUDA 7 heads the metric columns with metric DESCRIPTIONS (``Multiprocessor Activity``, some
  printed twice); they are mapped back to metric names through the aliases of
  ``advisor/data/metric_map.csv`` and kept as printed (``tool_metric`` and ``metric``) when
  the map does not know them.  Events (raw names) come before the described metrics; a
  column headed by a name is an ``event`` when described metrics follow it, else a ``metric``.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from advisor import schema
from advisor.metric_map import canonicalize, lookup
from parsers.frames import metric_record
from parsers.names import split_correlation, split_device
from parsers.nvprof.csv_tables import (
    Block,
    device_columns,
    integer_column,
    is_placeholder,
    note,
    text_column,
)
from parsers.source import Source
from parsers.units import MISSING_TOKENS, fits_int, nvprof_cell, parse_number, scale_nvprof

TOOL = "nvprof"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?: \(\d+\))?$")  # "local_load (0)" too
_LAUNCH_COLUMNS = frozenset({"Device", "Context", "Stream", "Kernel", "Correlation_ID"})


def _cell(src: Source, line: int, cell: str, column: str) -> tuple[float, str]:
    try:
        return nvprof_cell(cell)
    except ValueError:
        raise src.malformed(
            line, f"column {column!r}: {cell.strip()!r} is not a number with an nvprof unit"
        ) from None


def _row_unit(src: Source, line: int, cells: list[tuple[float, str]]) -> str:
    """The one base unit of a summary row (Min/Max/Avg may use different prefixes, not
    different quantities); a bare 0 fits any unit."""
    units = {u for v, u in cells if u and not math.isnan(v)}
    bare = any(not u and not math.isnan(v) and v != 0 for v, u in cells)
    if len(units) > 1 or (units and bare):
        raise src.malformed(line, f"one row mixes units {sorted(units | {''} if bare else units)}")
    return units.pop() if units else ""


def summary_metrics_frame(src: Source, block: Block) -> pd.DataFrame:
    """``Metric result`` / ``Event result`` tables -> metrics rows with invocations."""
    section = "metric" if block.kind == "metrics" else "event"
    name_col = block.col("Metric Name" if section == "metric" else "Event Name")
    cols = {k: block.col(k) for k in ("Device", "Kernel", "Invocations", "Min", "Max", "Avg",
                                       "Total")}  # fmt: skip
    records = []
    for fields, line in zip(block.rows, block.lines, strict=True):

        def get(key: str, fields: list[str] = fields) -> str:
            j = cols[key]
            return fields[j] if j is not None else ""

        stats = {k: _cell(src, line, get(k), k) for k in ("Min", "Max", "Avg", "Total")}
        unit = _row_unit(src, line, list(stats.values()))
        device, device_id = split_device(get("Device"))
        invocations = parse_number(get("Invocations"))
        if not (math.isnan(invocations) or fits_int(invocations)):
            raise src.malformed(
                line, f"column 'Invocations': expected a whole number, got {get('Invocations')!r}"
            )
        records.append(
            metric_record(
                tool=TOOL,
                tool_metric=fields[name_col].strip() if name_col is not None else "",
                value=stats["Avg"][0],
                unit=unit,
                kernel=get("Kernel").strip() or None,
                device=device or None,
                device_id=device_id,
                section=section,
                minimum=stats["Min"][0],
                maximum=stats["Max"][0],
                total=stats["Total"][0],
                invocations=None if math.isnan(invocations) else int(invocations),
                text=get("Avg").strip() if is_placeholder(get("Avg")) else None,
            )
        )
    return pd.DataFrame.from_records(records) if records else schema.empty("metrics")


def metric_trace_frames(
    src: Source, block: Block, notes: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-launch event/metric trace -> (launches with ids from 0, their metrics rows).

    The cells are converted as one array; only cells that are not plain numbers (levels,
    glued units) go through :func:`parsers.units.nvprof_cell` one by one."""
    frame = block.frame()
    kernel = text_column(block, frame, "Kernel")
    split = kernel.map(lambda k: split_correlation(k) if isinstance(k, str) else (k, None))
    names = split.map(lambda t: t[0]).astype("string").to_numpy()
    correlation = integer_column(src, block, frame, "Correlation_ID")
    suffix = np.array([math.nan if t[1] is None else t[1] for t in split], dtype=float)
    device_series, id_series = device_columns(text_column(block, frame, "Device"))
    device, device_id = device_series.to_numpy(), id_series.to_numpy()
    ids = np.arange(len(frame))
    launches = pd.DataFrame(
        {
            "launch_id": ids,
            "name": names,
            "device": device,
            "device_id": device_id,
            "context": integer_column(src, block, frame, "Context").to_numpy(),
            "stream": integer_column(src, block, frame, "Stream").to_numpy(),
            "correlation_id": np.where(correlation.notna(), correlation.to_numpy(), suffix),
        }
    )
    cells = np.char.strip(np.array(block.rows, dtype=str).reshape(len(ids), len(block.header)))
    columns = _metric_columns(block, cells, notes)
    if not columns or not len(ids):
        return launches, schema.empty("metrics")
    _note_unknown_descriptions(columns, notes)
    raw = cells[:, [j for j, _ in columns]]
    flat = pd.Series(raw.ravel(), dtype=object)
    missing = flat.isin(MISSING_TOKENS).to_numpy().reshape(raw.shape)
    numbers = pd.to_numeric(flat.mask(missing.ravel()), errors="coerce")
    values = np.array(numbers, dtype=float).reshape(raw.shape)  # a writable copy
    described = [i for i, (_, name) in enumerate(columns) if not _IDENTIFIER.match(name)]
    metric, unit, section = [], [], []
    for c, (j, name) in enumerate(columns):
        base = _convert_column(src, block, raw[:, c], values[:, c], missing[:, c], j, name)
        canonical, one, base_c = canonicalize(name, 1.0, base, TOOL)
        values[:, c] *= one
        metric.append(canonical)
        unit.append(base_c)
        is_event = bool(_IDENTIFIER.match(name) and described and c < described[-1])
        section.append("event" if is_event else "metric")
    n = len(columns)
    text = raw.astype(object).ravel()
    text[~(missing & (raw != "")).ravel()] = None  # placeholders such as <OVERFLOW> only
    long = pd.DataFrame(
        {
            "launch_id": np.repeat(ids, n),
            "kernel": np.repeat(names, n),
            "device": np.repeat(device, n),
            "device_id": np.repeat(device_id, n),
            "metric": np.tile(np.array(metric, dtype=object), len(ids)),
            "tool_metric": np.tile(np.array([nm for _, nm in columns], dtype=object), len(ids)),
            "section": np.tile(np.array(section, dtype=object), len(ids)),
            "unit": np.tile(np.array(unit, dtype=object), len(ids)),
            "value": values.ravel(),
            "text": text,
        }
    )
    return launches, long


def _note_unknown_descriptions(columns: list[tuple[int, str]], notes: list[str]) -> None:
    unknown = sum(1 for _, name in columns if not _IDENTIFIER.match(name) and not lookup(name))
    if unknown:
        note(
            notes,
            f"{unknown} metric column(s) headed by a description with no known metric name: "
            "kept as printed",
        )


def _metric_columns(block: Block, cells: np.ndarray, notes: list[str]) -> list[tuple[int, str]]:
    """(position, tool name) of each event/metric column.  A repeated header whose values equal
    the first column of that name is dropped; a differing one is kept as ``name #2``."""
    first: dict[str, int] = {}
    seen: dict[str, int] = {}
    out = []
    for j, header in enumerate(block.header):
        name = header.strip()
        if name in _LAUNCH_COLUMNS:
            continue
        if name not in first:
            first[name] = j
            seen[name] = 1
            out.append((j, name))
        elif (cells[:, j] == cells[:, first[name]]).all():
            note(notes, f"repeated column {name!r} with the same values dropped")
        else:
            seen[name] += 1
            renamed = f"{name} #{seen[name]}"
            note(notes, f"repeated column {name!r} with other values kept as {renamed!r}")
            out.append((j, renamed))
    return out


def _convert_column(
    src: Source,
    block: Block,
    raw: np.ndarray,
    values: np.ndarray,
    missing: np.ndarray,
    j: int,
    name: str,
) -> str:
    """Scale one metric column in place to its base unit and return that unit.

    The unit comes from the units row when it has one; else each cell may carry a glued unit
    or a utilization level (``"Mid (4)"``), which must agree down the column."""
    bad = np.isnan(values) & ~missing
    unit_token = block.units[j] if block.units is not None else ""
    if unit_token:
        try:
            factor, unit = scale_nvprof(1.0, unit_token)
        except ValueError:
            line = block.units_line if block.units_line is not None else block.header_line
            raise src.malformed(line, f"unknown unit {unit_token!r} for {name!r}") from None
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise src.malformed(
                block.lines[pos],
                f"column {name!r}: expected a number in {unit_token}, got {str(raw[pos])!r}",
            )
        values *= factor
        return unit
    if not bad.any():
        return ""
    rows = np.flatnonzero(bad)
    parsed = [_cell(src, block.lines[r], raw[r], name) for r in rows]
    plain = [(float(v), "") for v in values[~bad & ~missing]]
    unit = _row_unit(src, block.lines[rows[0]], parsed + plain)
    values[rows] = [v for v, _ in parsed]
    return unit
