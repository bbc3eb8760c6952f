"""``cuda-advisor access global|shared``: coalescing and bank-conflict calculators (MODELS.md §5).

The commands parse a per-thread pattern (``--stride/--offset/--word`` or ``--index EXPR``), call
:mod:`advisor.models.access`, and print transactions per request, bytes moved vs requested and the
conflict degree, with the MAX/SUM cost per access where the seeds give the latencies (GT200).
``--sweep KEY=A..B`` prints one row per value (the seeds' stride and bank experiments).

``maxsum_command`` (``cuda-advisor predict maxsum``) lives in :mod:`advisor.cli.maxsum` and is
re-exported here; it is attached to the ``predict`` group, not listed in ``COMMANDS``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import click

from advisor.cli.maxsum import find_gpu, maxsum_command, one_line_errors
from advisor.errors import UsageError
from advisor.models.access import (
    bank_conflicts,
    coalesce,
    default_banks,
    parse_cc,
    protocol_for_cc,
)
from advisor.models.access.pattern import (
    THREAD_NAMES,
    WARP_SIZE,
    AccessPattern,
    build_pattern,
    parse_active,
)
from advisor.report.access import (
    PROTOCOL_TITLES,
    global_dict,
    render_single,
    render_sweep,
    shared_dict,
)

MAX_SWEEP_VALUES = 1025
"""A sweep is a table for reading; more rows than this is a mistake."""


def _pattern_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--cc",
            default=None,
            metavar="X.Y",
            help="Compute capability, e.g. 1.3 (picks the coalescing rules and bank count).",
        ),
        click.option("--gpu", default=None, metavar="NAME", help="GPU name (sets --cc)."),
        click.option(
            "--stride", type=int, default=None, help="Words between consecutive threads [1]."
        ),
        click.option(
            "--offset", type=int, default=0, show_default=True, help="Word thread 0 accesses."
        ),
        click.option(
            "--word", type=int, default=4, show_default=True, help="Bytes per word (1 to 16)."
        ),
        click.option(
            "--index",
            default=None,
            metavar="EXPR",
            help="Word each thread accesses, as an expression of tid, lane, warp.",
        ),
        click.option(
            "--const",
            "consts",
            multiple=True,
            metavar="NAME=INT",
            help="Bind a name of --index (repeatable).",
        ),
        click.option(
            "--active",
            default=None,
            metavar="SPEC",
            help="Threads that take part, e.g. 0-15 or 0xffff (default: all).",
        ),
        click.option(
            "--threads",
            type=int,
            default=WARP_SIZE,
            show_default=True,
            help="Threads in the access.",
        ),
        click.option(
            "--sweep",
            default=None,
            metavar="KEY=A..B",
            help="One row per value of stride, offset, word (banks for shared) or an --index "
            "name, e.g. stride=1..32 or offset=0,4,8.",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print JSON."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(name="access")
def access_group() -> None:
    """Global coalescing and shared bank conflicts of a per-thread access pattern.

    The pattern is index(tid) = OFFSET + tid*STRIDE words of WORD bytes, or --index EXPR with
    tid, lane, warp, integers and + - * // % << >> & | ^ (e.g. "tid*2+1").
    """


@access_group.command(name="global")
@_pattern_options
@click.option(
    "--protocol",
    type=click.Choice(list(PROTOCOL_TITLES)),
    default=None,
    help="Override the protocol picked by the compute capability.",
)
@one_line_errors
def global_cmd(protocol: str | None, **opts: Any) -> None:
    """Memory transactions of one warp's global load or store, and its efficiency.

    Transactions per request, bytes moved against bytes requested, and k, the threads served
    per transaction (with the MAX/SUM cost per access on cc 1.2/1.3).
    """
    cc, pattern, sweep, threads = _common(opts)
    chosen = protocol or protocol_for_cc(cc)

    def run(p: AccessPattern) -> dict[str, Any]:
        return global_dict(coalesce(p.byte_addresses(threads), p.word_bytes, chosen), cc)

    _emit(opts, "global", cc, pattern, sweep, run)


@access_group.command(name="shared")
@_pattern_options
@click.option("--banks", type=int, default=None, help="Banks [16 on cc 1.x, else 32].")
@one_line_errors
def shared_cmd(banks: int | None, **opts: Any) -> None:
    """Bank-conflict degree of one warp's shared-memory access (broadcasts counted)."""
    cc, pattern, sweep, threads = _common(opts)
    base_banks = banks if banks is not None else opts.get("_gpu_banks") or default_banks(cc)
    cc1 = parse_cc(cc)[0] == 1

    def run(p: AccessPattern, n_banks: int = base_banks) -> dict[str, Any]:
        result = bank_conflicts(p.byte_addresses(threads), p.word_bytes, n_banks, cc1_procedure=cc1)
        return shared_dict(result, cc)

    if sweep is not None and sweep[0] == "banks":
        rows = [{"banks": v, **run(pattern, v)} for v in sweep[1]]
        _print(opts, "shared", cc, pattern, rows, "banks")
        return
    _emit(opts, "shared", cc, pattern, sweep, run)


