"""Do our predicted speedups match the gains of real tuning steps?

Run: ``python benchmarks/speedup_validation.py [--steps FILE] [--families DIR] [--json OUT]
[--quick]`` (needs ../shared/tuning_families and, for ``.ncu-rep`` files, the ``ncu_report``
module).

Each row of the steps file (default ``benchmarks/speedup_steps.tsv``) is one tuning step of a
family of real profiles: ``before`` -> ``after`` (paths relative to the families folder; ``a|b``
merges a metrics-only companion run into the analysis, durations come from ``a``), the
kernel selected in each, the scope (``kernel``: the selected kernels' summed durations; ``span``:
the GPU span, first to last kernel or transfer activity), and the criteria the step's change
addresses (written from the MANIFEST ``change`` column only, never from results).

Kernel selectors: a kernel name, or its start (the name up to ``(`` or a template ``<``), or a
substring that selects exactly one kernel; ``NAME#N`` selects the launch with id ``N`` (the
reader's 0-based launch order, which is the Nsight Compute launch ID written ``#N`` in
MANIFEST.tsv) and analyses that launch alone; ``A+B`` sums several selections (the F08 unroll +
matmul kernels, the FP16 conversion kernels); ``*`` is the whole GPU span.

From the BEFORE profile alone, for every step:

* ``ours``: the potential speedup of the addressed criteria, as the report prints it (Amdahl
  form).  Several addressed criteria are combined by taking the largest: they describe one
  change seen at several places (a coalescing fix is both L1 and L2 granularity, the same wasted
  sectors counted twice), so their speedups do not multiply; the step buys at most what its most
  limiting criterion promises.  A criterion that is not applicable (the kernel does not do that)
  counts as 1x, one that is not computable is left out; when none has a number the step has no
  prediction (``n/c``), and ``~`` marks a figure with some addressed criteria left out.
  HOSTSYNC is the application's criterion.  Where several kernels are selected (``A+B``) their
  predictions are combined by Amdahl over their durations: ``sum(d) / sum(d / s)``.
* ``overall``: the kernel's overall potential speedup (1 / the larger of its DRAM and FLOP
  fractions of peak, Decision P2), the application's for ``span`` steps (none when no kernel of
  the application has an estimate).
* ``rank``: where the first hint of an addressed criterion stands among the application's hints
  (hints of this kernel or application-level ones, from the analysis of the whole file) / among
  the kernel's own hints; ``-`` when there is no such hint.
* ``NVIDIA``: Nsight Compute's own rule estimates for that kernel: the rules that fired (OPT or
  WRN) and are paired with an addressed criterion (``PAIRINGS`` of ncu_agreement.py), the
  largest ``estimated_speedup_frac`` taken.  The readers store it as a fraction of the kernel's
  time (the report's percent / 100), converted to a speedup as ``1 / (1 - frac)``.

and from the AFTER profile the measured speedup ``duration(before) / duration(after)``.

The summary (advisor.validation.summarize) compares ours and NVIDIA's with the measured speedups,
each on the steps where it has a number and both on their common steps, over all steps and over
the steps of full-metric families (MANIFEST ``metric_coverage`` says "full section set").
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


class Unscorable(Exception):
    """A step that cannot be scored; the message says why."""


@functools.lru_cache(maxsize=64)
def _analyse(path: str, launch_ids: tuple[int, ...] = ()) -> dict[str, Any]:
    """Read ``path`` and run the criteria engine on it (on the launches ``launch_ids`` alone
    when given).  Every import of the product is here, so that a change of the package layout
    is one place to update.

    Returns ``{"analysis": to_json(...), "launches": [(id, name, duration_ns)], "span_ns": ...,
    "device_error": why the GPU was not identified, or None}``.
    """
    import numpy as np

    from advisor import pipeline
    from advisor.errors import AdvisorError

    try:
        profile = pipeline.read(path.split("|"))
    except ModuleNotFoundError as exc:
        raise Unscorable(f"needs the {exc.name} module") from exc
    except AdvisorError as exc:
        raise Unscorable(str(exc).replace(path + ": ", "").split(" (known formats")[0]) from exc
    if launch_ids:
        ids = list(launch_ids)

        def keep(frame: Any) -> Any:
            return frame[frame["launch_id"].isin(ids).fillna(False).to_numpy(dtype=bool)]

        profile = dataclasses.replace(
            profile,
            launches=keep(profile.launches),
            metrics=keep(profile.metrics),
            rules=keep(profile.rules),
        )
    run = pipeline.analyse_profile(profile)
    device_error = run.device_note
    gpu = MANIFEST_GPU.get(path.split("|")[0])
    if device_error and gpu:
        # the profile does not name its GPU (old ncu text output): the user would pass --device
        run = pipeline.analyse_profile(profile, device=gpu)
        device_error = f"{gpu} given as --device (MANIFEST): {device_error}"
    analysis = run.data
    launches = profile.launches
    starts = [launches["start_ns"].to_numpy(dtype=float, na_value=np.nan)]
    ends = [starts[0] + launches["duration_ns"].to_numpy(dtype=float, na_value=np.nan)]
    transfers = profile.transfers
    if len(transfers):
        t0 = transfers["start_ns"].to_numpy(dtype=float, na_value=np.nan)
        starts.append(t0)
        ends.append(t0 + transfers["duration_ns"].to_numpy(dtype=float, na_value=np.nan))
    first, last = np.concatenate(starts), np.concatenate(ends)
    span = (
        float(np.nanmax(last) - np.nanmin(first))
        if np.isfinite(first).any() and np.isfinite(last).any()
        else None
    )
    rows = zip(
        launches["launch_id"].astype(int).tolist(),
        launches["name"].astype(str).tolist(),
        launches["duration_ns"].to_numpy(dtype=float, na_value=np.nan).tolist(),
        strict=True,
    )
    return {
        "analysis": analysis,
        "launches": [(i, n, None if math.isnan(d) else d) for i, n, d in rows],
        "span_ns": span,
        "device_error": device_error,
    }


import manifest_steps  # noqa: E402
from manifest_steps import read_manifest  # noqa: E402
from ncu_agreement import FLAGGING, PAIRINGS  # noqa: E402

from advisor.report.headroom import fix_within_headroom  # noqa: E402
from advisor.validation import bounds_share, summarize  # noqa: E402

FAMILIES = REPO.parent / "shared" / "tuning_families"
STEPS = REPO / "benchmarks" / "speedup_steps.tsv"


@dataclasses.dataclass
class Result:
    step: dict[str, str]
    full_metrics: bool
    measured: float | None = None
    ours: float | None = None
    ours_partial: bool = False
    overall: float | None = None
    app_rank: int | None = None
    kernel_rank: int | None = None
    nvidia: float | None = None
    nvidia_rules: list[str] = dataclasses.field(default_factory=list)
    criteria: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    device: dict[str, Any] = dataclasses.field(default_factory=dict)
    device_error: str | None = None
    unscorable: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)


# ---------------------------------------------------------------- selection


def _short(name: str) -> str:
    """A kernel name up to its argument list or template arguments, without ``void ``."""
    head = name.split("(", 1)[0].split("<", 1)[0].strip()
    return head.removeprefix("void ").strip()


def _match(selector: str, names: Sequence[str]) -> list[str]:
    distinct = sorted(set(names))
    for test in (
        lambda n: n == selector,
        lambda n: _short(n) == selector,
        lambda n: selector in n,
    ):
        found = [n for n in distinct if test(n)]
        if found:
            return found
    return []


@dataclasses.dataclass(frozen=True)
class Part:
    name: str  # the full kernel name
    launch_id: int | None  # None: every launch of that name
    duration_ns: float | None


def _select(path: str, selector: str) -> list[Part]:
    """The launches a selector names (see the module docstring)."""
    launches = _analyse(path)["launches"]
    names = [n for _, n, _ in launches]
    parts = []
    for piece in selector.split("+"):
        text, _, index = piece.partition("#")
        found = _match(text, names)
        if not found:
            raise Unscorable(f"kernel {text!r} not found")
        if len(found) > 1:
            raise Unscorable(f"kernel selector {text!r} matches {len(found)} kernels")
        name = found[0]
        if index:
            lid = int(index)
            hit = [d for i, n, d in launches if i == lid and n == name]
            if not hit:
                raise Unscorable(f"no launch #{lid} of {_short(name)}")
            parts.append(Part(name, lid, hit[0]))
        else:
            durations = [d for _, n, d in launches if n == name]
            total = None if any(d is None for d in durations) else sum(durations)
            parts.append(Part(name, None, total))
    return parts


def _duration(path: str, selector: str, scope: str) -> float:
    path = path.split("|")[0]  # a metrics-only run merged for the analysis has no durations
    if scope == "span":
        span = _analyse(path)["span_ns"]
        if span is None or span <= 0:
            raise Unscorable("no GPU span (no start times)")
        return float(span)
    parts = _select(path, selector)
    if any(p.duration_ns is None for p in parts):
        raise Unscorable("missing kernel duration")
    return float(sum(p.duration_ns for p in parts))  # type: ignore[misc]


def _kernel_json(path: str, part: Part) -> dict[str, Any]:
    analysis = _analyse(path, (part.launch_id,) if part.launch_id is not None else ())["analysis"]
    for kernel in analysis["kernels"]:
        if kernel["name"] == part.name:
            return dict(kernel)
    raise Unscorable(f"kernel {_short(part.name)!r} has no analysis")


# ---------------------------------------------------------------- predictions


def _criteria() -> tuple[str, ...]:
    """The criteria's names, in the paper's order."""
    from advisor.criteria import CRITERIA

    return CRITERIA


def _criterion_speedup(criterion: dict[str, Any]) -> float | None:
    if criterion["status"] == "not_applicable":
        return 1.0
    if criterion["status"] != "computed":
        return None
    value = criterion["potential_speedup"]
    return None if value is None else float(value)


def _amdahl(pairs: Sequence[tuple[float, float]]) -> float | None:
    """``sum(d) / sum(d / s)`` over (duration, speedup) pairs."""
    if not pairs:
        return None
    return sum(d for d, _ in pairs) / sum(d / s for d, s in pairs)


def _nvidia(kernel: dict[str, Any], addressed: Sequence[str]) -> tuple[float | None, list[str]]:
    best: float | None = None
    fired: list[str] = []
    for rule in kernel.get("ncu_rules", []):
        if rule.get("rule_type") not in FLAGGING:
            continue
        if not any(c in PAIRINGS and PAIRINGS[c][1](rule) for c in addressed):
            continue
        frac = rule.get("estimated_speedup_frac")
        fired.append(f"{rule['rule']}({'-' if frac is None else f'{100 * frac:.1f}%'})")
        if frac is not None and 0 <= frac < 1:
            best = max(best or 0.0, frac)
    return (None if best is None else 1.0 / (1.0 - best)), fired


def _rank(hints: Sequence[dict[str, Any]], addressed: Sequence[str], names: set[str]) -> int | None:
    for k, hint in enumerate(hints, start=1):
        kernels = hint.get("kernels") or [hint["kernel"]]
        if hint["criterion"] in addressed and (
            hint["kernel"] is None or any(k_ in names for k_ in kernels)
        ):
            return k
    return None


def score(step: dict[str, str], families: Path, full: bool) -> Result:
    res = Result(step=step, full_metrics=full)
    before = "|".join(str(families / part) for part in step["before"].split("|"))
    after = str(families / step["after"])
    addressed = [] if step["addressed"] == "none" else step["addressed"].split(",")
    scope = step["scope"]
    try:
        read = _analyse(before)
        whole = read["analysis"]
        res.device, res.device_error = whole["device"], read["device_error"]
        measured_before = _duration(before, step["before_kernel"], scope)
        try:
            measured_after = _duration(after, step["after_kernel"], scope)
        except Unscorable as exc:
            raise Unscorable(f"after: {exc}") from exc
        res.measured = measured_before / measured_after
        app = whole["application"]
        if scope == "span":
            # kernels without an estimate count as 1x there: no estimate at all is no number
            if app["kernels_without_estimate"] < app["kernels"]:
                res.overall = app["potential_speedup"]
            kernels = [dict(k) for k in whole["kernels"]]
            names = {k["name"] for k in kernels}
            res.app_rank = _rank(app["hints"], addressed, names)
            if "HOSTSYNC" in addressed:
                res.criteria["HOSTSYNC"] = app["HOSTSYNC"]
                res.ours = _criterion_speedup(app["HOSTSYNC"])
            return res
        parts = _select(before, step["before_kernel"])
        kernels = [_kernel_json(before, p) for p in parts]
        names = {p.name for p in parts}
        res.app_rank = _rank(app["hints"], addressed, names)
        if len(kernels) == 1:
            res.kernel_rank = _rank(kernels[0]["hints"], addressed, names)
        durations = [float(k["duration_ns"] or 0.0) for k in kernels]
        overall = [
            (d, float(k["potential_speedup"]))
            for d, k in zip(durations, kernels, strict=True)
            if k["potential_speedup"]
        ]
        res.overall = _amdahl(overall) if len(overall) == len(kernels) else None
        per_kernel: list[tuple[float, float]] = []
        for d, kernel in zip(durations, kernels, strict=True):
            best: float | None = None
            for c in addressed:
                crit = app["HOSTSYNC"] if c == "HOSTSYNC" else kernel["criteria"][c]
                res.criteria.setdefault(c, crit)
                s = _criterion_speedup(crit)
                if c != "HOSTSYNC":  # application-wide: no kernel's headroom bounds it
                    s = fix_within_headroom(c, s, kernel)
                if s is None:
                    res.ours_partial = True
                    continue
                best = s if best is None else max(best, s)
            if best is not None:
                per_kernel.append((d, best))
            est, fired = _nvidia(kernel, addressed)
            res.nvidia_rules += fired
            if est is not None and len(kernels) == 1:
                res.nvidia = est
        if len(per_kernel) == len(kernels):
            res.ours = _amdahl(per_kernel)
        if res.ours is None:
            res.ours_partial = False
    except Unscorable as exc:
        text = str(exc)
        res.unscorable = text if text.startswith("after: ") else f"before: {text}"
    return res


# ---------------------------------------------------------------- printing


def _fmt(x: float | None, spec: str = ".2f", suffix: str = "x") -> str:
    return "-" if x is None else f"{format(x, spec)}{suffix}"


def _speedup(x: float | None) -> str:
    """Three significant digits at most, two decimals below 10x."""
    if x is None:
        return "-"
    return f"{x:.0f}x" if x >= 100 else f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


def _ours_text(r: Result) -> str:
    if not [c for c in r.step["addressed"].split(",") if c in _criteria()]:
        return "none"
    if r.ours is None:
        return "n/c"
    return ("~" if r.ours_partial else "") + _speedup(r.ours)


def _line(r: Result) -> str:
    rank = f"{r.app_rank or '-'}/{r.kernel_rank or '-'}"
    full = "F" if r.full_metrics else " "
    dev = "y" if r.device.get("identified") else "n"
    return (
        f"{r.step['step_id']:<11}{full} {dev:>3} {_speedup(r.measured):>8} {_ours_text(r):>9} "
        f"{_speedup(r.overall):>8} {rank:>6} {_speedup(r.nvidia):>7}  {r.step['addressed']}"
    )


def _diagnosis(r: Result) -> str | None:
    """One line of evidence for a step whose addressed prediction is n/c or off by > 25 %."""
    if r.unscorable is not None or r.measured is None or not r.criteria:
        return None
    if r.ours is not None and abs(r.ours / r.measured - 1.0) <= 0.25:
        return None
    bits = []
    for name, c in r.criteria.items():
        text = f"{name} {c['status']}"
        if c["value"] is not None:
            text += f" value={c['value']:.3g} sp={_speedup(c['potential_speedup'])}"
            if c.get("level_share_frac") is not None:
                text += f" p={c['level_share_frac']:.2f}"
        if c["missing"]:
            text += f" missing={','.join(c['missing'])}"
        if c["notes"]:
            text += f" ({c['notes'][0]})"
        if name == "HOSTSYNC":
            keep = ("span_ns", "idle_ns", "transfer_time_in_span_ns", "transfers_in_span")
            text += " " + ",".join(f"{k}={c['inputs'][k]:.4g}" for k in keep if k in c["inputs"])
        bits.append(text)
    dev = r.device.get("name") or f"device unknown ({r.device_error})"
    nvidia = ", ".join(r.nvidia_rules) if r.nvidia_rules else "no paired rule fired"
    return f"  {r.step['step_id']:<11} {'; '.join(bits)}; {dev}; NVIDIA: {nvidia}"


def _summary_line(label: str, pairs: list[tuple[float | None, float | None]]) -> str:
    s = summarize(pairs)
    if not s.n:
        return f"  {label:<30} n=0"
    sign = f"{s.sign_agree}/{s.sign_counted}" if s.sign_counted else "-"
    return (
        f"  {label:<30} n={s.n:<3} median error x{_fmt(s.median_error_factor, '.2f', '')}  "
        f"within 25%: {_fmt(s.within_25 and 100 * s.within_25, '.0f', '%')}  sign: {sign}  "
        f"Spearman: {_fmt(s.spearman, '.2f', '')}"
    )


def _summaries(results: list[Result], title: str) -> list[str]:
    scored = [r for r in results if r.unscorable is None and r.measured is not None]
    out = [f"{title} ({len(scored)} scored steps)"]
    ours = [(r.ours, r.measured) for r in scored if r.ours is not None]
    nvidia = [(r.nvidia, r.measured) for r in scored if r.nvidia is not None]
    common = [r for r in scored if r.ours is not None and r.nvidia is not None]
    out.append(_summary_line("ours (addressed criteria)", list(ours)))
    out.append(_summary_line("NVIDIA (paired rules)", list(nvidia)))
    out.append(_summary_line("ours, common steps", [(r.ours, r.measured) for r in common]))
    out.append(_summary_line("NVIDIA, common steps", [(r.nvidia, r.measured) for r in common]))
    overall = [r for r in scored if r.overall is not None]
    # the overall potential is the roofline headroom, an upper bound: checked as a bound only
    # (measured within it), never scored with an error factor like a prediction
    share = bounds_share(
        [float(r.overall) for r in overall],  # type: ignore[arg-type]
        [float(r.measured) for r in overall],  # type: ignore[arg-type]
    )
    out.append(
        f"  overall potential (roofline headroom, a bound) >= measured: "
        f"{sum(r.overall >= r.measured for r in overall)}/{len(overall)}"  # type: ignore[operator]
        f" ({_fmt(share and 100 * share, '.0f', '%')})"
    )
    return out


# ---------------------------------------------------------------- main


def _full_metric_paths(families: Path) -> set[str]:
    manifest = families / "MANIFEST.tsv"
    if not manifest.is_file():
        return set()
    return {
        row["local_path"]
        for row in read_manifest(manifest)
        if "full section set" in row.get("metric_coverage", "")
    }


#: local_path -> the GPU the MANIFEST names, for profiles that do not name theirs
MANIFEST_GPU: dict[str, str] = {}


def read_manifest_gpus(families: Path) -> dict[str, str]:
    """MANIFEST ``gpu`` per file (the name before `` (cc``), keyed by absolute path."""
    out = {}
    for row in read_manifest(families / "MANIFEST.tsv"):
        gpu = row.get("gpu", "").split(" (cc")[0].strip()
        if gpu:
            out[str(families / row["local_path"])] = gpu
    return out


def read_steps(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def plan_steps(
    families: Path, table: Path, derive_all: bool = False
) -> tuple[list[dict[str, str]], int, dict[str, str]]:
    """The steps to score: the reviewed rows of ``table`` whose baseline file is a version of
    this MANIFEST, then steps derived from the MANIFEST (``manifest_steps.py``) for every
    family no such row covers (all of them with ``derive_all``).

    Returns (steps, how many were derived, family -> why it has no step).
    """
    rows = read_manifest(families / "MANIFEST.tsv")
    versions = {row["local_path"] for row in rows}
    reviewed = [] if derive_all else read_steps(table)
    steps = [s for s in reviewed if s["before"].split("|")[0] in versions]
    covered = {s["family"] for s in steps}
    missing = [f for f in dict.fromkeys(row["family_id"] for row in rows) if f not in covered]
    derived = manifest_steps.derive(families / "MANIFEST.tsv", missing)
    for step in derived.steps:
        step["origin"] = "derived"
    return steps + derived.steps, len(derived.steps), derived.not_derived


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--steps", type=Path, default=STEPS, help="steps TSV (default: %(default)s)")
    ap.add_argument("--families", type=Path, default=FAMILIES, help="tuning families folder")
    ap.add_argument("--json", type=Path, help="write every step's figures and evidence here")
    ap.add_argument("--quick", action="store_true", help="only the first step of each family")
    ap.add_argument(
        "--derive",
        action="store_true",
        help="derive every step from the MANIFEST (manifest_steps.py), ignoring --steps",
    )
    args = ap.parse_args(argv)
    if not args.families.is_dir():
        print(f"tuning families not found at {args.families}", file=sys.stderr)
        return 2
    try:
        MANIFEST_GPU.update(read_manifest_gpus(args.families))
        steps, derived, not_derived = plan_steps(args.families, args.steps, args.derive)
    except (OSError, ValueError) as exc:
        print(f"cannot read the steps: {exc}", file=sys.stderr)
        return 2
    if args.quick:
        firsts: dict[str, dict[str, str]] = {}
        for s in steps:
            firsts.setdefault(s["family"], s)
        steps = list(firsts.values())
    full = _full_metric_paths(args.families)
    results = [score(s, args.families, s["before"] in full) for s in steps]

    header = (
        f"{'step':<12} {'dev':>3} {'measured':>8} {'ours':>9} {'overall':>8} {'rank':>6} "
        f"{'NVIDIA':>7}  addressed"
    )
    print(header)
    print("-" * 90)
    for r in results:
        if r.unscorable is None:
            print(_line(r))
    print("(F = full-metric family; dev = GPU found in the device database; rank = application")
    print(" hints / kernel hints; ~ = some addressed criteria not computable; none = no criterion")
    print(" describes the change; n/c = no addressed criterion computable)")
    print()
    for line in _summaries(results, "All steps"):
        print(line)
    print()
    for line in _summaries([r for r in results if r.full_metrics], "Full-metric families"):
        print(line)
    if derived:
        print(
            f"\n{derived} steps derived from the MANIFEST (manifest_steps.py): "
            + ", ".join(sorted({s["family"] for s in steps if s.get("origin") == "derived"}))
        )
    if not_derived:
        print(f"\nFamilies without a step ({len(not_derived)}):")
        for family, why in sorted(not_derived.items()):
            print(f"  {family:<11} {why}")
    unscored = [r for r in results if r.unscorable is not None]
    if unscored:
        print(f"\nNot scorable ({len(unscored)} steps):")
        for r in unscored:
            print(f"  {r.step['step_id']:<11} {r.unscorable}")
    lines = [d for d in map(_diagnosis, results) if d]
    if lines:
        print("\nAddressed prediction not computable or off by more than 25 %:")
        for line in lines:
            print(line)
    if args.json:
        args.json.write_text(json.dumps([_json(r) for r in results], indent=1, default=str))
    return 0


def _json(r: Result) -> dict[str, Any]:
    out = dataclasses.asdict(r)
    out["device"] = {k: r.device.get(k) for k in ("name", "identified", "source")}
    return out


if __name__ == "__main__":
    sys.exit(main())
