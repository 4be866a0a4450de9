"""The stage commands ``dvc repro TARGET...`` would run, in DVC's order, without DVC: read from
``dvc.yaml`` and expanded over ``params.yaml`` (``foreach`` / ``matrix``) as DVC expands them.
Used by ``scripts/gpu_check.py`` (a bare GPU box has no ``dvc``). A stage's makers are the
stages whose outputs its deps name (``${...}`` read as a wildcard, a dep folder as its files).
"""

from __future__ import annotations

import fnmatch
import itertools
import re
from typing import Any


def _glob(path: str) -> str:
    return re.sub(r"\$\{[^}]*\}", "*", path)


def _paths(items: list[Any]) -> list[str]:
    return [_glob(next(iter(i)) if isinstance(i, dict) else i) for i in items]


def stage_plan(
    dvc: dict[str, Any], params: dict[str, Any], targets: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Every cell (DVC address, command, outputs) of the stages ``targets`` need, in the
    file's order, which is DVC's: each stage comes after the stages making its deps."""
    stages = dvc["stages"]
    body = {n: s.get("do", s) for n, s in stages.items()}
    deps = {n: _paths(b.get("deps", [])) for n, b in body.items()}
    outs = {n: _paths(b.get("outs", [])) for n, b in body.items()}
    names = list(stages)

    def makers(name: str) -> set[str]:
        return {
            m
            for m in names
            for o in outs[m]
            for d in deps[name]
            if m != name and (fnmatch.fnmatch(o, d) or fnmatch.fnmatch(o, d + "/*"))
        }

    wanted: set[str] = set()
    todo = list(targets)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(makers(name))
    plan: list[dict[str, Any]] = []
    for pos, name in enumerate(names):
        if name not in wanted:
            continue
        if any(names.index(m) > pos for m in makers(name)):
            raise RuntimeError(f"dvc.yaml lists {name} before a stage it depends on")
        for addr, subst in _cells(name, stages[name], params):
            b = body[name]
            plan.append(
                {
                    "stage": addr,
                    "name": name,
                    "cmd": _subst(b["cmd"], subst),
                    "outs": [
                        _subst(next(iter(o)) if isinstance(o, dict) else o, subst)
                        for o in b.get("outs", [])
                    ],
                }
            )
    return plan


def _lookup(params: dict[str, Any], ref: Any) -> Any:
    if not isinstance(ref, str):
        return ref
    value: Any = params
    for part in ref.strip("${} ").split("."):
        value = value[part]
    return value


def _subst(text: str, subst: dict[str, str]) -> str:
    for mark, value in subst.items():
        text = text.replace(mark, value)
    return text


def _cells(
    name: str, stage: dict[str, Any], params: dict[str, Any]
) -> list[tuple[str, dict[str, str]]]:
    """(DVC address, placeholder -> value) of each cell of a stage, as DVC expands it."""
    if "foreach" in stage:
        items = _lookup(params, stage["foreach"])
        mark = "${key}" if isinstance(items, dict) else "${item}"
        return [(f"{name}@{i}", {mark: str(i)}) for i in items]
    if "matrix" in stage:
        keys = list(stage["matrix"])
        lists = [_lookup(params, v) for v in stage["matrix"].values()]
        return [
            (
                f"{name}@{'-'.join(map(str, combo))}",
                {f"${{item.{k}}}": str(v) for k, v in zip(keys, combo, strict=True)},
            )
            for combo in itertools.product(*lists)
        ]
    return [(name, {})]
