"""One module per criterion, each with a declarative SPEC; everything else is generated from them.

Checks that every module of advisor/criteria/ (the engine aside) exposes a ``SPEC``, that
``CRITERIA``, ``KERNEL_CRITERIA``, the hint tables, the collection commands, the needed metrics
and the report's column labels all come from ``SPECS``, and that a fake criterion registered in a
test shows up in all of them and in an analysis, with no other edit.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import advisor.criteria
from advisor.criteria import CRITERIA, KERNEL_CRITERIA, SPECS, evaluate
from advisor.criteria.engine import collect, needed
from advisor.criteria.engine.analysis import COMPUTED, CriterionResult, Speedups
from advisor.criteria.engine.common import Context, Scored, absent, inverse, score
from advisor.criteria.engine.hints import ACTIONS, THRESHOLDS, TITLES, hint_for, rank
from advisor.criteria.engine.inputs import KernelData, Recipe, Values
from advisor.criteria.engine.spec import APPLICATION, KERNEL, CriterionSpec, Needs
from advisor.profile import Profile, Provenance
from advisor.render.report import CRITERIA_SHORT

PACKAGE = Path(advisor.criteria.__file__).parent
CRITERION_MODULES = sorted(
    m.name for m in pkgutil.iter_modules([str(PACKAGE)]) if not m.ispkg and m.name[0] != "_"
)
ENGINE_MODULES = sorted(m.name for m in pkgutil.iter_modules([str(PACKAGE / "engine")]))

PAPER_ORDER = (
    "HOSTSYNC",
    "DEVICESYNC",
    "DIVERGENCE",
    "LOADBALANC_WARP",
    "LOADBALANC_SM",
    "L1_GRANULARITY",
    "L2_GRANULARITY",
    "SHMEM_EFFICIENCY",
    "THROUGHPUT_OCCUPANCY",
)


@pytest.mark.parametrize("name", CRITERION_MODULES)
def test_every_criterion_module_exposes_its_spec(name: str) -> None:
    module = importlib.import_module(f"advisor.criteria.{name}")
    spec = module.SPEC
    assert isinstance(spec, CriterionSpec)
    assert spec.name.lower() == name  # one module, named after its criterion
    assert spec in SPECS
    assert "seed 002" in (module.__doc__ or "").lower()  # cites the paper (or says why not)


def test_specs_hold_the_nine_criteria_in_paper_order() -> None:
    assert len(CRITERION_MODULES) == len(SPECS)
    assert tuple(s.name for s in SPECS if s.name in PAPER_ORDER) == PAPER_ORDER
    assert tuple(s.name for s in SPECS[: len(PAPER_ORDER)]) == PAPER_ORDER
    assert [s.order for s in SPECS] == sorted(s.order for s in SPECS)
    assert [s.scope for s in SPECS[: len(PAPER_ORDER)]] == [APPLICATION] + [KERNEL] * 8


def test_criteria_and_evaluators_are_generated_from_specs() -> None:
    assert tuple(s.name for s in SPECS) == CRITERIA
    assert {s.name: s.evaluate for s in SPECS if s.scope == KERNEL} == KERNEL_CRITERIA
    assert list(KERNEL_CRITERIA) == [c for c in CRITERIA if c != "HOSTSYNC"]


def test_hint_tables_and_labels_are_generated_from_specs() -> None:
    assert dict(THRESHOLDS) == {s.name: s.threshold for s in SPECS}
    assert dict(TITLES) == {s.name: s.title for s in SPECS}
    assert dict(ACTIONS) == {s.name: s.actions for s in SPECS}
    assert list(THRESHOLDS) == list(CRITERIA)
    assert {s.name: s.short_label for s in SPECS} == CRITERIA_SHORT
    assert all(len(s.short_label) <= 10 and s.threshold_reason for s in SPECS)
    assert THRESHOLDS["L1_GRANULARITY"] == 0.9 and THRESHOLDS["DEVICESYNC"] == 0.8


def test_collection_needs_are_generated_from_specs() -> None:
    assert list(collect.NEEDS) == [*CRITERIA, "SPEEDUP", "BOUND"]
    assert all(collect.NEEDS[s.name] is s.needs for s in SPECS)
    assert collect.commands_for("HOSTSYNC")["nvprof"] == collect.NVPROF_TIMELINE


def test_needed_metrics_are_generated_from_the_specs_recipes() -> None:
    names = needed.needed_metrics()
    recipes = needed.all_recipes()
    for spec in SPECS:
        for recipe in spec.recipes:
            assert recipe in recipes
            assert set(recipe.needs) | set(recipe.optional) <= names, (spec.name, recipe.label)
    # DEVICESYNC's stall families are matched by its spec's patterns, not listed
    devicesync = next(s for s in SPECS if s.name == "DEVICESYNC")
    assert devicesync.metric_patterns
    assert needed.is_needed("smsp__pcsamp_warps_issue_stalled_long_scoreboard")


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_engine_modules_never_import_criteria_names_at_import_time(name: str) -> None:
    tree = ast.parse((PACKAGE / "engine" / f"{name}.py").read_text(encoding="utf-8"))
    for node in tree.body:  # top-level statements only: imports inside functions are lazy
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.module.startswith("advisor.criteria.engine") or not (
                node.module == "advisor.criteria" or node.module.startswith("advisor.criteria.")
            ), (name, node.module)
            assert not (node.module == "advisor" and any(a.name == "criteria" for a in node.names))
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert not alias.name.startswith("advisor.criteria") or alias.name.startswith(
                    "advisor.criteria.engine"
                ), (name, alias.name)


def test_hints_module_imports_on_its_own() -> None:
    code = "import advisor.criteria.engine.hints as h; print(h.THRESHOLDS['HOSTSYNC'])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "0.8"


def test_a_spec_checks_its_fields() -> None:
    spec = SPECS[2]
    with pytest.raises(ValueError, match="scope"):
        dataclasses.replace(spec, scope="device")
    with pytest.raises(ValueError, match="threshold"):
        dataclasses.replace(spec, threshold=1.5)
    with pytest.raises(ValueError, match="actions"):
        dataclasses.replace(spec, actions=())


# --------------------------------------------------------------------------- a fake criterion

FAKE = "FAKE_EFFICIENCY"
FAKE_RECIPES = (Recipe("fake ratio", ("fake_useful", "fake_total"), lambda v: _ratio(v)),)


def _ratio(v: Values) -> float | None:
    return v["fake_useful"] / v["fake_total"] if v["fake_total"] > 0 else None


def _fake_evaluate(kernel: KernelData, ctx: Context) -> CriterionResult:
    scored = score(kernel, FAKE_RECIPES, ctx)
    if not isinstance(scored, Scored):
        return absent(FAKE, kernel, FAKE_RECIPES, ctx)
    return CriterionResult(
        name=FAKE,
        status=COMPUTED,
        value=scored.raw,
        raw_value=scored.raw,
        speedups=Speedups(paper=inverse(scored.raw), amdahl=inverse(scored.raw)),
        method=scored.recipe.label,
        inputs=scored.inputs,
        launches_used=scored.launches_used,
    )


FAKE_SPEC = CriterionSpec(
    name=FAKE,
    order=99,
    threshold=0.7,
    threshold_reason="a test value",
    title="the fake criterion is low",
    actions=("do the fake thing",),
    short_label="fake",
    recipes=FAKE_RECIPES,
    needs=Needs(ncu_metrics=("fake__useful.sum", "fake__total.sum"), nvprof_events=("fake",)),
    evaluate=_fake_evaluate,
)


@pytest.fixture
def fake_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(advisor.criteria, "SPECS", (*SPECS, FAKE_SPEC))


def _profile(useful: float | None) -> Profile:
    metrics = [
        {"launch_id": 1, "kernel": "k", "metric": n, "tool_metric": n, "value": v}
        for n, v in (("fake_useful", useful), ("fake_total", 100.0))
        if v is not None
    ]
    return Profile(
        provenance=(Provenance(path="hand.csv", format="hand", profiler="ncu"),),
        launches=pd.DataFrame([{"launch_id": 1, "name": "k", "duration_ns": 1000.0}]),
        metrics=pd.DataFrame(metrics),
    )


@pytest.mark.usefixtures("fake_registered")
def test_a_registered_spec_shows_up_everywhere() -> None:
    assert THRESHOLDS[FAKE] == 0.7 and TITLES[FAKE] == "the fake criterion is low"
    assert ACTIONS[FAKE] == ("do the fake thing",)
    assert list(THRESHOLDS)[-1] == FAKE
    assert list(collect.NEEDS)[-3:] == [FAKE, "SPEEDUP", "BOUND"]
    assert "fake__useful.sum" in collect.commands_for(FAKE)["ncu"]
    assert "fake__total.sum" in collect.everything("ncu")[0]
    assert {"fake_useful", "fake_total"} <= needed.needed_metrics()
    assert needed.is_needed("fake_total")


@pytest.mark.usefixtures("fake_registered")
def test_a_registered_spec_is_evaluated_and_hinted() -> None:
    analysis = evaluate(_profile(useful=25.0))
    (kernel,) = analysis.kernels
    assert [c.name for c in kernel.criteria] == [*CRITERIA, FAKE]
    result = kernel.criteria[-1]
    assert result.status == COMPUTED and result.value == pytest.approx(0.25)
    (hint,) = [h for h in kernel.hints if h.criterion == FAKE]
    assert hint.threshold == 0.7 and hint.title == "the fake criterion is low"
    assert hint.actions == ("do the fake thing",)
    assert rank([hint]) == (hint,)
    missing = evaluate(_profile(useful=None)).kernels[0].criteria[-1]
    assert missing.status != COMPUTED and "fake__useful.sum" in missing.collect["ncu"]
    assert hint_for(result, "k", "amdahl", 1.0) == hint


def test_the_fake_spec_is_gone_once_unregistered() -> None:
    assert FAKE not in THRESHOLDS and FAKE not in collect.NEEDS
    assert "fake_useful" not in needed.needed_metrics()
