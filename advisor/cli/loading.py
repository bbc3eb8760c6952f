"""Importing a command's modules: the garbage collector paused while they load, then frozen.

A command imports what it uses when it runs (``--help`` loads neither pandas nor pyarrow;
tests/cli/test_startup.py).  Loading pandas, pyarrow and the advisor's modules creates some
hundred thousand objects, and the collector would walk them in the passes those allocations
trigger (about 0.03 s of a report's start) and again in every full pass while a big input is
read; :func:`gc.freeze` moves them out of its reach for the rest of the run.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def modules() -> Iterator[None]:
    """``with modules(): import ...``: the imports of the block with the collector paused;
    everything loaded so far then lives as long as the run (:func:`gc.freeze`)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
