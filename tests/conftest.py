"""Shared fixtures.

Tests that read real profiler dumps use the ``real_profiles`` fixture: the folder
``../shared/real_profiles`` beside the checkout; tests of the real tuning steps' files use the
``tuning_families`` fixture (``../shared/tuning_families``).  Without the folder those tests skip
with the reason, except under ``CI=true``, where its absence is an error.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
REAL_PROFILES = REPO.parent / "shared" / "real_profiles"
TUNING_FAMILIES = REPO.parent / "shared" / "tuning_families"
SAMPLES = REPO / "sample_profiles"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _shared(folder: Path, what: str) -> Path:
    """``folder`` under ../shared; skip (or fail under CI=true) when absent."""
    if not folder.is_dir():
        if _in_ci():
            pytest.fail(f"CI=true but the {what} folder {folder} is missing")
        pytest.skip(f"{what} folder {folder} not present (needs ../shared)")
    return folder


@pytest.fixture(scope="session")
def real_profiles() -> Path:
    """The real profiler dumps folder; skip (or fail under CI=true) when absent."""
    return _shared(REAL_PROFILES, "real profiles")


@pytest.fixture(scope="session")
def tuning_families() -> Path:
    """The real tuning steps' folder (profiles before and after each change); skip (or fail
    under CI=true) when absent."""
    return _shared(TUNING_FAMILIES, "tuning families")


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES


@pytest.fixture(scope="session")
def ncu_module() -> ModuleType:
    """NVIDIA's ncu_report module; skip without it (fail under CI=true, which installs it)."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        if _in_ci():
            pytest.fail("CI=true but ncu_report is not installed (pip install '.[ncu]')")
        pytest.skip("ncu_report not installed: pip install 'cuda-advisor[ncu]'")
