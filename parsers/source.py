"""Reading an input file into lines, and the helpers every text parser shares.

A :class:`Source` is the decoded text of one file as a list of lines (BOM and CR removed), with
the path for error messages; a UTF-8 file keeps its bytes and is split into lines only when a
reader asks for them.  Line numbers in errors are 1-based.

Decoding (FORMATS.md: the profilers write UTF-8; files passed through editors or Windows tools
may not be): a UTF-8 BOM is dropped; a UTF-16 file (with a BOM, or without one when every other
byte of its start is NUL) is decoded as UTF-16; text that is not valid UTF-8 is decoded as
Windows-1252 (Latin-1 where cp1252 leaves a byte undefined) and :attr:`Source.encoding_note` says
so, for the profile's provenance.  Only regular files are read: a FIFO, socket or device is
refused before it is opened for reading, so nothing blocks.
"""

from __future__ import annotations

import csv
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from advisor import readahead
from advisor.errors import MalformedInput, UnreadableInput

#: lines the profilers print around their tables (never data), and "# " comment lines that
#: cuda-advisor's own synthetic samples carry at the top
PREAMBLE = re.compile(r"^\s*(==\d+==|========|==PROF==|==WARNING==|==ERROR==|==WARN==)|^# ")
#: messages that explain why a file holds no kernel data, quoted in the error
FAILURE = re.compile(
    r"(==ERROR==.*|======== Error:.*|==\d+== Error:.*|No kernels were profiled\.?"
    r"|SKIPPED: .*does not contain CUDA kernel data\.?|Unable to import nvprof generated.*"
    r"|==WARNING== No kernels were profiled.*)"
)

SQLITE_MAGIC = b"SQLite format 3\x00"

