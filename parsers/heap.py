"""Giving the memory a reader freed back to the system before the analysis starts.

A reader's temporaries (the file's bytes, parse buffers, intermediate columns) are freed when it
returns, but the C library's allocator keeps most of the pages they used for later requests, so
the analysis' own working set is added on top of them and the run's peak grows by up to a third
of the file (benchmarks/README.md, "Scale").  :func:`give_back` returns those pages: glibc's
``malloc_trim`` where the interpreter runs on glibc, and pyarrow's pool's unused blocks where
pyarrow is loaded.  Elsewhere it does nothing; no value read changes either way.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None (another C library, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library the interpreter is linked with
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def give_back() -> None:
    """Return the free pages of the C heap and of pyarrow's memory pool to the system."""
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
