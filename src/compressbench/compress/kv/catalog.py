"""kvpress's press classes and their init fields, read from its source without importing it.

Importing kvpress imports torch and transformers (seconds); validating ``params.yaml`` must
not. This module parses ``kvpress/__init__.py`` (the classes it exports) and the modules
defining them (``@dataclass`` fields, inherited through their bases), which takes a few
milliseconds. A test checks the result against the imported library.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

ROOT_CLASS = "BasePress"


@functools.lru_cache(maxsize=1)
def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("kvpress")  # locates, does not import, a top-level package
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


@functools.lru_cache(maxsize=64)
def _module(dotted: str) -> tuple[dict[str, ast.ClassDef], dict[str, str]]:
    """Classes defined in a kvpress module and the names it imports (name -> module)."""
    root = _package_dir()
    if root is None or not dotted.startswith("kvpress"):
        return {}, {}
    parts = dotted.split(".")[1:]
    path = root.joinpath(*parts).with_suffix(".py") if parts else root / "__init__.py"
    if not path.is_file():
        return {}, {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    imports = {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    return classes, imports


def _is_dataclass(node: ast.ClassDef) -> bool:
    def name(d: ast.expr) -> str:
        target = d.func if isinstance(d, ast.Call) else d
        return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")

    return any(name(d) == "dataclass" for d in node.decorator_list)


def _init_flag(value: ast.expr | None) -> bool:
    """False for ``field(..., init=False)``."""
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "field":
        for kw in value.keywords:
            if kw.arg == "init" and isinstance(kw.value, ast.Constant):
                return bool(kw.value.value)
    return True


def _is_classvar(annotation: ast.expr) -> bool:
    text = ast.unparse(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _walk(name: str, dotted: str) -> tuple[bool, dict[str, bool]] | None:
    """(reaches BasePress, fields -> init flag) of class ``name`` of module ``dotted``."""
    classes, imports = _module(dotted)
    node = classes.get(name)
    if node is None:
        source = imports.get(name)
        return _walk(name, source) if source and source != dotted else None
    is_press = name == ROOT_CLASS
    fields: dict[str, bool] = {}
    for base in node.bases:
        if isinstance(base, ast.Name):
            found = _walk(base.id, dotted)
            if found is not None:
                is_press = is_press or found[0]
                fields.update(found[1])
    if _is_dataclass(node):
        for stmt in node.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and not _is_classvar(stmt.annotation)
            ):
                fields[stmt.target.id] = _init_flag(stmt.value)
    return is_press, fields


@functools.lru_cache(maxsize=1)
def press_fields() -> dict[str, tuple[str, ...]]:
    """Every press class kvpress exports -> its init field names (empty if not installed)."""
    _, exported = _module("kvpress")
    out: dict[str, tuple[str, ...]] = {}
    for name, module in exported.items():
        found = _walk(name, module)
        if found is not None and found[0]:
            out[name] = tuple(f for f, init in found[1].items() if init)
    return out
