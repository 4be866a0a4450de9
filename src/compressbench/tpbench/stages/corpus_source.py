"""The corpus_source stage: fingerprint a corpus's source, cheaply."""

from __future__ import annotations

import json
from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import atomic_writer
from compressbench.pipeline.sources import source_fingerprint
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import stage


@stage(
    "corpus_source",
    over=("dataset",),
    params=("corpora",),
    code=("pipeline/sources.py", "corpora"),
    outs=(paths.CORPUS_SOURCE,),
    # Not always_changed: the built-in and pinned upstream data are covered by the code and the
    # params; a local folder outside the repository is one DVC cannot be pointed at per dataset
    # (`${corpora.${item}.path}` does not interpolate), so after editing one, rerun this stage
    # alone (`dvc repro -f -s corpus_source@<name>`): the corpora stage after it reruns only if
    # the fingerprint changed.
)
def stage_corpus_source(params: Params, dataset: str) -> Path:
    """Fingerprint a corpus's source (a local folder's file names, sizes and modification
    times): the corpora stage after it reruns only when the fingerprint changed."""
    out = paths.fill(paths.CORPUS_SOURCE, dataset)
    text = json.dumps(source_fingerprint(params.corpus(dataset)), indent=1, sort_keys=True)
    with atomic_writer(out) as fh:
        fh.write(text + "\n")
    return out
