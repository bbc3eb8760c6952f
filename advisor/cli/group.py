"""The command line: parses options, calls the library, writes files, maps errors to exit codes.

Exit codes (see :mod:`advisor.errors`): 0 success, 1 internal error, 2 bad usage, 3 input
problem, 4 a CI gate failed.  A user never sees a traceback unless ``--debug`` is given.
"""

from __future__ import annotations

import gc
import importlib
import io
import os
import sys
import traceback
from typing import Any

import click

from advisor import __version__
from advisor.errors import EXIT_INTERNAL, EXIT_USAGE, AdvisorError
from advisor.errors import one_line as _one_line

#: the commands that live in their own modules, imported only when a command line names them (a
#: ``report`` run does not pay for the microbenchmark or prediction modules); ``--help`` lists all
LAZY_COMMANDS = {
    "inspect": "inspect",
    "formats": "inspect",
    "report": "report",
    "compare": "compare",
    "metrics": "report",
    "devices": "devices",
    "predict": "predict",
    "access": "access",
    "streams": "streams",
    "microbench": "microbench",
}


class _Group(click.Group):
    """A click group that turns every error into one line on stderr and an exit code, and
    imports each command's module when the command is first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            _register(LAZY_COMMANDS[cmd_name])
            # the modules imported so far live as long as the run: the garbage collector need
            # not walk them again each time the objects of a big input trigger a full pass
            gc.freeze()
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        debug = bool(ctx.params.get("debug"))
        try:
            return super().invoke(ctx)
        except AdvisorError as exc:
            if debug:
                traceback.print_exc()
            _fail(str(exc), exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            _fail("interrupted", EXIT_INTERNAL)
        except BrokenPipeError:
            _quiet_broken_pipe()
        except MemoryError:
            _fail("out of memory (an input is too large for this machine)", EXIT_INTERNAL)
        except Exception as exc:
            if debug:
                traceback.print_exc()
            _fail(
                f"internal error: {type(exc).__name__}: {exc} (rerun with --debug and report it)",
                EXIT_INTERNAL,
            )


def _fail(message: str, code: int) -> None:
    click.echo(f"cuda-advisor: error: {_one_line(message)}", err=True)
    sys.exit(code)


def _quiet_broken_pipe() -> None:
    """The reader of stdout went away (``cuda-advisor inspect … | head``): stop without a
    message; stdout is pointed at devnull so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    sys.exit(EXIT_INTERNAL)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cuda-advisor")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
def main(debug: bool) -> None:
    """Turn nvprof / Nsight Compute / Nsight Systems output into CUDA tuning advice.

    \b
    Exit codes:
      0  success
      1  internal error (a bug: rerun with --debug and report it)
      2  bad usage (unknown option, bad value, output name or repeated input)
      3  input problem (unreadable, unrecognised or malformed file, no kernel data)
      4  a CI gate failed (report --fail-if, compare --max-regression), or a
         --fail-if condition could not be checked (see report --allow-missing)
    """


def _register(module_name: str) -> None:
    """Add the commands of ``advisor.cli.<module_name>`` (its ``COMMANDS``) to the group."""
    module = importlib.import_module(f"advisor.cli.{module_name}")
    for command in module.COMMANDS:
        main.add_command(command)
    if module_name == "predict":  # ``predict maxsum`` lives with the access models
        from advisor.cli.access import maxsum_command

        module.predict_group.add_command(maxsum_command)


__all__ = ["EXIT_USAGE", "main"]
