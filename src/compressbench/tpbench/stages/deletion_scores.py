"""The deletion_scores stage: score the deletion answers, write the deletion summary and log
it to MLflow like a cell: a run per dataset with one child per condition (provenance tags,
metrics, the scored file)."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.compress.method import FULL_CONTEXT
from compressbench.config import Params
from compressbench.jsonl import read_jsonl, write_json, write_jsonl
from compressbench.pipeline.run_log import with_observations
from compressbench.tpbench.deletion_summary import summarize
from compressbench.tpbench.pipeline_spec import DELETIONS, SCORING
from compressbench.tpbench.scoring.answers import score_answer
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage
from compressbench.tracking import log_cell, start_pipeline_run

log = logging.getLogger(__name__)


@stage(
    "deletion_scores",
    over=("dataset",),
    params=("scoring", "deletions", "seeds", "tracking"),
    code=(
        *PROBE_TYPE_CODE,
        "tpbench/deletion_summary.py",
        "tpbench/deletions.py",
        "analysis/stats.py",
        "tracking",
    ),
    deps=(paths.DELETION_CONTEXTS, paths.DELETION_ANSWERS, paths.DELETION_ANSWER_STATS),
    outs=(paths.DELETION_SCORES,),
    metrics=(paths.DELETION_SUMMARY,),  # DVC-cached: `dvc exp show` reads it from the cache
)
def stage_deletion_scores(params: Params, dataset: str) -> Path:
    """Score every deletion answer with the P2 scorer; summarise conditions and paired tests.

    The summary (``metrics/deletions/<dataset>.json``) has per-condition strict/loose accuracy
    with Wilson intervals and, per paired comparison, the flips and exact McNemar tests.
    Logged to MLflow (stage ``deletion_scores@<dataset>``) unless there is nothing to log.
    """
    corrected = SCORING.of(params).abstain == "json_literal"
    answers = paths.fill(paths.DELETION_ANSWERS, dataset)
    rows = [
        {**row, **score_answer(row, corrected_abstain=corrected)} for row in read_jsonl(answers)
    ]
    write_jsonl(paths.fill(paths.DELETION_SCORES, dataset), rows)
    seed = DELETIONS.of(params).sample_seed(params.seeds)
    summary = summarize(rows, dataset=dataset, seed=seed)
    out = paths.fill(paths.DELETION_SUMMARY, dataset)
    write_json(out, summary)
    if rows:
        log_deletions(params, dataset, rows, summary)
    log.info("deletions %s: %s", dataset, summary["pairs"])
    return out


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def condition_metrics(entry: Mapping[str, Any]) -> dict[str, float]:
    """A condition's numbers of the summary as MLflow metrics (null ones left out)."""
    out: dict[str, float] = {"n": entry["n"]}
    for metric in ("strict", "loose"):
        if entry[metric] is not None:
            low, high = entry[f"{metric}_ci"]
            out |= {metric: entry[metric], f"{metric}_ci_low": low, f"{metric}_ci_high": high}
    if entry["format_error_rate"] is not None:
        out["format_error_rate"] = entry["format_error_rate"]
    return out


def pair_metrics(pairs: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Every paired comparison's counts and McNemar p-values, ``<pair>.<field>``."""
    return {
        f"{p['pair']}.{k}": v
        for p in pairs
        for k, v in p.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def log_deletions(
    params: Params, dataset: str, rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]
) -> None:
    """A parent run (the pairs' tests, the summary and scored file as artifacts) and one child
    per condition with the cells' provenance: reader id and revision, ``env.*``, ``git.*``, the
    DVC stage, sha256 of the contexts and answers read and of the scored file written."""
    files = {
        name: paths.fill(template, dataset)
        for name, template in (
            ("contexts", paths.DELETION_CONTEXTS),
            ("answers", paths.DELETION_ANSWERS),
            ("stats", paths.DELETION_ANSWER_STATS),
            ("scores", paths.DELETION_SCORES),
            ("summary", paths.DELETION_SUMMARY),
        )
    }
    # the answers' facts, and the answering run's timings where its run log is there
    stats = with_observations(files["stats"], json.loads(files["stats"].read_text("utf-8")))
    stage_name = f"deletion_scores@{dataset}"
    with start_pipeline_run(
        f"deletions {dataset}",
        {
            "dataset": dataset,
            "seed": summary["seed"],
            "deletions": dataclasses.asdict(DELETIONS.of(params)),
            "scoring": dataclasses.asdict(SCORING.of(params)),
        },
        tracking_uri=params.tracking.uri,
        experiment=params.tracking.experiment,
        stage=stage_name,
    ) as parent:
        parent.log_metrics({"n_probes": summary["n_probes"], **pair_metrics(summary["pairs"])})
        parent.log_artifacts([files["summary"], files["scores"]])
        for entry in summary["conditions"]:
            if not entry["n"]:
                continue
            log_cell(
                parent,
                {
                    "dataset": dataset,
                    "probe": "P2",
                    "seed": summary["seed"],
                    "ratio": float(rows[0]["ratio"]),
                    "method": FULL_CONTEXT,
                    "reader": stats["model_id"],
                    "condition": entry["condition"],
                },
                params={"reader_backend": stats["backend"], "decoding": stats.get("decoding", {})},
                metrics=condition_metrics(entry),
                model_id=stats["model_id"],
                model_revision=stats["model_revision"],
                stage=stage_name,
                inputs=[files["contexts"], files["answers"]],
                outputs=[files["scores"]],
                started_at=_optional_float(stats.get("compute_started_at")),
                ended_at=_optional_float(stats.get("compute_ended_at")),
            )
