"""The built-in mini corpus: task dialogues written for compressbench, in the SGD layout.

``data/test/dialogues_*.json`` hold the dialogues and ``data/test/schema.json`` their services
and slots. It lets the whole pipeline run offline; it is loaded like SGD (state carry-forward).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from compressbench.corpora.model import Dialogue
from compressbench.corpora.schema_guided import load_schema_guided

DATASET = "builtin"
DATA_DIR = Path(__file__).resolve().parent / "data"


def load_builtin(
    path: str | Path | None = None, splits: Sequence[str] | None = None
) -> Iterator[Dialogue]:
    """Built-in dialogues (``path`` None -> the packaged copy)."""
    root = DATA_DIR if path is None else path
    return load_schema_guided(root, splits, dataset=DATASET, carry_forward=True)
