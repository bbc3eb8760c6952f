"""Commands of this capability (registered on ``cuda-advisor`` by advisor/cli.py)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
