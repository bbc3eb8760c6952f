"""The package layout's import rules, checked on the source with :mod:`ast` (nothing imported).

Every ``.py`` file of ``advisor/`` and ``parsers/`` is parsed; every ``import`` and ``from ...
import`` statement is looked at, at module level and inside functions alike (plus
``importlib.import_module("literal")`` calls).  ``from pkg import name`` counts as an import of
``pkg.name`` when that is a module of the tree, else of ``pkg``.  The rules:

* the readers (``parsers``) depend on ``advisor`` only through :data:`PARSERS_MAY_IMPORT`: they
  never import the report, render or CLI layers;
* ``advisor.report`` and ``advisor.render`` never import ``advisor.cli``;
* ``advisor.criteria``, ``advisor.models`` and ``advisor.devices`` never import ``advisor.report``,
  ``advisor.render`` or ``advisor.cli``;
* the modules have no import cycle through the imports run when a module is imported (module
  level, outside functions and ``if TYPE_CHECKING:`` blocks): no strongly connected component of
  more than one module in that graph.  Importing ``a.b.c`` also runs ``a/__init__`` and
  ``a/b/__init__``; those implicit edges are left out, so a package ``__init__`` that imports its
  own submodules is no cycle by itself;
* no module is left under a flat legacy name (``advisor/cli_*.py``, ``parsers/ncu_*.py``, ...).

Each failure names the file, the line and the import statement.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("advisor", "parsers")
#: what the walk finds: import statements and ``import_module("literal")`` calls
ImportNode = ast.Import | ast.ImportFrom | ast.Call

#: the ``advisor`` modules the readers may import (besides anything in ``parsers``):
#: ``advisor.ncu_read`` holds the records of an Nsight Compute report read with the standard
#: library only, so that the report command's helper process can read them without pandas;
#: ``advisor.readahead`` (standard library only too) holds a file read while the command's
#: modules load, which ``parsers.source.read_bytes`` takes (``parsers`` itself loads pandas)
PARSERS_MAY_IMPORT = (
    "advisor.errors",
    "advisor.profile",
    "advisor.schema",
    "advisor.metric_map",
    "advisor.ncu_read",
    "advisor.readahead",
    "advisor.text",
)
#: the presentation layers: nothing below them imports them
PRESENTATION = ("advisor.report", "advisor.render", "advisor.cli")
#: (importing packages, forbidden targets): no module of the first imports one of the second
LAYER_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("advisor.report", "advisor.render"), ("advisor.cli",)),
    (("advisor.criteria", "advisor.models", "advisor.devices"), PRESENTATION),
)
#: flat module names the layout replaced with packages (``advisor/cli_report.py`` ->
#: ``advisor/cli/report.py``)
LEGACY_PATTERNS = (
    "advisor/cli_*.py",
    "advisor/report_*.py",
    "advisor/render_*.py",
    "parsers/nvprof_*.py",
    "parsers/ncu_*.py",
    "parsers/nsys_*.py",
)


@dataclass(frozen=True)
class Import:
    """One imported module of one statement."""

    importer: str  # the importing module, dotted
    path: str  # its file, relative to the repository root
    line: int
    statement: str  # the statement as written (unparsed)
    target: str  # the module imported, dotted (``pkg.name`` resolved where that is a module)
    runs_on_import: bool  # module level, outside functions and TYPE_CHECKING blocks

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: `{self.statement}` (imports {self.target})"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _files() -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of the packages."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            out[_module_name(path)] = path
    return out


def _is_package(module: str) -> bool:
    return _files()[module].name == "__init__.py"


def _absolute(importer: str, module: str | None, level: int) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in ``importer``."""
    if not level:
        return module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_import_call(node: ast.Call) -> bool:
    """``importlib.import_module("a.b")`` / ``import_module("a.b")``: a literal module name."""
    if not node.args:
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0]
    return (
        name == "import_module" and isinstance(first, ast.Constant) and isinstance(first.value, str)
    )


def _statements(tree: ast.AST) -> Iterator[tuple[ImportNode, bool]]:
    """Every import node (and ``importlib.import_module`` call with a literal name) with
    whether it runs when the module is imported."""

    def walk(node: ast.AST, runs: bool) -> Iterator[tuple[ImportNode, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) or (
                isinstance(child, ast.Call) and _is_import_call(child)
            ):
                yield child, runs
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, False)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), False)
                for stmt in child.orelse:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), runs)
            else:
                yield from walk(child, runs)

    yield from walk(tree, True)


def _targets(importer: str, node: ImportNode) -> list[str]:
    """The modules one statement imports (resolved as the module docstring says)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = _absolute(importer, node.module, node.level)
        out: list[str] = []
        for alias in node.names:
            name = f"{base}.{alias.name}"
            out.append(name if alias.name != "*" and name in _files() else base)
        return list(dict.fromkeys(out))
    first = node.args[0]
    assert isinstance(first, ast.Constant)
    return [str(first.value)]


@cache
def _imports() -> tuple[Import, ...]:
    out: list[Import] = []
    for module, path in _files().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        rel = path.relative_to(ROOT).as_posix()
        for node, runs in _statements(tree):
            text = ast.unparse(node)
            for target in _targets(module, node):
                out.append(Import(module, rel, node.lineno, text, target, runs))
    return tuple(out)


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _report(title: str, found: list[Import]) -> str:
    return f"{title}:\n" + "\n".join(f"  {imp}" for imp in found)


# -- the rules -----------------------------------------------------------------------------------


def test_the_tree_is_found() -> None:
    assert "parsers.registry" in _files() and "advisor.profile" in _files()
    assert any(i.importer == "parsers.registry" for i in _imports())


def test_parsers_never_import_the_presentation_layers() -> None:
    found = [
        i
        for i in _imports()
        if _within(i.importer, ("parsers",)) and _within(i.target, PRESENTATION)
    ]
    assert not found, _report(
        "the readers (parsers) import the report/render/CLI layers (advisor.report, "
        "advisor.render, advisor.cli); a reader returns a Profile and nothing more",
        found,
    )


def test_parsers_import_only_the_data_modules_of_advisor() -> None:
    found = [
        i
        for i in _imports()
        if _within(i.importer, ("parsers",))
        and _within(i.target, ("advisor",))
        and not _within(i.target, PARSERS_MAY_IMPORT)
    ]
    assert not found, _report(
        f"parsers may import from advisor only {', '.join(PARSERS_MAY_IMPORT)}", found
    )


@pytest.mark.parametrize(
    ("importers", "forbidden"), LAYER_RULES, ids=[",".join(r[0]) for r in LAYER_RULES]
)
def test_lower_layers_never_import_upper_ones(
    importers: tuple[str, ...], forbidden: tuple[str, ...]
) -> None:
    found = [
        i for i in _imports() if _within(i.importer, importers) and _within(i.target, forbidden)
    ]
    assert not found, _report(
        f"{', '.join(m + '.*' for m in importers)} must not import {', '.join(forbidden)}", found
    )


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    out.append(sorted(component))
    return out


def _cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle through the component's first module (breadth-first: a shortest one)."""
    members = set(component)
    start = component[0]
    came: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return [*reversed(path), start]
            if nxt not in came:
                came[nxt] = node
                queue.append(nxt)
    return component


def test_components_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert sorted(map(sorted, _components(graph))) == [["a", "b", "c"], ["d"], ["e"]]
    assert _cycle(["a", "b", "c"], graph) == ["a", "b", "c", "a"]


def test_no_import_cycle() -> None:
    modules = _files()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    edges: dict[tuple[str, str], Import] = {}
    for i in _imports():
        if i.runs_on_import and i.target in modules and i.target != i.importer:
            graph[i.importer].add(i.target)
            edges.setdefault((i.importer, i.target), i)
    cycles = [c for c in _components(graph) if len(c) > 1]
    messages = []
    for component in cycles:
        cycle = _cycle(component, graph)
        steps = "\n".join(f"    {edges[(a, b)]}" for a, b in itertools.pairwise(cycle))
        messages.append(
            f"  cycle {' -> '.join(cycle)} (component: {', '.join(component)}):\n{steps}"
        )
    assert not cycles, "module-level import cycles:\n" + "\n".join(messages)


def test_no_flat_legacy_modules() -> None:
    found = sorted(p.relative_to(ROOT).as_posix() for g in LEGACY_PATTERNS for p in ROOT.glob(g))
    assert not found, "flat legacy modules left (the layout uses packages): " + ", ".join(found)
