"""The metrics stage: aggregate every cell, write metrics, summary, manifest; log MLflow.

``metrics/tpbench.json`` holds the headline scores only (dataset -> method -> ratio -> probe ->
strict / loose); every metric of every cell goes to ``reports/tpbench_full.json`` and to the
cell's MLflow run. DVC shows the per-cell files of the scores stage (``metrics/cells/...``),
one row per cell, rather than one row of every cell's columns.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from compressbench.config import Params
from compressbench.jsonl import atomic_writer, read_jsonl, write_json
from compressbench.pipeline.run_log import with_observations
from compressbench.tpbench.report.aggregate import by_probe_seed, cell_metrics, compact, seed_means
from compressbench.tpbench.report.summary import SummaryGrid, summary_markdown
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, TPBENCH_PARAMS, stage
from compressbench.tpbench.stages.track import CellGroup, log_to_mlflow
from compressbench.tracking import write_manifest
from compressbench.tracking.comparable import check_one_table, origin_from_stats

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.


def _cells(params: Params) -> list[paths.CellFiles]:
    return [
        paths.CellFiles(d, m, r)
        for d in params.datasets
        for m in params.methods
        for r in params.ratios
    ]


def summary_grid(params: Params) -> SummaryGrid:
    """The summary's grid (in params order) and its line about the reader and the run."""
    reader = params.reader
    return SummaryGrid(
        datasets=params.datasets,
        methods=params.methods,
        ratios=[paths.ratio_name(r) for r in params.ratios],
        about=f"Reader: `{reader.backend}` `{reader.model}`; seeds {list(params.seeds)};"
        f" render `{params.render}`.",
    )


@stage(
    "metrics",
    params=TPBENCH_PARAMS,  # the MLflow parent run records TPBench's whole configuration
    code=(
        *PROBE_TYPE_CODE,  # the summary's columns are the registered probe types
        "analysis",
        "tpbench/report",
        "tracking",
        "tpbench/stages/track.py",
        "tpbench/stages/answer_table.py",
        "tpbench/prompts.py",  # the answer table's question column (prompts.split_user)
    ),
    # every file the manifest hashes, and the answers' .stats.json (reader, KV records); the
    # cells' run logs (timings, logged to MLflow) are observations, not inputs (pipeline/run_log)
    deps=tuple(str(paths.DATA / d) for d in ("corpora", "probes", "contexts", "answers", "scores")),
    outs=tuple(
        str(p)
        for p in (
            paths.METRICS_FILE,
            paths.FULL_METRICS_FILE,
            paths.SUMMARY_FILE,
            paths.MANIFEST_FILE,
        )
    ),
)
def stage_metrics(params: Params) -> Path:
    """Aggregate every cell of the current grid; write metrics, summary, manifest; log MLflow."""
    headline: dict[str, Any] = {}
    groups: list[CellGroup] = []
    origins = []
    for cell in _cells(params):
        rows = list(read_jsonl(cell.scores))
        stats = json.loads(cell.answer_stats.read_text(encoding="utf-8"))
        origins.append(origin_from_stats(str(cell.answer_stats), stats))
        # what MLflow gets: the facts and, where its run log is there, the run's timings
        stats = with_observations(cell.answer_stats, stats)
        per_probe: dict[str, dict[int, dict[str, float]]] = {}
        for (probe_type, seed), group in by_probe_seed(rows).items():
            metrics = cell_metrics(group)
            per_probe.setdefault(probe_type, {})[seed] = metrics
            groups.append(CellGroup(cell, probe_type, seed, metrics, stats, list(group)))
        headline.setdefault(cell.dataset, {}).setdefault(cell.method, {})[
            paths.ratio_name(cell.ratio)
        ] = {probe: seed_means(seeds) for probe, seeds in per_probe.items()}
    check_one_table(origins, str(paths.METRICS_FILE))  # one revision, one image
    write_json(paths.FULL_METRICS_FILE, headline, sort_keys=True)
    short = {
        d: {m: {r: compact(probes) for r, probes in ratios.items()} for m, ratios in ms.items()}
        for d, ms in headline.items()
    }
    write_json(paths.METRICS_FILE, short, sort_keys=True)
    with atomic_writer(paths.SUMMARY_FILE) as fh:
        fh.write(summary_markdown(summary_grid(params), headline))
    outputs = [p for c in _cells(params) for p in (c.contexts, c.answers, c.scores)]
    outputs += [paths.corpus_file(d) for d in params.datasets]
    outputs += [paths.probes_file(d, r) for d in params.datasets for r in params.ratios]
    write_manifest(
        paths.MANIFEST_FILE,
        [*outputs, paths.METRICS_FILE, paths.FULL_METRICS_FILE],
        stage="metrics",
        root=".",
    )
    log_to_mlflow(params, groups)
    print(paths.SUMMARY_FILE.read_text(encoding="utf-8"))
    return paths.METRICS_FILE
