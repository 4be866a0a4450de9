"""Schema-Guided Dialogue (SGD, DSTC8) in its official layout: ``<root>/{train,dev,test}/``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from compressbench.corpora.model import Dialogue
from compressbench.corpora.schema_guided import load_schema_guided

DATASET = "sgd"


def load_sgd(path: str | Path, splits: Sequence[str] | None = None) -> Iterator[Dialogue]:
    """SGD dialogues; a service's last state carries forward while its frame is absent."""
    return load_schema_guided(path, splits, dataset=DATASET, carry_forward=True)
