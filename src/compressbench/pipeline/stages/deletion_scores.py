"""The deletion_scores stage: score the deletion answers and write the deletion summary."""

from __future__ import annotations

import logging
from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import read_jsonl, write_json, write_jsonl
from compressbench.pipeline import paths
from compressbench.pipeline.declare import Out, stage
from compressbench.tpbench.deletion_summary import summarize
from compressbench.tpbench.scoring.answers import score_answer

log = logging.getLogger(__name__)


@stage(
    "deletion_scores",
    over=("dataset",),
    params=("scoring", "deletions", "seeds"),
    code=(
        "tpbench/scoring",
        "tpbench/deletion_summary.py",
        "tpbench/deletions.py",
        "analysis/stats.py",
    ),
    deps=(paths.DELETION_ANSWERS,),
    outs=(paths.DELETION_SCORES,),
    metrics=(Out(paths.DELETION_SUMMARY, cache=False),),
)
def stage_deletion_scores(params: Params, dataset: str) -> Path:
    """Score every deletion answer with the P2 scorer; summarise conditions and paired tests.

    The summary (``metrics/deletions/<dataset>.json``) has per-condition strict/loose accuracy
    with Wilson intervals and, per paired comparison, the flips and exact McNemar tests.
    """
    corrected = params.scoring.abstain == "json_literal"
    answers = paths.fill(paths.DELETION_ANSWERS, dataset)
    rows = [
        {**row, **score_answer(row, corrected_abstain=corrected)} for row in read_jsonl(answers)
    ]
    write_jsonl(paths.fill(paths.DELETION_SCORES, dataset), rows)
    seed = params.deletions.sample_seed(params.seeds)
    summary = summarize(rows, dataset=dataset, seed=seed)
    out = paths.fill(paths.DELETION_SUMMARY, dataset)
    write_json(out, summary)
    log.info("deletions %s: %s", dataset, summary["pairs"])
    return out
