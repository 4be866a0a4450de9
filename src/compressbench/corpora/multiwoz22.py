"""MultiWOZ 2.2 in its official layout: ``<root>/{train,dev,test}/dialogues_*.json``.

Every USER turn lists all service frames, so the state is the union of the frames present.
Slot names already carry the domain (``restaurant-food``); keys are ``restaurant:restaurant-food``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from compressbench.corpora.model import Dialogue
from compressbench.corpora.schema_guided import load_schema_guided

DATASET = "multiwoz"


def load_multiwoz22(path: str | Path, splits: Sequence[str] | None = None) -> Iterator[Dialogue]:
    """MultiWOZ 2.2 dialogues (dataset string ``multiwoz``)."""
    return load_schema_guided(path, splits, dataset=DATASET, carry_forward=False)
