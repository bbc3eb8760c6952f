"""Measured times of the derived timing tables (format ``timing-table``), per input size."""

from __future__ import annotations

import statistics

from advisor.profile import Profile


def median_duration_by_row_ns(profile: Profile) -> dict[int, float]:
    """Median kernel time (ns) of each row (input size) of a timing table.

    The reader stores one launch per cell and the row as the per-launch metric ``input_row``;
    empty cells (NaN) are skipped.  The median, not the mean: in some tables the columns are
    copies of one value rather than independent repeats, and single cells can be corrupt.
    """
    rows = profile.metrics[profile.metrics["metric"] == "input_row"]
    row_of = dict(zip(rows["launch_id"].astype(int), rows["value"].astype(int), strict=True))
    by_row: dict[int, list[float]] = {}
    launches = profile.launches
    for launch_id, duration_ns in zip(
        launches["launch_id"].astype(int), launches["duration_ns"], strict=True
    ):
        if duration_ns == duration_ns:  # skip NaN cells
            by_row.setdefault(row_of[launch_id], []).append(float(duration_ns))
    return {row: statistics.median(values) for row, values in sorted(by_row.items())}
