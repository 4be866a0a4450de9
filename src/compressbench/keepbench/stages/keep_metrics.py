"""The KEEP-Bench metrics stage: All-Rec / Para-Rec / Cond-Rec, Rate, TFLOPs and EPR per cell."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from compressbench.jsonl import read_jsonl, write_json
from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.report.metrics import cell_summary, score_rows
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.stages.keep_common import read_cases, read_json
from compressbench.keepbench.stages.keep_track import log_keep_cells
from compressbench.pipeline.declare import stage

log = logging.getLogger(__name__)


def _model(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The model id / revision a cell's compressions record (generative methods)."""
    for row in rows:
        record = row.get("record") or {}
        if record.get("model_id"):
            return {"model_id": record["model_id"], "model_revision": record.get("model_revision")}
    return {}


def compact(cell: dict[str, Any]) -> dict[str, Any]:
    """What ``dvc metrics show`` prints of a cell: headline numbers only."""
    s = cell["summary"]
    out = {k: s[k] for k in ("overall_all_rec", "tflops_per_case", "epr")}
    for subset, v in s["subsets"].items():
        out[subset] = {
            k: v[k] for k in ("rate", "all_rec", "para_rec", "cond_rec") if v[k] is not None
        }
    return out


@stage(
    "keep_metrics",
    params=("keepbench", "tracking"),
    code=(
        "keepbench/cases.py",
        "keepbench/subsets.py",
        "keepbench/metrics.py",
        "keepbench/report/metrics.py",
        "flops",
        "tracking",
        "keepbench/stages/keep_paths.py",
        "keepbench/stages/keep_track.py",
        "keepbench/stages/keep_common.py",
    ),
    deps=(keep_paths.CASES, keep_paths.COMPRESSED, keep_paths.VERDICTS),
    outs=(keep_paths.FULL_METRICS,),
    metrics=(keep_paths.METRICS,),  # DVC-cached: `dvc exp show` reads it from the cache
)
def stage_keep_metrics(params: Any) -> Path:
    """Score every (compressor, budget scale) cell from its verdicts; write the compact
    metrics and every number, and log one MLflow run per (compressor, budget, judge)."""
    spec = KEEPBENCH.of(params)
    cases = {c.case_id: c for c in read_cases()}
    cells = []
    for name, scale in spec.cells():
        compressed = list(read_jsonl(keep_paths.compressed_file(name, scale)))
        verdicts = list(read_jsonl(keep_paths.verdicts_file(spec.judge, name, scale)))
        scores, rows = score_rows(cases, compressed, verdicts)
        texts = {r["case_id"]: r["compressed"] for r in compressed}
        vstats = read_json(keep_paths.verdict_stats(spec.judge, name, scale))
        cells.append(
            {
                "compressor": name,
                "budget_scale": scale,
                "judge": spec.judge,
                "judge_approximation": bool((vstats.get("info") or {}).get("approximation")),
                "model": _model(compressed),
                "summary": cell_summary(scores, rows),
                "compressed_stats": read_json(keep_paths.compressed_stats(name, scale)),
                "verdict_stats": vstats,
                "case_rows": [{**r, "compressed": texts[r["case_id"]]} for r in rows],
            }
        )
    full = [{k: v for k, v in c.items() if k != "case_rows"} for c in cells]
    write_json(keep_paths.FULL_METRICS, {"cases_source": spec.cases, "cells": full}, default=str)
    metrics = {
        f"{c['compressor']}@{keep_paths.budget_name(c['budget_scale'])}": compact(c) for c in cells
    }
    write_json(keep_paths.METRICS, {"judge": spec.judge, "cells": metrics})
    log_keep_cells(params, cells)
    return Path(keep_paths.METRICS)
