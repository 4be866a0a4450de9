"""Log a pipeline invocation to MLflow: a parent run, one child per (dataset, probe, seed,
ratio, method, reader) cell with parameters, provenance tags, metrics, the scored file, the
per-probe answers table, the probe set as a dataset input and the cell's real compute times."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.config import Params
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.pipeline_spec import RETENTION
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.answer_table import answer_table
from compressbench.tpbench.stages.paths import CellFiles
from compressbench.tracking import DatasetFile, log_cell, split_numeric, start_pipeline_run
from compressbench.tracking.values import as_text

STAGE = "metrics"
TABLE_FILE = "answers.json"


@dataclass(frozen=True)
class CellGroup:
    """One cell run's worth of results: a (probe type, seed) group of one cell's files."""

    files: CellFiles
    probe_type: str
    seed: int
    metrics: dict[str, float]
    stats: dict[str, Any]
    rows: Sequence[Mapping[str, Any]]  # the group's scored answers


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _stats_fields(stats: Mapping[str, Any]) -> tuple[dict[str, float], dict[str, str]]:
    """Throughput metrics, the flattened ``kv`` summary (numbers as metrics, the rest as
    params), the reader's own record (params: package version, model file sha256, wheels,
    threads, seed) and counters (metrics) of a cell's ``.stats.json`` and run log. Timings,
    model calls and counters are the run's observations (its run log,
    :mod:`compressbench.pipeline.run_log`): absent without the log, never logged as zeros."""
    metrics = {
        name: float(stats[key])
        for name, key in (
            ("cell_wall_seconds", "generation_seconds"),
            ("cell_tokens_per_s", "tokens_per_s"),
            ("cell_model_calls", "model_calls"),
        )
        if stats.get(key) is not None
    }
    kv_metrics, kv_params = split_numeric(stats.get("kv") or {}, prefix="kv.")
    counters, _ = split_numeric(stats.get("reader_stats") or {}, prefix="reader_stats.")
    record = {f"reader.{k}": as_text(v) for k, v in (stats.get("reader") or {}).items()}
    return {**metrics, **kv_metrics, **counters}, {**kv_params, **record}


def _log_group(parent: Any, params: Params, group: CellGroup, contexts: list[dict]) -> None:
    cell, stats = group.files, group.stats
    extra_metrics, kv_params = _stats_fields(stats)
    probes = paths.probes_file(cell.dataset, cell.ratio)
    log_cell(
        parent,
        {
            "dataset": cell.dataset,
            "probe": group.probe_type,
            "seed": group.seed,
            "ratio": cell.ratio,
            "method": cell.method,
            "reader": stats["model_id"],
        },
        params={
            "reader_backend": stats["backend"],
            "render": params.render,
            "n_per_cell": params.n_per_cell,
            "decoding": stats.get("decoding", {}),
            **kv_params,
        },
        metrics={**group.metrics, **extra_metrics},
        artifacts=[cell.scores],
        model_id=stats["model_id"],
        model_revision=stats["model_revision"],
        tags=stats.get("image") or {},  # the image that answered (else this process's)
        stage=f"scores@{cell.dataset}-{cell.method}-{cell.ratio}",
        inputs=[probes, cell.contexts, cell.answers],
        outputs=[cell.scores],
        table=answer_table(contexts, group.rows, contexts_file=cell.contexts),
        table_file=TABLE_FILE,
        datasets=[DatasetFile(probes)],
        started_at=_optional_float(stats.get("compute_started_at")),
        ended_at=_optional_float(stats.get("compute_ended_at")),
    )


def log_to_mlflow(params: Params, groups: Sequence[CellGroup]) -> None:
    """One parent run for the whole grid, one child run per group (contexts read once)."""
    run_params = params.as_dict()
    contexts: dict[Path, list[dict]] = {}
    with start_pipeline_run(
        "tpbench",
        run_params,
        tracking_uri=params.tracking.uri,
        experiment=params.tracking.experiment,
        stage=STAGE,
    ) as parent:
        for group in groups:
            file = group.files.contexts
            if file not in contexts:
                contexts[file] = list(read_jsonl(file))
            _log_group(parent, params, group, contexts[file])


def log_retention(
    params: Params, dataset: str, rows: Sequence[dict[str, Any]], output: Path
) -> None:
    """One parent run per retention stage; one child per (dataset, method, ratio)."""
    with start_pipeline_run(
        f"retention {dataset}",
        {"retention": dataclasses.asdict(RETENTION.of(params)), "methods": list(params.methods)},
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
