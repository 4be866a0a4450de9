"""Corpus loaders by name: ``load_corpus("sgd", path)`` -> dialogues in file order.

A new corpus is one module with a ``load_<name>(path, splits)`` function plus one entry in
:data:`CORPUS_LOADERS`. Loaders raise :class:`InputError` on malformed input (file, dialogue,
field) while they are iterated, so consumers write their outputs atomically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from compressbench.corpora import builtin
from compressbench.corpora.files import iter_dialogue_files
from compressbench.corpora.model import Dialogue
from compressbench.corpora.multiwoz22 import load_multiwoz22
from compressbench.corpora.sgd import load_sgd
from compressbench.errors import InputError

__all__ = ["CORPUS_LOADERS", "CorpusLoader", "iter_dialogue_files", "load_corpus"]

LoadFn = Callable[[str | Path, Sequence[str] | None], Iterator[Dialogue]]


@dataclass(frozen=True)
class CorpusLoader:
    """How to read one corpus: its load function and, if it ships with the package, its path."""

    load: LoadFn
    description: str
    default_path: Path | None = None


CORPUS_LOADERS: dict[str, CorpusLoader] = {
    "sgd": CorpusLoader(load_sgd, "Schema-Guided Dialogue (DSTC8), official layout"),
    "multiwoz": CorpusLoader(load_multiwoz22, "MultiWOZ 2.2, official layout"),
    "builtin": CorpusLoader(builtin.load_builtin, "built-in mini corpus", builtin.DATA_DIR),
}


def load_corpus(
    name: str, path: str | Path | None = None, splits: Sequence[str] | None = None
) -> Iterator[Dialogue]:
    """Dialogues of corpus ``name`` read from ``path`` (split folders ``splits``; default all
    present, in the order train, dev, test). ``path=None`` means the packaged copy, if any."""
    try:
        loader = CORPUS_LOADERS[name]
    except KeyError:
        known = ", ".join(sorted(CORPUS_LOADERS))
        raise InputError(f"unknown corpus {name!r}; known: {known}", field="corpus") from None
    root = path if path is not None else loader.default_path
    if root is None:
        raise InputError(f"corpus {name!r} needs the path of its files", field="corpus path")
    return _relative_sources(loader.load(root, splits), Path(root))


def _relative_sources(dialogues: Iterator[Dialogue], root: Path) -> Iterator[Dialogue]:
    """Each dialogue's source file relative to the corpus root, so a corpus materialised from
    another checkout or folder has the same bytes."""
    for d in dialogues:
        source = Path(d.source)
        if source.is_absolute() and source.is_relative_to(root.resolve()):
            source = source.relative_to(root.resolve())
        elif source.is_relative_to(root):
            source = source.relative_to(root)
        yield dataclasses.replace(d, source=source.as_posix())
