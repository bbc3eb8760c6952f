"""Numbers, units and metric names of Nsight Compute CSV exports, converted to the normalised model.

Shared by the three layouts :mod:`parsers.ncu.csv` reads (FORMATS.md §2.2 details, §2.3 raw,
§2.4 per-kernel summary).  Everything here works on whole columns: a value is parsed once per
distinct cell text and a unit is resolved once per distinct (metric, unit) pair, so a raw page
of a thousand launches by five hundred metrics costs a few vectorised passes.

Rules (FORMATS.md §2.5):

* Numbers: thousands separators ``"13,485"`` are stripped; ``n/a`` and the other placeholder
  tokens are missing values; other text (``PolicySpread``, ``No-CC``) is kept as text.
* Locale: an export written under a decimal-comma locale (``"27.595.520"``, ``"65,77"``) is
  recognised only when the file gives unambiguous evidence of that style and none of the
  ordinary one; cells that stay ambiguous are read the ordinary way.
* Units: decimal prefixes (``Kbyte`` = 1000 byte, ``Ghz`` = 1e9 hz) through
  :func:`parsers.units.scale_ncu`; ``cycle/second`` style rates become ``hz``.  A count unit
  (``register/thread``, ``cycle``, ``warp``, ``inst/cycle``) is a plain number for the metric
  map, so ``Registers Per Thread`` and ``launch__registers_per_thread`` both reach
  ``registers_per_thread``; a count metric the map does not know keeps its printed unit.
* Device attributes that CUDA reports in kHz or bytes are printed with a blank unit in the raw
  page's units row; their unit is implied from the attribute name (:data:`IMPLIED_UNITS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

import numpy as np
import pandas as pd

from advisor import schema
from advisor.metric_map import canonicalize
from parsers.units import INT_LIMIT, is_missing, parse_number, scale_ncu

#: words of the count-like units ncu prints; a unit made only of them ("register/thread",
#: "inst/cycle") is a plain number for the metric map
COUNT_WORDS = frozenset(
    {
        "block", "cluster", "cycle", "inst", "instance", "pass", "register", "request",
        "sector", "SM", "thread", "TPC", "warp", "wavefront",
    }
)  # fmt: skip

#: units of device attributes whose units-row cell is blank (CUDA's device attribute units)
IMPLIED_UNITS = {
    "device__attribute_clock_rate": "Khz",
    "device__attribute_memory_clock_rate": "Khz",
    "device__attribute_max_gpu_frequency_khz": "Khz",
    "device__attribute_max_mem_frequency_khz": "Khz",
    "device__attribute_l2_cache_size": "byte",
    "device__attribute_max_persisting_l2_cache_size": "byte",
    "device__attribute_total_memory": "byte",
    "device__attribute_total_constant_memory": "byte",
    "device__attribute_max_shared_memory_per_block": "byte",
    "device__attribute_max_shared_memory_per_block_optin": "byte",
    "device__attribute_max_shared_memory_per_multiprocessor": "byte",
    "device__attribute_reserved_shared_memory_per_block": "byte",
}

# Evidence of the two number styles (FORMATS.md §2.5).  Ordinary: a single '.' followed by
# other than exactly three digits, or ',' groups followed by a '.' fraction, or several ','
# groups.  Decimal comma: a ',' followed by other than exactly three digits, several '.'
# groups, or '.' groups followed by a ',' fraction.
_ORDINARY = re.compile(
    r"[-+]?(\d*\.(\d{1,2}|\d{4,})([eE][-+]?\d+)?|\d{1,3}(,\d{3})+\.\d+|\d{1,3}(,\d{3}){2,})"
)
_DECIMAL_COMMA = re.compile(
    r"[-+]?(\d+,(\d{1,2}|\d{4,})|\d{1,3}(\.\d{3}){2,}|\d{1,3}(\.\d{3})+,\d+)"
)
_COMMA_NUMBER = re.compile(r"[-+]?(\d{1,3}(\.\d{3})+|\d+)(,\d+)?")


def distinct_cells(cells: pd.Series) -> pd.Series:
    """The distinct texts of ``cells`` (object), in no particular order: of a categorical
    column (the details page read by columns, :func:`parsers.ncu.csv.one_details_table`) the
    categories its rows use, without expanding the column; of any other column
    ``cells.astype(str)``'s distinct values."""
    if isinstance(cells.dtype, pd.CategoricalDtype):
        codes = cells.cat.codes.to_numpy()
        used = np.unique(codes)
        words = cells.cat.categories.to_numpy(dtype=object)[used[used >= 0]]
        if (used < 0).any():  # a missing cell reads as astype(str) writes it
            words = np.append(words, str(np.nan))
        return pd.Series(words, dtype=object)
    return pd.Series(pd.unique(cells.astype(str)), dtype=object)


