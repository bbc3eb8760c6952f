"""The disassembly helper process (advisor/disassembly.py, docs/locations.md "cost"): SASS looked
up from the helper, in-process disassembly where it fails, nothing started without
``ncu_report``, no helper left running after the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import parsers
from advisor import disassembly, ncu_read, pipeline
from parsers.ncu import source_counters

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_helpers() -> Iterator[None]:
    """Every test starts and ends without helpers."""
    disassembly.stop()
    yield
    disassembly.stop()


def _fake_helper(path: str, script: str, monkeypatch: pytest.MonkeyPatch) -> disassembly.Helper:
    """A helper whose process runs ``script`` (standing in for ``advisor.disassembly``)."""
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    helper = disassembly.Helper(path, process)
    monkeypatch.setitem(disassembly._HELPERS, os.path.realpath(path), helper)
    return helper


class _Action:
    """An ``ncu_report`` action that counts its disassemblies."""

    def __init__(self) -> None:
        self.disassembled: list[int] = []

    def source_info(self, pc: int) -> None:
        return None

    def sass_by_pc(self, pc: int) -> str:
        self.disassembled.append(pc)
        return f"  IN.PROCESS {pc:#x} "


def test_code_takes_the_helpers_text_and_disassembles_what_it_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "r.ncu-rep")
    _fake_helper(path, 'print(\'[0, 3, [[16, "LDG.E R2, [R4]"], [32, ""]]]\')', monkeypatch)
    action, code = _Action(), source_counters.Code(lookup=disassembly.lookup)
    for pc in (16, 32, 48):
        code.locate(action, pc, (path, 0, 3))
    code.locate(action, 64, (path, 0, 4))  # a launch the helper did not write
    assert [code.sass(pc) for pc in (16, 32, 48, 64)] == [
        "LDG.E R2, [R4]",
        "",  # the helper's empty text is the module's text too: used as it is
        "IN.PROCESS 0x30",
        "IN.PROCESS 0x40",
    ]
    assert action.disassembled == [48, 64]


def test_without_a_helper_the_code_disassembles_in_process() -> None:
    action, code = _Action(), source_counters.Code(lookup=disassembly.lookup)
    code.locate(action, 16, ("nowhere.ncu-rep", 0, 0))
    code.locate(action, 32)
    assert (code.sass(16), code.sass(32), code.sass(48)) == (
        "IN.PROCESS 0x10",
        "IN.PROCESS 0x20",
        "",
    )
    assert action.disassembled == [16, 32]


def test_a_killed_helper_falls_back_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "r.ncu-rep")
    helper = _fake_helper(path, "import time; time.sleep(60)", monkeypatch)
    helper.process.kill()
    start = time.monotonic()
    assert disassembly.lookup(path, 0, 0, 16) is None
    assert time.monotonic() - start < 5
    disassembly.stop()
    assert helper.process.returncode is not None  # waited for: no zombie


def test_a_slow_helper_is_given_up_after_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(disassembly, "TIMEOUT", 0.3)
    path = str(tmp_path / "r.ncu-rep")
    helper = _fake_helper(path, "import time; time.sleep(60)", monkeypatch)
    assert disassembly.lookup(path, 0, 0, 16) is None
    assert helper.process.returncode is not None  # killed and waited for
    start = time.monotonic()
    assert disassembly.lookup(path, 0, 1, 16) is None  # no second wait
    assert time.monotonic() - start < 0.2


def test_output_that_is_not_the_helpers_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "r.ncu-rep")
    _fake_helper(path, "print('Traceback (most recent call last):')", monkeypatch)
    assert disassembly.lookup(path, 0, 0, 16) is None


def test_nothing_starts_without_the_module_or_for_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"NVR\0" + bytes(60))
    other = tmp_path / "k.csv"
    other.write_text("ID,Kernel Name\n")
    disassembly.start([str(other), str(tmp_path / "absent.ncu-rep"), str(tmp_path)])
    assert disassembly._HELPERS == {}
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import ncu_report -> ImportError
    assert not disassembly.available()
    disassembly.start([str(report)])
    assert disassembly._HELPERS == {}


def test_the_helpers_records_round_trip_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the helper writes is what the command takes: NaN, infinities, escaped surrogates,
    missing values and 64-bit PCs come back unchanged."""
    action = ncu_read.RawAction(
        name="k\\udcff(int)",
        metrics=(
            ncu_read.RawMetric("a", "ms", value=float("nan")),
            ncu_read.RawMetric("b", "", value=0.1 + 0.2),
            ncu_read.RawMetric("c", "", text="GPU \\ud800"),
            ncu_read.RawMetric("d", "byte", value=float("-inf")),
        ),
        sections={"a": "Speed Of Light"},
        rules=(ncu_read.RawRule("SOL", "R", "OPT", "t", "m", "global", 12.5),
               ncu_read.RawRule("SOL", "S", None, "", "")),
    )  # fmt: skip
    raw = ncu_read.RawInstructions(
        metrics={
            "inst_executed": ncu_read.RawMetricInstances(3.0, (2**63 + 16, 32), (1.0, 2.0)),
            "memory_l1_wavefronts_shared": ncu_read.RawMetricInstances(0.0, None, None),
        },
        starts=(2**63,),
        where={2**63 + 16: ("/src/k.cu", 7), 32: ("", 0)},
        sources={"/src/k.cu": "int a;\n"},
    )
    lines = [
        {"action": ncu_read.action_json(action)},
        {"launches": [[0, 0, 3, action.name]], "logged": ["x"], "version": "2025.1"},
        {"instructions": [0, 3, ncu_read.instructions_json(raw)]},
        {"instructions_end": True},
    ]
    script = "import sys\n" + "".join(
        f"sys.stdout.write({json.dumps(m, separators=(',', ':')) + chr(10)!r})\n" for m in lines
    )
    path = str(tmp_path / "r.ncu-rep")
    _fake_helper(path, script, monkeypatch)
    read = disassembly.actions(path)
    assert read is not None and read.logged == ["x"] and read.module_version == "2025.1"
    assert read.launches == [ncu_read.Launch(0, 0, 3, action.name)]
    (back,) = read.actions
    assert repr(back) == repr(action)  # repr: NaN == NaN
    assert disassembly.instructions(path, 0, 3) == raw
    assert disassembly.instructions(path, 0, 4) is None  # read in-process


