"""The GitHub Actions workflow of docs/github_actions.md uses options the commands have."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from advisor.cli.group import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "github_actions.md"


def _workflow() -> str:
    found = re.search(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert found, "docs/github_actions.md holds no YAML block"
    return found.group(1)


def _commands(text: str) -> list[list[str]]:
    """Every ``cuda-advisor ...`` command of the workflow, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        found = re.match(r"\s*(?:run:\s*)?cuda-advisor (\w.*)", line)
        if found:
            out.append(shlex.split(found.group(1).split(" #")[0]))
    return out


def test_every_command_of_the_workflow_has_its_options() -> None:
    commands = _commands(_workflow())
    names = [c[0] for c in commands]
    assert names.count("report") >= 2 and "compare" in names
    for words in commands:
        command = main.get_command(click.Context(main), words[0])
        assert command is not None, words
        known = {o for p in command.params for o in getattr(p, "opts", [])}
        used = {w for w in words[1:] if w.startswith("-")}
        assert used <= known, (words[0], used - known)
    report = next(c for c in commands if "--sarif" in c)
    assert {"--markdown", "--sarif"} <= set(report)


def test_the_workflow_is_yaml_with_the_permissions_it_needs() -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
    workflow = yaml.safe_load(_workflow())
    advise = workflow["jobs"]["advise"]
    assert advise["needs"] == "profile"
    assert advise["permissions"]["pull-requests"] == "write"
    assert advise["permissions"]["security-events"] == "write"
    uses = [s.get("uses", "") for s in advise["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert any(u.startswith("marocchino/sticky-pull-request-comment@") for u in uses)
    profile = " ".join(s.get("run", "") for s in workflow["jobs"]["profile"]["steps"])
    assert "-lineinfo" in profile and "--set full" in profile
