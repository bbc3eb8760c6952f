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
naming the file and what the JSON parser said.  So is a trace the parser must not see
(:class:`_Guarded`): arrays and objects nested deeper than :data:`MAX_DEPTH` (the parser keeps a
path string per level: a 100,000-deep document would need gigabytes) or a number longer than
:data:`MAX_NUMBER_CHARS` digits (the parser's C backend crashes on integers beyond Python's
4,300-digit conversion limit).  A trace nests 5 levels deep and its longest numbers are 20
digits; both checks run on the raw bytes as they stream by, brackets and digits inside strings
counted too (a kernel name's ``{lambda()#1}`` opens and closes within the string).
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from typing import IO, Any, cast

import ijson  # type: ignore[import-untyped]
import numpy as np

from advisor.errors import MalformedInput, UnreadableInput

GZIP_MAGIC = b"\x1f\x8b"
#: decompressed bytes searched for the metadata before ``traceEvents`` (eight devices'
#: ``deviceProperties`` take 3 KiB; a trace's INFO lines can take more)
HEADER_BYTES = 1 << 20
#: keys one of which a Kineto trace's start holds (``traceEvents`` comes first in older files)
_KEYS = (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"', b'"distributedInfo"')


#: deepest nesting of arrays and objects read (a Kineto trace uses 5)
MAX_DEPTH = 64
#: longest run of digits read (a Kineto trace's longest numbers, ids and epoch timestamps, have 20)
MAX_NUMBER_CHARS = 100
#: every digit as "0", every other byte as " ": a long number is a long run of "0"
_DIGIT_RUNS = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord(" ") for b in range(256))
_LONG_RUN = b"0" * (MAX_NUMBER_CHARS + 1)
_DIGITS = b"0123456789"
#: +1 for ``[`` and ``{``, -1 for ``]`` and ``}``, 0 for any other byte
_NESTING = np.zeros(256, np.int8)
_NESTING[[ord("["), ord("{")]] = 1
_NESTING[[ord("]"), ord("}")]] = -1
#: every byte but the four brackets, deleted to count the nesting over the brackets alone
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class _Guarded(io.RawIOBase):
    """The bytes of ``stream`` as they are read, refused (:class:`MalformedInput`) once they
    nest deeper than :data:`MAX_DEPTH` or hold a number longer than :data:`MAX_NUMBER_CHARS`
    digits; the counts carry over from one read to the next."""

    def __init__(self, stream: IO[bytes], path: str) -> None:
        self._stream = stream
        self._path = path
        self._depth = 0
        self._digits = 0  # digits ending the bytes read so far
        self._offset = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        if chunk:
            self._check(chunk)
            self._offset += len(chunk)
        return chunk

    def readinto(self, buffer: Any) -> int:
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def _check(self, chunk: bytes) -> None:
        lead = len(chunk) - len(chunk.lstrip(_DIGITS))
        long = chunk.translate(_DIGIT_RUNS).find(_LONG_RUN)
        if self._digits + lead > MAX_NUMBER_CHARS or long >= 0:
            spans = self._digits + lead > MAX_NUMBER_CHARS  # begun in an earlier read
            at = self._offset - self._digits if spans else self._offset + long
            raise MalformedInput(
                self._path, f"a number longer than {MAX_NUMBER_CHARS} digits at byte {at:,}"
            )
        tail = len(chunk) - len(chunk.rstrip(_DIGITS))
        self._digits = self._digits + tail if tail == len(chunk) else tail
        brackets = chunk.translate(None, _NOT_BRACKETS)  # a few in a hundred bytes
        if not brackets:
            return
        steps = _NESTING[np.frombuffer(brackets, np.uint8)]
        depth = self._depth + np.cumsum(steps, dtype=np.int64)
        if int(depth.max()) > MAX_DEPTH:  # where: the walk over every byte (once, to fail)
            steps = _NESTING[np.frombuffer(chunk, np.uint8)]
            depth = self._depth + np.cumsum(steps, dtype=np.int64)
            at = self._offset + int(np.argmax(depth > MAX_DEPTH))
            raise MalformedInput(
                self._path,
                f"arrays and objects nested deeper than {MAX_DEPTH} levels at byte {at:,}",
            )
        self._depth = int(depth[-1])


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


_OPENS = frozenset(("start_map", "start_array"))
_CLOSES = frozenset(("end_map", "end_array"))


def read_header(path: str) -> dict[str, Any]:
    """The top-level keys written before ``traceEvents`` (those of a longer start than
    :data:`HEADER_BYTES` are left out)."""
    with open_stream(path) as stream:
        try:
            head = stream.read(HEADER_BYTES)
        except (OSError, EOFError, zlib.error) as exc:
            raise MalformedInput(path, f"not a readable gzip file: {exc}") from exc
    found: dict[str, Any] = {}
    key: str | None = None  # the top-level key whose value is being built
    builder = ijson.ObjectBuilder()
    depth = 0
    try:
        # parse events rather than ``kvitems``: that would build the whole ``traceEvents``
        # array the head holds (up to HEADER_BYTES of events) before giving its key
        for _, event, value in ijson.parse(_Guarded(io.BytesIO(head), path)):
            if depth == 1 and event == "map_key":
                if key is not None:
                    found[key] = builder.value
                if value == "traceEvents":
                    break
                key, builder = value, ijson.ObjectBuilder()
                continue
            if event in _OPENS:
                depth += 1
            elif event in _CLOSES:
                depth -= 1
            if depth == 0:  # the top-level object ends (or the document is not one)
                if key is not None:
                    found[key] = builder.value
                break
            if key is not None:
                builder.event(event, value)
    except (ijson.JSONError, UnicodeDecodeError, MalformedInput):
        pass  # the head ends inside traceEvents, or the file is damaged (iter_events says so)
    return found


def iter_events(path: str) -> Iterator[dict[str, Any]]:
    """Every element of ``traceEvents``, in file order."""
    with open_stream(path) as stream:
        try:
            yield from ijson.items(_Guarded(stream, path), "traceEvents.item")
        except ijson.JSONError as exc:
            raise MalformedInput(path, f"not valid JSON: {_first_line(exc)}") from exc
        except UnicodeDecodeError as exc:
            raise MalformedInput(path, f"not valid UTF-8 text: {exc.reason}") from exc
        except (OSError, EOFError, zlib.error) as exc:
            raise MalformedInput(path, f"not a readable gzip file: {exc}") from exc


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
