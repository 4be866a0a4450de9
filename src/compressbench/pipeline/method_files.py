"""The files a method's ``method_params`` name, fingerprinted by content (stage method_files).

A method declares which of its parameters name files or folders it reads
(:attr:`~compressbench.compress.registry.MethodEntry.paths`: a scorer, a schema, an encoder);
their paths may lie outside the repository (a corpus's ``schema.json``), where DVC cannot be
pointed at them per cell. The method_files stage writes one fingerprint per method (each
file's name, size and SHA-256, a folder's files in sorted order), and every contexts cell of
the method depends on it: a named file whose content changes reruns the cells that read it,
and the record says which bytes a cell was built from. A value that is not a local path (a
model id a library resolves) is recorded as the name it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compressbench.compress.registry import method_entry
from compressbench.jsonl import sha256_file


def path_fingerprint(value: str) -> dict[str, Any]:
    """One named path: ``{"path", "files": [[name, size, sha256], ...]}`` for a file or a
    folder (names relative to it), ``{"name": value}`` for a value that is no local path."""
    root = Path(value)
    if root.is_file():
        return {"path": value, "files": [[root.name, root.stat().st_size, sha256_file(root)]]}
    if not root.is_dir():
        return {"name": value}
    files = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            files.append(
                [path.relative_to(root).as_posix(), path.stat().st_size, sha256_file(path)]
            )
    return {"path": value, "files": files}


def method_files(method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The fingerprint of every path ``method``'s ``params`` name, by parameter (a
    comma-separated value: one entry per path); ``{}`` where none is set."""
    entry = method_entry(method)
    declared = entry.paths if entry else ()
    out: dict[str, Any] = {}
    for key in declared:
        value = (params or {}).get(key)
        if value:
            out[key] = [path_fingerprint(p.strip()) for p in str(value).split(",") if p.strip()]
    return out
