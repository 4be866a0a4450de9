"""The corpus_source stage: fingerprint a corpus's source, every run, cheaply."""

from __future__ import annotations

import json
from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import atomic_writer
from compressbench.pipeline import paths
from compressbench.pipeline.declare import Out, stage
from compressbench.pipeline.sources import source_fingerprint


@stage(
    "corpus_source",
    over=("dataset",),
    params=("corpora",),
    code=("pipeline/sources.py", "corpora"),
    outs=(Out(paths.CORPUS_SOURCE, cache=False),),
    # A local folder lies outside the repository, where DVC cannot follow it: this stage runs
    # every time and writes the same bytes unless the folder changed, so the corpora stage
    # (which depends on its output) reruns exactly when the source did.
    always_changed=True,
)
def stage_corpus_source(params: Params, dataset: str) -> Path:
    """Fingerprint a corpus's source every run (a local folder's file names, sizes and
    modification times), so the corpora stage reruns exactly when its source changed."""
    out = paths.fill(paths.CORPUS_SOURCE, dataset)
    text = json.dumps(source_fingerprint(params.corpus(dataset)), indent=1, sort_keys=True)
    with atomic_writer(out) as fh:
        fh.write(text + "\n")
    return out