def _common(opts: dict[str, Any]) -> tuple[str, AccessPattern, tuple[str, list[int]] | None, int]:
    gpu = opts.pop("gpu")
    cc = opts["cc"]
    if gpu is not None:
        device = find_gpu(gpu)
        cc = cc or str(device.compute_capability)
        opts["_gpu_banks"] = getattr(device, "shared_banks", None)
    if cc is None:
        raise UsageError("give --cc X.Y (e.g. --cc 1.3) or --gpu NAME")
    parse_cc(cc)
    threads = opts["threads"]
    active = None if opts["active"] is None else parse_active(opts["active"], threads)
    sweep = None if opts["sweep"] is None else parse_sweep(opts["sweep"])
    pattern = build_pattern(
        word_bytes=opts["word"],
        stride_words=opts["stride"],
        offset_words=opts["offset"],
        index=opts["index"],
        constants=dict(_parse_const(text) for text in opts["consts"]),
        active=active,
    )
    return cc, pattern, sweep, threads


def _parse_const(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    name = name.strip()
    try:
        number = int(value)
    except ValueError:
        number = None
    if not sep or not name.isidentifier() or number is None or name in THREAD_NAMES:
        raise UsageError(f"--const {text!r}: expected NAME=INTEGER, e.g. N=64")
    return name, number


def parse_sweep(text: str) -> tuple[str, list[int]]:
    """``stride=1..32`` or ``offset=0,4,8`` -> (key, values)."""
    key, sep, spec = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise UsageError(f"--sweep {text!r}: expected KEY=A..B or KEY=A,B,C (e.g. stride=1..32)")
    values: Sequence[int]
    try:
        if ".." in spec:
            low, high = (int(x) for x in spec.split("..", 1))
            values = range(low, high + 1)
        else:
            values = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--sweep {text!r}: values must be integers") from None
    if not 1 <= len(values) <= MAX_SWEEP_VALUES:
        raise UsageError(f"--sweep {text!r}: give 1..{MAX_SWEEP_VALUES} values")
    return key, list(values)


def _swept(pattern: AccessPattern, key: str, value: int) -> AccessPattern:
    if key == "stride":
        if pattern.expression is not None:
            raise UsageError("--sweep stride: not with --index (sweep a name of the expression)")
        return build_pattern(
            word_bytes=pattern.word_bytes,
            stride_words=value,
            offset_words=pattern.offset_words,
            active=pattern.active,
        )
    if key in ("offset", "word"):
        if pattern.expression is not None and key == "offset":
            raise UsageError("--sweep offset: not with --index (sweep a name of the expression)")
        return build_pattern(
            word_bytes=value if key == "word" else pattern.word_bytes,
            stride_words=None if pattern.expression is not None else pattern.stride_words,
            offset_words=value if key == "offset" else pattern.offset_words,
            index=pattern.expression.text if pattern.expression is not None else None,
            constants=dict(pattern.constants),
            active=pattern.active,
        )
    if pattern.expression is None or key not in pattern.expression.names:
        raise UsageError(
            f"--sweep {key}: sweep stride, offset, word (banks for shared) "
            "or a name used in --index"
        )
    return build_pattern(
        word_bytes=pattern.word_bytes,
        index=pattern.expression.text,
        constants={**dict(pattern.constants), key: value},
        active=pattern.active,
    )


def _emit(
    opts: dict[str, Any],
    kind: str,
    cc: str,
    pattern: AccessPattern,
    sweep: tuple[str, list[int]] | None,
    run: Callable[[AccessPattern], dict[str, Any]],
) -> None:
    if sweep is None:
        row = run(pattern)
        if opts["as_json"]:
            click.echo(_json({"kind": kind, "cc": cc, "pattern": pattern.describe(), **row}))
        else:
            click.echo(render_single(kind, cc, pattern, row, opts["threads"]), nl=False)
        return
    key, values = sweep
    rows = [{key: v, **run(_swept(pattern, key, v))} for v in values]
    _print(opts, kind, cc, pattern, rows, key)


def _print(
    opts: dict[str, Any],
    kind: str,
    cc: str,
    pattern: AccessPattern,
    rows: list[dict[str, Any]],
    key: str,
) -> None:
    if opts["as_json"]:
        doc = {"kind": kind, "cc": cc, "pattern": pattern.describe(), "sweep": key, "rows": rows}
        click.echo(_json(doc))
    else:
        click.echo(render_sweep(kind, cc, pattern, rows, key), nl=False)


def _json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, allow_nan=False)


COMMANDS: list[click.Command] = [access_group]

__all__ = ["COMMANDS", "access_group", "maxsum_command"]
