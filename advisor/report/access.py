"""Text and JSON views of the access calculators' results (``cuda-advisor access``).

Pure functions: a result of :mod:`advisor.models.access` becomes a plain dict (the JSON
document), and a dict or a list of dicts (a sweep) becomes text.  The MAX/SUM cost per access is
added where the seeds give the latencies (GT200, seed 001 §3.2.2).
"""

from __future__ import annotations

from typing import Any

from advisor.models import maxsum
from advisor.models.access import BankConflictResult, CoalescingResult
from advisor.models.access.pattern import AccessPattern

PROTOCOL_TITLES = {
    "halfwarp-segments": "half-warp segment protocol (seed 003 §III)",
    "l1-lines-128": "128 B L1 lines per warp",
    "sectors-32": "32 B sectors per warp",
}


def global_dict(result: CoalescingResult, cc: str) -> dict[str, Any]:
    """The JSON/text values of a coalescing result (with the GT200 model cost when it applies)."""
    k = result.threads_per_transaction
    table = maxsum.table_for(cc)
    cost = None
    if table is not None and k is not None:
        cost = maxsum.global_access_cycles(k, table.global_cycles)
    return {
        "protocol": result.protocol,
        "threads": result.threads,
        "active_threads": result.active_threads,
        "requests": result.requests,
        "transactions": result.transactions,
        "transactions_per_request": result.transactions_per_request,
        "group_threads": result.group_threads,
        "group_transactions": [
            [
                {"start_byte": t.start_byte, "bytes": t.size_bytes, "threads": list(t.threads)}
                for t in g
            ]
            for g in result.groups
        ],
        "bytes_moved": result.bytes_moved,
        "bytes_requested": result.bytes_requested,
        "efficiency_frac": result.efficiency_frac,
        "threads_per_transaction": k,
        "model_cycles_per_access": cost,
    }


def shared_dict(result: BankConflictResult, cc: str) -> dict[str, Any]:
    """The JSON/text values of a bank-conflict result (with the GT200 model cost if it applies)."""
    table = maxsum.table_for(cc)
    cost = None
    if table is not None and result.active_threads:
        cost = maxsum.shared_access_cycles(result.degree, table.shared_cycles)
    return {
        "banks": result.banks,
        "threads": result.threads,
        "active_threads": result.active_threads,
        "group_threads": result.group_threads,
        "group_degrees": list(result.group_degrees),
        "group_passes_cc1": None
        if result.group_passes_cc1 is None
        else list(result.group_passes_cc1),
        "degree": result.degree,
        "passes": result.passes,
        "replays": result.replays,
        "efficiency_frac": result.efficiency_frac,
        "model_cycles_per_access": cost,
    }


def render_single(
    kind: str, cc: str, pattern: AccessPattern, row: dict[str, Any], threads: int
) -> str:
    """The text view of one access."""
    group = "half-warp" if row["group_threads"] == 16 else "warp"
    lines = [
        f"{kind} access, cc {cc}: {_title(kind, row)}",
        f"pattern: {pattern.describe()}; {threads} threads, {row['active_threads']} active",
    ]
    if kind == "global":
        for i, txs in enumerate(row["group_transactions"]):
            plural = "s" * (len(txs) != 1)
            lines.append(f"{group} {i}: {len(txs)} transaction{plural}{_sizes(txs)}")
        lines += [
            f"transactions per request: {row['transactions_per_request']:g} "
            f"({row['requests']} warp request{'s' * (row['requests'] != 1)})",
            f"bytes moved {row['bytes_moved']}, requested {row['bytes_requested']}, "
            f"efficiency {pct(row['efficiency_frac'])}",
            f"threads per transaction k = {_num(row['threads_per_transaction'])}",
        ]
        if row["model_cycles_per_access"] is not None:
            lines.append(
                "MAX/SUM cost per access: (500 + k) / k = "
                f"{row['model_cycles_per_access']:g} cycles (seed 001 §3.2.2; 500 when k = 1)"
            )
    else:
        passes = row["group_passes_cc1"]
        for i, degree in enumerate(row["group_degrees"]):
            extra = f" (seed 003 step procedure: {passes[i]} passes)" if passes else ""
            lines.append(f"{group} {i}: degree {degree}{extra}")
        lines.append(
            f"conflict degree {row['degree']} (max distinct words asked of one bank), "
            f"{row['replays']} replays, efficiency {pct(row['efficiency_frac'])}"
        )
        if row["model_cycles_per_access"] is not None:
            lines.append(
                f"MAX/SUM cost per access: 4 × degree = {row['model_cycles_per_access']:g} cycles "
                "(seed 001 §3.2.2)"
            )
    return "\n".join(lines) + "\n"


def render_sweep(
    kind: str, cc: str, pattern: AccessPattern, rows: list[dict[str, Any]], key: str
) -> str:
    """The text table of a sweep, one row per value."""
    head = f"{kind} access, cc {cc}: {_title(kind, rows[0])}\npattern: {pattern.describe()}\n"
    if kind == "global":
        cols = ["tx/request", "bytes moved", "requested", "efficiency", "k", "cycles/access"]
        body = [_global_cells(row, key) for row in rows]
    else:
        cols = ["degree", "passes cc1", "replays", "efficiency", "cycles/access"]
        body = [_shared_cells(row, key) for row in rows]
    header = [key, *cols]
    widths = [max(len(str(c)), *(len(str(r[i])) for r in body)) for i, c in enumerate(header)]
    lines = ["  ".join(str(c).rjust(w) for c, w in zip(header, widths, strict=True))]
    lines += ["  ".join(str(v).rjust(w) for v, w in zip(r, widths, strict=True)) for r in body]
    return head + "\n".join(lines) + "\n"


def _global_cells(row: dict[str, Any], key: str) -> list[Any]:
    return [
        row[key],
        f"{row['transactions_per_request']:g}",
        row["bytes_moved"],
        row["bytes_requested"],
        pct(row["efficiency_frac"]),
        _num(row["threads_per_transaction"]),
        _num(row["model_cycles_per_access"]),
    ]


def _shared_cells(row: dict[str, Any], key: str) -> list[Any]:
    passes = row["group_passes_cc1"]
    return [
        row[key],
        row["degree"],
        "-" if passes is None else max(passes, default=0),
        row["replays"],
        pct(row["efficiency_frac"]),
        _num(row["model_cycles_per_access"]),
    ]


def _title(kind: str, row: dict[str, Any]) -> str:
    if kind == "global":
        return PROTOCOL_TITLES[row["protocol"]]
    group = "half-warp" if row["group_threads"] == 16 else "warp"
    return f"{row['banks']} banks of 4-byte words, one request per {group}"


def _sizes(transactions: list[dict[str, Any]]) -> str:
    counts: dict[int, int] = {}
    for t in transactions:
        counts[t["bytes"]] = counts.get(t["bytes"], 0) + 1
    return "".join(f", {n} × {size} B" for size, n in sorted(counts.items(), reverse=True))


def pct(frac: float | None) -> str:
    return "n/a" if frac is None else f"{100 * frac:.1f} %"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"
