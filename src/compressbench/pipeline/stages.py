"""One function per DVC stage. Each reads the previous stage's files, writes its own atomically.

corpora -> transitions -> probes -> contexts -> answers -> scores -> metrics (see ``dvc.yaml``).
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from compressbench.compress.costs import context_cost, kv_context_cost
from compressbench.compress.kv import KVPressHook, get_press
from compressbench.compress.methods import (
    TURN_BUDGET_UNIT,
    is_kv_method,
    kv_method,
    method_selector,
)
from compressbench.compress.selectors import get_selector
from compressbench.config import Params
from compressbench.corpora.model import Dialogue, dialogue_from_dict, dialogue_to_dict
from compressbench.jsonl import atomic_writer, dumps, read_jsonl, write_json, write_jsonl
from compressbench.pipeline import paths
from compressbench.pipeline.aggregate import by_probe_seed, cell_metrics, seed_means
from compressbench.pipeline.reader_factory import build_reader, reader_tokenizer
from compressbench.pipeline.report import summary_markdown
from compressbench.pipeline.sources import corpus_dialogues
from compressbench.pipeline.track import log_retention, log_to_mlflow
from compressbench.readers.base import ChatRequest
from compressbench.readers.cache import AnswerCache, generate_cached
from compressbench.scoring.answers import score_answer
from compressbench.tpbench.contexts import probe_context
from compressbench.tpbench.probes import build_probes, candidate_pool, cells, read_probes
from compressbench.tpbench.retention import KeptTextFn, retention_rows
from compressbench.tpbench.retention_kv import kv_kept_text_fns
from compressbench.tpbench.retention_log import RetentionLog
from compressbench.tpbench.transitions import corpus_stats, corpus_transitions, format_table
from compressbench.tracking import write_manifest

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.
PROBE_FIELDS = (
    "dataset",
    "dialogue_id",
    "seed",
    "slot",
    "slot_human",
    "gold",
    "gold_value",
    "gold_story_label",
    "old_value",
    "new_value",
)


def read_corpus(dataset: str) -> Iterator[Dialogue]:
    for row in read_jsonl(paths.corpus_file(dataset)):
        yield dialogue_from_dict(row)


def stage_corpora(params: Params, dataset: str) -> Path:
    """Materialise a corpus as deterministic gzipped JSONL (same source -> same bytes)."""
    out = paths.corpus_file(dataset)
    n = 0
    with (
        atomic_writer(out, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz,
        io.TextIOWrapper(gz, encoding="utf-8") as fh,
    ):
        for dialogue in corpus_dialogues(params.corpus(dataset)):
            fh.write(dumps(dialogue_to_dict(dialogue)) + "\n")
            n += 1
    log.info("corpora %s: %d dialogues -> %s", dataset, n, out)
    return out


def stage_transitions(params: Params, dataset: str) -> Path:
    """Statistics of the corpus's turning points (a DVC metrics file)."""
    rows = corpus_stats(corpus_transitions(read_corpus(dataset)), dataset)
    out = paths.transitions_file(dataset)
    write_json(out, {"rows": [r.to_row() for r in rows]})
    print(format_table(rows))
    return out


def probe_types_at(params: Params, ratio: float) -> list[str]:
    """P1/P2 run at every ratio, P3 only at ``p3_ratio`` (as published)."""
    return [p.upper() for p in params.probes if p != "p3" or ratio == params.p3_ratio]


def stage_probes(params: Params, dataset: str, ratio: float) -> Path:
    """The sampled probes of every (probe type, seed) cell at one ratio."""
    pool = candidate_pool(read_corpus(dataset))
    grid = cells(probe_types_at(params, ratio), params.seeds, [ratio])
    out = paths.probes_file(dataset, ratio)
    n = write_jsonl(out, (p.to_row() for p in build_probes(pool, grid, params.n_per_cell)))
    log.info("probes %s r=%s: %d rows from a pool of %d", dataset, ratio, n, len(pool))
    return out


