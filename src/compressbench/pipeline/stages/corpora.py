"""The corpora and transitions stages: materialise a corpus, count its turning points."""

from __future__ import annotations

import gzip
import io
import logging
from pathlib import Path

from compressbench.config import Params
from compressbench.corpora.model import dialogue_to_dict
from compressbench.jsonl import atomic_writer, dumps, write_json
from compressbench.pipeline import paths
from compressbench.pipeline.sources import corpus_dialogues
from compressbench.pipeline.stages.rows import read_corpus
from compressbench.tpbench.transitions import corpus_stats, corpus_transitions, format_table

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.


def stage_corpora(params: Params, dataset: str) -> Path:
    """Materialise a corpus as deterministic gzipped JSONL (same source -> same bytes)."""
    out = paths.corpus_file(dataset)
    n = 0
    with (
        atomic_writer(out, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz,
        io.TextIOWrapper(gz, encoding="utf-8") as fh,
    ):
        for dialogue in corpus_dialogues(params.corpus(dataset)):
            fh.write(dumps(dialogue_to_dict(dialogue)) + "\n")
            n += 1
    log.info("corpora %s: %d dialogues -> %s", dataset, n, out)
    return out


def stage_transitions(params: Params, dataset: str) -> Path:
    """Statistics of the corpus's turning points (a DVC metrics file)."""
    rows = corpus_stats(corpus_transitions(read_corpus(dataset)), dataset)
    out = paths.transitions_file(dataset)
    write_json(out, {"rows": [r.to_row() for r in rows]})
    print(format_table(rows))
    return out
