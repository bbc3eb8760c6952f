"""Bad input never crashes: hundreds of damaged files, generated at test time, through the CLI.

Every case is a file written into a temporary folder (nothing large is committed): each real
profile under ``../shared/real_profiles/`` truncated at offsets chosen from its content
(mid-header, mid-units-row, mid-row, mid-quoted-field; binary reports mid-magic, inside the first
page and near the end), every sample profile damaged in :data:`VARIANTS` ways (encodings, line
ends, delimiters, columns, numbers), random bytes, corrupt SQLite databases and special files.
``cuda-advisor inspect [--json] FILE`` must end with exit code 3 and exactly one stderr line
naming the file, or with exit code 0 and a summary (the damage left a valid file); never a
traceback.  A subset also runs ``report FILE --json OUT``; JSON must load without NaN or
Infinity.

The cases that could hang or take memory (a FIFO, a 10 MB line, a million columns) run in a
child process with a time limit and a memory bound: tests/robustness/test_bad_inputs_limits.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import parsers.source
from advisor.cli import main
from parsers.source import is_preamble
from tests.conftest import REAL_PROFILES, SAMPLES

#: the number of generated bad inputs the README states; test_case_count keeps it honest
STATED_CASES = 600
#: truncations of a large file stay within its first bytes (parsing a whole 3 MB trace is slow
#: and proves nothing more than the real-profile tests)
TRUNCATE_WITHIN = 64 * 1024

Case = tuple[str, bytes]  # (file name, content)


# --- generating cases --------------------------------------------------------------------------


def real_files() -> list[Path]:
    if not REAL_PROFILES.is_dir():
        return []
    return sorted(p for p in REAL_PROFILES.rglob("*") if p.is_file() and p.name != "README.md")


def _line_spans(raw: bytes) -> list[tuple[int, int]]:
    """(start, end) of every line of ``raw[:TRUNCATE_WITHIN]``, end excluding the newline."""
    spans, start = [], 0
    head = raw[:TRUNCATE_WITHIN]
    for m in re.finditer(rb"\n", head):
        spans.append((start, m.start()))
        start = m.end()
    if start < len(head):
        spans.append((start, len(head)))
    return spans


def truncation_offsets(raw: bytes) -> list[int]:
    """Three offsets inside ``raw`` where a cut damages its structure: for text, mid-header,
    mid-units-row (the second line of the table) and mid-quoted-field (else mid-row); for a
    binary report, inside its file header, in the middle and one byte short of the end."""
    if parsers.source.is_binary(raw) or raw.startswith(parsers.source.SQLITE_MAGIC):
        return sorted({c for c in (50, len(raw) // 2, len(raw) - 1) if 0 < c < len(raw)})
    body = [
        (a, b)
        for a, b in _line_spans(raw)
        if b > a and not is_preamble(raw[a:b].decode("utf-8", "replace"))
    ]
    mid = [a + (b - a) // 2 for a, b in body]
    quotes = [q for q in (raw.find(b'"', a, b) for a, b in body[2:12]) if q >= 0]
    cuts = mid[:2] + [q + 2 for q in quotes[:1]] + mid[3:4]  # the last: mid-row
    cuts += [1, len(raw) // 3, len(raw) * 2 // 3]  # for a file of fewer lines
    chosen: list[int] = []
    for cut in cuts:
        if 0 < cut < len(raw) and cut not in chosen and len(chosen) < 3:
            chosen.append(cut)
    return sorted(chosen)


def real_cases() -> Iterator[Case]:
    for path in real_files():
        raw = path.read_bytes()
        rel = path.relative_to(REAL_PROFILES).as_posix().replace("/", "__")
        for cut in truncation_offsets(raw):
            yield f"{rel}.cut{cut}", raw[:cut]


def _body_index(lines: list[bytes]) -> int:
    """Index of the first line that is not preamble (the header)."""
    for i, line in enumerate(lines):
        text = line.decode("utf-8", "replace")
        if line.strip() and not is_preamble(text):
            return i
    return 0


def _map_body(fn: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    def apply(raw: bytes) -> bytes:
        lines = raw.split(b"\n")
        h = _body_index(lines)
        return b"\n".join(lines[:h] + [fn(line) if line else line for line in lines[h:]])

    return apply


def _keep(pick: Callable[[list[bytes], int], list[bytes]]) -> Callable[[bytes], bytes]:
    def apply(raw: bytes) -> bytes:
        lines = raw.split(b"\n")
        return b"\n".join(pick(lines, _body_index(lines)))

    return apply


def _text(encoding: str, bom: bytes = b"") -> Callable[[bytes], bytes]:
    return lambda raw: bom + raw.decode("utf-8").encode(encoding)


def _shuffled(raw: bytes) -> bytes:
    lines = raw.split(b"\n")
    random.Random(7).shuffle(lines)
    return b"\n".join(lines)


def _scribbled(raw: bytes) -> bytes:
    rng = random.Random(len(raw))
    at = len(raw) // 2
    return raw[:at] + rng.randbytes(64) + raw[at + 64 :]


_NUMBER = re.compile(rb"(?<![A-Za-z_])\d+(\.\d+)?")

#: damage applied to every sample profile: name -> bytes -> bytes
VARIANTS: dict[str, Callable[[bytes], bytes]] = {
    "header-only": _keep(lambda ls, h: ls[: h + 1]),
    "header-units-only": _keep(lambda ls, h: ls[: h + 2]),
    "no-units-row": _keep(lambda ls, h: ls[: h + 1] + ls[h + 2 :]),
    "no-header": _keep(lambda ls, h: ls[:h] + ls[h + 1 :]),
    "header-twice": _keep(lambda ls, h: ls[: h + 4] + ls[h : h + 1] + ls[h + 4 :]),
    "extra-column": _map_body(lambda line: line + b",extra"),
    "missing-column": _map_body(lambda line: line.rsplit(b",", 1)[0]),
    "one-row-wider": _keep(lambda ls, h: [*ls[: h + 2], ls[h + 2] + b",1,2", *ls[h + 3 :]]),
    "crlf": lambda raw: raw.replace(b"\n", b"\r\n"),
    "cr-only": lambda raw: raw.replace(b"\n", b"\r"),
    "utf8-bom": lambda raw: b"\xef\xbb\xbf" + raw,
    "utf16-le-bom": _text("utf-16"),
    "utf16-be-bom": _text("utf-16-be", b"\xfe\xff"),
    "utf16-le-no-bom": _text("utf-16-le"),
    "latin1-names": lambda raw: raw.replace(b"transpose", b"transpos\xe9").replace(b"(", b"\xb5("),
    "semicolons": lambda raw: raw.replace(b",", b";"),
    "tabs": lambda raw: raw.replace(b",", b"\t"),
    "no-quotes": lambda raw: raw.replace(b'"', b""),
    "open-quote": _keep(lambda ls, h: [*ls[: h + 2], b'"' + ls[h + 2], *ls[h + 3 :]]),
    "nul-byte": lambda raw: raw[: len(raw) // 2] + b"\x00" + raw[len(raw) // 2 :],
    "scribbled": _scribbled,
    "numbers-inf": lambda raw: _NUMBER.sub(b"1e999", raw),
    "numbers-nan": lambda raw: _NUMBER.sub(b"nan", raw),
    "numbers-negative": lambda raw: _NUMBER.sub(b"-7", raw),
    "numbers-huge": lambda raw: _NUMBER.sub(b"99999999999999999999999", raw),
    "shuffled": _shuffled,
    "last-line-cut": lambda raw: raw.rstrip(b"\n")[:-5],
}


#: one sample per reader and table kind
SAMPLE_FILES = (
    "synthetic_nvprof_gputrace.csv",
    "synthetic_nvprof_metrics.csv",
    "synthetic_nvprof_gputrace.txt",
    "synthetic_nvprof_summary.txt",
    "synthetic_ncu_details.csv",
    "synthetic_ncu_raw.csv",
    "synthetic_nsys_cuda_gpu_trace.csv",
    "synthetic_nsys_stats_multi.csv",
)


def sample_files() -> list[Path]:
    return [SAMPLES / name for name in SAMPLE_FILES]


def sample_cases() -> Iterator[Case]:
    for path in sample_files():
        raw = path.read_bytes()
        for name, damage in VARIANTS.items():
            yield f"{path.name}.{name}", damage(raw)


def _sqlite(build: Callable[[sqlite3.Connection], None]) -> bytes:
    """The bytes of an SQLite database made by ``build`` (written through a temporary file)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "db.sqlite"
        con = sqlite3.connect(path)
        build(con)
        con.commit()
        con.close()
        return path.read_bytes()


