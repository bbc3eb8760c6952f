"""Profile readers: ``parsers.read(path) -> Profile`` for every supported profiler export.

The format is detected from the file's content (never its name) by the registry in
:mod:`parsers.registry`; each format lives in its own module and registers itself on import
(the registry imports the binary formats' modules, or the text formats', when first asked).

The metric selection (``parsers.read(path, metrics=keep)``) flows as an argument: :func:`read`
hands it to the reader of the detected format (``fmt.read(src_or_path, metrics)``: the
registry's reader signature), which may use it to leave out what the selection rejects (the
Nsight Compute raw page reads only the selected metric columns: :mod:`parsers.ncu.csv` ->
:mod:`parsers.ncu.csv_layouts` -> :mod:`parsers.ncu.raw`), and then applies it to the profile
the reader returns (:func:`_selected_metrics`), so every format gives the same rows.  No state
outside the call carries it.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from advisor.errors import (
    MalformedInput,
    NoKernelData,
    OutOfMemory,
    UnrecognisedFormat,
    is_out_of_memory,
)
from advisor.profile import Profile
from parsers import heap, registry
from parsers.registry import Selection
from parsers.source import (
    FAILURE,
    MAX_FIELDS,
    Source,
    has_line_longer,
    is_binary,
    is_preamble,
    read_bytes,
)

#: how many leading lines a text sniffer sees (preambles can be long: ==PROF== lines of
#: child processes, interleaved application output)
SNIFF_LINES = 500
#: bytes a binary sniffer sees (the whole file is read only for a text format)
SNIFF_BYTES = 4096
#: a text file of at least this many bytes is read whole only when a reader asks for all of it
#: (:func:`_pending`): a big table's fast path reads it in pieces (:mod:`parsers.arrow_csv`)
PENDING_BYTES = 8 << 20
#: the bytes of such a file read first, for the sniffers and the readers' headers
PENDING_START = 1 << 20


def known_format_names() -> list[str]:
    return [name for name, _ in registry.known_formats()]


def detect(path: str | Path) -> str:
    """The registry name of the format of ``path`` (raises UnrecognisedFormat)."""
    head = read_bytes(path, SNIFF_BYTES)
    for fmt in registry.binary_formats(head):
        if fmt.sniff(head):
            return fmt.name
    src = Source.from_bytes(str(path), read_bytes(path) if len(head) == SNIFF_BYTES else head)
    tfmt = registry.sniff_text(src.head(SNIFF_LINES))
    if tfmt is not None:
        return tfmt.name
    raise _unrecognised(src, head)


def read(path: str | Path, metrics: Selection = None) -> Profile:
    """Read one profiler export into a validated :class:`Profile`.

    ``metrics``: keep only the metrics rows whose canonical name it accepts (None: every row).
    It is passed to the format's reader, and the Nsight Compute raw page then leaves the other
    columns unread; the rows are then kept whole for a launch, kernel or device that would
    otherwise lose every metrics row it has.

    Raises an :class:`~advisor.errors.InputError` subclass with a one-line message for an
    unreadable, unrecognised or malformed file or one too large for memory (``OutOfMemory``),
    and :class:`NoKernelData` for a failed or empty run (quoting the profiler's own error line
    when the file has one).
    """
    try:
        profile, src = _read(str(path), metrics)
    except csv.Error as exc:  # a quoting error the format's reader did not place on a line
        raise MalformedInput(str(path), f"not valid CSV: {exc}") from exc
    except (MemoryError, SystemError) as exc:  # SystemError: a C reader's wrapped MemoryError
        if not is_out_of_memory(exc):
            raise
        raise OutOfMemory(str(path)) from None  # ``from None`` lets the held memory go
    if metrics is not None:
        profile.metrics = _selected_metrics(profile.metrics, metrics)
    if src is not None and src.encoding_note:
        note = f"{src.encoding_note}; kernel names may be spelled differently than in the tool"
        profile.provenance = tuple(replace(p, notes=(*p.notes, note)) for p in profile.provenance)
    if not profile.has_kernel_data():
        failures = _profiler_failures(src, recognised=True) if src is not None else []
        if failures:
            raise NoKernelData(str(path), f"no kernel data; the profiler said: {failures[0]}")
        if not (len(profile.transfers) or len(profile.api_calls) or len(profile.api_summary)):
            raise NoKernelData(str(path), "no kernel data: the file holds no kernel launches")
    del src
    heap.give_back()  # the reader's freed pages, before the analysis adds its own
    return profile


def _selected_metrics(frame: pd.DataFrame, keep: Callable[[str], bool]) -> pd.DataFrame:
    """The rows of ``frame`` whose metric ``keep`` accepts; every row when that would leave a
    launch, kernel or device without metrics rows (the analysis counts them)."""
    names = frame["metric"].dropna().unique()
    wanted = [n for n in names if keep(str(n))]
    if len(wanted) == len(names):
        return frame
    mask = frame["metric"].isin(wanted) | frame["metric"].isna()
    kept = frame[mask]
    for column in ("launch_id", "kernel", "device", "device_id"):
        if kept[column].nunique() != frame[column].nunique():
            return frame
    return kept.reset_index(drop=True)


def _read(path: str, metrics: Selection) -> tuple[Profile, Source | None]:
    """The profile of the first format that recognises the file, read with the metric
    selection ``metrics``, and the decoded text if any.

    A binary reader opens the file itself, so only its start is read for the sniffers; a text
    file's bytes are held by the :class:`Source` alone (a reader may release them)."""
    start = read_bytes(path, SNIFF_BYTES)
    for fmt in registry.binary_formats(start):
        if fmt.sniff(start):
            return fmt.read(path, metrics), None
    src = _pending(path, start) if len(start) == SNIFF_BYTES else None
    if src is None:
        src = Source.from_bytes(path, read_bytes(path) if len(start) == SNIFF_BYTES else start)
        _check_width(src)
    tfmt = registry.sniff_text(src.head(SNIFF_LINES))
    if tfmt is not None:
        return tfmt.read(src, metrics), src
    raise _unrecognised(src, start)


