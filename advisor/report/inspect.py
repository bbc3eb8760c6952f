"""What ``cuda-advisor inspect`` reports about a profile: a plain dict, rendered as text or JSON.

Counts, per input:

* ``launches``: kernel launches.  From per-launch rows when the file has them
  (``launch_source = "per-launch"``), else the sum of the invocation counts of its kernel summary
  (``"summary"``), else of its per-kernel metric summaries (``"metrics"``).
* ``kernels``: distinct kernel names (launches, summaries, metrics and rules together).
* ``transfers`` / ``api_calls``: per-call rows, else the sum of the calls of their summaries
  (unified-memory page-fault, thrashing and throttling counts are not transfers).
* ``metrics``: distinct metrics per launch (or per kernel for summary exports);
  ``metric_values``: all metric rows.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from advisor.profile import Profile


def summarize(profile: Profile) -> dict[str, Any]:
    """The inspect summary of one profile (JSON-serialisable, deterministic)."""
    prov = profile.provenance
    launches, launch_source = _launch_count(profile)
    transfers = len(profile.transfers) or _sum_calls(_copies(profile.transfer_summary))
    api_calls = len(profile.api_calls) or _sum_calls(profile.api_summary)
    return {
        "path": profile.path,
        "format": "+".join(dict.fromkeys(p.format for p in prov)),
        "modes": sorted({m for p in prov for m in p.modes}),
        "profiler": "+".join(dict.fromkeys(p.profiler for p in prov)),
        "profiler_version": next((p.profiler_version for p in prov if p.profiler_version), None),
        "devices": _devices(profile),
        "launches": launches,
        "launch_source": launch_source,
        "kernels": len(profile.kernel_names()),
        "transfers": int(transfers),
        "api_calls": int(api_calls),
        "metrics": _metrics_per_launch(profile.metrics),
        "metric_values": len(profile.metrics),
        "rules": len(profile.rules),
        "notes": [n for p in prov for n in p.notes],
    }


def render_text(summaries: list[dict[str, Any]]) -> str:
    from advisor.render.templating import text_environment  # jinja2: the text only, not --json

    return text_environment().get_template("inspect.txt.j2").render(summaries=summaries)


def _launch_count(profile: Profile) -> tuple[int, str]:
    if len(profile.launches):
        return len(profile.launches), "per-launch"
    if len(profile.kernel_summary):
        return _sum_calls(profile.kernel_summary), "summary"
    metrics = profile.metrics
    if len(metrics):
        per_launch = metrics["launch_id"].dropna().nunique()
        if per_launch:
            return int(per_launch), "metrics"
        inv = metrics.dropna(subset=["invocations"]).drop_duplicates(["kernel", "device"])
        return int(inv["invocations"].sum()), "metrics"
    return 0, "none"


def _copies(frame: pd.DataFrame) -> pd.DataFrame:
    """Summary rows that are data movements (not unified-memory fault/thrash/throttle counts)."""
    return frame[~frame["kind"].fillna("").str.contains("fault|thrash|throttl", regex=True)]


def _sum_calls(frame: pd.DataFrame) -> int:
    return int(frame["calls"].fillna(0).sum()) if len(frame) else 0


def _metrics_per_launch(metrics: pd.DataFrame) -> int:
    if not len(metrics):
        return 0
    keyed = metrics["launch_id"].notna()
    if keyed.any():
        counts = metrics[keyed].groupby("launch_id")["metric"].nunique()
    else:
        counts = metrics.groupby(["kernel", "device"], dropna=False)["metric"].nunique()
    return int(counts.max())


def _devices(profile: Profile) -> list[str]:
    names: list[str] = []
    for _, row in profile.devices.sort_values("device_id", na_position="last").iterrows():
        label = row["name"] if pd.notna(row["name"]) else f"device {row['device_id']}"
        if pd.notna(row["compute_capability"]):
            label += f" (cc {row['compute_capability']})"
        names.append(str(label))
    if names:
        return names
    for frame, col in (
        (profile.launches, "device"),
        (profile.kernel_summary, "device"),
        (profile.transfers, "device"),
        (profile.metrics, "device"),
    ):
        names.extend(str(d) for d in frame[col].dropna().unique())
    return sorted(dict.fromkeys(names))
