"""A columnar reader for the Nsight Compute ``--page raw`` table (FORMATS.md §2.3).

The raw page is wide: one row per launch, one column per metric, a units row below the header.
:func:`read_raw_columns` reads the table's lines with pyarrow's CSV reader (every cell as text),
converts each metric column at once and melts the columns into the long ``metrics`` table, so a
page of ten thousand launches by five hundred metrics costs a few passes over its columns rather
than one Python step per cell.  The conversions are those of :mod:`parsers.ncu_values`
(FORMATS.md §2.5):

* A column whose every non-blank cell is a plain finite decimal number (the usual case) is cast
  in one step; any other column (``n/a``, ``PolicySpread``, ``1,234``) is parsed once per
  distinct cell by :func:`parsers.ncu_values.parse_cells`, its non-numbers kept as text.
* Each column's printed unit is resolved once (:func:`parsers.ncu_values.canonical`) and its
  values scaled by the factor with numpy.
* Blank cells give no metrics row, as on the row-by-row path.

It returns None, and the caller takes the row-by-row path of :mod:`parsers.ncu_csv_layouts`
(with its line-precise error messages and locale handling), when pyarrow is not installed, when
a row does not have the header's width, when an ``ID`` other than the units row's is blank, or
when a cell can only be read with a decimal comma.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar

import numpy as np
import pandas as pd

from parsers.ncu_frames import DEVICE_TOOL_METRICS, LAUNCH_TOOL_METRICS
from parsers.ncu_values import IMPLIED_UNITS, canonical, decimal_comma_style, parse_cells

try:  # optional: without pyarrow every raw page takes the row-by-row path
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]
    import pyarrow.csv as pacsv  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - pyarrow ships with the supported pandas installs
    pa = None


#: the metric selection of the read in progress (``parsers.read(path, metrics=...)``): a
#: predicate over canonical metric names, None for every metric
SELECTED: ContextVar[Callable[[str], bool] | None] = ContextVar("SELECTED", default=None)
#: raw-page columns always read: the launch and device facts of :mod:`parsers.ncu_frames`
ALWAYS_READ = frozenset(LAUNCH_TOOL_METRICS + DEVICE_TOOL_METRICS)


class _Fallback(Exception):
    """The table needs the row-by-row path."""


def read_raw_columns(
    header: Sequence[str], texts: Sequence[str], is_metric: Sequence[bool]
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]] | None:
    """(identification columns, metrics rows, notes) of a raw table, or None.

    ``texts`` are the table's CSV lines after the header (units row first when there is one).
    The identification frame holds one row per launch (cells as printed); the metrics frame has
    ``launch_id`` (0-based), ``metric``, ``tool_metric``, ``unit``, ``value``, ``text`` and
    ``kernel``, launch-major in header order.  None: take the row-by-row path (module docstring).
    """
    if pa is None or not texts:
        return None
    try:
        return _convert(header, _read(header, texts), is_metric)
    except _Fallback:
        return None


def _read(header: Sequence[str], texts: Sequence[str]) -> list[pa.Array]:
    names = [f"c{i}" for i in range(len(header))]
    data = ("\n".join(texts) + "\n").encode("utf-8")
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.large_string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # ragged rows, stray quotes
        raise _Fallback from exc
    return [table.column(i).combine_chunks() for i in range(len(names))]


def _convert(
    header: Sequence[str], columns: list[pa.Array], is_metric: Sequence[bool]
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    ids_col = pc.utf8_trim_whitespace(columns[list(header).index("ID")])
    notes: list[str] = []
    start = 0
    if len(ids_col) and not ids_col[0].as_py():
        start = 1
    else:
        notes.append("raw page without a units row: metric values taken as printed")
    if len(ids_col) > start and not pc.all(pc.not_equal(ids_col.slice(start), "")).as_py():
        raise _Fallback  # a second units row: the row-by-row path names its line
    units = [str(c[0].as_py()) if start else "" for c in columns]
    ids = pd.DataFrame(
        {
            h: columns[i].slice(start).to_numpy(zero_copy_only=False).astype(object)
            for i, h in enumerate(header)
            if not is_metric[i]
        }
    )
    picked = _selected(header, units, is_metric, columns, start)
    rows, width = len(ids_col) - start, len(picked)
    values = np.empty((rows, width), dtype=float)
    keep = np.empty((rows, width), dtype=bool)
    texts: list[tuple[int, np.ndarray]] = []
    slow: list[pa.Array] = []
    for j, i in enumerate(picked):
        cells = pc.utf8_trim_whitespace(columns[i].slice(start))
        blank = pc.equal(cells, "").to_numpy(zero_copy_only=False)
        keep[:, j] = ~blank
        number = _fast_numbers(cells, blank)
        if number is None:
            slow.append(cells.filter(pa.array(~blank)))
            raw = cells.to_numpy(zero_copy_only=False).astype(object)
            number = parse_cells(pd.Series(raw, dtype=object))
            is_text = np.isnan(number) & ~blank
            if is_text.any():
                text = np.full(len(raw), None, dtype=object)
                text[is_text] = raw[is_text]
                texts.append((j, text))
        values[:, j] = number * canonical(header[i], units[i])[1]
    if slow:
        comma, mixed = decimal_comma_style(pd.Series(pa.concat_arrays(slow).to_pylist()))
        if comma or mixed:
            raise _Fallback
    metrics = _melt(header, units, picked, values, keep, texts)
    kernels = columns[list(header).index("Kernel Name")].slice(start)
    metrics["kernel"] = pd.arrays.ArrowStringArray(
        pc.take(kernels, pa.array(metrics["launch_id"].to_numpy()))
    )
    implied = {
        IMPLIED_UNITS[header[i]]
        for i in picked
        if header[i] in IMPLIED_UNITS and not units[i].strip()
    }
    if "Khz" in implied:
        notes.append("device clock attributes with a blank unit read as kHz (CUDA's unit)")
    return ids, metrics, notes


def _selected(
    header: Sequence[str],
    units: Sequence[str],
    is_metric: Sequence[bool],
    columns: list[pa.Array],
    start: int,
) -> list[int]:
    """The metric columns to convert: those :data:`SELECTED` keeps and :data:`ALWAYS_READ`.

    Every column when nothing is selected, or when leaving the others out would leave a launch
    without any metric value it has (the analysis tells launches with metric rows of their own
    from those without)."""
    every = [i for i, m in enumerate(is_metric) if m]
    keep = SELECTED.get()
    if keep is None:
        return every
    picked = [
        i for i in every if header[i] in ALWAYS_READ or keep(canonical(header[i], units[i])[0])
    ]
    if len(picked) == len(every):
        return every

    def valued(indices: Sequence[int]) -> np.ndarray:
        out = np.zeros(len(columns[0]) - start, dtype=bool)
        for i in indices:
            out |= pc.not_equal(pc.utf8_trim_whitespace(columns[i].slice(start)), "").to_numpy(
                zero_copy_only=False
            )
        return out

    has = valued(picked)
    if not has.all():
        left = sorted(set(every) - set(picked))
        if (valued(left) & ~has).any():
            return every
    return picked


def _fast_numbers(cells: pa.Array, blank: np.ndarray) -> np.ndarray | None:
    """The column as floats when every non-blank cell is a plain finite number, else None."""
    present = cells if not blank.any() else pc.if_else(pa.array(blank), None, cells)
    try:
        number = pc.cast(present, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    number = np.asarray(number, dtype=float)
    if not np.isfinite(number[~blank]).all():  # "inf", "nan": text for parse_cells to judge
        return None
    return number


def _melt(
    header: Sequence[str],
    units: Sequence[str],
    picked: Sequence[int],
    values: np.ndarray,
    keep: np.ndarray,
    texts: list[tuple[int, np.ndarray]],
) -> pd.DataFrame:
    """The long metrics rows (launch-major, header order) of the wide value grid."""
    rows, width = values.shape
    flat_keep = keep.ravel()
    column = np.tile(np.arange(width, dtype=np.int64), rows)[flat_keep]
    launch = np.repeat(np.arange(rows, dtype=np.int64), width)[flat_keep]
    info = [canonical(header[i], units[i]) for i in picked]

    def strings(items: Sequence[str]) -> pd.Series:
        taken = pc.take(pa.array(list(items), type=pa.large_string()), pa.array(column))
        return pd.Series(pd.arrays.ArrowStringArray(taken))

    text = np.full((rows, width), None, dtype=object)
    for j, cells in texts:
        text[:, j] = cells
    text_flat = text.ravel()[flat_keep]
    return pd.DataFrame(
        {
            "launch_id": launch,
            "metric": strings([i[0] for i in info]),
            "tool_metric": strings([header[i] for i in picked]),
            "unit": strings([i[2] for i in info]),
            "value": values.ravel()[flat_keep],
            "text": pd.Series(
                pd.arrays.ArrowStringArray(pa.array(text_flat, type=pa.large_string()))
            ),
        }
    )
