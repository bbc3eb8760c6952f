"""The names of the two speedup forms (MODELS.md §1, Decisions 3-4; the formulas are in
:mod:`advisor.criteria.engine.speedups`).  A module of its own so that the command line declares
``--speedup-form`` without importing the criteria engine and, through it, pandas."""

from __future__ import annotations

#: the seed's formulas as printed (SP = (1 / criterion) * p for the level criteria)
PAPER = "paper"
#: the default: Amdahl's form, only the time at the level shrinking (Decision 4)
AMDAHL = "amdahl"
SPEEDUP_FORMS = (AMDAHL, PAPER)