#: most fields a text line may have; no profiler writes more (``ncu --page raw`` with every
#: metric of ``--set full`` has a few thousand columns), and refusing wider lines up front keeps
#: time and memory bounded for a damaged file (a line of a million separators)
MAX_FIELDS = 100_000

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class Source:
    """The decoded lines of one input file.

    A file whose bytes are UTF-8 without a BOM keeps them (:attr:`raw`) and decodes and splits
    them only when :attr:`lines` is first used: :meth:`head` decodes just the start, so a reader
    with a fast path for one big table (:mod:`parsers.arrow_csv`) never builds the list of lines.
    A source made by :meth:`pending` holds only the file's start until :attr:`raw` or
    :attr:`lines` is first asked for: such a fast path then reads the rest in pieces and never
    holds the whole file (:attr:`is_pending`).
    """

    def __init__(
        self,
        path: str,
        lines: list[str] | None = None,
        encoding_note: str | None = None,
        *,
        raw: bytes | None = None,
    ) -> None:
        self.path = path
        #: set when the file was not UTF-8 and was decoded otherwise (a provenance note)
        self.encoding_note = encoding_note
        self._raw = raw
        self._lines = lines
        self._released = False
        #: the file's first bytes and its size, while the whole file is not read (:meth:`pending`)
        self._start: bytes | None = None
        self._size = 0
        self._on_load: Callable[[Source], None] | None = None

    @classmethod
    def pending(
        cls, path: str, start: bytes, size: int, on_load: Callable[[Source], None]
    ) -> Source | None:
        """A source of the file ``path`` (``size`` bytes) that holds only ``start``, its first
        bytes, until its bytes or lines are asked for; it then reads the file whole as
        :meth:`from_bytes` does and calls ``on_load`` with itself (a check of the whole text).
        None when ``start`` is not plain ASCII text, which :meth:`from_bytes` decodes whole
        at once (a BOM, UTF-16, another encoding)."""
        if not start.isascii() or utf16_codec(start) is not None or b"\x00" in start:
            return None
        src = cls(path)
        src._start, src._size, src._on_load = start, size, on_load
        return src

    @property
    def is_pending(self) -> bool:
        """Whether only the file's start has been read (:meth:`pending`)."""
        return self._start is not None

    @property
    def size(self) -> int | None:
        """The file's size in bytes when its bytes are UTF-8 (held, or pending), else None."""
        if self._start is not None:
            return self._size
        return len(self._raw) if self._raw is not None else None

    @property
    def raw(self) -> bytes | None:
        """The file's bytes when they are UTF-8 without a BOM (the text is their decoding)."""
        if self._start is not None:
            self._load()
        return self._raw

    def _load(self) -> None:
        """Read the whole file of a pending source, as :meth:`from_bytes` does."""
        self._start = None
        raw = read_bytes(self.path)
        if not raw.startswith(b"\xef\xbb\xbf") and utf16_codec(raw) is None and _is_utf8(raw):
            self._raw = raw
        else:
            text, self.encoding_note = decode(raw)
            self._lines = _split(text)
        hook, self._on_load = self._on_load, None
        if hook is not None:
            hook(self)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            raw = self.raw
            if raw is None and self._released:  # asked again after release(): read once more
                raw = read_bytes(self.path)
            if self._lines is None:  # (loading a pending source may have decoded them)
                self._lines = _split(raw.decode("utf-8") if raw is not None else "")
        return self._lines

    def release(self) -> None:
        """Drop the bytes once a reader has taken what it needs from them (a big table read by
        :mod:`parsers.arrow_csv`), so they are not alive while the frames are built; the lines,
        should anything still ask for them, are read from the file again."""
        if self._raw is not None and self._lines is None:
            self._raw = None
            self._released = True

    def reread(self) -> bytes | None:
        """The file's bytes: those held, or after :meth:`release` read from the file again
        (and held again); None for a file that was decoded otherwise than as UTF-8."""
        if self.raw is None and self._released:
            self._raw = read_bytes(self.path)
            self._released = False
        return self._raw

    @classmethod
    def from_path(cls, path: str | Path) -> Source:
        return cls.from_bytes(str(path), read_bytes(path))

    @classmethod
    def from_bytes(cls, path: str, raw: bytes) -> Source:
        if not raw.startswith(b"\xef\xbb\xbf") and utf16_codec(raw) is None and _is_utf8(raw):
            return cls(path=path, raw=raw)
        text, note = decode(raw)
        return cls(path=path, lines=_split(text), encoding_note=note)

    def head(self, n: int = 200) -> list[str]:
        if self._start is not None:  # the first n lines, when the start holds them whole
            end = _line_end(self._start, n - 1)
            if end is not None:
                return _split(self._start[: end + 1].decode("ascii"))[:n]
        if self._lines is None and self.raw is not None:
            end = _line_end(self.raw, n - 1)
            if end is None:
                return self.lines[:n]
            return _split(self.raw[: end + 1].decode("utf-8"))[:n]
        return self.lines[:n]

    def line_offset(self, index: int) -> int | None:
        """The byte offset of the 0-based line ``index`` of the file's bytes (lines end at
        ``\\n``; None when the file has fewer lines, or is not UTF-8): from the start alone
        when it holds that line's beginning."""
        if self._start is not None:
            offset = line_offset(self._start, index)
            if offset is not None:
                return offset
        raw = self.raw
        return None if raw is None else line_offset(raw, index)

    def malformed(self, index: int, message: str) -> MalformedInput:
        """A MalformedInput for the 0-based line ``index``."""
        return MalformedInput(self.path, message, line=index + 1)

    def failure_lines(self) -> list[str]:
        """The profiler's own error / no-kernel lines, in file order, de-duplicated."""
        found: list[str] = []
        for line in self.lines:
            m = FAILURE.search(line)
            if m and m.group(0).strip() not in found:
                found.append(m.group(0).strip())
        return found


def _line_end(raw: bytes, index: int) -> int | None:
    """The offset of the newline that ends the 0-based line ``index`` of ``raw``, or None when
    ``raw`` has fewer newlines."""
    end = -1
    for _ in range(index + 1):
        end = raw.find(b"\n", end + 1)
        if end < 0:
            return None
    return end


