"""The transitions stage: statistics of a corpus's turning points (a DVC metrics file)."""

from __future__ import annotations

from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import write_json
from compressbench.pipeline import paths
from compressbench.pipeline.declare import Out, stage
from compressbench.pipeline.stages.rows import read_corpus
from compressbench.tpbench.transitions import corpus_stats, corpus_transitions, format_table


@stage(
    "transitions",
    over=("dataset",),
    params=(),
    code=("tpbench/transitions.py", "pipeline/stages/rows.py"),
    deps=(paths.CORPUS,),
    metrics=(Out(paths.TRANSITIONS, cache=False),),
)
def stage_transitions(params: Params, dataset: str) -> Path:
    """Statistics of the corpus's turning points (a DVC metrics file)."""
    rows = corpus_stats(corpus_transitions(read_corpus(dataset)), dataset)
    out = paths.transitions_file(dataset)
    write_json(out, {"rows": [r.to_row() for r in rows]})
    print(format_table(rows))
    return out
