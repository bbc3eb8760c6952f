"""The command line: parses options, calls the library, writes files, maps errors to exit codes.

Exit codes (see :mod:`advisor.errors`): 0 success, 1 internal error, 2 bad usage, 3 input
problem (also memory exhausted reading a file), 4 a CI gate failed, 130 interrupted (Ctrl-C).
A user never sees a traceback unless ``--debug`` is given, and every error, click's usage
errors included, is one line on stderr starting with ``cuda-advisor: error:``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import os
import sys
import traceback
from typing import Any, NoReturn

import click

from advisor import __version__
from advisor.cli import loading
from advisor.errors import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    OOM_ADVICE,
    AdvisorError,
    is_out_of_memory,
)
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

#: each lazy command's one-line summary (the first sentence of its help, which is all click's
#: command list shows), so ``cuda-advisor --help`` lists the commands without importing their
#: modules and, through them, pandas and pyarrow; tests/cli/test_startup.py checks every entry
#: against the command's own help
COMMAND_SUMMARIES = {
    "access": "Global coalescing and shared bank conflicts of a per-thread access pattern.",
    "compare": "Compare tuning versions of one application, the first being the baseline: "
    "VERSION... are profiles (FILE[,FILE...] or FOLDER) or saved analyses, in order.",
    "devices": "List the GPU database, or show one GPU (NAME) and its characterization.",
    "formats": "List the input formats cuda-advisor reads.",
    "inspect": "Show what each profile FILE holds: format, devices, launches, kernels, metrics.",
    "metrics": "Print the profiler command that collects everything the advisor uses.",
    "microbench": "GPU microbenchmarks: build, check, run, fit a device characterization.",
    "predict": "Predict kernel times from analytic models (BSP, MAX/SUM bounds).",
    "report": "Score every kernel of the FILEs (one application run) on every optimization "
    "criterion (docs/criteria.md) and write the report as HTML (-o), Markdown (--markdown) "
    "and/or JSON (--json).",
    "streams": "Predict each HtoD copy -> kernels -> DtoH copy sequence of TRACE split over n "
    "streams.",
}


class _Group(click.Group):
    """A click group that turns every error into one line on stderr and an exit code, and
    imports each command's module when the command is first looked up."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        _robust_streams()
        return super().main(*args, **kwargs)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:  # the group's own options (``--bogus``)
            _fail_click(exc)
            raise  # not reached: _fail_click exits

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``: a command not loaded yet is listed from its summary
        (:data:`COMMAND_SUMMARIES`) instead of importing its module."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                command = click.Command(name, help=COMMAND_SUMMARIES[name])
            if not command.hidden:
                rows.append((name, command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            # the modules imported so far live as long as the run: the garbage collector need
            # not walk them again each time the objects of a big input trigger a full pass
            with loading.modules():
                _register(LAZY_COMMANDS[cmd_name])
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        debug = bool(ctx.params.get("debug"))
        try:
            return super().invoke(ctx)
        except AdvisorError as exc:
            if debug:
                traceback.print_exc()
            _fail(str(exc), exc.exit_code)
        except click.ClickException as exc:  # a command's usage error, unknown command
            _fail_click(exc)
        except (click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            _fail("interrupted", EXIT_INTERRUPTED)
        except BrokenPipeError:
            _quiet_broken_pipe()
        except Exception as exc:
            if debug:
                traceback.print_exc()
            _fail(*_unexpected(exc))


def _fail(message: str, code: int) -> None:
    click.echo(f"cuda-advisor: error: {_one_line(message)}", err=True)
    sys.exit(code)


def _fail_click(exc: click.ClickException) -> None:
    """click's error (usage text, blank line, ``Error: ...``) as one line, with the help hint."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):  # a bare group name: its help
        exc.show()
        sys.exit(exc.exit_code)
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see '{ctx.command_path} {ctx.help_option_names[0]}')"
    _fail(message, exc.exit_code)


def _unexpected(exc: BaseException) -> tuple[str, int]:
    """The message and exit code of an exception no module turned into an AdvisorError."""
    if is_out_of_memory(exc):  # MemoryError, or a C extension's SystemError wrapping one
        return f"out of memory: {OOM_ADVICE}", EXIT_INPUT
    if isinstance(exc, OSError) and exc.filename is not None:  # reading a file: outputs are
        # written by advisor.output, which reports its own errors
        return f"{exc.filename}: cannot read: {exc.strerror or exc}", EXIT_INPUT
    return (
        f"internal error: {type(exc).__name__}: {exc} (rerun with --debug and report it)",
        EXIT_INTERNAL,
    )


def _robust_streams() -> None:
    """Let stdout and stderr print any file name: the undecodable bytes of a name that is not
    UTF-8 (lone surrogates) are written back as they were on stdout and escaped on stderr,
    instead of failing with UnicodeEncodeError."""
    for stream, errors in ((sys.stdout, "surrogateescape"), (sys.stderr, "backslashreplace")):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, io.UnsupportedOperation):
                reconfigure(errors=errors)


def _end(exc: SystemExit) -> NoReturn:
    """End the process with ``exc``'s status once every output is written: the streams are
    flushed and the exit handlers run (:mod:`atexit`: the disassembler helpers are stopped), as
    at any exit, but the interpreter is not torn down object by object (the profile's frames,
    the modules: 20-90 ms on a large input, after the last byte is written).  Where a stream
    cannot be flushed, or the interpreter offers no way to run the handlers, the usual exit
    takes over (its own messages unchanged)."""
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    code = exc.code
    if run_handlers is None or not (code is None or isinstance(code, int)):
        raise exc
    try:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except (OSError, ValueError):
        raise exc from None
    run_handlers()
    os._exit(0 if code is None else code & 0xFF)


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
        2  bad usage (unknown option, bad value, output name or repeated input),
           or an output that cannot be written (an input, read-only, full disk)
        3  input problem (unreadable, unrecognised or malformed file, no kernel
           data, out of memory reading a file)
        4  a CI gate failed (report --fail-if, compare --max-regression), or a
           --fail-if condition could not be checked (see report --allow-missing)
      130  interrupted (Ctrl-C)
    """


def run() -> NoReturn:
    """The program (``cuda-advisor``, ``python -m advisor``): :func:`main`, and once the command
    has set its exit status the process ends there (:func:`_end`).  Calling :func:`main` in a
    process of one's own raises ``SystemExit`` as any click command does."""
    try:
        main()
    except SystemExit as exc:
        _end(exc)
    _end(SystemExit(0))


def _register(module_name: str) -> None:
    """Add the commands of ``advisor.cli.<module_name>`` (its ``COMMANDS``) to the group."""
    module = importlib.import_module(f"advisor.cli.{module_name}")
    for command in module.COMMANDS:
        main.add_command(command)
    if module_name == "predict":  # ``predict maxsum`` lives with the access models
        from advisor.cli.access import maxsum_command

        module.predict_group.add_command(maxsum_command)


__all__ = ["EXIT_USAGE", "main", "run"]
