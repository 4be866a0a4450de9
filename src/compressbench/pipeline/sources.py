"""Where a corpus's dialogues come from: the built-in package data, a local folder in the
official layout, or the pinned upstream files (downloaded once into ``data/sources`` and
verified against their git blob ids); and the cheap fingerprint of a source (stage
corpus_source)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from compressbench.config import CorpusSpec
from compressbench.corpora.loaders import load_corpus
from compressbench.corpora.model import Dialogue
from compressbench.corpora.upstream import fetch_upstream
from compressbench.errors import InputError


def _builtin(spec: CorpusSpec) -> Iterator[Dialogue]:
    return load_corpus("builtin", None, spec.splits)


def _local(spec: CorpusSpec) -> Iterator[Dialogue]:
    return load_corpus(spec.loader, spec.path, spec.splits)


def _upstream(spec: CorpusSpec) -> Iterator[Dialogue]:
    root = fetch_upstream(spec.loader, spec.splits)
    return load_corpus(spec.loader, root, spec.splits)


SOURCES: dict[str, Callable[[CorpusSpec], Iterator[Dialogue]]] = {
    "builtin": _builtin,
    "local": _local,
    "upstream": _upstream,
}


def corpus_dialogues(spec: CorpusSpec) -> Iterator[Dialogue]:
    """Dialogues of a configured corpus, by its ``source``."""
    return SOURCES[spec.source](spec)


def _folder_fingerprint(spec: CorpusSpec) -> dict[str, Any]:
    root = Path(str(spec.path))
    if not root.is_dir():
        raise InputError(f"params.yaml corpora.{spec.name}.path: {root} is not a folder")
    files = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            st = path.stat()
            files.append([path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns])
    return {"path": str(root), "files": files}


def source_fingerprint(spec: CorpusSpec) -> dict[str, Any]:
    """What identifies a corpus's source without reading it: a local folder's file names, sizes
    and modification times (what DVC itself compares); the built-in data and the pinned upstream
    files are covered by the code they ship with (their blob ids are in the manifest)."""
    base = {"source": spec.source, "loader": spec.loader, "splits": spec.splits}
    return base | (_folder_fingerprint(spec) if spec.source == "local" else {})
