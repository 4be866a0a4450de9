"""Log a pipeline invocation to MLflow: a parent run, one child per (dataset, probe, seed,
ratio, method, reader) cell with parameters, provenance tags, metrics and the scored file."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compressbench.config import Params
from compressbench.pipeline.paths import CellFiles
from compressbench.tracking import log_cell, start_pipeline_run

STAGE = "metrics"


def log_to_mlflow(
    params: Params,
    per_seed: Sequence[tuple[CellFiles, str, int, dict[str, float], dict[str, Any]]],
) -> None:
    run_params = dataclasses.asdict(params)
    run_params.pop("source", None)
    with start_pipeline_run(
        "tpbench",
        run_params,
        tracking_uri=params.tracking.uri,
        experiment=params.tracking.experiment,
        stage=STAGE,
    ) as parent:
        for cell, probe_type, seed, metrics, stats in per_seed:
            wall = float(stats.get("generation_seconds", 0.0))
            log_cell(
                parent,
                {
                    "dataset": cell.dataset,
                    "probe": probe_type,
                    "seed": seed,
                    "ratio": cell.ratio,
                    "method": cell.method,
                    "reader": stats["model_id"],
                },
                params={
                    "reader_backend": stats["backend"],
                    "render": params.render,
                    "n_per_cell": params.n_per_cell,
                    "decoding": stats.get("decoding", {}),
                },
                metrics={
                    **metrics,
                    "cell_wall_seconds": wall,
                    "cell_tokens_per_s": float(stats.get("tokens_per_s", 0.0)),
                    "cell_model_calls": float(stats.get("model_calls", 0)),
                },
                artifacts=[cell.scores],
                model_id=stats["model_id"],
                model_revision=stats["model_revision"],
                stage=f"scores@{cell.dataset}-{cell.method}-{cell.ratio}",
                inputs=[cell.contexts, cell.answers],
                outputs=[cell.scores],
            )


def log_retention(
    params: Params, dataset: str, rows: Sequence[dict[str, Any]], output: Path
) -> None:
    """One parent run per retention stage; one child per (dataset, method, ratio)."""
    with start_pipeline_run(
        f"retention {dataset}",
        {"retention": dataclasses.asdict(params.retention), "methods": list(params.methods)},
        tracking_uri=params.tracking.uri,
        experiment=params.tracking.experiment,
        stage=f"retention@{dataset}",
    ) as parent:
        for row in rows:
            metrics = {
                k: row[k]
                for k in ("n", "p2_retention", "n_p3", "p3_goal_retention", "p3_joint_retention")
                if row[k] is not None
            }
            for group, g in row["by_slot_type"].items():
                if g["p2_retention"] is not None:
                    metrics[f"p2_retention.{group.replace('/', '_')}"] = g["p2_retention"]
            log_cell(
                parent,
                {
                    "dataset": dataset,
                    "probe": "retention",
                    "seed": "-",
                    "ratio": row["ratio"],
                    "method": row["method"],
                    "reader": "-",
                },
                metrics={**metrics, "seconds": row["seconds"]},
                stage=f"retention@{dataset}",
                outputs=[output],
            )
