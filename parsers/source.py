"""Reading an input file into lines, and the helpers every text parser shares.

A :class:`Source` is the decoded text of one file as a list of lines (BOM and CR removed), with
the path for error messages.  Line numbers in errors are 1-based.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from advisor.errors import MalformedInput, UnreadableInput

#: lines the profilers print around their tables (never data), and "# " comment lines that
#: cuda-advisor's own synthetic samples carry at the top
PREAMBLE = re.compile(r"^\s*(==\d+==|========|==PROF==|==WARNING==|==ERROR==|==WARN==)|^# ")
#: messages that explain why a file holds no kernel data, quoted in the error
FAILURE = re.compile(
    r"(==ERROR==.*|======== Error:.*|==\d+== Error:.*|No kernels were profiled\.?"
    r"|SKIPPED: .*does not contain CUDA kernel data\.?|Unable to import nvprof generated.*"
    r"|==WARNING== No kernels were profiled.*)"
)

SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass
class Source:
    """The decoded lines of one input file."""

    path: str
    lines: list[str]

    @classmethod
    def from_path(cls, path: str | Path) -> Source:
        return cls.from_bytes(str(path), read_bytes(path))

    @classmethod
    def from_bytes(cls, path: str, raw: bytes) -> Source:
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        text = raw.decode("utf-8", errors="replace")
        return cls(path=path, lines=text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))

    def head(self, n: int = 200) -> list[str]:
        return self.lines[:n]

    def malformed(self, index: int, message: str) -> MalformedInput:
        """A MalformedInput for the 0-based line ``index``."""
        return MalformedInput(self.path, message, line=index + 1)

    def failure_lines(self) -> list[str]:
        """The profiler's own error / no-kernel lines, in file order, de-duplicated."""
        found: list[str] = []
        for line in self.lines:
            m = FAILURE.search(line)
            if m and m.group(0).strip() not in found:
                found.append(m.group(0).strip())
        return found


def read_bytes(path: str | Path) -> bytes:
    """The bytes of ``path``, or an UnreadableInput naming it."""
    p = Path(path)
    if not p.exists():
        raise UnreadableInput(str(path), "no such file")
    if p.is_dir():
        raise UnreadableInput(str(path), "is a directory, expected a profile file")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise UnreadableInput(str(path), f"cannot read: {exc.strerror or exc}") from exc


def is_preamble(line: str) -> bool:
    return bool(PREAMBLE.match(line))


def csv_fields(line: str) -> list[str]:
    """Split one CSV line (double quotes, embedded commas) into fields."""
    return next(csv.reader([line]))


def csv_rows(lines: Sequence[str]) -> Iterator[list[str]]:
    """Split CSV lines into rows of fields (quoted fields may not span lines in these exports)."""
    yield from csv.reader(lines)


def is_binary(raw: bytes) -> bool:
    return b"\x00" in raw[:4096]