def fixed_cases() -> Iterator[Case]:
    """Random bytes, empty and blank files, corrupt databases and reports."""
    rng = random.Random(2024)
    for i, size in enumerate((1, 7, 100, 4096, 65536)):
        yield f"random-{i}.csv", rng.randbytes(size)
        yield (
            f"random-text-{i}.csv",
            bytes(rng.choice(b',"\n\r\t 0123456789.%abc') for _ in range(size)),
        )
    yield "empty.csv", b""
    yield "blank.csv", b" \n\n\t\r\n"
    yield (
        "preamble-only.csv",
        b"==123== NVPROF is profiling process 123\n==123== Profiling result:\n",
    )
    yield "bom-only.csv", b"\xef\xbb\xbf"
    yield "utf16-bom-only.csv", b"\xff\xfe"
    yield "odd-utf16.csv", b"\xff\xfe" + "a,b\n1,2".encode("utf-16-le") + b"\x00"
    sqlite_magic = parsers.source.SQLITE_MAGIC
    yield "sqlite-header-only.sqlite", sqlite_magic + bytes(84)
    yield "sqlite-magic-garbage.sqlite", sqlite_magic + rng.randbytes(8192)
    yield "ncu-magic-garbage.ncu-rep", b"NVR\x00" + rng.randbytes(8192)
    yield "ncu-magic-only.ncu-rep", b"NVR\x00"
    yield "sqlite-empty.sqlite", _sqlite(lambda con: None)
    yield "sqlite-unrelated.sqlite", _sqlite(lambda con: con.execute("CREATE TABLE t(x)"))
    yield (
        "sqlite-cupti-wrong-columns.nvprof",
        _sqlite(lambda con: con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(x)")),
    )
    yield (
        "sqlite-nsys-wrong-columns.sqlite",
        _sqlite(
            lambda con: con.executescript(
                'CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, "end");'
                "CREATE TABLE StringIds(id, value);"
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('x', NULL);"
            )
        ),
    )
    for path in real_files():
        raw = path.read_bytes()
        if raw.startswith(sqlite_magic) and len(raw) > 3 * 4096:  # pages overwritten mid-file
            mid = len(raw) // 2
            damaged = raw[:mid] + rng.randbytes(8192) + raw[mid + 8192 :]
            yield f"{path.parent.name}-scribbled.sqlite", damaged
            yield f"{path.parent.name}-no-first-page.sqlite", sqlite_magic + raw[4096:]


def all_cases() -> list[Case]:
    return [*real_cases(), *sample_cases(), *fixed_cases()]


# --- checking ----------------------------------------------------------------------------------


def _reject_constant(name: str) -> float:
    raise ValueError(f"JSON holds {name}")


def check(args: list[str], path: Path) -> str | None:
    """Run the CLI; None when it behaved, else what went wrong."""
    result = CliRunner().invoke(main, args)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"raised {type(result.exception).__name__}: {result.exception}"
    if "Traceback" in result.output + stderr:
        return "traceback in the output"
    if result.exit_code == 3:
        lines = stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith(f"cuda-advisor: error: {path}:"):
            return f"exit 3 but stderr is not one line naming the file: {stderr[:300]!r}"
        return None
    if result.exit_code != 0:
        return f"exit {result.exit_code}: {stderr[:300]!r}"
    if args[:2] == ["inspect", "--json"]:
        try:
            [summary] = json.loads(result.stdout, parse_constant=_reject_constant)
        except ValueError as exc:
            return f"inspect --json output invalid: {exc}"
        return None if summary["path"] == str(path) else f"summary of {summary['path']}"
    if args[0] == "inspect" and not result.stdout.startswith(str(path)):
        return f"exit 0 but no summary: {result.stdout[:200]!r}"
    return None


def check_report_json(path: Path, out: Path) -> str | None:
    problem = check(["report", str(path), "--json", str(out)], path)
    if problem or not out.exists():
        return problem
    try:
        json.loads(out.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except ValueError as exc:
        return f"report JSON invalid: {exc}"
    return None


def run_cases(cases: list[Case], folder: Path, report_every: int = 0) -> list[str]:
    """Write and check every case; the failures, one line each."""
    failures = []
    for i, (name, data) in enumerate(cases):
        path = folder / name
        path.write_bytes(data)
        as_json = ["--json"] if i % 2 else []  # every other case checks the JSON summary
        problem = check(["inspect", *as_json, str(path)], path)
        if problem is None and report_every and i % report_every == 0:
            problem = check_report_json(path, folder / f"{name}.out.json")
        if problem:
            failures.append(f"{name}: {problem}")
        path.unlink()
    return failures


# --- tests -------------------------------------------------------------------------------------


@pytest.mark.real_profiles
def test_truncated_real_profiles(real_profiles: Path, tmp_path: Path) -> None:
    cases = list(real_cases())
    assert len(cases) == 3 * len(real_files())  # every real file cut three times
    assert run_cases(cases, tmp_path, report_every=25) == []


def test_damaged_samples(tmp_path: Path) -> None:
    cases = list(sample_cases())
    assert len(cases) == len(sample_files()) * len(VARIANTS) == 8 * 27
    assert run_cases(cases, tmp_path, report_every=12) == []


def test_random_bytes_and_corrupt_databases(tmp_path: Path) -> None:
    assert run_cases(list(fixed_cases()), tmp_path, report_every=1) == []


@pytest.mark.real_profiles
def test_case_count(real_profiles: Path) -> None:
    """The README's figure: at least this many generated bad inputs, plus the limit cases."""
    from tests.robustness.test_bad_inputs_limits import limit_cases

    assert len(all_cases()) + len(limit_cases()) >= STATED_CASES


def test_truncation_offsets_hit_the_structure() -> None:
    raw = b'# comment\n"Start","Name"\nms,\n1.5,"k(int, int)"\n2.5,"k(int, int)"\n'
    cuts = truncation_offsets(raw)
    # hand-checked: header 10..24 -> 17; units 25..28 -> 26; the first quote of the data rows
    # at 33 -> 35
    assert cuts == [17, 26, 35]
    # no quotes: mid-row instead (the second data row, 41..56 -> 48)
    assert truncation_offsets(raw.replace(b'"', b"")) == [15, 22, 48]


# --- special files -----------------------------------------------------------------------------


def _one_error_line(args: list[str], path: Path, expected: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output
    assert result.stderr.splitlines() == [f"cuda-advisor: error: {path}: {expected}"]


def test_directory_instead_of_a_file(tmp_path: Path) -> None:
    _one_error_line(["inspect", str(tmp_path)], tmp_path, "is a directory, expected a profile file")


def test_dangling_symlink_and_symlink_loop(tmp_path: Path) -> None:
    dangling, loop = tmp_path / "dangling.csv", tmp_path / "loop.csv"
    dangling.symlink_to(tmp_path / "nowhere.csv")
    loop.symlink_to(loop)
    _one_error_line(["inspect", str(dangling)], dangling, "no such file")
    _one_error_line(["inspect", str(loop)], loop, "no such file")


def test_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "locked.csv"
    path.write_bytes((SAMPLES / "synthetic_nvprof_gputrace.csv").read_bytes())
    path.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make the open fail as it would for a user
        real_open = os.open

        def refuse(file: object, flags: int, *args: object) -> int:
            if str(file) == str(path):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(file, flags, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(parsers.source.os, "open", refuse)
    _one_error_line(["inspect", str(path)], path, "cannot read: Permission denied")


# --- regressions found by the fuzzer ------------------------------------------------------------


def test_unicode_digits_that_are_not_decimal(tmp_path: Path) -> None:
    """'²' is a digit to str.isdigit but not a number to int(): a cell, not a crash."""
    from parsers.names import split_device

    assert split_device("²") == ("²", None)
    raw = (SAMPLES / "synthetic_nvprof_summary.txt").read_bytes()
    path = tmp_path / "superscript.txt"
    path.write_bytes(raw.replace(b"         3  5.9046ms", "         ²  5.9046ms".encode(), 1))
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 3
    assert result.stderr == (
        f"cuda-advisor: error: {path}:7: column 'Calls': expected a whole number, found '²'\n"
    )
