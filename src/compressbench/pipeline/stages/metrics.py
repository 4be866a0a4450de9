"""The metrics stage: aggregate every cell, write metrics, summary, manifest; log MLflow."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from compressbench.analysis.aggregate import by_probe_seed, cell_metrics, seed_means
from compressbench.analysis.report import summary_markdown
from compressbench.config import Params
from compressbench.jsonl import atomic_writer, read_jsonl, write_json
from compressbench.pipeline import paths
from compressbench.pipeline.track import log_to_mlflow
from compressbench.tracking import write_manifest

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.


def _cells(params: Params) -> list[paths.CellFiles]:
    return [
        paths.CellFiles(d, m, r)
        for d in params.datasets
        for m in params.methods
        for r in params.ratios
    ]


def stage_metrics(params: Params) -> Path:
    """Aggregate every cell of the current grid; write metrics, summary, manifest; log MLflow."""
    headline: dict[str, Any] = {}
    per_seed_rows: list[tuple[paths.CellFiles, str, int, dict[str, float], dict[str, Any]]] = []
    for cell in _cells(params):
        rows = list(read_jsonl(cell.scores))
        stats = json.loads(cell.answer_stats.read_text(encoding="utf-8"))
        per_probe: dict[str, dict[int, dict[str, float]]] = {}
        for (probe_type, seed), group in by_probe_seed(rows).items():
            metrics = cell_metrics(group)
            per_probe.setdefault(probe_type, {})[seed] = metrics
            per_seed_rows.append((cell, probe_type, seed, metrics, stats))
        headline.setdefault(cell.dataset, {}).setdefault(cell.method, {})[
            paths.ratio_name(cell.ratio)
        ] = {probe: seed_means(seeds) for probe, seeds in per_probe.items()}
    write_json(paths.METRICS_FILE, headline, sort_keys=True)
    with atomic_writer(paths.SUMMARY_FILE) as fh:
        fh.write(summary_markdown(params, headline))
    outputs = [p for c in _cells(params) for p in (c.contexts, c.answers, c.scores)]
    outputs += [paths.corpus_file(d) for d in params.datasets]
    outputs += [paths.probes_file(d, r) for d in params.datasets for r in params.ratios]
    write_manifest(paths.MANIFEST_FILE, [*outputs, paths.METRICS_FILE], stage="metrics", root=".")
    log_to_mlflow(params, per_seed_rows)
    print(paths.SUMMARY_FILE.read_text(encoding="utf-8"))
    return paths.METRICS_FILE
