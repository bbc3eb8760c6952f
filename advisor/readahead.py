"""An input's bytes read on a worker thread while the command loads its modules.

``report`` spends its first third of a second importing pandas, pyarrow and its own modules on
one core.  A reader that needs a whole file in memory (an Nsight Compute CSV page: the details
page is parsed from its bytes, the raw page's format is checked on them) would then read it:
0.14 s for a details page of 200 MB, most of it the kernel copying the file into fresh pages.
:func:`start` reads such a file on a worker thread instead (the read lets go of the interpreter
lock), and :func:`parsers.source.read_bytes` takes its bytes (:func:`take`) when the file is
still the one that was read (same device, inode, size and modification time), else reads it as
before.  Only the first input is read ahead, the first the command reads (the others are read
one after the other, and holding one while another is read would raise the run's peak memory),
only when it is a regular file of :data:`MIN_BYTES` or more whose first line that is not a
profiler status line starts as an Nsight Compute CSV header (:data:`HEADER`): the CSV traces
(nvprof, Nsight Systems) are read in pieces and never whole (:mod:`parsers.arrow_csv`), and
reading them ahead would double their memory.

Nothing here imports more than the standard library: it runs before the command's modules
load.  What is read is the same bytes either way, so the output cannot differ.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence
from typing import BinaryIO

#: the smallest file read ahead (a smaller one is read in a few milliseconds)
MIN_BYTES = 4 << 20
#: how an Nsight Compute CSV page's header starts (FORMATS.md §2.2, §2.3)
HEADER = b'"ID","Process ID",'
#: bytes looked at for that header (the ``==PROF==`` lines before it included)
LOOK = 1 << 16

Identity = tuple[int, int, int, int]

_READS: dict[tuple[int, int], _Read] = {}


def _open(path: str) -> BinaryIO:
    """``path`` opened for reading without waiting (a FIFO put in its place never blocks)."""
    return os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb")


def _identity(info: os.stat_result) -> Identity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


class _Read:
    """One file being read on a worker thread; :attr:`data` is None when it could not be."""

    def __init__(self, path: str, identity: Identity) -> None:
        self.path = path
        self.identity = identity
        self.data: bytes | None = None
        self.thread = threading.Thread(target=self._run, name="read-ahead", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            with _open(self.path) as handle:
                if _identity(os.fstat(handle.fileno())) == self.identity:
                    self.data = handle.read()
        except Exception:  # (out of memory too) the command's own read then reports it
            self.data = None


def start(paths: Sequence[str]) -> None:
    """Read ahead the first of ``paths`` when it qualifies (the module docstring)."""
    identity = _qualifies(paths[0]) if paths else None
    if identity is not None and identity[:2] not in _READS:
        _READS[identity[:2]] = _Read(paths[0], identity)


def _qualifies(path: str) -> Identity | None:
    """The file's identity when it is read ahead (the module docstring), else None."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size < MIN_BYTES:
            return None
        with _open(path) as handle:
            start = handle.read(LOOK)
    except OSError:
        return None
    for line in start.split(b"\n")[:-1]:  # whole lines only
        if line.strip() and not line.startswith(b"=="):
            return _identity(info) if line.startswith(HEADER) else None
    return None


def take(info: os.stat_result) -> bytes | None:
    """The bytes read ahead of the file whose ``fstat`` is ``info``, when it is unchanged since
    (waiting for the read to end); None when it was not read ahead, could not be, or has
    changed.  Taken once: the worker's reference is dropped."""
    identity = _identity(info)
    read = _READS.pop(identity[:2], None)
    if read is None:
        return None
    read.thread.join()
    data, read.data = read.data, None
    if data is None or read.identity != identity or len(data) != info.st_size:
        return None
    return data


def drop() -> None:
    """Forget every read not taken (a command that ends before it reads its input does not
    wait for the read: a read still running ends on its own, and its bytes go with it)."""
    _READS.clear()
