"""The one exception hierarchy of cuda-advisor and the exit code of each error.

Every error a user can cause is an :class:`AdvisorError` subclass whose message names the file (and
the line when known), says what was expected and what to do.  The command line prints that message
on one line and exits with the class's ``exit_code``:

==== =====================================================================
code meaning
==== =====================================================================
0    success
1    internal error (a bug: please report it with ``--debug`` output)
2    bad usage (unknown option, missing argument, unknown device name)
3    input problem (unreadable, unrecognised format, malformed, no kernel data)
4    a CI gate failed (``--fail-if``, ``--max-regression``): one line per failure
130  interrupted (Ctrl-C, SIGINT); 143 terminated (SIGTERM) while an output was written, 129
     hung up (SIGHUP) then: the output's temporary file is removed, the old file kept
==== =====================================================================

An output that cannot be written (its folder missing, the path a folder or a block device or a
socket, a read-only file or one owned by another user, one of the run's inputs, a write error
such as a full disk) is bad usage (2).  Memory exhausted while a file is read is an input
problem (3): ``out of memory reading FILE: ...`` (:class:`OutOfMemory`).
"""

from __future__ import annotations

import re

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_GATE = 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process ended by Ctrl-C

#: longest message line printed (a message quoting a damaged field stays readable)
MESSAGE_MAX_CHARS = 2000
#: control characters, bidi overrides, and lone surrogates (the undecodable bytes of a file name
#: that is not UTF-8, which no UTF-8 stream can print)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def one_line(text: str) -> str:
    """``text`` on one line of at most :data:`MESSAGE_MAX_CHARS` characters, with control
    characters (a terminal escape or a bidi override in a file, kernel or device name) escaped
    as Python writes them (``\\x1b``, ``\\u202e``; the byte 0xff of a file name that is not
    UTF-8 as ``\\udcff``): every message line on stderr goes through it."""
    text = _CONTROL.sub(lambda m: ascii(m.group(0))[1:-1], " ".join(text.split()))
    if len(text) > MESSAGE_MAX_CHARS:
        text = text[: MESSAGE_MAX_CHARS - 1] + "…"
    return text


class AdvisorError(Exception):
    """Base class of every error cuda-advisor reports to a user."""

    exit_code = EXIT_INTERNAL


class UsageError(AdvisorError):
    """The command line asks for something impossible (bad option value, unknown name)."""

    exit_code = EXIT_USAGE


class InputError(AdvisorError):
    """An input file cannot be used.  The message starts with the file path."""

    exit_code = EXIT_INPUT

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.detail = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class UnreadableInput(InputError):
    """The file does not exist, is a directory, or cannot be read."""


class UnrecognisedFormat(InputError):
    """No registered parser recognises the file's content."""


class MalformedInput(InputError):
    """The format was recognised but the content breaks it (bad row, bad number, bad unit)."""


class NoKernelData(InputError):
    """The file is a profiler output but holds no kernel activity (failed or empty run)."""


class MissingDependency(InputError):
    """Reading this file needs an optional package that is not installed."""


#: what an out-of-memory message advises
OOM_ADVICE = (
    "the file is too large for this machine's memory; profile fewer kernels or metrics, "
    "or run on a machine with more memory"
)


class OutOfMemory(InputError):
    """Memory ran out while a file was read: ``out of memory reading FILE: ADVICE``."""

    def __init__(self, path: str, detail: str = OOM_ADVICE) -> None:
        super().__init__(path, f"out of memory: {detail}")
        self.args = (f"out of memory reading {self.path}: {detail}",)


def is_out_of_memory(exc: BaseException) -> bool:
    """``exc`` is a :class:`MemoryError`, or wraps one (a C extension's ``SystemError: ...
    returned NULL without setting an exception`` raised while a MemoryError was handled)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class SchemaError(AdvisorError):
    """A parser produced a frame that breaks the normalised schema (a bug, exit code 1)."""
