"""The container of an Nsight Compute report (``.ncu-rep``; ``.nsight-cuprof-report`` in 2019.x),
checked without NVIDIA's module.

Layout, as found in every report written by Nsight Compute 2019.x to 2025.x (format version 7):
the magic ``NVR\\0``; a little-endian uint32 length and a protocol-buffer ``FileHeader`` whose
field 1 is the format version; then blocks, each a uint32 length, a protocol-buffer block
header and a payload whose size is the header's field 5.  A block header announces in field 2
how many profile results (kernel launches) its payload holds, and carries in field 3 the
session details, whose field-8 entries are ``{1: key, 2: value}`` pairs such as
``"Nsight Compute Target" -> "2024.2.1.0 (build 34372528) (public-release)"`` or
``"CUDA Version" -> "12.2"`` (reports of 2020.3 and later; older ones record no version).

:func:`scan` walks these blocks to tell a truncated or damaged file from one the module cannot
read, to count the results the file announces and to find the Nsight Compute version.  It only
reads varints and lengths, so any report of this family can be checked.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

MAGIC = b"NVR\x00"
#: the FileHeader version of every report seen (Nsight Compute 2019.x to 2025.x)
KNOWN_FORMAT_VERSION = 7
_TARGET_KEY = "Nsight Compute Target"
_VERSION = re.compile(r"\d{4}\.\d+(?:\.\d+)*")


class _Damaged(Exception):
    """A length or varint runs past the end of its buffer."""


@dataclass(frozen=True)
class ReportLayout:
    """What the container says about a report."""

    size: int
    format_version: int | None = None  # FileHeader field 1
    results: int = 0  # profile results announced by the block headers
    session: dict[str, str] = field(default_factory=dict)  # first value of each session key
    problem: str | None = None  # why the container is not intact (truncated, damaged)

    @property
    def ncu_version(self) -> str | None:
        """``"2024.2.1.0"`` from the session's ``Nsight Compute Target``, if recorded."""
        m = _VERSION.match(self.session.get(_TARGET_KEY, ""))
        return m.group(0) if m else None


def scan(data: bytes) -> ReportLayout:
    """Walk the container of a report whose bytes are ``data`` (see the module docstring)."""
    size = len(data)
    if not data.startswith(MAGIC):
        return ReportLayout(size, problem="does not start with the report magic NVR\\0")
    try:
        header, pos = _chunk(data, len(MAGIC))
    except _Damaged:
        return ReportLayout(size, problem=_truncated("file header", len(MAGIC), size))
    version = _first_varint(header, 1)
    results = 0
    session: dict[str, str] = {}
    while pos < size:
        start = pos
        try:
            block, pos = _chunk(data, pos)
            fields = _fields(block)
        except _Damaged:
            return ReportLayout(size, version, results, session, _truncated("block", start, size))
        payload = next((v for f, v in fields if f == 5 and isinstance(v, int)), 0)
        if pos + payload > size:
            problem = _truncated("block", start, size, need=pos + payload - start)
            return ReportLayout(size, version, results, session, problem)
        pos += payload
        results += sum(v for f, v in fields if f == 2 and isinstance(v, int))
        for f, v in fields:
            if f == 3 and isinstance(v, bytes):
                _session_entries(v, session)
    return ReportLayout(size, version, results, session)


def _truncated(what: str, start: int, size: int, need: int | None = None) -> str:
    needs = f"needs {need} bytes" if need is not None else "is cut short"
    return f"truncated report: the {what} at byte {start} {needs} but the file has {size} bytes"


def _chunk(data: bytes, pos: int) -> tuple[bytes, int]:
    """The uint32-length-prefixed chunk at ``pos`` and the position after it."""
    if pos + 4 > len(data):
        raise _Damaged
    (length,) = struct.unpack_from("<I", data, pos)
    end = pos + 4 + length
    if end > len(data):
        raise _Damaged
    return data[pos + 4 : end], end


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise _Damaged
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, varint or bytes) of a protocol-buffer message; fixed-width fields are
    skipped; an unknown wire type or overrun is damage."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise _Damaged
            out.append((number, buf[pos : pos + length]))
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise _Damaged
    if pos > len(buf):
        raise _Damaged
    return out


def _first_varint(buf: bytes, number: int) -> int | None:
    try:
        return next((v for f, v in _fields(buf) if f == number and isinstance(v, int)), None)
    except _Damaged:
        return None


def _session_entries(details: bytes, into: dict[str, str]) -> None:
    """Add the ``{1: key, 2: value}`` entries (field 8) of a session-details message."""
    try:
        entries = [v for f, v in _fields(details) if f == 8 and isinstance(v, bytes)]
        for entry in entries:
            parts = dict(_fields(entry))
            key, value = parts.get(1), parts.get(2)
            if isinstance(key, bytes) and isinstance(value, bytes):
                into.setdefault(_text(key), _text(value))
    except _Damaged:
        return


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").strip()
