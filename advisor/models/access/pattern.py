"""Per-thread memory access patterns: which word each thread of a warp touches.

A pattern gives, for every thread index ``tid``, the index of the word it reads or writes, in
units of the word size.  Two ways to say it:

* stride / offset / word size: ``index(tid) = offset + tid * stride`` (the usual convention of
  the access-pattern discussions in seeds 001 §3.2.2 and 003 §III/§IV);
* an index expression of ``tid`` (and ``lane`` = tid % 32, ``warp`` = tid // 32, plus any named
  constants the caller binds), e.g. ``"tid*2+1"`` or the seed's own benchmark index
  ``"(tid//S)*64*S + (tid+O)%S"`` (seed 001, Appendix B.1).

Index expressions are parsed with :mod:`ast` and evaluated by walking the tree: only integer
literals, the allowed names, ``+ - * // % << >> & | ^``, unary ``-``/``+`` and parentheses are
accepted.  Nothing is ever passed to ``eval``.

Inactive threads (``--active 0-15`` or a hexadecimal mask ``0x0000ffff``) take no part in the
access, as when a branch masks them off.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from advisor.errors import UsageError

WARP_SIZE = 32
"""Threads per warp on every NVIDIA GPU so far."""

MAX_EXPRESSION_CHARS = 300
"""Index expressions longer than this are refused: a pattern is a short formula."""

MAX_SHIFT_BITS = 64
"""Shifts by more than a 64-bit address width are refused (they only build huge numbers)."""

MAX_THREADS = 4096
"""More threads than this in one calculation is refused; requests are per warp anyway."""

_BINARY_OPS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
}
_OP_SYMBOLS = "+ - * // % << >> & | ^"
THREAD_NAMES = ("tid", "lane", "warp")
"""Names every index expression may use: thread index, lane in its warp, warp index."""


@dataclass(frozen=True)
class IndexExpression:
    """A parsed, validated index expression (call :meth:`evaluate` to use it)."""

    text: str
    tree: ast.Expression = field(compare=False, repr=False)
    names: frozenset[str]

    def evaluate(self, tid: int, constants: Mapping[str, int] | None = None) -> int:
        """The word index of thread ``tid`` (``constants`` binds the extra names)."""
        env = {"tid": tid, "lane": tid % WARP_SIZE, "warp": tid // WARP_SIZE}
        env.update(constants or {})
        missing = sorted(self.names - env.keys())
        if missing:
            raise UsageError(
                f"index expression {self.text!r}: unknown name(s) {', '.join(missing)}; "
                f"use tid, lane, warp or bind them (e.g. --sweep {missing[0]}=1..32)"
            )
        return _walk(self.tree.body, env, self.text)


def parse_index_expression(text: str) -> IndexExpression:
    """Parse ``text`` into an :class:`IndexExpression`, refusing anything but integer arithmetic.

    Raises :class:`UsageError` naming the offending part.
    """
    source = text.strip()
    if not source:
        raise UsageError("--index: empty expression; give e.g. 'tid*2+1'")
    if len(source) > MAX_EXPRESSION_CHARS:
        raise UsageError(f"--index: expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"--index {text!r}: not an expression ({exc.msg})") from None
    names: set[str] = set()
    for node in ast.walk(tree.body):
        _check_node(node, text)
        if isinstance(node, ast.Name):
            names.add(node.id)
    return IndexExpression(text=source, tree=tree, names=frozenset(names))


def _check_node(node: ast.AST, text: str) -> None:
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY_OPS:
            hint = " (use // for integer division)" if isinstance(node.op, ast.Div) else ""
            raise UsageError(
                f"--index {text!r}: operator {type(node.op).__name__} not allowed{hint}; "
                f"allowed: {_OP_SYMBOLS}"
            )
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.USub | ast.UAdd):
            raise UsageError(f"--index {text!r}: only unary - and + are allowed")
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, int) or isinstance(node.value, bool):
            raise UsageError(f"--index {text!r}: only integer literals are allowed")
    elif isinstance(node, ast.Name):
        if not node.id.isidentifier() or node.id.startswith("_"):
            raise UsageError(f"--index {text!r}: name {node.id!r} not allowed")
    elif not isinstance(node, ast.operator | ast.unaryop | ast.expr_context):
        raise UsageError(
            f"--index {text!r}: {type(node).__name__} not allowed; use integers, tid, lane, "
            f"warp and {_OP_SYMBOLS}"
        )


def _walk(node: ast.expr, env: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, int)  # checked by _check_node
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        value = _walk(node.operand, env, text)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left = _walk(node.left, env, text)
        right = _walk(node.right, env, text)
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and right == 0:
            raise UsageError(f"--index {text!r}: division by zero at tid={env['tid']}")
        if isinstance(node.op, ast.LShift | ast.RShift) and not 0 <= right <= MAX_SHIFT_BITS:
            raise UsageError(f"--index {text!r}: shift by {right} outside 0..{MAX_SHIFT_BITS}")
        return _BINARY_OPS[type(node.op)](left, right)
    raise UsageError(f"--index {text!r}: cannot evaluate {type(node).__name__}")  # pragma: no cover


@dataclass(frozen=True)
class AccessPattern:
    """Which word each thread touches: ``index(tid) * word_bytes`` bytes from the array start.

    ``index`` is either ``offset_words + tid * stride_words`` or ``expression`` evaluated with
    ``constants``; ``active`` lists the threads that take part (None = all).
    """

    word_bytes: int = 4
    stride_words: int = 1
    offset_words: int = 0
    expression: IndexExpression | None = None
    constants: tuple[tuple[str, int], ...] = ()
    active: frozenset[int] | None = None

    def describe(self) -> str:
        """One line: the index formula and the word size."""
        if self.expression is not None:
            bound = "".join(f", {k}={v}" for k, v in self.constants)
            formula = f"{self.expression.text}{bound}"
        else:
            formula = f"{self.offset_words} + tid*{self.stride_words}"
        return f"index = {formula}, {self.word_bytes}-byte words"

    def word_index(self, tid: int) -> int:
        """The word index thread ``tid`` touches (may raise UsageError for a bad expression)."""
        if self.expression is not None:
            return self.expression.evaluate(tid, dict(self.constants))
        return self.offset_words + tid * self.stride_words

    def byte_addresses(self, threads: int) -> list[int | None]:
        """Byte address per thread ``0..threads-1``; None for an inactive thread.

        Raises UsageError for a negative address (a pattern must stay inside its array).
        """
        if not 1 <= threads <= MAX_THREADS:
            raise UsageError(f"--threads {threads}: give 1..{MAX_THREADS}")
        addresses: list[int | None] = []
        for tid in range(threads):
            if self.active is not None and tid not in self.active:
                addresses.append(None)
                continue
            index = self.word_index(tid)
            if index < 0:
                raise UsageError(
                    f"pattern {self.describe()}: thread {tid} gets negative index {index}; "
                    "add an offset"
                )
            addresses.append(index * self.word_bytes)
        return addresses


def build_pattern(
    *,
    word_bytes: int = 4,
    stride_words: int | None = None,
    offset_words: int = 0,
    index: str | None = None,
    constants: Mapping[str, int] | None = None,
    active: frozenset[int] | None = None,
) -> AccessPattern:
    """Validate the parts of a pattern and build it (UsageError on a bad value)."""
    if word_bytes not in (1, 2, 4, 8, 16):
        raise UsageError(f"--word {word_bytes}: word size must be 1, 2, 4, 8 or 16 bytes")
    if index is not None and stride_words is not None:
        raise UsageError("give either --stride/--offset or --index, not both")
    expression = parse_index_expression(index) if index is not None else None
    if stride_words is not None and stride_words < 0:
        raise UsageError(f"--stride {stride_words}: must be >= 0")
    if offset_words < 0:
        raise UsageError(f"--offset {offset_words}: must be >= 0")
    return AccessPattern(
        word_bytes=word_bytes,
        stride_words=1 if stride_words is None else stride_words,
        offset_words=offset_words,
        expression=expression,
        constants=tuple(sorted((constants or {}).items())),
        active=active,
    )


#: longest thread number read as a number (a longer one is outside every warp)
_MAX_THREAD_DIGITS = 18


def parse_active(text: str, threads: int = WARP_SIZE) -> frozenset[int]:
    """Active threads from ``"0-15"``, ``"0,2,4-7"`` or a hexadecimal mask ``"0x0000ffff"``.

    A mask's bit i is thread i.  Thread numbers must lie in ``0..threads-1``; every range and
    mask is checked against that bound before any thread set is built, so the work is bounded
    by ``threads`` and the text's length whatever numbers the text holds.
    """
    spec = text.strip().lower()
    if spec.startswith("0x"):
        try:
            mask = int(spec, 16)
        except ValueError:
            raise UsageError(f"--active {text!r}: not a hexadecimal mask") from None
        if mask.bit_length() > threads:
            raise UsageError(
                f"--active {text!r}: thread {mask.bit_length() - 1} outside 0..{threads - 1}"
            )
        return frozenset(bit for bit in range(mask.bit_length()) if mask >> bit & 1)
    chosen: set[int] = set()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        low, _, high = part.partition("-")
        if max(len(low), len(high)) > _MAX_THREAD_DIGITS and (low + high).isdigit():
            raise _outside(text, threads)  # far past any thread: never int() a huge literal
        try:
            first, last = int(low), int(high) if high else int(low)
        except ValueError:
            raise UsageError(
                f"--active {text!r}: use thread ranges like 0-15,20 or a mask like 0xffff"
            ) from None
        if first > last:
            raise UsageError(f"--active {text!r}: range {part} runs backwards")
        if first < 0 or last >= threads:
            raise _outside(text, threads, first if first < 0 else last)
        chosen.update(range(first, last + 1))
    return frozenset(chosen)


def _outside(text: str, threads: int, thread: int | None = None) -> UsageError:
    which = "a thread" if thread is None else f"thread {thread}"
    return UsageError(f"--active {text!r}: {which} outside 0..{threads - 1}")
