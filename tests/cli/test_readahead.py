"""An Nsight Compute CSV page read on a worker thread while ``report`` loads its modules
(advisor.readahead): the bytes handed to the reader are the file's as it is when the reader
asks, only the first input is read ahead and only when it is a page, and the report is the
same with and without it."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from advisor import readahead
from advisor.cli import main
from parsers.source import read_bytes
from tests.generated import ncu_page

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_nvprof


@pytest.fixture(autouse=True)
def _small_pages(monkeypatch: pytest.MonkeyPatch) -> object:
    """Pages of 64 KiB and more are read ahead (the test inputs stay small); nothing is left."""
    monkeypatch.setattr(readahead, "MIN_BYTES", 1 << 16)
    yield
    readahead.drop()


@pytest.fixture(scope="module")
def details(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ncu_page(tmp_path_factory, "details", 3000, seed=5)


def test_a_page_is_read_ahead_and_its_bytes_taken_once(details: Path) -> None:
    assert details.stat().st_size >= readahead.MIN_BYTES
    readahead.start([str(details)])
    assert len(readahead._READS) == 1
    read = next(iter(readahead._READS.values()))
    read.thread.join()
    ahead = read.data
    assert ahead == details.read_bytes()
    assert read_bytes(details) is ahead  # taken: not read again
    assert not readahead._READS
    assert read_bytes(details) is not ahead  # a second read reads the file


def test_a_file_changed_since_is_read_again(details: Path, tmp_path: Path) -> None:
    copy = tmp_path / "page.csv"
    copy.write_bytes(details.read_bytes())
    readahead.start([str(copy)])
    next(iter(readahead._READS.values())).thread.join()
    with open(copy, "ab") as out:
        out.write(b'"9","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","S","M","",\n')
    assert read_bytes(copy) == copy.read_bytes()
    assert not readahead._READS


def test_only_the_first_input_and_only_a_page(details: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    gen_nvprof.write_nvprof_gputrace(trace, 2000, 0)
    assert trace.stat().st_size >= readahead.MIN_BYTES
    readahead.start([str(trace), str(details)])  # a CSV trace is read in pieces, never whole
    assert not readahead._READS
    small = tmp_path / "small.csv"
    small.write_bytes(details.read_bytes()[: readahead.MIN_BYTES - 1])
    readahead.start([str(small)])
    assert not readahead._READS
    readahead.start([str(tmp_path / "missing.csv"), str(tmp_path)])
    assert not readahead._READS
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        readahead.start([str(fifo)])  # never opened: nothing waits for a writer
        assert not readahead._READS


def test_the_report_is_the_same_with_and_without(
    details: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[bool] = []
    real = readahead.take

    def spy(info: os.stat_result) -> bytes | None:
        data = real(info)
        taken.append(data is not None)
        return data

    monkeypatch.setattr(readahead, "take", spy)
    out = tmp_path / "ahead.json"
    result = CliRunner().invoke(main, ["report", str(details), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert taken == [True] and not readahead._READS
    monkeypatch.setattr(readahead, "MIN_BYTES", details.stat().st_size + 1)
    plain = tmp_path / "plain.json"
    result = CliRunner().invoke(main, ["report", str(details), "--json", str(plain)])
    assert result.exit_code == 0, result.output
    assert taken == [True, False]
    assert out.read_bytes() == plain.read_bytes()


def test_a_read_that_fails_leaves_the_command_its_own(
    details: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Out of memory (or any error) on the worker: nothing printed, nothing handed over, and the
    command's own read reads the file (and would report what goes wrong)."""
    real = os.fdopen

    class Failing:
        def read(self) -> bytes:
            raise MemoryError

        def __enter__(self) -> Failing:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def fileno(self) -> int:
            return self.fd

        def __init__(self, fd: int) -> None:
            self.fd = fd

    def fdopen(fd: int, mode: str) -> Any:  # the worker's read fails, the caller's does not
        if threading.current_thread() is threading.main_thread():
            return real(fd, mode)
        return Failing(fd)

    monkeypatch.setattr(readahead.os, "fdopen", fdopen)
    readahead.start([str(details)])
    read = next(iter(readahead._READS.values()))
    read.thread.join()
    monkeypatch.undo()
    assert read.data is None
    assert read_bytes(details) == details.read_bytes()
    assert not readahead._READS
    assert capsys.readouterr().err == ""


def test_a_command_that_stops_before_reading_keeps_nothing(details: Path, tmp_path: Path) -> None:
    """An output naming the input is refused before anything is read: the read ahead is
    forgotten (not waited for), and the input is untouched."""
    before = details.read_bytes()
    result = CliRunner().invoke(main, ["report", str(details), "--json", str(details)])
    assert result.exit_code == 2
    assert "refusing to overwrite an input file" in result.output
    assert not readahead._READS
    assert details.read_bytes() == before
