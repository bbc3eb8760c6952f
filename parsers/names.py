"""Kernel, device and transfer names as the profilers print them, normalised."""

from __future__ import annotations

import re

from parsers.units import fits_int

_CORR_SUFFIX = re.compile(r"\s\[(\d+)\]$")
_DEVICE = re.compile(r"^(.*\S)\s*\((\d+)\)$")
_DIMS = re.compile(r"^\(?\s*(\d+)[\s,]+(\d+)[\s,]+(\d+)\s*\)?$")

#: memcpy direction spellings -> normalised kind
_KINDS = {
    "htod": "HtoD", "host-to-device": "HtoD", "host to device": "HtoD",
    "dtoh": "DtoH", "device-to-host": "DtoH", "device to host": "DtoH",
    "dtod": "DtoD", "device-to-device": "DtoD", "device to device": "DtoD",
    "ptop": "PtoP", "peer-to-peer": "PtoP", "peer to peer": "PtoP",
    "htoh": "HtoH", "host-to-host": "HtoH", "host to host": "HtoH",
    "atod": "AtoD", "dtoa": "DtoA", "atoa": "AtoA", "atoh": "AtoH", "htoa": "HtoA",
}  # fmt: skip
_TRANSFER = re.compile(
    r"^\[CUDA (Unified Memory )?(memcpy|memset)\s*([A-Za-z\- ]*)\]$|^\[CUDA memset\]$", re.I
)


def split_correlation(name: str) -> tuple[str, int | None]:
    """``'matMul(float*, int) [110]'`` -> ``('matMul(float*, int)', 110)``; a number too large
    for an id is no correlation suffix.  A name that does not end with ``]`` (or ``]`` and a
    final newline, which ``$`` allows) is not searched: most do not, and a search scans it."""
    if not name.endswith("]") and not name.endswith("]\n"):
        return name, None
    m = _CORR_SUFFIX.search(name)
    if not m or not fits_int(int(m.group(1))):
        return name, None
    return name[: m.start()], int(m.group(1))


def split_device(text: str) -> tuple[str, int | None]:
    """``'Tesla K40c (0)'`` -> ``('Tesla K40c', 0)``; a bare index ``'0'`` -> ``('', 0)``; an
    index too large for an id is none."""
    text = text.strip()
    if text.isdecimal() and fits_int(int(text)):
        return "", int(text)
    m = _DEVICE.match(text)
    if m and fits_int(int(m.group(2))):
        return m.group(1), int(m.group(2))
    return text, None


def parse_dims(text: str) -> tuple[int, int, int] | None:
    """``'(384, 1, 1)'`` or ``'(32768 1 1)'`` -> (384, 1, 1); anything else (also a number too
    large for a dimension) -> None."""
    m = _DIMS.match(text.strip())
    if not m or not all(fits_int(int(g)) for g in m.groups()):
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def transfer_kind(name: str) -> str | None:
    """The normalised kind of a memcpy/memset activity name, or None for a kernel.

    ``[CUDA memcpy HtoD]`` and ``[CUDA memcpy Host-to-Device]`` -> ``HtoD``; ``[CUDA memset]`` ->
    ``memset``; ``[CUDA Unified Memory memcpy DtoH]`` -> ``UM-DtoH``.
    """
    bare = name.strip()
    if not bare.startswith("["):  # the pattern's first character: a kernel, at once
        return None
    m = _TRANSFER.match(bare)
    if not m:
        return None
    if m.group(2) is None or m.group(2).lower() == "memset":
        return "memset"
    direction = _KINDS.get((m.group(3) or "").strip().lower(), (m.group(3) or "").strip())
    return ("UM-" if m.group(1) else "") + (direction or "memcpy")


def compute_capability(major: object, minor: object) -> str | None:
    """``(8, 0)`` -> ``"8.0"``; a missing part or one that is not a whole number -> None."""
    parts = []
    for part in (major, minor):
        try:
            value = float(part)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        if not fits_int(value):
            return None
        parts.append(int(value))
    return f"{parts[0]}.{parts[1]}"
