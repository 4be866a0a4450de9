"""The corpora stage: materialise a corpus as deterministic gzipped JSONL."""

from __future__ import annotations

import gzip
import io
import logging
from pathlib import Path

from compressbench.config import Params
from compressbench.corpora.model import dialogue_to_dict
from compressbench.jsonl import atomic_writer, dumps
from compressbench.pipeline.sources import corpus_dialogues
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import stage

log = logging.getLogger(__name__)


@stage(
    "corpora",
    over=("dataset",),
    params=("corpora",),
    code=("corpora", "pipeline/sources.py"),
    deps=(paths.CORPUS_SOURCE,),  # the source's fingerprint (stage corpus_source)
    outs=(paths.CORPUS,),
)
def stage_corpora(params: Params, dataset: str) -> Path:
    """Materialise a corpus as deterministic gzipped JSONL (same source -> same bytes); reruns
    when the source's fingerprint changes."""
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
