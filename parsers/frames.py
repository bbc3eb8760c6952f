"""Building the normalised frames from parsed rows: shared by every parser family."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from advisor import schema
from advisor.metric_map import canonicalize
from parsers.names import split_correlation, transfer_kind

_LAUNCH_COLS = list(schema.TABLES["launches"])
_TRANSFER_COLS = list(schema.TABLES["transfers"])


def metric_record(
    *,
    tool: str,
    tool_metric: str,
    value: float,
    unit: str,
    kernel: str | None,
    launch_id: int | None = None,
    device: str | None = None,
    device_id: int | None = None,
    section: str | None = None,
    minimum: float = math.nan,
    maximum: float = math.nan,
    total: float = math.nan,
    invocations: int | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """One ``metrics`` row; value/minimum/maximum/total are in ``unit`` (a base unit) and are
    mapped to the canonical name and unit by :func:`advisor.metric_map.canonicalize`."""
    metric, value_c, unit_c = canonicalize(tool_metric, value, unit, tool)

    def conv(x: float) -> float:
        return canonicalize(tool_metric, x, unit, tool)[1]

    return {
        "launch_id": launch_id,
        "kernel": kernel,
        "device": device,
        "device_id": device_id,
        "metric": metric,
        "tool_metric": tool_metric,
        "section": section,
        "unit": unit_c,
        "value": value_c,
        "minimum": conv(minimum),
        "maximum": conv(maximum),
        "total": conv(total),
        "invocations": invocations,
        "text": text,
    }


def gpu_activity_frames(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split GPU-trace rows (kernels, memcpy and memset mixed) into ``launches`` and
    ``transfers`` frames.

    ``rows`` has a ``name`` column and any of the columns of both tables plus ``bytes``; a row
    whose name is a transfer (``[CUDA memcpy HtoD]``, ``[CUDA memset]`` ...) becomes a transfer,
    every other named row a launch.  A trailing correlation id ``[123]`` on a kernel name moves
    to ``correlation_id`` when that column is empty.
    """
    names = rows["name"].astype("string")
    kinds = names.map(lambda n: transfer_kind(n) if isinstance(n, str) else None)
    is_transfer = kinds.notna()
    kernels = rows[~is_transfer & names.notna()].copy()
    if len(kernels):
        split = kernels["name"].map(split_correlation)
        kernels["name"] = split.map(lambda t: t[0])
        suffix_ids = pd.Series(pd.array([t[1] for t in split], dtype="Int64"), index=kernels.index)
        if "correlation_id" in kernels.columns:
            kernels["correlation_id"] = kernels["correlation_id"].where(
                kernels["correlation_id"].notna(), suffix_ids
            )
        else:
            kernels["correlation_id"] = suffix_ids
    launches = kernels[[c for c in _LAUNCH_COLS if c in kernels.columns]].reset_index(drop=True)
    launches["launch_id"] = range(len(launches))
    transfers = rows[is_transfer].copy()
    transfers["kind"] = kinds[is_transfer]
    transfers = transfers[[c for c in _TRANSFER_COLS if c in transfers.columns]]
    return launches, transfers.reset_index(drop=True)
