"""The command line: ``main`` (the ``cuda-advisor`` group, errors mapped to exit codes) and
``run`` (the program: ``main``, then the process ends) in :mod:`advisor.cli.group`, one module
per command, shared options in :mod:`advisor.cli.options`."""

from advisor.cli.group import main, run

__all__ = ["main", "run"]
