"""The hints of an analysis as a SARIF 2.1.0 log (``report --sarif FILE``).

SARIF (Static Analysis Results Interchange Format, OASIS standard 2.1.0) is what GitHub code
scanning uploads: each result it shows on the line of the pull request's diff.  The log built
by :func:`sarif_log` has one run whose tool is ``cuda-advisor`` with one rule per criterion that
has a hint, and one result per kernel hint, in the analysis' order (docs/locations.md):

* ``ruleId``: the criterion (``SHMEM_EFFICIENCY``); ``level``: ``warning``;
* ``message.text``: the kernel, the hint's title, its speedup (the kernel's and the
  application's) and, where the kernel's per-instruction data places it, the share of the
  criterion's waste at that line, e.g. ``SHMEM_EFFICIENCY in setColReadCol(int *): ... up to
  x1.9 for the kernel, x1.2 for the application; 50 % of the excessive shared wavefronts at
  this line (ST.E)``;
* ``locations``: the top source line of the criterion's waste (the analysis JSON's
  ``locations``, :mod:`advisor.report.locations`) as a physical location: the file as the
  report records it (an absolute path becomes a ``file://`` URI, which GitHub's upload makes
  relative to the checkout; a relative path stays relative to ``%SRCROOT%``) and
  ``region.startLine``.  A hint without a source line (no per-instruction data, no
  ``-lineinfo``, or a criterion without a per-instruction measure) gets a logical location
  naming its kernel (and, for an instruction without line info, the function and PC offset).

Application hints (HOSTSYNC) concern no kernel's code and are left out.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from advisor import __version__

VERSION = "2.1.0"
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "cuda-advisor"
SRCROOT = "%SRCROOT%"


def sarif_log(data: dict[str, Any]) -> dict[str, Any]:
    """The SARIF 2.1.0 log of the analysis JSON ``data`` (module docstring)."""
    results = []
    rules: dict[str, dict[str, Any]] = {}
    for kernel in data.get("kernels", []):
        for hint in kernel.get("hints", []):
            criterion = str(hint["criterion"])
            rules.setdefault(criterion, _rule(criterion, hint))
            results.append(_result(kernel, hint))
    ordered = sorted(rules)
    index = {rule: i for i, rule in enumerate(ordered)}
    for result in results:
        result["ruleIndex"] = index[result["ruleId"]]
    driver = {
        "name": TOOL,
        "version": __version__,
        "rules": [rules[r] for r in ordered],
    }
    run: dict[str, Any] = {"tool": {"driver": driver}, "results": results}
    if any(_physical(r) for r in results):
        run["originalUriBaseIds"] = {SRCROOT: {"description": {"text": "the source root"}}}
    return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def _rule(criterion: str, hint: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": criterion,
        "name": criterion.title().replace("_", ""),
        "shortDescription": {"text": f"{criterion}: {hint.get('title') or criterion}"},
        "fullDescription": {"text": f"cuda-advisor criterion {criterion} (docs/criteria.md)"},
        "defaultConfiguration": {"level": "warning"},
    }


def _result(kernel: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    criterion = str(hint["criterion"])
    name = str(kernel.get("name") or hint.get("kernel") or "")
    top, measure = _top(kernel, criterion)
    text = f"{criterion} in {name}: {hint.get('title') or ''}"
    speedups = []
    if hint.get("potential_speedup") is not None:
        speedups.append(f"x{hint['potential_speedup']:.2f} for the kernel")
    if hint.get("application_speedup") is not None:
        speedups.append(f"x{hint['application_speedup']:.2f} for the application")
    if speedups:
        text += "; up to " + ", ".join(speedups)
    if top is not None:
        text += f"; {top['share']:.0%} of the {measure} at {_where(top)}"
        if top.get("opcodes"):
            text += f" ({top['opcodes']})"
    result: dict[str, Any] = {
        "ruleId": criterion,
        "level": "warning",
        "message": {"text": text},
        "locations": [_location(name, top)],
        "properties": {
            "kernel": name,
            "potential_speedup": hint.get("potential_speedup"),
            "application_speedup": hint.get("application_speedup"),
            **({"share": top["share"]} if top is not None else {}),
        },
    }
    return result


def _top(kernel: dict[str, Any], criterion: str) -> tuple[dict[str, Any] | None, str]:
    """The kernel's top location of ``criterion`` in the analysis JSON, and the measure."""
    found = (kernel.get("locations") or {}).get("criteria", {}).get(criterion)
    if not found or not found.get("top"):
        return None, ""
    return found["top"][0], str(found.get("measure", ""))


def _where(top: dict[str, Any]) -> str:
    return "this line" if top.get("line") else str(top.get("location"))


def _location(kernel: str, top: dict[str, Any] | None) -> dict[str, Any]:
    logical = {"fullyQualifiedName": kernel, "kind": "function"}
    if top is None or not top.get("file") or not top.get("line"):
        if top is not None:
            logical = {"fullyQualifiedName": str(top["location"]), "kind": "function"}
        return {"logicalLocations": [logical]}
    return {
        "physicalLocation": {
            "artifactLocation": _artifact(str(top["file"])),
            "region": {"startLine": int(top["line"])},
        },
        "logicalLocations": [logical],
    }


def _artifact(path: str) -> dict[str, Any]:
    """An absolute path as a ``file://`` URI, a relative one relative to ``%SRCROOT%``."""
    posix = PurePosixPath(path.replace("\\", "/"))
    if posix.is_absolute():
        return {"uri": "file://" + quote(str(posix))}
    return {"uri": quote(str(posix)), "uriBaseId": SRCROOT}


def _physical(result: dict[str, Any]) -> bool:
    return any("physicalLocation" in loc for loc in result["locations"])
