"""Distinct values coded in the order they are first seen: how the readers keep a column of
repeated texts (kernel names, thread ids) as codes into one list of distinct values."""

from __future__ import annotations

from typing import Any


class FirstSeen:
    """Distinct values and their codes (first seen, first coded)."""

    def __init__(self) -> None:
        self.codes: dict[Any, int] = {}
        self.values: list[Any] = []

    def code(self, value: Any) -> int:
        found = self.codes.get(value)
        if found is None:
            found = self.codes[value] = len(self.values)
            self.values.append(value)
        return found
