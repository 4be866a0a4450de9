"""Log the KEEP-Bench metrics to MLflow: a parent run per invocation, one child run per
(compressor, budget scale, judge) cell with the same provenance as a TPBench cell (git state,
software environment, model id and revision, sha256 of inputs and outputs, the per-case
table, the cases file as a dataset input, the cell's real compute window)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.stages import keep_paths
from compressbench.pipeline.run_log import with_observations
from compressbench.tracking import DatasetFile, log_cell, start_pipeline_run

STAGE = "keep_metrics"
TABLE_FILE = "cases.json"


def _flat_metrics(summary: Mapping[str, Any]) -> dict[str, float]:
    """Every number of a cell summary as ``subset.metric`` -> value (None dropped)."""
    out: dict[str, float] = {}
    for key in ("overall_all_rec", "tflops_per_case", "epr", "verdict_errors", "cases"):
        if summary.get(key) is not None:
            out[key] = float(summary[key])
    for subset, values in summary["subsets"].items():
        for key in ("rate", "all_rec", "para_rec", "cond_rec", "cases"):
            if values.get(key) is not None:
                out[f"{subset}.{key}"] = float(values[key])
    return out


def log_keep_cells(params: Any, cells: Sequence[Mapping[str, Any]]) -> None:
    """``cells``: one mapping per cell with ``compressor``, ``budget_scale``, ``judge``,
    ``summary``, ``compressed_stats``, ``verdict_stats`` and ``case_rows``."""
    spec = KEEPBENCH.of(params)
    with start_pipeline_run(
        "keepbench",
        {"keepbench": dataclasses.asdict(spec)},
        tracking_uri=params.tracking.uri,
        experiment=spec.experiment,
        stage=STAGE,
    ) as parent:
        for cell in cells:
            name, scale, judge = cell["compressor"], cell["budget_scale"], cell["judge"]
            # the cell's facts, and its runs' timings where their run logs are there
            cstats = with_observations(
                keep_paths.compressed_stats(name, scale), cell["compressed_stats"]
            )
            vstats = with_observations(
                keep_paths.verdict_stats(judge, name, scale), cell["verdict_stats"]
            )
            compressed = keep_paths.compressed_file(name, scale)
            verdicts = keep_paths.verdicts_file(judge, name, scale)
            record = cell.get("model") or {}
            log_cell(
                parent,
                {
                    "dataset": f"keepbench:{spec.cases}",
                    "method": name,
                    "budget": scale,
                    "judge": judge,
                    "reader": record.get("model_id") or "-",
                },
                params={
                    "method_params": cstats.get("method_params") or {},
                    "judge_info": vstats.get("info") or {},
                    "flops": {k: v for k, v in cstats["flops"].items() if k != "tflops_per_case"},
                    "judge_approximation": (vstats.get("info") or {}).get("approximation"),
                },
                metrics={
                    **_flat_metrics(cell["summary"]),
                    # an observation: logged only where the compression's run log is there
                    **(
                        {"compress_seconds": float(cstats["compress_seconds"])}
                        if "compress_seconds" in cstats
                        else {}
                    ),
                },
                artifacts=[verdicts],  # the compressed texts travel in the cases table
                model_id=record.get("model_id"),
                model_revision=record.get("model_revision"),
                stage=f"{STAGE}@{name}-{scale}-{judge}",
                inputs=[keep_paths.CASES, compressed],
                outputs=[verdicts],
                table=cell["case_rows"],
                table_file=TABLE_FILE,
                datasets=[DatasetFile(Path(keep_paths.CASES))],
                started_at=cstats.get("started_at"),
                ended_at=vstats.get("ended_at"),
            )
