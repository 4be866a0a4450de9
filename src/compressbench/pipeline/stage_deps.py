"""The dependencies ``dvc.yaml`` lists for one cell of a declared stage, and its lock file.

Taken from the generated entry itself (:func:`~compressbench.pipeline.dvc_yaml.stage_entry`),
its ``${...}`` filled as DVC fills them (the cell's loop values, then ``params.yaml`` keys), so
the runs a stage opens record the hashes of exactly what the stage's ``dvc.lock`` entry lists
(:mod:`compressbench.tracking.data_version`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from compressbench.pipeline.declare import StageDecl
from compressbench.pipeline.dvc_yaml import MAIN_FILE, apart_file, stage_entry
from compressbench.pipeline.paths import value_name
from compressbench.tracking.data_version import StageDeps

__all__ = ["cell_deps"]

_VAR = re.compile(r"\$\{\s*([^}\s]+)\s*\}")


def _text(key: str, value: Any) -> str:
    return value_name(float(value)) if key == "ratio" else str(value)


def _lookup(name: str, cell: Mapping[str, Any], variables: Mapping[str, Any]) -> str | None:
    """The value of ``${name}``: ``item`` / ``item.<key>`` / ``key`` from the cell (a
    ``foreach`` or ``matrix`` cell), else a dotted ``params.yaml`` key; None if unknown."""
    if name in ("item", "key") and len(cell) == 1:
        ((key, only),) = cell.items()
        return _text(key, only)
    if name.startswith("item.") and name[5:] in cell:
        return _text(name[5:], cell[name[5:]])
    value: Any = variables
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return None if isinstance(value, (Mapping, list)) else str(value)


def _fill(dep: str, cell: Mapping[str, Any], variables: Mapping[str, Any]) -> str:
    def one(match: re.Match[str]) -> str:
        found = _lookup(match.group(1), cell, variables)
        return match.group(0) if found is None else found

    return _VAR.sub(one, dep)


def cell_deps(
    decl: StageDecl, cell: Mapping[str, Any], params_file: str | Path = "params.yaml"
) -> StageDeps:
    """The deps of ``decl``'s cell ``cell`` (loop key -> value) as its ``dvc.yaml`` lists them,
    and the lock file DVC records them in. ``params_file`` fills ``${...}`` params keys."""
    where = apart_file(decl)
    entry = stage_entry(decl, fingerprinted=where == MAIN_FILE)
    body = entry.get("do", entry)
    path = Path(params_file)
    variables = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    deps = tuple(_fill(str(d), cell, variables or {}) for d in body.get("deps", ()))
    return StageDeps(deps, str(Path(where).with_name("dvc.lock").as_posix()))