def line_offset(raw: bytes, index: int) -> int | None:
    """The byte offset of the 0-based line ``index`` of ``raw`` (lines end at ``\\n``), or None
    when ``raw`` has fewer lines."""
    if index == 0:
        return 0
    end = _line_end(raw, index - 1)
    return None if end is None else end + 1


def _split(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _is_utf8(raw: bytes) -> bool:
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode(raw: bytes) -> tuple[str, str | None]:
    """The text of ``raw`` and, when it was not UTF-8, a note naming the encoding used."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    utf16 = utf16_codec(raw)
    if utf16 is not None:
        return raw.decode(utf16, errors="replace").lstrip("\ufeff"), f"decoded as {utf16.upper()}"
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        where = f"byte {exc.start} is not UTF-8"
    try:
        return raw.decode("cp1252"), f"decoded as Windows-1252 ({where})"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), f"decoded as Latin-1 ({where})"


def utf16_codec(raw: bytes) -> str | None:
    """``"utf-16"`` (BOM), ``"utf-16-le"`` / ``"utf-16-be"`` (no BOM, but ASCII text with every
    other byte NUL at the start of the file), or None."""
    if raw.startswith(_UTF16_BOMS):
        return "utf-16"
    head = raw[:4096]
    head = head[: len(head) - len(head) % 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) == len(odd) and 0 not in even:
        return "utf-16-le"
    if even.count(0) == len(even) and 0 not in odd:
        return "utf-16-be"
    return None


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (its first ``limit`` bytes when given), or an
    UnreadableInput naming it.

    The file is opened non-blocking and checked with ``fstat`` before it is read, so a FIFO (or
    a socket or a device) is refused at once instead of waiting for a writer.
    """
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # a dangling link or a loop
            raise UnreadableInput(str(path), "no such file") from None
        # a name too long, a folder that cannot be searched
        raise UnreadableInput(str(path), f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise UnreadableInput(str(path), "is a directory, expected a profile file")
    _require_regular(path, mode)  # a socket cannot even be opened
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UnreadableInput(str(path), f"cannot read: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        _require_regular(path, info.st_mode)  # replaced since the first look
        ahead = readahead.take(info) if limit is None else None
        if ahead is not None:  # read while the modules loaded, and unchanged since
            return ahead
        try:
            return handle.read() if limit is None else handle.read(limit)
        except OSError as exc:
            raise UnreadableInput(str(path), f"cannot read: {exc.strerror or exc}") from exc


def _require_regular(path: str | Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UnreadableInput(
            str(path), f"is not a regular file ({_kind(mode)}), expected a profile file"
        )


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


def has_line_longer(raw: bytes | bytearray, limit: int, end: int | None = None) -> bool:
    """Whether a ``\n``-separated line of ``raw`` (of its first ``end`` bytes) is longer than
    ``limit`` bytes.

    Such a line covers a whole stretch of ``limit // 2 + 1`` bytes at a multiple of that stride,
    so only those stretches are searched for a newline (a ``memchr`` that stops at the first one);
    around each stretch without one, the line's exact length is measured."""
    size = len(raw) if end is None else end
    stride = limit // 2 + 1
    for lo in range(0, size, stride):
        if raw.find(b"\n", lo, min(lo + stride, size)) >= 0:
            continue
        start = raw.rfind(b"\n", 0, lo) + 1
        stop = raw.find(b"\n", lo, size)
        if (size if stop < 0 else stop) - start > limit:
            return True
    return False


def is_preamble(line: str) -> bool:
    return bool(PREAMBLE.match(line))


def csv_fields(line: str) -> list[str]:
    """Split one CSV line (double quotes, embedded commas) into fields."""
    return next(csv.reader([line]))


def csv_rows(lines: Sequence[str]) -> Iterator[list[str]]:
    """Split CSV lines into rows of fields (quoted fields may not span lines in these exports)."""
    yield from csv.reader(lines)


def is_binary(raw: bytes) -> bool:
    """NUL bytes near the start and not UTF-16 text."""
    return b"\x00" in raw[:4096] and utf16_codec(raw) is None
