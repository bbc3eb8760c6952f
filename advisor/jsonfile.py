"""Reading the JSON files a user gives beside the profiles (device characterizations, BSP
application and MAX/SUM kernel descriptions, saved analyses), one way everywhere.

:func:`load` reads the file as UTF-8 and decodes it; whatever goes wrong is one
:class:`~advisor.errors.InputError` naming the file (exit code 3): unreadable, not UTF-8, not JSON
(with the line of the decoding error).  What the document must hold is each caller's check.
"""

from __future__ import annotations

import json
import os
from typing import Any

from advisor.errors import MalformedInput, UnreadableInput


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """The file's text; an unreadable file is an :class:`UnreadableInput` naming ``what``."""
    where = os.fspath(path)
    try:
        with open(where, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise UnreadableInput(where, f"no such file (the {what})") from None
    except IsADirectoryError:
        raise UnreadableInput(where, f"is a directory; give the {what}, a .json file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableInput(where, f"cannot read the {what} ({exc})") from None


def decode(text: str, path: str | os.PathLike[str]) -> Any:
    """``text`` decoded as JSON; invalid JSON is a :class:`MalformedInput` at its line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = os.fspath(path)
        raise MalformedInput(where, f"not valid JSON: {exc.msg}", line=exc.lineno) from None


def load(path: str | os.PathLike[str], what: str) -> Any:
    """The decoded JSON document of ``path`` (``what`` names the kind of file in errors)."""
    return decode(read_text(path, what), path)
