"""The transitions stage: statistics of a corpus's turning points (a DVC metrics file)."""

from __future__ import annotations

from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import write_json
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.rows import read_corpus
from compressbench.tpbench.stages.shared import stage
from compressbench.tpbench.transitions import corpus_stats, corpus_transitions, format_table


@stage(
    "transitions",
    over=("dataset",),
    params=(),
    code=("tpbench/transitions.py", "tpbench/stages/rows.py"),
    deps=(paths.CORPUS,),
    metrics=(paths.TRANSITIONS,),  # DVC-cached: `dvc exp show` reads it from the cache
)
def stage_transitions(params: Params, dataset: str) -> Path:
    """Statistics of the corpus's turning points (a DVC metrics file)."""
    rows = corpus_stats(corpus_transitions(read_corpus(dataset)), dataset)
    out = paths.transitions_file(dataset)
    # keyed by set name (DVC reads numbers in nested objects, not in lists)
    by_name = {r.name: {k: v for k, v in r.to_row().items() if k != "name"} for r in rows}
    write_json(out, by_name)
    print(format_table(rows))
    return out
