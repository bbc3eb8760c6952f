"""Every command's ``--help`` speaks a CUDA engineer's words: no paper references (the seeds'
numbers, the project's Decision numbers, a paper's figure numbers); those stay in docstrings
(after click's ``\\f``) and in the docs."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from advisor.cli import main

#: words that name a paper or a design record instead of saying what the command does
PAPER_WORDS = re.compile(r"\bseed\b|\bDecision\b|\bFig\.", re.IGNORECASE)


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """``path`` and the paths of every command below it (the group loads its commands lazily:
    :meth:`click.Group.get_command` imports each one)."""
    found = [path]
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path[-1] if path else "cuda-advisor")
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{' '.join((*path, name))}: listed but not found"
            found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands(main)


def test_the_walk_reaches_the_subcommands() -> None:
    for path in [(), ("streams",), ("microbench", "check"), ("predict", "maxsum"), ("devices",)]:
        assert path in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "cuda-advisor")
def test_help_has_no_paper_references(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage:")
    found = [line.strip() for line in result.output.splitlines() if PAPER_WORDS.search(line)]
    assert found == []


#: number words a text may put before "criteria"
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def _criteria_counts(text: str) -> set[int]:
    """Every count a text states for "the criteria" ("on nine criteria", "10 criteria")."""
    found = re.findall(r"\b(\w+)\s+(?:optimization\s+)?criteria\b", text, re.IGNORECASE)
    counts = {_COUNTS[w.lower()] for w in found if w.lower() in _COUNTS}
    return counts | {int(w) for w in found if w.isdigit()}


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "cuda-advisor")
def test_no_help_text_miscounts_the_criteria(path: tuple[str, ...]) -> None:
    """A help text that counts the criteria counts the ones the engine scores (it said "nine"
    after a tenth was added)."""
    from advisor.criteria import CRITERIA

    result = CliRunner().invoke(main, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert _criteria_counts(result.output) <= {len(CRITERIA)}, result.output


def test_the_readme_counts_the_criteria_the_engine_scores() -> None:
    from pathlib import Path

    from advisor.criteria import CRITERIA

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert _criteria_counts(readme) <= {len(CRITERIA)}


def test_the_readme_speaks_a_users_words() -> None:
    """The README names papers and design choices by what they are, never by the internal labels
    docs/ uses for them ("seed 002", "Decision P2"): a user cannot look those up."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    labels = re.findall(r"\bseed 00\d\b|\bDecision [A-Z]?\d+\b", readme, re.IGNORECASE)
    assert not labels, sorted(set(labels))
