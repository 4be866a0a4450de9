"""Records shared by several TPBench stages: the corpus reader and the probe fields that travel."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from compressbench.corpora.model import Dialogue, dialogue_from_dict
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.stages import paths

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.

PROBE_FIELDS = (
    "dataset",
    "dialogue_id",
    "seed",
    "slot",
    "slot_human",
    "gold",
    "gold_value",
    "gold_story_label",
    "old_value",
    "new_value",
)


def read_corpus(dataset: str) -> Iterator[Dialogue]:
    path = paths.corpus_file(dataset)
    for line, row in enumerate(read_jsonl(path), start=1):
        yield dialogue_from_dict(row, file=str(path), record=f"line {line}")
