"""The registry of input formats.

Each parser module registers one format with :func:`register`: a name (``nvprof-csv``), the
profiler, a one-line description, a ``sniff`` that decides from content alone (never the file
name) and a ``read`` that returns a :class:`~advisor.profile.Profile`.  Text formats sniff the
first lines of the decoded file; binary formats sniff the first bytes.  Sniffers are tried in
ascending ``priority`` order and the first that says yes reads the file.

A reader is called as ``read(src, selected)``: ``src`` is the decoded :class:`Source` (text
formats) or the file's path (binary formats), ``selected`` the metric selection of
:func:`parsers.read` (:data:`Selection`), passed down as an argument and nowhere else.  A reader
may use the selection to leave out metrics rows, and the columns behind them, that it rejects
(the Nsight Compute raw page does, :mod:`parsers.ncu.raw`); it must keep every row that
:func:`parsers.read` would keep, since that function applies the selection to the result
anyway.  Most readers ignore it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from advisor.profile import Profile
from parsers.ncu.rep_file import MAGIC as NCU_REP_MAGIC
from parsers.source import SQLITE_MAGIC, Source

#: the metric selection a reader is given: a predicate over canonical metric names (keep the
#: metrics rows of the names it accepts), None for every metric
Selection = Callable[[str], bool] | None


@dataclass(frozen=True)
class TextFormat:
    name: str
    profiler: str
    description: str
    sniff: Callable[[Sequence[str]], bool]
    read: Callable[[Source, Selection], Profile]
    priority: int = 50


@dataclass(frozen=True)
class BinaryFormat:
    name: str
    profiler: str
    description: str
    sniff: Callable[[bytes], bool]
    read: Callable[[str, Selection], Profile]
    priority: int = 50


#: a gzip stream's first bytes (a compressed Kineto trace)
GZIP_MAGIC = b"\x1f\x8b"
TEXT_FORMATS: dict[str, TextFormat] = {}
BINARY_FORMATS: dict[str, BinaryFormat] = {}
#: the modules that register each kind of format; a kind's modules are imported when its
#: formats are first asked for, so reading a binary report loads no text reader
#: (binary modules: each with the check of a file's first bytes that its formats' sniffers all
#: need, their magic number; a file that passes none, a text file, loads none of them)
BINARY_MODULES: dict[str, Callable[[bytes], bool]] = {
    "parsers.ncu.rep": lambda head: head.startswith(NCU_REP_MAGIC),
    "parsers.kineto.trace": lambda head: (
        head.startswith(GZIP_MAGIC) or head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
    ),
    "parsers.sqlite.nsys": lambda head: head.startswith(SQLITE_MAGIC),
    "parsers.sqlite.nvprof": lambda head: head.startswith(SQLITE_MAGIC),
}
#: (text modules: each with the smallest priority of the formats its import registers, so that
#: :func:`sniff_text` loads them in that order and stops at the first format that claims a file
#: once no module left to load could register one tried before it)
TEXT_MODULES: dict[str, int] = {
    "parsers.ncu.csv": 20,
    "parsers.nsys.csv": 30,
    "parsers.derived.tables": 30,
    "parsers.nvprof.csv": 40,
    "parsers.nvprof.text": 40,
    "parsers.ncu.text": 50,
}


def register(fmt: TextFormat | BinaryFormat) -> None:
    """Add a format; registering the same name twice is a programming error."""
    table: dict = TEXT_FORMATS if isinstance(fmt, TextFormat) else BINARY_FORMATS
    if fmt.name in TEXT_FORMATS or fmt.name in BINARY_FORMATS:
        raise ValueError(f"format {fmt.name!r} registered twice")
    table[fmt.name] = fmt


def _load(modules: Iterable[str]) -> None:
    for module in modules:
        importlib.import_module(module)  # registers its format (once: modules are cached)


def text_formats() -> list[TextFormat]:
    """The text formats, in the order their sniffers are tried."""
    _load(TEXT_MODULES)
    return sorted(TEXT_FORMATS.values(), key=lambda f: (f.priority, f.name))


def sniff_text(head: Sequence[str]) -> TextFormat | None:
    """The first text format, in the order of :func:`text_formats`, whose sniffer claims a file
    whose first lines are ``head``, or None; the text modules load in the order of their
    priorities (:data:`TEXT_MODULES`) only until that format is known (an Nsight Compute CSV
    loads no trace reader)."""
    order = sorted(TEXT_MODULES.items(), key=lambda item: item[1])
    tried: set[str] = set()
    for k, (module, _) in enumerate(order):
        importlib.import_module(module)
        bound = order[k + 1][1] if k + 1 < len(order) else None  # the next module's formats
        for fmt in sorted(TEXT_FORMATS.values(), key=lambda f: (f.priority, f.name)):
            if bound is not None and fmt.priority >= bound:
                break  # a format the next modules register might come first
            if fmt.name in tried:
                continue
            tried.add(fmt.name)
            if fmt.sniff(head):
                return fmt
    return None


def binary_formats(head: bytes | None = None) -> list[BinaryFormat]:
    """The binary formats, in the order their sniffers are tried; given a file's first bytes
    ``head``, those of the modules whose magic number they start with (:data:`BINARY_MODULES`)
    and of any module loaded already."""
    _load(m for m, may_read in BINARY_MODULES.items() if head is None or may_read(head))
    return sorted(BINARY_FORMATS.values(), key=lambda f: (f.priority, f.name))


def text_format(name: str) -> TextFormat:
    """One text format by name."""
    _load(TEXT_MODULES)
    return TEXT_FORMATS[name]


def known_formats() -> list[tuple[str, str]]:
    """(name, description) of every registered format, for help and error messages."""
    both: list[TextFormat | BinaryFormat] = [*text_formats(), *binary_formats()]
    return sorted(((f.name, f.description) for f in both), key=lambda t: t[0])
