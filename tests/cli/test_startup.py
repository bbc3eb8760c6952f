"""Start-up cost: ``--help`` and ``CMD --help`` load no heavy library, and the command list that
``--help`` prints without importing the command modules is the one the modules would give.

Each check runs a fresh interpreter (the test process has long imported everything) and reads
its ``sys.modules`` after the command returned; no timing is asserted here (the timings are in
benchmarks/bench_startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from advisor.cli import group

ROOT = Path(__file__).resolve().parents[2]

#: libraries no help text needs: the data stack and the HTML renderer's
HEAVY = ("pandas", "pyarrow", "matplotlib", "jinja2", "scipy")

#: run a command line in this interpreter, then print which of the modules asked for are loaded
PROBE = """
import contextlib, io, json, sys
from advisor.cli import main
asked = json.loads(sys.argv[2])
sys.argv = ["cuda-advisor", *json.loads(sys.argv[1])]
code = 0
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "loaded": [m for m in asked if m in sys.modules]}))
"""


def _loaded(args: list[str], modules: tuple[str, ...]) -> tuple[int, list[str]]:
    """Exit code of ``cuda-advisor ARGS`` in a fresh interpreter, and which of ``modules`` it
    imported."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(modules)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result = json.loads(out.splitlines()[-1])
    return result["code"], result["loaded"]


def test_group_help_loads_no_command_module_nor_numpy() -> None:
    code, loaded = _loaded(["--help"], (*HEAVY, "numpy", "advisor.cli.report", "advisor.pipeline"))
    assert code == 0
    assert loaded == []


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--help"],
        ["metrics", "--help"],
        ["inspect", "--help"],
        ["formats", "--help"],
        ["compare", "--help"],
        ["predict", "--help"],
        ["predict", "bsp", "--help"],
        ["predict", "maxsum", "--help"],
        ["streams", "--help"],
        ["access", "--help"],
        ["devices", "--help"],
        ["microbench", "--help"],
    ],
    ids=lambda args: " ".join(args),
)
def test_command_help_loads_no_heavy_library(args: list[str]) -> None:
    code, loaded = _loaded(args, HEAVY)
    assert code == 0
    assert loaded == []


def test_report_help_loads_no_numpy() -> None:
    """``report --help``, the help a CI script reads first, does not even load numpy."""
    assert _loaded(["report", "--help"], ("numpy",)) == (0, [])


def test_summaries_are_the_commands_first_sentences() -> None:
    """Every lazy command has a summary, and it is what click would show from the command's own
    help at any width (the whole first sentence, before click shortens it)."""
    for module in sorted(set(group.LAZY_COMMANDS.values())):
        group._register(module)
    assert set(group.COMMAND_SUMMARIES) == set(group.LAZY_COMMANDS)
    for name, summary in group.COMMAND_SUMMARIES.items():
        command = group.main.commands[name]
        assert command.get_short_help_str(10**6) == summary, name


def test_group_help_is_the_same_with_the_commands_loaded() -> None:
    """The list printed from the summaries equals the one printed from the loaded commands, at
    a narrow and a wide terminal."""
    for width in (60, 80, 200):
        fresh = group._Group(name="cuda-advisor", help=group.main.help)
        fresh.params = list(group.main.params)
        loaded = group._Group(name="cuda-advisor", help=group.main.help)
        loaded.params = list(group.main.params)
        for module in sorted(set(group.LAZY_COMMANDS.values())):
            group._register(module)
        for command in group.main.commands.values():
            loaded.add_command(command)
        texts = []
        for cli in (fresh, loaded):
            ctx = click.Context(cli, info_name="cuda-advisor", terminal_width=width)
            texts.append(cli.get_help(ctx))
        assert "Commands:" in texts[0]
        assert texts[0] == texts[1]


def test_group_help_in_process_lists_every_command() -> None:
    result = CliRunner().invoke(group.main, ["--help"])
    assert result.exit_code == 0
    for name in group.LAZY_COMMANDS:
        assert f"  {name} " in result.stdout


def test_modules_block_pauses_the_collector_and_freezes_what_it_loaded() -> None:
    """A command's imports run with the collector paused, and what they created is frozen (out
    of every later full pass), the collector's state restored after."""
    import gc

    from advisor.cli import loading

    before = gc.get_freeze_count()
    enabled = gc.isenabled()
    try:
        with loading.modules():
            assert not gc.isenabled()
            created: list[list[int]] = [[] for _ in range(1000)]
        assert gc.isenabled() == enabled
        assert gc.get_freeze_count() >= before + len(created)
    finally:
        gc.unfreeze()


#: what the HTML and text renderers load, which the JSON outputs do not need
RENDERERS = ("matplotlib", "jinja2")
SAMPLE = str(ROOT / "sample_profiles" / "synthetic_nvprof_gputrace.csv")


def test_inspect_json_loads_no_renderer() -> None:
    code, loaded = _loaded(["inspect", SAMPLE, "--json"], RENDERERS)
    assert code == 0
    assert loaded == []


def test_report_json_loads_no_renderer(tmp_path: Path) -> None:
    """``report --json`` builds the report's verdict, not its pages: no template engine, no
    charts."""
    out = tmp_path / "out.json"
    code, loaded = _loaded(["report", SAMPLE, "--json", str(out), "--quiet"], RENDERERS)
    assert code == 0
    assert out.stat().st_size > 0
    assert loaded == []


def test_report_markdown_does_load_the_renderer(tmp_path: Path) -> None:
    """The check above can fail: a rendered output does load jinja2."""
    out = tmp_path / "out.md"
    code, loaded = _loaded(["report", SAMPLE, "--markdown", str(out), "--quiet"], RENDERERS)
    assert code == 0
    assert "jinja2" in loaded


def test_a_report_of_one_kind_loads_no_reader_of_the_other(
    tmp_path: Path, real_profiles: Path
) -> None:
    """The registry imports the text formats' readers only for a file that is not a binary
    report: an Nsight Compute report loads no CSV, trace or text reader."""
    from parsers import registry

    report = real_profiles / "reports" / "CUDA_Learning" / "shared_report.ncu-rep"
    out = tmp_path / "out.json"
    code, loaded = _loaded(
        ["report", str(report), "--json", str(out), "-q"], tuple(registry.TEXT_MODULES)
    )
    assert code == 0 and out.stat().st_size > 0
    assert loaded == []
    code, loaded = _loaded(
        ["report", SAMPLE, "--json", str(out), "-q"], tuple(registry.TEXT_MODULES)
    )
    assert code == 0 and "parsers.nvprof.csv" in loaded  # the check can fail


def test_each_kind_of_format_is_registered_by_the_modules_listed_for_it() -> None:
    """A format registered by a module listed with the other kind would never be asked to
    sniff (a kind's modules load with that kind's formats): the binary modules register every
    binary format and no text format, the text modules no binary format."""
    script = """
import importlib, json
from parsers import registry
for module in registry.BINARY_MODULES:
    importlib.import_module(module)
binary, text = sorted(registry.BINARY_FORMATS), sorted(registry.TEXT_FORMATS)
for module in registry.TEXT_MODULES:
    importlib.import_module(module)
print(json.dumps([binary, text, sorted(registry.BINARY_FORMATS), sorted(registry.TEXT_FORMATS)]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    binary, text, all_binary, all_text = json.loads(done.stdout.splitlines()[-1])
    assert text == [] and binary == all_binary
    assert "ncu-rep" in binary and "kineto" in " ".join(binary)  # the check can fail
    assert len(all_text) >= 5
