"""Writing output files atomically, never over an input."""

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
    resolved = target.resolve()
    for source in inputs:
        if Path(source).resolve() == resolved:
            raise UsageError(f"{path}: refusing to overwrite an input file; choose another output")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{path}: output folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_for(target: Path) -> int:
    """The existing file's mode, else what a plain ``open()`` would create (0666 less umask);
    ``mkstemp`` alone would leave a shared report readable by its owner only."""
    if target.exists():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
