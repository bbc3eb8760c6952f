"""Writing output files: atomically where the target is a file, never over an input.

Every report, Markdown summary and JSON file of every command goes through
:func:`write_atomic`.  What it does depends on what the output path names:

* a new path or a regular file (also through a symbolic link): the text is written to a
  temporary file in the file's own folder and renamed over it, so a reader sees the old file or
  the new one, never half of one.  A failure (disk full, permission denied, Ctrl-C, SIGTERM or
  SIGHUP) leaves no partial or temporary file behind; a link stays a link to the new file.
* a character device or a FIFO (``/dev/null``, a terminal, a pipe, ``/dev/stdout``,
  ``/dev/fd/N``, a shell's ``>(...)``): the text is written into it directly (a FIFO waits for
  its reader), and the device node or FIFO stays what it was.
* anything else is refused: a folder, a block device, a socket; a read-only file (no write
  permission bit, also for root) and, unless run as root, a file owned by another user (a
  rename would take it over); one of the run's inputs, under any spelling (``..``, a symbolic
  link, a hard link to the same file).  A missing folder is reported, not created: a typo in a
  path should not scatter folders.

Every refusal and every write error is a usage error (exit code 2) with one line naming the path.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from advisor.errors import UsageError

#: signals after which the temporary file is removed before the process exits with 128 + signal
#: (SIGINT raises KeyboardInterrupt, which cleans up on its own)
CLEANUP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
#: the folders whose entries stand for open file descriptors (``/dev/stdout`` links there)
_DESCRIPTOR_FOLDERS = ("/proc/", "/dev/fd/")


def write_atomic(
    path: str | Path, text: str | Iterable[str], inputs: Iterable[str | Path] = ()
) -> None:
    """Write ``text`` (one string, or its pieces in order) to ``path``, as the module docstring
    says: atomically for a file, directly into a character device or FIFO, refusing the rest and
    every one of ``inputs`` (the run's profiles and side files are never overwritten)."""
    shown = str(path)
    target = Path(path)
    refuse_inputs([path], inputs)
    if _names_a_descriptor(shown):
        _write_direct(shown, text)
        return
    try:
        found: os.stat_result | None = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        found = None
    except OSError as exc:  # a name too long, a link loop, a folder that cannot be searched
        raise UsageError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    if found is not None and not stat.S_ISREG(found.st_mode):
        if not (stat.S_ISCHR(found.st_mode) or stat.S_ISFIFO(found.st_mode)):
            raise UsageError(f"{shown}: is {_kind(found.st_mode)}; give a file name for the output")
        _write_direct(shown, text)
        return
    if found is not None:
        _check_replaceable(shown, target, found)
    final = Path(os.path.realpath(target)) if target.is_symlink() else target
    folder = final.parent if str(final.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{shown}: output folder {folder} does not exist")
    _replace(shown, final, text, found)


def _replace(
    shown: str, final: Path, text: str | Iterable[str], found: os.stat_result | None
) -> None:
    """Write through a temporary file beside ``final`` and rename it over ``final``."""
    with _cleanup_on_signals():
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{final.name[:40]}.", suffix=".tmp", dir=final.parent
            )
        except OSError as exc:
            raise UsageError(f"{shown}: cannot write: {exc.strerror or exc}") from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                _write_pieces(handle, text)
            os.chmod(tmp, _mode_for(found))
            if found is not None and found.st_uid != os.geteuid():  # root: keep the owner
                os.chown(tmp, found.st_uid, found.st_gid)
            os.replace(tmp, final)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise UsageError(f"{shown}: cannot write: {exc.strerror or exc}") from exc
            raise


def refuse_inputs(outputs: Iterable[str | Path | None], inputs: Iterable[str | Path]) -> None:
    """Refuse (exit 2) an output that names one of ``inputs``; a command calls it before its
    analysis, so that the refusal comes at once, and :func:`write_atomic` again."""
    sources = [Path(source) for source in inputs]
    for path in outputs:
        if path is None:
            continue
        for source in sources:
            if same_file(source, Path(path)):
                raise UsageError(
                    f"{path}: refusing to overwrite an input file; choose another output"
                )


def _write_direct(shown: str, text: str | Iterable[str]) -> None:
    """Write into a character device or FIFO as it is (no temporary file, no rename)."""
    try:
        with open(shown, "w", encoding="utf-8", newline="\n") as handle:
            _write_pieces(handle, text)
    except OSError as exc:  # /dev/full, a FIFO whose reader went away, a socket
        raise UsageError(f"{shown}: cannot write: {exc.strerror or exc}") from None


def _write_pieces(handle: IO[str], text: str | Iterable[str]) -> None:
    if isinstance(text, str):
        handle.write(text)
        return
    for piece in text:
        handle.write(piece)


def _check_replaceable(shown: str, target: Path, found: os.stat_result) -> None:
    """Refuse a read-only file and (unless root) another user's file: exit 2."""
    if not found.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise UsageError(
            f"{shown}: the file is read-only; make it writable (chmod u+w) or choose another output"
        )
    if found.st_uid != os.geteuid() and os.geteuid() != 0:
        raise UsageError(
            f"{shown}: the file belongs to another user (uid {found.st_uid}); writing it would "
            "make it yours: remove it first or choose another output"
        )


def same_file(source: Path, target: Path) -> bool:
    """``target`` names ``source`` (also two outputs, neither of which exists yet): the same
    path once ``..`` and links are resolved, or a hard link to it (the same device and inode)."""
    if os.path.realpath(source) == os.path.realpath(target):
        return True
    try:
        return os.path.samefile(source, target)
    except (OSError, ValueError):  # one of them does not exist (or cannot be looked at)
        return False


def _names_a_descriptor(shown: str) -> bool:
    """``shown`` is, or links through, a descriptor entry (``/dev/stdout`` -> ``/proc/self/fd/1``):
    written directly even when the descriptor is a regular file (``> out.txt``), which a rename
    would leave behind."""
    path = os.path.abspath(shown)
    for _ in range(40):  # the kernel's own limit on links followed
        if path.startswith(_DESCRIPTOR_FOLDERS):
            return True
        try:
            link = os.readlink(path)
        except (OSError, ValueError):
            return False
        path = os.path.normpath(os.path.join(os.path.dirname(path), link))
    return False


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


@contextmanager
def _cleanup_on_signals() -> Iterator[None]:
    """While the temporary file exists, SIGTERM and SIGHUP raise ``SystemExit(128 + signal)``
    (their default would end the process at once and leave the file behind).  A handler the
    program installed itself is left alone, and so is every handler outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}
    for signum in CLEANUP_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, _exit_on_signal)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _mode_for(found: os.stat_result | None) -> int:
    """The existing file's mode, else what a plain ``open()`` would create (0666 less umask);
    ``mkstemp`` alone would leave a shared report readable by its owner only."""
    if found is not None:
        return found.st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