def blank_cells(cells: pd.Series) -> np.ndarray:
    """Per row, whether the cell is empty once stripped (``cells.str.strip() == ""``; a missing
    cell is not); a categorical column is looked at once per category."""
    if isinstance(cells.dtype, pd.CategoricalDtype):
        words = cells.cat.categories.to_numpy(dtype=object)
        empty = np.append(np.array([w.strip() == "" for w in words], dtype=bool), False)
        return empty[cells.cat.codes.to_numpy()]  # code -1 (missing) takes the last slot
    return (cells.str.strip() == "").to_numpy(dtype=bool, na_value=False)


def decimal_comma_style(cells: pd.Series, *more: pd.Series) -> tuple[bool, bool]:
    """(decimal_comma, mixed) for the distinct value cells of one table (``cells`` and the
    columns ``more``, categorical or not: only their distinct texts are looked at).

    ``decimal_comma`` is true only when some cell can only be read with a decimal comma and
    none can only be read the ordinary way; ``mixed`` says both kinds were seen (the cells
    that need a decimal comma then stay text).
    """
    texts = pd.concat([distinct_cells(c) for c in (cells, *more)], ignore_index=True)
    uniq = pd.Series(pd.unique(texts.str.strip()), dtype="string")
    comma = bool(uniq.str.fullmatch(_DECIMAL_COMMA.pattern).fillna(False).any())
    if not comma:
        return False, False
    ordinary = bool(uniq.str.fullmatch(_ORDINARY.pattern).fillna(False).any())
    return not ordinary, ordinary


def cell_number(cell: str, decimal_comma: bool = False) -> float:
    """One value cell as a float (NaN for placeholders and text)."""
    text = cell.strip()
    if decimal_comma and _COMMA_NUMBER.fullmatch(text):
        return float(text.replace(".", "").replace(",", "."))
    return parse_number(text)


def parse_cells(cells: pd.Series, decimal_comma: bool = False) -> np.ndarray:
    """Parse a column of value cells, once per distinct text (a categorical column: once per
    category, without expanding the column)."""
    if isinstance(cells.dtype, pd.CategoricalDtype) and (cells.cat.codes.to_numpy() >= 0).all():
        words = cells.cat.categories.to_numpy(dtype=object)
        table = np.array([cell_number(str(w), decimal_comma) for w in words], dtype=float)
        return table[cells.cat.codes.to_numpy()] if len(words) else np.array([], dtype=float)
    codes, uniq = pd.factorize(cells.astype(str), use_na_sentinel=False)
    table = np.array([cell_number(str(u), decimal_comma) for u in uniq], dtype=float)
    return table[codes] if len(uniq) else np.array([], dtype=float)


def is_count_unit(unit: str) -> bool:
    parts = unit.split("/")
    return all(p in COUNT_WORDS for p in parts)


@cache
def canonical(tool_metric: str, printed_unit: str) -> tuple[str, float, str]:
    """(canonical name, factor from the printed value to its unit, unit) of one ncu metric.

    The factor is exact because every conversion involved is a multiplication.
    """
    unit = printed_unit.strip()
    if not unit and tool_metric in IMPLIED_UNITS:
        unit = IMPLIED_UNITS[tool_metric]
    factor, base = scale_ncu(1.0, unit)
    if base == "cycle/s":
        base = "hz"
    result = canonicalize(tool_metric, 1.0, base, "ncu")
    if result == (tool_metric, 1.0, base) and base and is_count_unit(base):
        plain = canonicalize(tool_metric, 1.0, "", "ncu")
        if plain != (tool_metric, 1.0, ""):
            result = plain
    name, scale, unit_c = result
    return name, factor * scale, unit_c


def metric_columns(
    names: pd.Series,
    units: pd.Series,
    cells: pd.Series,
    *,
    decimal_comma: bool = False,
    extra: Mapping[str, pd.Series] | None = None,
) -> pd.DataFrame:
    """The ``metric``, ``tool_metric``, ``unit``, ``value`` and ``text`` columns of metrics rows.

    ``names``/``units``/``cells`` are the metric name, printed unit and value cell of each row
    (aligned, any index).  ``extra`` maps further output columns (``minimum``, ``maximum``) to
    their value cells, scaled like ``value``.  ``text`` holds the cell when it is not a number
    (``n/a``, ``PolicySpread``), else is missing.
    """
    if all(_complete_categorical(s) for s in (names, units, cells)):
        frame = _categorical_metric_columns(names, units, cells, decimal_comma)
        factor = frame.pop("_factor").to_numpy()
        for column, extra_cells in (extra or {}).items():
            frame[column] = parse_cells(extra_cells.reset_index(drop=True), decimal_comma) * factor
        return frame
    names = names.astype(str).reset_index(drop=True)
    units = units.astype(str).reset_index(drop=True)
    cells = cells.astype(str).reset_index(drop=True)
    keys = names.str.cat(units, sep="\x1f")
    codes, uniq = pd.factorize(keys, use_na_sentinel=False)
    info = [canonical(*str(k).split("\x1f", 1)) for k in uniq]
    metric = np.array([i[0] for i in info] or [""], dtype=object)[codes]
    factor = np.array([i[1] for i in info] or [1.0], dtype=float)[codes]
    unit = np.array([i[2] for i in info] or [""], dtype=object)[codes]
    value = parse_cells(cells, decimal_comma) * factor
    stripped = cells.str.strip()
    text = stripped.where(np.isnan(value) & (stripped != ""), None)
    frame = pd.DataFrame(
        {
            "metric": metric,
            "tool_metric": names,
            "unit": unit,
            "value": value,
            "text": text.astype(object),
        }
    )
    for column, extra_cells in (extra or {}).items():
        frame[column] = parse_cells(extra_cells.reset_index(drop=True), decimal_comma) * factor
    return frame


