"""The bytes of a Kineto trace as a stream of events, without the whole file in memory.

A trace is one JSON object: metadata keys (``schemaVersion``, ``deviceProperties``,
``distributedInfo``, ...) written before ``traceEvents``, the list of events, and a few keys
after it (``traceName``).  The file may be gzip-compressed (``.json.gz``: recognised by the gzip
magic bytes, never by the name).

* :func:`sniff_kineto` decides from the first bytes of the file (decompressing what a gzip start
  holds);
* :func:`read_header` reads the top-level keys written before ``traceEvents`` from the first
  :data:`HEADER_BYTES` of the (decompressed) text;
* :func:`iter_events` yields the events one at a time (``ijson`` with its C backend: memory
  stays flat whatever the file's size).  Numbers with a fraction come back as ``Decimal``, so a
  timestamp of microseconds since the epoch with three decimals keeps its nanoseconds (a float
  would round it to a quarter of a microsecond).

A file that is not valid JSON, or is cut short, is a :class:`~advisor.errors.MalformedInput`
naming the file and what the JSON parser said.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from typing import IO, Any, cast

import ijson  # type: ignore[import-untyped]

from advisor.errors import MalformedInput, UnreadableInput

GZIP_MAGIC = b"\x1f\x8b"
#: decompressed bytes searched for the metadata before ``traceEvents`` (eight devices'
#: ``deviceProperties`` take 3 KiB; a trace's INFO lines can take more)
HEADER_BYTES = 1 << 20
#: keys one of which a Kineto trace's start holds (``traceEvents`` comes first in older files)
_KEYS = (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"', b'"distributedInfo"')


def _text_start(head: bytes) -> bytes:
    """The start of the (decompressed) text of a file whose first bytes are ``head``."""
    if head.startswith(GZIP_MAGIC):
        try:
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head)
        except zlib.error:
            return b""
    return head


def sniff_kineto(head: bytes) -> bool:
    """A JSON object whose start names a Kineto key: ``traceEvents``, or ``schemaVersion``
    with ``deviceProperties`` or ``distributedInfo``."""
    text = _text_start(head).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return False
    if _KEYS[0] in text:
        return True
    return _KEYS[1] in text and any(k in text for k in _KEYS[2:])


def is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def open_stream(path: str) -> IO[bytes]:
    """The file's (decompressed) bytes as a binary stream."""
    try:
        if is_gzip(path):
            return cast(IO[bytes], gzip.open(path, "rb"))
        return open(path, "rb")
    except OSError as exc:
        raise UnreadableInput(path, f"cannot read: {exc.strerror or exc}") from exc


def read_header(path: str) -> dict[str, Any]:
    """The top-level keys written before ``traceEvents`` (those of a longer start than
    :data:`HEADER_BYTES` are left out)."""
    with open_stream(path) as stream:
        try:
            head = stream.read(HEADER_BYTES)
        except (OSError, EOFError, zlib.error) as exc:
            raise MalformedInput(path, f"not a readable gzip file: {exc}") from exc
    found: dict[str, Any] = {}
    try:
        for key, value in ijson.kvitems(io.BytesIO(head), ""):
            if key == "traceEvents":
                break
            found[key] = value
    except ijson.JSONError:
        pass  # the head ends inside traceEvents, or the file is damaged (iter_events says so)
    return found


def iter_events(path: str) -> Iterator[dict[str, Any]]:
    """Every element of ``traceEvents``, in file order."""
    with open_stream(path) as stream:
        try:
            yield from ijson.items(stream, "traceEvents.item")
        except ijson.JSONError as exc:
            raise MalformedInput(path, f"not valid JSON: {_first_line(exc)}") from exc
        except (OSError, EOFError, zlib.error) as exc:
            raise MalformedInput(path, f"not a readable gzip file: {exc}") from exc


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
