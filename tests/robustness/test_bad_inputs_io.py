"""Reading and writing files safely: encodings, special files, atomic outputs, one-line errors.

Regression tests for the input side (parsers/source.py: UTF-16 with and without a BOM,
Windows-1252 / Latin-1 fallback with a provenance note, non-regular files) and the output side
(advisor/output.py: temporary file + rename, inputs never overwritten, no partial file on
failure) and for the command line's error line (advisor/cli/group.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import parsers
from advisor import output
from advisor.cli import main
from advisor.errors import MESSAGE_MAX_CHARS, UnreadableInput, UsageError
from advisor.output import write_atomic
from parsers.source import decode, is_binary, utf16_codec

TRACE = "synthetic_nvprof_gputrace.csv"


# --- decoding ----------------------------------------------------------------------------------


def test_decode_utf8_and_bom() -> None:
    assert decode("a,é\n".encode()) == ("a,é\n", None)
    assert decode(b"\xef\xbb\xbfa,b") == ("a,b", None)


def test_decode_utf16_with_and_without_bom() -> None:
    text = "Start,Name\n1,kérnel\n"
    assert decode(text.encode("utf-16")) == (text, "decoded as UTF-16")  # BOM + little-endian
    assert decode(b"\xfe\xff" + text.encode("utf-16-be")) == (text, "decoded as UTF-16")
    assert decode(text.encode("utf-16-le")) == (text, "decoded as UTF-16-LE")
    assert decode(text.encode("utf-16-be")) == (text, "decoded as UTF-16-BE")
    assert not is_binary(text.encode("utf-16-le"))
    assert is_binary(b"NVR\x00\x01\x02") and utf16_codec(b"NVR\x00\x01\x02") is None


def test_decode_falls_back_to_cp1252_then_latin1() -> None:
    # b"\xe9" is not UTF-8 (a lead byte without its continuation): cp1252 'é'; byte 5
    assert decode(b"name,\xe9t\x80") == (
        "name,ét€",
        "decoded as Windows-1252 (byte 5 is not UTF-8)",
    )
    # 0x81 is undefined in cp1252: Latin-1 maps every byte
    assert decode(b"k\x81\xe9") == ("k\x81é", "decoded as Latin-1 (byte 1 is not UTF-8)")


def test_latin1_kernel_names_are_kept_with_a_provenance_note(samples: Path, tmp_path: Path) -> None:
    raw = (samples / TRACE).read_bytes().replace(b"transposeNaive", b"transpos\xe9Naive")
    path = tmp_path / "latin1.csv"
    path.write_bytes(raw)
    profile = parsers.read(path)
    kernels = set(profile.launches["name"])
    assert "transposéNaive(float*, const float*, int, int)" in kernels
    [notes] = [p.notes for p in profile.provenance]
    assert any(n.startswith("decoded as Windows-1252 (byte ") for n in notes)


def test_utf16_file_reads_like_its_utf8_original(samples: Path, tmp_path: Path) -> None:
    original = parsers.read(samples / TRACE)
    path = tmp_path / "utf16.csv"
    path.write_bytes((samples / TRACE).read_text(encoding="utf-8").encode("utf-16"))
    converted = parsers.read(path)
    assert converted.launches.equals(original.launches)
    assert converted.transfers.equals(original.transfers)
    assert "decoded as UTF-16" in converted.provenance[0].notes[-1]


def test_fifo_and_socket_are_refused(tmp_path: Path) -> None:
    import socket

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # opened non-blocking: this returns at once (the limits suite times it)
    with pytest.raises(UnreadableInput) as e:
        parsers.read(fifo)
    assert str(e.value) == f"{fifo}: is not a regular file (a FIFO), expected a profile file"
    sock_path = tmp_path / "s.csv"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(UnreadableInput, match=r"is not a regular file \(a socket\)"):
            parsers.read(sock_path)


# --- writing -----------------------------------------------------------------------------------


def test_links_to_an_input_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "profile.csv"
    source.write_text("original")
    hard, soft = tmp_path / "hard.html", tmp_path / "soft.html"
    os.link(source, hard)
    soft.symlink_to(source)
    for target in (hard, soft):
        with pytest.raises(UsageError, match="refusing to overwrite an input"):
            write_atomic(target, "new", inputs=[source])
    assert source.read_text() == "original"


def test_directory_as_output_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is a directory; give a file name"):
        write_atomic(tmp_path, "x")


def test_failed_write_keeps_the_old_file_and_leaves_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report.html"
    out.write_text("old")

    def full_disk(src: str, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "replace", full_disk)
    with pytest.raises(UsageError, match="cannot write: No space left on device"):
        write_atomic(out, "new")
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_unwritable_folder_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(**kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(output.tempfile, "mkstemp", denied)
    with pytest.raises(UsageError, match="cannot write: Permission denied"):
        write_atomic(tmp_path / "r.json", "{}")


def test_report_refuses_an_input_as_output(samples: Path, tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_bytes((samples / TRACE).read_bytes())
    result = CliRunner().invoke(main, ["report", str(path), "--json", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"cuda-advisor: error: {path}: refusing to overwrite an input file; choose another output\n"
    )
    assert path.read_bytes() == (samples / TRACE).read_bytes()


def test_report_into_a_missing_folder_is_reported(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "missing" / "r.json"
    result = CliRunner().invoke(main, ["report", str(samples / TRACE), "--json", str(out)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"cuda-advisor: error: {out}: output folder {out.parent} does not exist"
    ]
    assert not out.parent.exists()


# --- the error line ----------------------------------------------------------------------------


def test_error_line_escapes_controls_and_is_bounded(tmp_path: Path) -> None:
    hostile = tmp_path / "a\x1b[31mred\u202e.csv"
    result = CliRunner().invoke(main, ["inspect", str(hostile)])
    assert result.exit_code == 3
    assert (
        result.stderr == f"cuda-advisor: error: {tmp_path}/a\\x1b[31mred\\u202e.csv: no such file\n"
    )
    long = tmp_path.joinpath(*["y" * 200] * 12)  # 2,400 characters, no such file
    result = CliRunner().invoke(main, ["inspect", str(long)])
    assert result.exit_code == 3
    line = result.stderr.rstrip("\n")
    assert "\n" not in line and line.endswith("…")
    assert len(line) == len("cuda-advisor: error: ") + MESSAGE_MAX_CHARS


def test_closed_stdout_ends_quietly(samples: Path) -> None:
    """``cuda-advisor inspect ... | head``: the reader went away; no traceback, no message."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "advisor", "inspect", "--json", str(samples / TRACE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert stderr == ""
