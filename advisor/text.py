"""Text as the profile keeps it, with the standard library only (the Nsight Compute helper
process, :mod:`advisor.disassembly`, imports it without pandas)."""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with every character UTF-8 cannot encode (a lone surrogate) written as its
    escape (``\\udcff``); any other text is returned as it is (an ASCII one without encoding
    it: a flag of the string says so)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