def test_a_helper_that_failed_to_read_leaves_the_reading_to_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "r.ncu-rep")
    _fake_helper(path, 'print(\'{"failed": "RuntimeError: damaged"}\')', monkeypatch)
    start = time.monotonic()
    assert disassembly.actions(path) is None
    assert disassembly.instructions(path, 0, 0) is None
    assert time.monotonic() - start < 5


def test_the_helper_reads_as_many_launches_per_kernel_as_a_report_uses() -> None:
    from advisor.criteria.engine.instruction_sums import LAUNCHES_MAX
    from advisor.report.locations import MAX_LAUNCHES

    assert max(LAUNCHES_MAX, MAX_LAUNCHES) == disassembly.LAUNCHES


# -- the real reports --


def _analysed(
    path: Path, monkeypatch: pytest.MonkeyPatch, module: ModuleType
) -> tuple[str, list[int], int]:
    """The analysis JSON of ``path``, the PCs disassembled in this process meanwhile, and how
    many results this process read through the module."""
    counts: list[int] = []
    reads: list[int] = []
    sass_by_pc, action_by_idx = module.IAction.sass_by_pc, module.IRange.action_by_idx

    def counted_sass(action: Any, pc: int) -> Any:
        counts.append(pc)
        return sass_by_pc(action, pc)

    def counted_action(rng: Any, index: int) -> Any:
        reads.append(index)
        return action_by_idx(rng, index)

    with monkeypatch.context() as patch:
        patch.setattr(module.IAction, "sass_by_pc", counted_sass)
        patch.setattr(module.IRange, "action_by_idx", counted_action)
        source_counters.forget()
        profile = parsers.read(path)
        text = pipeline.json_text(pipeline.analyse_profile(profile).data)
    return text, counts, len(reads)


def _reports(real_profiles: Path) -> list[Path]:
    folder = real_profiles / "reports"
    return [
        folder / "CUDA_Learning" / "shared_report.ncu-rep",
        folder / "seq_align" / "profile.ncu-rep",
        folder / "hpca-gpu-memory-profiling" / "naive.ncu-rep",
    ]


@pytest.mark.real_profiles
def test_the_helpers_reading_is_used_and_the_analysis_is_the_same(
    real_profiles: Path, ncu_module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a helper, this process reads no result and disassembles nothing, and the analysis
    (per-instruction locations and SASS included) is the same as read here alone."""
    for path in _reports(real_profiles):
        alone, in_process, reads = _analysed(path, monkeypatch, ncu_module)
        assert in_process and reads, path  # the counting sees the in-process work
        disassembly.start([str(path)])
        assert len(disassembly._HELPERS) == 1
        helped, counted, read_here = _analysed(path, monkeypatch, ncu_module)
        assert (counted, read_here) == ([], 0), path  # everything came from the helper
        assert helped == alone, path
        (helper,) = disassembly._HELPERS.values()
        assert helper.read is not None and helper.counters_done
        disassembly.stop()
        assert helper.process.returncode is not None  # finished, or killed and waited for


@pytest.mark.real_profiles
@pytest.mark.parametrize("when", ["at once", "after the results"])
def test_a_killed_helper_leaves_the_analysis_the_same(
    real_profiles: Path, ncu_module: ModuleType, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """Killed at once: everything is read here; killed after the results: those come from the
    helper, the per-instruction counters and SASS are read here."""
    path = _reports(real_profiles)[0]
    alone, _, _ = _analysed(path, monkeypatch, ncu_module)
    disassembly.start([str(path)])
    (helper,) = disassembly._HELPERS.values()
    if when == "at once":
        helper.process.kill()
    else:
        assert helper.actions() is not None
        helper.stop()
        helper.counters.clear()
        helper.launches.clear()
        helper.counters_done = False
    helped, counted, reads = _analysed(path, monkeypatch, ncu_module)
    assert counted and reads and helped == alone


@pytest.mark.real_profiles
@pytest.mark.parametrize("end", ["pass", "raise KeyboardInterrupt"])
def test_no_helper_outlives_the_command(
    real_profiles: Path, ncu_module: ModuleType, end: str
) -> None:
    """The helper (0.3 s or more of work) is killed and waited for when the process ends, also
    on an interrupt."""
    path = _reports(real_profiles)[0]
    script = (
        "from advisor import disassembly as d; "
        f"d.start([{str(path)!r}]); "
        "print(next(iter(d._HELPERS.values())).process.pid, flush=True); "
        f"{end}"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    pid = int(done.stdout.split()[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
