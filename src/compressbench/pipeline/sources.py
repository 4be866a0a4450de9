"""Where a corpus's dialogues come from: the built-in package data, a local folder in the
official layout, or the pinned upstream files (downloaded once into ``data/sources`` and
verified against their git blob ids)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from compressbench.config import CorpusSpec
from compressbench.corpora.loaders import load_corpus
from compressbench.corpora.model import Dialogue
from compressbench.corpora.upstream import fetch_upstream


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
