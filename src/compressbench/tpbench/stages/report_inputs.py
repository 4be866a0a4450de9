"""What the report stage reads: the grid's cells, the optional diagnostics (retention,
deletions, judge verdicts), how each method is drawn, and the MLflow runs behind each cell."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compressbench.compress.method import FULL_CONTEXT
from compressbench.compress.registry import method_entry
from compressbench.compress.selectors import get_selector
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.judge.verdict_file import read_verdicts
from compressbench.tpbench.report.model import CellData, CellKey, RunRef
from compressbench.tpbench.stages import paths
from compressbench.tracking import (
    TrackingError,
    read_cells,
    read_pipeline_runs,
    resolve_tracking_uri,
    sha256_file,
)
from compressbench.tracking.comparable import check_one_table, origin_from_run

# How the paper names the methods in its tables and figures.
LABELS: dict[str, str] = {
    FULL_CONTEXT: "full context",
    "recency": "recency",
    "random_seed42": "random selection",
    "first_n": "earliest turns",
    "uniform_stride": "uniform stride",
    "attention_h2o": "attention/H2O proxy",
    "embedding_mmr": "embedding MMR",
    "llmlingua2": "LLMLingua-2",
    "first_user_recent": "first user + recent",
    "snapkv": "SnapKV",
    "pyramidkv": "PyramidKV",
    "streamingllm": "StreamingLLM",
    "chunkkv": "ChunkKV",
}
KV_FAMILIES = ("kv_press", "kvpress_class")


def method_style(name: str) -> str:
    """``full``, ``positional`` (a turn selector budgeted by rounding: position alone),
    ``content`` (one that reads the dialogue), ``kv`` (a KV-cache press) or ``other``."""
    if name == FULL_CONTEXT:
        return "full"
    entry = method_entry(name)
    if entry is None:
        return "other"
    if entry.family in KV_FAMILIES:
        return "kv"
    if entry.family == "turn_selector":
        return "positional" if get_selector(name).budget_rule == "round" else "content"
    return "other"


def load_cells(
    datasets: Sequence[str], methods: Sequence[str], ratios: Sequence[float]
) -> dict[CellKey, CellData]:
    """Every cell's scored rows, context rows and answers stats."""
    cells = {}
    for dataset in datasets:
        for method in methods:
            for ratio in ratios:
                files = paths.CellFiles(dataset, method, ratio)
                cells[(dataset, method, ratio)] = CellData(
                    dataset=dataset,
                    method=method,
                    ratio=ratio,
                    scores=list(read_jsonl(files.scores)),
                    contexts=list(read_jsonl(files.contexts)),
                    stats=json.loads(files.answer_stats.read_text(encoding="utf-8")),
                )
    return cells


def optional_json(path: Path) -> dict[str, Any] | None:
    """A JSON file's content, or None when the stage that writes it has not run."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def deletion_rows(dataset: str) -> list[dict[str, Any]]:
    """The scored rows of the deletion experiment (empty when it has not run)."""
    path = paths.fill(paths.DELETION_SCORES, dataset)
    return list(read_jsonl(path)) if path.exists() else []


def load_verdicts(
    datasets: Sequence[str], methods: Sequence[str], ratios: Sequence[float]
) -> dict[CellKey, list[dict[str, Any]]]:
    """The judge stage's P1 verdict rows of every cell of the grid; a cell not judged (judging
    disabled: its file says so) or whose file is absent is left out."""
    found: dict[CellKey, list[dict[str, Any]]] = {}
    for key in itertools.product(datasets, methods, ratios):
        rows = read_verdicts(paths.fill(paths.VERDICTS, *key))
        if rows:
            found[key] = rows
    return found


FINISHED = "FINISHED"
"""The only run state the report reads: a RUNNING run may still change (or its process died,
:mod:`compressbench.tracking.orphans`), a KILLED or FAILED one is partial."""


def _newest(runs: list[Any], stage: str) -> Any | None:
    done = [r for r in runs if r.tags.get("dvc.stage") == stage and r.status == FINISHED]
    return done[-1] if done else None  # runs come oldest first


def cell_runs(
    tracking_uri: str | None,
    experiment: str,
    cells: dict[CellKey, CellData],
    datasets: Sequence[str],
) -> tuple[dict[tuple[str, str, int, float, str], RunRef], list[str], str | None]:
    """The FINISHED child runs of the newest FINISHED metrics run, by (dataset, probe, seed, ratio,
    method), each checked against the sha256 of the scored file it recorded; notes naming the
    runs (metrics, retention, deletions) for the report; the metrics run id."""
    uri = resolve_tracking_uri(tracking_uri)
    try:
        parents = read_pipeline_runs(uri, experiment, status=FINISHED)
    except TrackingError as exc:
        return {}, [f"No MLflow runs found: {exc}"], None
    metrics = _newest(parents, "metrics")
    if metrics is None:
        return {}, [f"No finished metrics run in experiment `{experiment}` ({uri})."], None
    notes = [f"metrics stage: MLflow run `{metrics.run_id}` (experiment `{experiment}`, {uri})"]
    for dataset in datasets:
        for what, stage in (("retention", "retention"), ("deletions", "deletion_scores")):
            found = _newest(parents, f"{stage}@{dataset}")
            if found is not None:
                notes.append(f"{what} {dataset}: MLflow run `{found.run_id}`")
    digests = {key: sha256_file(paths.CellFiles(*key).scores) for key in cells}
    runs = {}
    children = read_cells(uri, experiment, parent_run_id=metrics.run_id, status=FINISHED)
    check_one_table(map(origin_from_run, children), f"MLflow run {metrics.run_id} ({uri})")
    for run in children:
        p = run.params
        try:
            key = (p["dataset"], p["probe"], int(p["seed"]), float(p["ratio"]), p["method"])
        except (KeyError, ValueError):
            continue  # not a TPBench cell run
        recorded = {v for k, v in run.tags.items() if k.startswith("sha256.output.")}
        digest = digests.get((key[0], key[4], key[3]))
        verified = None if not recorded or digest is None else digest in recorded
        runs[key] = RunRef(run.run_id, verified)
    return runs, notes, metrics.run_id
