"""Writing output files atomically, never over an input.

Every report, Markdown summary and JSON file goes through :func:`write_atomic`: the text is
written to a temporary file in the target's own folder and renamed over the target, so a reader
sees the old file or the new one, never half of one, and a failure (disk full, permission
denied, interrupt) leaves no partial or temporary file behind.  A path that is one of the inputs
(also through a link) is refused, and a missing folder is reported, not created: a typo in a
path should not scatter folders.  Both are usage errors (exit code 2).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from advisor.errors import UsageError


def write_atomic(path: str | Path, text: str, inputs: Iterable[str | Path] = ()) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    Refuses to write over one of ``inputs`` (the user's profiles are never overwritten), and
    leaves no partial file behind on failure.
    """
    target = Path(path)
    for source in inputs:
        if _same_file(Path(source), target):
            raise UsageError(f"{path}: refusing to overwrite an input file; choose another output")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{path}: output folder {folder} does not exist")
    if target.is_dir():
        raise UsageError(f"{path}: is a directory; give a file name for the output")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc
        raise


def _same_file(source: Path, target: Path) -> bool:
    """``target`` names ``source``: the same resolved path, or a hard or symbolic link to it."""
    if source.resolve() == target.resolve():
        return True
    try:
        return os.path.samefile(source, target)
    except OSError:  # one of them does not exist
        return False


def _mode_for(target: Path) -> int:
    """The existing file's mode, else what a plain ``open()`` would create (0666 less umask);
    ``mkstemp`` alone would leave a shared report readable by its owner only."""
    if target.exists():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