def stage_contexts(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Compress every probe's dialogue with one method and render its prompt.

    A turn selector writes its compressed context; a KV press writes the full context and
    the press it will run under (the answers stage applies it). Every row carries its cost
    (retained turns, characters, reader tokens, theoretical prefill / KV-memory ratios).
    """
    cell = paths.CellFiles(dataset, method, ratio)
    probes = list(read_probes(paths.probes_file(dataset, ratio)))
    method_params = params.method_params.get(method, {})
    kv = kv_method(method, method_params) if is_kv_method(method) else None
    selector = method_selector(method, None if kv else method_params)
    tokenizer = reader_tokenizer(params.reader)
    full = get_selector("full_context")

    def rows() -> Iterator[dict[str, Any]]:
        for probe in tqdm(probes, desc=f"contexts {dataset} {method} {ratio}", unit="probe"):
            ctx = probe_context(probe, method, render_mode=params.render, selector=selector)
            row = ctx.to_row()
            row.update({k: getattr(probe, k) for k in PROBE_FIELDS})
            row["n_turns"] = probe.n_turns
            row["budget_unit"] = kv.record(ratio)["budget_unit"] if kv else TURN_BUDGET_UNIT
            row["kv"] = kv.record(ratio) if kv else None
            full_text = probe_context(probe, "full_context", selector=full).compressed_text_used
            cost = context_cost(
                full_text, ctx.compressed_text_used, probe.n_turns, ctx.kept_turn_ids, tokenizer
            )
            if kv:  # nominal: the press keeps the fraction r of the context's cache entries
                tokens = cost.tokens_full or cost.chars_full
                cost = kv_context_cost(full_text, probe.n_turns, tokens, [int(tokens * ratio)])
            row["cost"] = cost.to_dict()
            yield row

    write_jsonl(cell.contexts, rows())
    return cell.contexts


def answer_cache_path() -> Path:
    """The answer cache: ``$COMPRESSBENCH_ANSWER_CACHE`` or ``.cache/answers.sqlite``."""
    env = os.environ.get("COMPRESSBENCH_ANSWER_CACHE")
    return Path(env) if env else Path(".cache") / "answers.sqlite"


def request_id(row: dict[str, Any]) -> str:
    """Unique id of a probe inside a cell file (a question appears once per probe type/seed)."""
    return f"{row['probe_type']}|{row['seed']}|{row['probe_id']}"


def stage_answers(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Ask the reader every prompt of a cell; cached answers are never regenerated.

    The answers file holds only deterministic fields, so a run killed part-way and resumed
    writes the same bytes as an uninterrupted one; timings go to the ``.stats.json`` beside it.
    """
    cell = paths.CellFiles(dataset, method, ratio)
    contexts = list(read_jsonl(cell.contexts))
    spec = params.reader
    requests = [
        ChatRequest(
            id=request_id(row),
            system=row["prompt_system"],
            user=row["prompt_user"],
            max_new_tokens=spec.max_new_tokens[row["probe_type"].lower()],
        )
        for row in contexts
    ]
    reader = build_reader(spec)
    if is_kv_method(method):
        kv = kv_method(method, params.method_params.get(method, {}))
        hook = KVPressHook(
            get_press(kv.preset, ratio, **kv.overrides),
            mode=kv.mode,
            preset=kv.preset,
            max_input_tokens=spec.max_input_tokens,
        )
        reader = reader.with_press(hook, hook.spec)  # type: ignore[attr-defined]
    with AnswerCache(answer_cache_path()) as cache:
        run = generate_cached(reader, requests, cache)
    answer_rows = [
        {
            **{k: row[k] for k in ANSWER_CARRY},
            "method": method,
            "ratio": ratio,
            "output": gen.output_text,
            "error": gen.error,
            "tokens_in": gen.tokens_in,
            "tokens_out": gen.tokens_out,
            "backend": reader.name,
            "model_id": reader.model_id,
            "model_revision": reader.revision,
            "cache_key": key,
        }
        for row, gen, key in zip(contexts, run.generations, run.keys, strict=True)
    ]
    write_jsonl(cell.answers, answer_rows)
    generation_seconds = sum(g.seconds for g in run.generations)
    tokens_out = sum(g.tokens_out for g in run.generations)
    stats = {
        "cell": {"dataset": dataset, "method": method, "ratio": ratio},
        "requests": len(requests),
        **run.stats.as_dict(),
        "tokens_in": sum(g.tokens_in for g in run.generations),
        "tokens_out": tokens_out,
        "generation_seconds": generation_seconds,
        "tokens_per_s": tokens_out / generation_seconds if generation_seconds else 0.0,
        "backend": reader.name,
        "model_id": reader.model_id,
        "model_revision": reader.revision,
        "decoding": reader.decoding(),
    }
    write_json(cell.answer_stats, stats, default=str)
    return cell.answers


# Fields of a context row that the answers and scores stages keep.
ANSWER_CARRY = (
    "probe_id",
    "probe_type",
    "task_id",
    *PROBE_FIELDS,
    "k_turns",
    "n_turns",
    "kept_turn_ids",
    "budget_unit",
    "kv",
)


def stage_scores(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Score every stored answer of a cell with its probe's published scorer."""
    cell = paths.CellFiles(dataset, method, ratio)
    corrected = params.scoring.abstain == "json_literal"
    rows = [
        {**row, **score_answer(row, corrected_abstain=corrected)}
        for row in read_jsonl(cell.answers)
    ]
    write_jsonl(cell.scores, rows)
    return cell.scores


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


def retention_setup(
    params: Params, methods: list[str]
) -> tuple[dict[str, KeptTextFn], dict[str, dict[str, Any]]]:
    """Kept-text functions of the KV methods (on ``params.reader``) and every method's
    parameters as the retention log fingerprints them (presses: plus the reader)."""
    kv_fns = kv_kept_text_fns(methods, params.method_params, lambda: build_reader(params.reader))
    spec = params.reader
    reader_id = {"reader": spec.model, "dtype": spec.dtype, "attn": spec.attn_implementation}
    method_params = {
        m: {**params.method_params.get(m, {}), **(reader_id if m in kv_fns else {})}
        for m in methods
    }
    return kv_fns, method_params


def stage_retention(params: Params, dataset: str) -> Path:
    """Reader-free answer retention of every configured method at the retention ratios.

    Outcomes go to a resumable log (``paths.retention_log``) as they are measured, so a
    killed run resumes where it stopped and a rerun reuses every unchanged measurement.
    """
    methods = list(params.retention.methods or params.methods)
    kv_fns, method_params = retention_setup(params, methods)
    rows = retention_rows(
        read_corpus(dataset),
        methods,
        params.retention.ratios,
        kept_text_fns=kv_fns,
        method_params=method_params,
        log=RetentionLog(paths.retention_log(dataset)),
        progress=lambda it: tqdm(it, desc=f"retention {dataset}", unit="dlg"),
    )
    out = paths.retention_file(dataset)
    write_json(out, {"rows": rows})
    log_retention(params, dataset, rows, out)
    return out
