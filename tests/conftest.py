"""Shared fixtures.

Tests that read real profiler dumps use the ``real_profiles`` fixture: the folder
``../shared/real_profiles`` beside the checkout.  Without it those tests skip with the reason,
except under ``CI=true``, where its absence is an error.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REAL_PROFILES = REPO.parent / "shared" / "real_profiles"
SAMPLES = REPO / "sample_profiles"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def real_profiles() -> Path:
    """The real profiler dumps folder; skip (or fail under CI=true) when absent."""
    if not REAL_PROFILES.is_dir():
        if _in_ci():
            pytest.fail(f"CI=true but the real profiles folder {REAL_PROFILES} is missing")
        pytest.skip(f"real profiles folder {REAL_PROFILES} not present (needs ../shared)")
    return REAL_PROFILES


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES
