"""The static import graph of the ``compressbench`` package, read from the source (AST).

An edge ``a -> b`` means module ``a`` imports ``b``: at module level or inside a function, as
``import b``, ``from b import x`` or ``from a_package import b_module``, or names it as a string
``"compressbench.b[:attr]"`` that a lazy registry imports. Imports under ``if TYPE_CHECKING:``
never run and are left out. Only ``compressbench`` modules are nodes.

:func:`closure` is what running a module can execute: everything it reaches, plus the package
``__init__`` modules Python runs on the way (those that do more than hold a docstring and
constants).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "compressbench"
ROOT = Path(__file__).resolve().parents[1]  # src/compressbench
_LAZY_NAME = re.compile(rf"{PACKAGE}(\.\w+)+(:\w+)?")


def module_name(path: Path, root: Path = ROOT) -> str:
    """``src/compressbench/pipeline/paths.py`` -> ``compressbench.pipeline.paths``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _inert(tree: ast.Module) -> bool:
    """A module that only holds a docstring and constants cannot change what code does."""
    return all(
        isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign)
        and isinstance(getattr(stmt, "value", None), ast.Constant)
        for stmt in tree.body
    )


@dataclass
class ImportGraph:
    """Modules (name -> source file), their import edges and which ones are packages."""

    files: dict[str, Path] = field(default_factory=dict)
    edges: dict[str, set[str]] = field(default_factory=dict)
    packages: set[str] = field(default_factory=set)
    inert: set[str] = field(default_factory=set)

    def _targets(self, module: str, node: ast.AST) -> Iterator[str]:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module if module in self.packages else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            yield from submodules
            if not all(m in self.files for m in submodules):
                yield base  # a name defined in the package itself (its __init__)
        elif isinstance(node, ast.Constant) and _LAZY_NAME.fullmatch(str(node.value)):
            yield str(node.value).partition(":")[0]  # a registry's lazy "module:attr"

    def imports_of(self, module: str) -> set[str]:
        return self.edges.get(module, set())

    def closure(self, modules: Iterable[str]) -> set[str]:
        """Every module that importing (and running) ``modules`` can execute."""
        seen: set[str] = set()
        stack = list(modules)
        while stack:
            name = stack.pop()
            if name in seen or name not in self.files:
                continue
            seen.add(name)
            stack.extend(self.imports_of(name))
            parent = name.rpartition(".")[0]
            while parent:  # Python runs every parent package's __init__ first
                stack.append(parent)
                parent = parent.rpartition(".")[0]
        return {m for m in seen if m not in self.inert or m in modules}

    def cycles(self) -> list[list[str]]:
        """Strongly connected components with more than one module."""
        return strongly_connected(sorted(self.files), self.imports_of)

    def package_edges(self) -> dict[str, set[str]]:
        """The graph of top-level packages: ``a -> b`` when a module of ``compressbench.a``
        imports one of ``compressbench.b`` (a top-level module is a package of its own)."""
        edges: dict[str, set[str]] = {top_package(m): set() for m in self.files}
        for module, targets in self.edges.items():
            edges[top_package(module)] |= {top_package(t) for t in targets}
        for package, targets in edges.items():
            targets.discard(package)
        return edges

    def package_cycles(self) -> list[list[str]]:
        """Cycles among top-level packages (config -> tpbench -> pipeline -> config), which
        :meth:`cycles` misses when no single chain of modules closes them."""
        edges = self.package_edges()
        return strongly_connected(sorted(edges), lambda p: edges[p])


def top_package(module: str) -> str:
    """``compressbench.tpbench.scoring.parse`` -> ``compressbench.tpbench``."""
    return ".".join(module.split(".")[:2])


def strongly_connected(nodes: Iterable[str], edges: Callable[[str], set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return found


def build_graph(root: Path = ROOT) -> ImportGraph:
    """Parse every module under ``root`` (the ``compressbench`` package directory)."""
    graph = ImportGraph()
    trees: dict[str, ast.Module] = {}
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        graph.files[name] = path
        if path.name == "__init__.py":
            graph.packages.add(name)
        trees[name] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        if _inert(trees[name]):
            graph.inert.add(name)
    for name, tree in trees.items():
        targets = {t for node in _nodes(tree) for t in graph._targets(name, node)}
        graph.edges[name] = {t for t in targets if t in graph.files and t != name}
    return graph
