"""The scores stage: score every stored answer with its probe's published scorer."""

from __future__ import annotations

import logging
from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import read_jsonl, write_json, write_jsonl
from compressbench.tpbench.pipeline_spec import SCORING
from compressbench.tpbench.report.aggregate import compact, probe_means
from compressbench.tpbench.scoring.answers import score_answer
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage

log = logging.getLogger(__name__)


@stage(
    "scores",
    over=("dataset", "method", "ratio"),
    params=("scoring",),
    code=(*PROBE_TYPE_CODE, "tpbench/report/aggregate.py"),
    deps=(paths.ANSWERS,),
    outs=(paths.SCORES,),
    metrics=(paths.CELL_METRICS,),  # DVC-cached: `dvc exp show` reads it from the cache
)
def stage_scores(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Score every stored answer of a cell with its probe's published scorer.

    The cell's headline scores (seed means of P1/P2/P3 strict and loose) go to a small DVC
    metrics file, one row per cell in ``dvc metrics show``.
    """
    cell = paths.CellFiles(dataset, method, ratio)
    corrected = SCORING.of(params).abstain == "json_literal"
    rows = [
        {**row, **score_answer(row, corrected_abstain=corrected)}
        for row in read_jsonl(cell.answers)
    ]
    write_jsonl(cell.scores, rows)
    write_json(cell.metrics, compact(probe_means(rows)), sort_keys=True)
    return cell.scores