def _pending(path: str, start: bytes) -> Source | None:
    """A :meth:`Source.pending` of a file of at least :data:`PENDING_BYTES` whose first
    :data:`PENDING_START` bytes are ASCII text with no line wider than :data:`MAX_FIELDS`; the
    rest of the file is checked (:func:`_check_width`) when it is read whole, and a reader that
    reads it in pieces checks each (:func:`parsers.arrow_csv.read_rows`).  None otherwise: the
    file is read whole at once."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None
    if size < PENDING_BYTES:
        return None
    first = read_bytes(path, PENDING_START)
    if has_line_longer(first, MAX_FIELDS) or len(first) != PENDING_START:
        return None
    return Source.pending(path, first, size, _check_width)


def _check_width(src: Source) -> None:
    """Refuse a line with more than :data:`MAX_FIELDS` fields (comma, tab or semicolon).

    A line that long has more than MAX_FIELDS characters; when the file's bytes are at hand and
    no line of them is that long (:func:`parsers.source.has_line_longer`), nothing is
    decoded here."""
    if src.raw is not None and not has_line_longer(src.raw, MAX_FIELDS):
        return
    for i, line in enumerate(src.lines):
        if len(line) > MAX_FIELDS:
            widest = max(line.count(sep) for sep in ",\t;") + 1
            if widest > MAX_FIELDS:
                raise src.malformed(
                    i, f"{widest:,} fields, more than any profiler export ({MAX_FIELDS:,})"
                )


def _unrecognised(src: Source, head: bytes) -> Exception:
    known = ", ".join(known_format_names())
    if is_binary(head):
        return UnrecognisedFormat(
            src.path,
            f"binary file of unknown type (known formats: {known}); an Nsight Systems report "
            "(.nsys-rep/.qdrep) needs nsys to read it: export it with `nsys export --type sqlite "
            "-o run.sqlite run.nsys-rep` or `nsys stats --report cuda_gpu_trace,cuda_api_trace "
            "--format csv -o run run.nsys-rep` and pass the result",
        )
    failures = _profiler_failures(src, recognised=False)
    if failures:
        return NoKernelData(src.path, f"no profile data; the profiler said: {failures[0]}")
    if not any(line.strip() for line in src.lines):
        return NoKernelData(src.path, "the file is empty")
    if all(not line.strip() or is_preamble(line) for line in src.lines):
        return NoKernelData(
            src.path,
            "no kernel was profiled: the file has only profiler status lines "
            "(did no kernel match the filter?)",
        )
    return UnrecognisedFormat(src.path, f"unrecognised content (known formats: {known})")


#: what may come before a profiler line: indentation, and one leading number field (a script
#: that captured ``nvprof`` output per input size writes ``131072,==21422== Profiling result:``)
_LINE_START = re.compile(r"\s*(?:\d+,)?")
#: the tag that starts a line the profiler itself printed
_PROFILER_TAG = re.compile(r"==\d+==|========|==PROF==|==WARNING==|==WARN==|==ERROR==")


def _profiler_failures(src: Source, recognised: bool) -> list[str]:
    """The profiler's own error / no-kernel lines of ``src`` (:data:`parsers.source.FAILURE`),
    in file order, de-duplicated: only lines that START with such a message, and, unless the
    file was ``recognised`` as a profiler export, only when the file looks like the profiler's
    console output: its first non-blank line, or most of its non-blank lines, are the
    profiler's.  A README or a note that merely quotes ``==ERROR==`` or "No kernels were
    profiled" is no failed run but unrecognised content."""
    found: list[str] = []
    own: list[bool] = []
    for line in src.lines:
        if not line.strip():
            continue
        start = _LINE_START.match(line)
        at = start.end() if start is not None else 0
        failure = FAILURE.match(line, at)
        if failure is not None and failure.group(0).strip() not in found:
            found.append(failure.group(0).strip())
        own.append(failure is not None or _PROFILER_TAG.match(line, at) is not None)
    if recognised or not found:
        return found
    return found if own[0] or 2 * sum(own) > len(own) else []


__all__ = ["Profile", "detect", "known_format_names", "read"]
