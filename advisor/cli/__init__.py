"""The command line: ``main`` (the ``cuda-advisor`` group, errors mapped to exit codes) in
:mod:`advisor.cli.group`, one module per command, shared options in :mod:`advisor.cli.options`."""

from advisor.cli.group import main

__all__ = ["main"]
