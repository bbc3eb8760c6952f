"""The database's "; "-separated cells (advisor.devices.database._split).

The cells are split at the semicolons outside parentheses; the splitter visits only the
parentheses and semicolons.  Checked against a character-by-character reading of the same rule
on every list cell of the database and on hand-made cells (nested and unbalanced
parentheses, empty items, white space).
"""

from __future__ import annotations

import csv

import pytest

from advisor.devices import database


def _by_characters(cell: str) -> tuple[str, ...]:
    """The rule read one character at a time: depth +1 at "(", -1 at ")", split at ";" at 0."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(cell):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth == 0:
            parts.append(cell[start:i])
            start = i + 1
    parts.append(cell[start:])
    return tuple(part.strip() for part in parts if part.strip())


@pytest.mark.parametrize(
    ("cell", "items"),
    [
        ("", ()),
        ("a", ("a",)),
        ("a; b;c ;", ("a", "b", "c")),
        (" ; ;", ()),
        ("x (1; 2); y", ("x (1; 2)", "y")),
        ("f(g(1; 2); 3); h", ("f(g(1; 2); 3)", "h")),
        ("a) b; c", ("a) b; c",)),  # unbalanced: below 0, nothing splits
        ("(a; b", ("(a; b",)),
    ],
)
def test_hand_made_cells(cell: str, items: tuple[str, ...]) -> None:
    assert database._split(cell) == items == _by_characters(cell)


def test_every_list_cell_of_the_database() -> None:
    with database.GPUS_CSV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    cells = [row[key] for row in rows for key in ("aliases", "sources", "notes")]
    assert len(cells) > 300 and any(";" in c and "(" in c for c in cells)
    for cell in cells:
        assert database._split(cell) == _by_characters(cell), cell
