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
==== =====================================================================
"""

from __future__ import annotations

import re

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_GATE = 4

#: longest message line printed (a message quoting a damaged field stays readable)
MESSAGE_MAX_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """``text`` on one line of at most :data:`MESSAGE_MAX_CHARS` characters, with control
    characters (a terminal escape or a bidi override in a file, kernel or device name) escaped
    as Python writes them (``\\x1b``, ``\\u202e``): every message line on stderr goes
    through it."""
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


class SchemaError(AdvisorError):
    """A parser produced a frame that breaks the normalised schema (a bug, exit code 1)."""
