"""Code fingerprints: the root ``dvc.yaml``'s stages read their source code through small stages.

A stage of the root ``dvc.yaml`` does not list its declared code (20-odd paths) itself: a
generated stage ``code_<stage>`` lists it (the part of it shared by every stage,
:data:`~compressbench.pipeline.declare.BASE_CODE` and the trained
:data:`~compressbench.pipeline.declare.BASE_MODELS`, once, in ``code_base``) and writes
``data/code/<stage>.json``, the SHA-256 of every file under those paths; every cell of the stage
depends on that file and ``data/code/base.json``. A changed module reruns the fingerprint stages
that list it (``dvc status`` names them: ``code_<stage>`` is stage ``<stage>``'s code), and the
cells of exactly the stages whose fingerprint changed. DVC then checks each code path once per
stage instead of once per cell (the default graph: 774 dependencies -> 288), however large the
grid.

Bytecode (``__pycache__``, ``*.pyc``; ``.dvcignore`` hides it from DVC too) and dot files
(editor swap files) are left out of the fingerprints.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from compressbench.jsonl import write_json
from compressbench.pipeline.declare import BASE_CODE, BASE_MODELS, SRC_PREFIX, StageDecl

CODE_DIR = "data/code"
BASE = "base"
MODULE = f"{SRC_PREFIX}pipeline/code_hash.py"
"""This module: every fingerprint stage reads it (how a fingerprint is made)."""


@dataclass(frozen=True)
class CodeStage:
    """A generated fingerprint stage: the source paths it hashes and the file it writes."""

    name: str
    paths: tuple[str, ...]

    @property
    def stage(self) -> str:
        return f"code_{self.name}"

    @property
    def out(self) -> str:
        return fingerprint_path(self.name)


def fingerprint_path(name: str) -> str:
    return f"{CODE_DIR}/{name}.json"


def code_stages(decls: Sequence[StageDecl]) -> list[CodeStage]:
    """``code_base`` and one fingerprint stage per declaration, in declaration order."""
    stages = [CodeStage(BASE, (*(SRC_PREFIX + c for c in BASE_CODE), *BASE_MODELS))]
    for decl in decls:
        missing = [c for c in BASE_CODE if c not in decl.code]
        if missing:
            raise ValueError(f"stage {decl.name}: its code lacks the base code {missing}")
        own = tuple(SRC_PREFIX + c for c in decl.code if c not in BASE_CODE)
        stages.append(CodeStage(decl.name, own))
    return stages


def _files(root: Path, path: str) -> Iterator[str]:
    """Every file at or under ``path`` (relative to ``root``), ``__pycache__`` and dot files
    left out."""
    target = root / path
    if not target.exists():
        raise FileNotFoundError(2, "no such file or folder", path)
    if target.is_file():
        yield path
        return
    for child in sorted(target.iterdir()):
        if child.name == "__pycache__" or child.name.startswith(".") or child.suffix == ".pyc":
            continue
        yield from _files(root, f"{path.rstrip('/')}/{child.name}")


def fingerprint(paths: Sequence[str], root: Path = Path(".")) -> dict[str, str]:
    """File path -> SHA-256 of its bytes, for every file under ``paths``, sorted by path."""
    files = sorted({f for p in paths for f in _files(root, p)})
    return {f: hashlib.sha256((root / f).read_bytes()).hexdigest() for f in files}


def write_fingerprint(out: Path, paths: Sequence[str], root: Path = Path(".")) -> int:
    """Write the fingerprint of ``paths`` to ``out`` (atomically); returns the file count."""
    files = fingerprint(paths, root)
    write_json(out, {"paths": list(paths), "files": files})
    return len(files)
