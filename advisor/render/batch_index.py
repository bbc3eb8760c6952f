"""The index of a ``report --per-file`` run (:mod:`advisor.report.batch`) as HTML, Markdown and
JSON.

One row per profile, sorted by path: format, kernels, launches, GPU time, the application's
potential speedup, the top hint and a link to the profile's own report in the same folder; a
skipped or failed profile shows its one-line reason instead.  No dates or timings, so the same
inputs give the same bytes.  Escaping and CSP as in the report (:mod:`advisor.render.report`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import quote

from advisor.render.report import CSP, environment, fmt_ms, fmt_x, md_escape
from advisor.report.batch import (
    STATUS_FAILED,
    STATUS_REPORTED,
    STATUS_SKIPPED,
    SUFFIXES,
    Entry,
)

#: the ``schema`` value of index.json
SCHEMA = "cuda-advisor/batch-index@1"


@dataclass(frozen=True)
class Counts:
    profiles: int
    reported: int
    skipped: int
    failed: int

    @property
    def sentence(self) -> str:
        text = f"{self.profiles} profiles: {self.reported} reported, {self.skipped} skipped"
        return text + (f", {self.failed} failed" if self.failed else "")


@dataclass(frozen=True)
class Row:
    entry: Entry
    href: str | None  # link to the profile's report beside the index; None when not reported


def counts(entries: Sequence[Entry]) -> Counts:
    def n(status: str) -> int:
        return sum(e.status == status for e in entries)

    return Counts(len(entries), n(STATUS_REPORTED), n(STATUS_SKIPPED), n(STATUS_FAILED))


def _rows(entries: Sequence[Entry], kind: str) -> list[Row]:
    return [
        Row(e, quote(e.name + SUFFIXES[kind]) if e.status == STATUS_REPORTED else None)
        for e in sorted(entries, key=lambda e: e.rel)
    ]


def html(entries: Sequence[Entry], speedup_form: str) -> str:
    """index.html: a table linking every profile's HTML report."""
    return (
        environment()
        .get_template("index.html.j2")
        .render(
            csp=CSP,
            rows=_rows(entries, "html"),
            counts=counts(entries),
            speedup_form=speedup_form,
        )
    )


def markdown(entries: Sequence[Entry], speedup_form: str) -> str:
    """index.md: the same table in GitHub-flavoured Markdown, linking the Markdown reports."""
    lines = [
        "## cuda-advisor reports",
        "",
        f"{counts(entries).sentence} (speedup form: {md_escape(speedup_form)}).",
        "",
        "| profile | format | kernels | launches | GPU time | potential speedup | top hint |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for row in _rows(entries, "markdown"):
        e = row.entry
        if row.href is None:
            lines.append(
                f"| {md_escape(e.rel)} | {e.status} | | | | | {md_escape(e.reason or '')} |"
            )
            continue
        gates = f" (gates failed: {len(e.gate_failures)})" if e.gate_failures else ""
        lines.append(
            f"| [{md_escape(e.rel)}]({row.href}) | {md_escape(e.format or '')} | {e.kernels} | "
            f"{e.launches} | {fmt_ms(e.gpu_time_ns)} | {fmt_x(e.potential_speedup)}{gates} | "
            f"{md_escape(e.top_hint or 'no hint')} |"
        )
    return "\n".join(lines) + "\n"


def to_json(entries: Sequence[Entry], speedup_form: str, device: str | None) -> str:
    """index.json: every Entry field (``rel`` as ``path``), plus the JSON report's file name."""
    profiles: list[dict[str, Any]] = []
    for row in _rows(entries, "json"):
        item = asdict(row.entry)
        del item["usage_error"]
        item["path"] = item.pop("rel")
        item["gate_failures"] = list(row.entry.gate_failures)
        item["report"] = None if row.href is None else row.entry.name + SUFFIXES["json"]
        profiles.append(item)
    data = {
        "schema": SCHEMA,
        "speedup_form": speedup_form,
        "device_option": device,
        "summary": asdict(counts(entries)),
        "profiles": profiles,
    }
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