def _complete_categorical(cells: pd.Series) -> bool:
    """A categorical column of texts without a missing cell (as pandas' C parser reads a
    details page, :func:`parsers.ncu.csv.one_details_table`)."""
    return isinstance(cells.dtype, pd.CategoricalDtype) and bool(
        (cells.cat.codes.to_numpy() >= 0).all()
    )


def _categorical_metric_columns(
    names: pd.Series, units: pd.Series, cells: pd.Series, decimal_comma: bool
) -> pd.DataFrame:
    """:func:`metric_columns` of categorical columns, worked out once per (name, unit) pair and
    once per value text, then spread over the rows by their codes (no text is built per row);
    ``metric``, ``tool_metric`` and ``unit`` stay categoricals, which the schema keeps (with
    sorted categories, :func:`advisor.schema.validate`).  ``_factor`` is each row's unit
    factor, for the caller's extra columns."""
    name_words = names.cat.categories.to_numpy(dtype=object)
    unit_words = units.cat.categories.to_numpy(dtype=object)
    name_codes = names.cat.codes.to_numpy().astype(np.int64)
    pair = name_codes * max(len(unit_words), 1) + units.cat.codes.to_numpy()
    codes, uniq = _numbered(pair, len(name_words) * max(len(unit_words), 1))
    name_of = uniq // max(len(unit_words), 1)
    unit_of = uniq % max(len(unit_words), 1)
    info = [
        canonical(str(name_words[a]), str(unit_words[b]))
        for a, b in zip(name_of.tolist(), unit_of.tolist(), strict=True)
    ]
    factor = np.array([i[1] for i in info] or [1.0], dtype=float)[codes]
    value = parse_cells(cells, decimal_comma) * factor
    words = cells.cat.categories.to_numpy(dtype=object)
    stripped = np.array([str(w).strip() for w in words] + [""], dtype=object)
    cell_codes = cells.cat.codes.to_numpy()
    keep = np.isnan(value) & (stripped != "")[cell_codes]
    text = texts_of(stripped, cell_codes, keep)
    tool = pd.Categorical.from_codes(
        name_codes, categories=pd.Index(name_words, dtype=object), validate=False
    )
    return pd.DataFrame(
        {
            "metric": schema.categorical_of(codes, [i[0] for i in info]),
            "tool_metric": tool,
            "unit": schema.categorical_of(codes, [i[2] for i in info]),
            "value": value,
            "text": text,
            "_factor": factor,
        }
    )


#: (name, unit) pairs numbered through a table of every possible pair up to this many
_DENSE_PAIRS = 1 << 22


def _numbered(pair: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values) of ``pair`` (integers in ``0..size-1``): each distinct value a
    code, as :func:`pandas.factorize` gives them but numbered in increasing order of the value
    when ``size`` is small (a table of ``size`` slots instead of a hash of every row); the
    callers use the codes only to look the distinct values up."""
    if not 0 < size <= _DENSE_PAIRS:
        return pd.factorize(pair, use_na_sentinel=False)
    seen = np.bincount(pair, minlength=size) > 0
    number = np.cumsum(seen) - 1
    return number[pair], np.flatnonzero(seen)


def texts_of(words: np.ndarray, codes: np.ndarray, keep: np.ndarray) -> pd.arrays.ArrowStringArray:
    """A ``text`` column: ``words[codes]`` where ``keep``, missing elsewhere, in the schema's
    string dtype (:data:`advisor.schema.STR`), each word made printable once
    (:func:`advisor.text.printable`, which the profile applies to a column of Python strings:
    the same texts, without a Python string per row)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    from advisor.text import printable

    shown = pa.array([printable(str(w)) for w in words], type=pa.large_string())
    at = pa.array(codes.astype(np.int32, copy=False), mask=~keep)
    texts = pa.DictionaryArray.from_arrays(at, shown).cast(pa.large_string())
    return pd.arrays.ArrowStringArray(pa.chunked_array([texts]))


def int_or_na(values: pd.Series) -> pd.Series:
    """Integral floats as Int64; anything else (NaN, 40.5, inf, 1e20) missing."""
    num = pd.to_numeric(values, errors="coerce").astype(float)
    num = num.where((num % 1 == 0) & (num.abs() < INT_LIMIT))
    return num.astype("Int64")


def id_number(cell: object) -> float:
    """An identification cell (Context, Stream, Invocations) as a number, NaN when blank."""
    return parse_number(cell) if not is_missing(cell) else float("nan")
