"""Progress on long work: one line on stderr, redrawn in place, for large inputs only.

A :class:`Progress` counts steps (parsing each input file, the analysis, rendering each output;
or, for ``report --per-file``, each profile analysed) and shows the current one as::

    cuda-advisor: [########............] 2/5 parsing trace.csv (512.0 MB)

It is shown only when every condition holds (:func:`wanted`):

* stderr is a terminal (a pipe, a file or a CI log never receives it);
* the inputs are large: :data:`LARGE_INPUT_BYTES` or more in all (small inputs finish before a
  bar would help);
* ``--quiet`` was not given;
* the environment variable ``CI`` is not set to ``1``, ``true`` or ``yes`` (any case), the value
  CI services set and tests/conftest.py reads.

Otherwise every method does nothing, so outputs, stdout and stderr stay byte-identical to a run
without progress.  The line is erased (carriage return and clear-to-end-of-line) before anything
else is printed and when the work ends, so a terminal keeps only the command's own lines.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

#: total input size from which progress is shown (50 MiB: an nvprof gpu-trace of ~300,000 rows,
#: a few seconds of work; below it a bar would only flicker)
LARGE_INPUT_BYTES = 50 * 1024 * 1024
#: width of the bar in characters
BAR_CHARS = 20
#: values of the ``CI`` environment variable that mean "running in CI"
CI_VALUES = ("1", "true", "yes")
#: moves to the line start and clears it
_ERASE = "\r\x1b[K"

T = TypeVar("T")


class Progress:
    """A step counter drawn on ``stream``; with ``stream=None`` every method is a no-op.

    ``width``: the terminal's columns; a longer line is cut to ``width - 1`` characters (a line
    that wrapped could not be redrawn in place).  None: never cut."""

    def __init__(self, total: int, stream: TextIO | None, width: int | None = None) -> None:
        self.total = max(int(total), 1)
        self.done = 0
        self.stream = stream
        self.width = width
        self._drawn = False

    @property
    def active(self) -> bool:
        return self.stream is not None

    def show(self, label: str) -> None:
        """Draw the bar with ``label`` as the current work (replacing the previous line)."""
        if self.stream is None:
            return
        filled = BAR_CHARS * min(self.done, self.total) // self.total
        bar = "#" * filled + "." * (BAR_CHARS - filled)
        line = " ".join(f"cuda-advisor: [{bar}] {self.done}/{self.total} {label}".split())
        if self.width is not None:
            line = line[: max(self.width - 1, 1)]
        self.stream.write(_ERASE + line)
        self.stream.flush()
        self._drawn = True

    def advance(self, label: str | None = None) -> None:
        """Count one step as done; redraw with ``label`` when given."""
        self.done += 1
        if label is not None:
            self.show(label)

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        """Show ``label`` while the block runs, then count the step and erase the line."""
        self.show(label)
        try:
            yield
        finally:
            self.advance()
            self.clear()

    def call(self, label: str, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function(*args, **kwargs)`` as one :meth:`step` shown as ``label``."""
        with self.step(label):
            return function(*args, **kwargs)

    def clear(self) -> None:
        """Erase the line (before other output, and at the end)."""
        if self.stream is None or not self._drawn:
            return
        self.stream.write(_ERASE)
        self.stream.flush()
        self._drawn = False

    def echo(self, text: str) -> None:
        """Print one line of other output on ``stream`` without mixing it into the bar."""
        if self.stream is None:
            return
        self.clear()
        self.stream.write(text + "\n")
        self.stream.flush()


def file_bytes(path: str | os.PathLike[str]) -> int | None:
    """Size of a regular file; None for a FIFO, a device, or a path that cannot be examined."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def total_bytes(paths: Iterable[str | os.PathLike[str]]) -> int:
    """Sum of the known sizes of ``paths`` (unknown sizes count 0)."""
    return sum(file_bytes(p) or 0 for p in paths)


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get("CI", "").strip().lower() in CI_VALUES


def wanted(
    input_bytes: int,
    quiet: bool,
    stream: TextIO,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Whether progress is shown: large inputs, a terminal, not quiet, not CI (module docstring)."""
    if quiet or in_ci(environ) or input_bytes < LARGE_INPUT_BYTES:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def for_inputs(
    paths: Iterable[str | os.PathLike[str]],
    steps: int,
    quiet: bool,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> Progress:
    """A :class:`Progress` of ``steps`` steps over ``paths``: drawn on ``stream`` (default the
    current ``sys.stderr``) when :func:`wanted`, silent otherwise."""
    target = stderr() if stream is None else stream
    if not wanted(total_bytes(paths), quiet, target, environ):
        return Progress(steps, None)
    return Progress(steps, target, shutil.get_terminal_size().columns)


def stderr() -> TextIO:
    """The stream progress is drawn on: the current ``sys.stderr`` (tests replace this)."""
    return sys.stderr


def describe(path: str | os.PathLike[str]) -> str:
    """``name (12.3 MB)`` for a progress label; the size only when known."""
    size = file_bytes(path)
    name = os.path.basename(os.fspath(path)) or os.fspath(path)
    return name if size is None else f"{name} ({format_bytes(size)})"


def format_bytes(size: int) -> str:
    """Decimal units, one decimal: 999 B, 1.5 kB, 512.0 MB, 1.2 GB."""
    if size < 1000:
        return f"{size} B"
    value, units = size / 1000, ("kB", "MB", "GB")
    index = 0
    while round(value, 1) >= 1000 and index < len(units) - 1:
        value /= 1000
        index += 1
    return f"{value:.1f} {units[index]}"
