"""The answers stage: ask the reader every prompt of a cell through the answer cache."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from compressbench.compress.registry import get_method
from compressbench.config import Params, ReaderSpec
from compressbench.flops.cells import reader_cell_flops
from compressbench.jsonl import read_jsonl, write_jsonl
from compressbench.pipeline.paths import answer_cache
from compressbench.pipeline.reader_factory import BUILDS, build_reader
from compressbench.pipeline.run_log import write_stats
from compressbench.readers.base import ChatRequest, Generation, Reader
from compressbench.readers.cache import AnswerCache, CachedRun, generate_cached
from compressbench.readers.failures import check_model_calls
from compressbench.readers.image_env import image_identity
from compressbench.tpbench.probe_types import get_probe_type
from compressbench.tpbench.prompts import context_request
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.answer_records import (
    STATS_FACTS,
    kv_summary,
    measured_fields,
    warn_fallbacks,
)
from compressbench.tpbench.stages.rows import PROBE_FIELDS
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.


def request_id(row: dict[str, Any]) -> str:
    """Unique id of a probe inside a cell file (a question appears once per probe type/seed)."""
    return f"{row['probe_type']}|{row['seed']}|{row['probe_id']}"


def ask_cached(reader: Reader, requests: list[ChatRequest]) -> CachedRun:
    """Answers of ``requests`` through the answer cache (only misses are generated)."""
    with AnswerCache(answer_cache()) as cache:
        return generate_cached(reader, requests, cache)


def generation_fields(reader: Reader, gen: Generation, key: str) -> dict[str, Any]:
    """What an answer row records of one generation: output, error, tokens, the reader's
    identity, the cache key and the measured KV record (if any)."""
    return {
        "output": gen.output_text,
        "error": gen.error,
        "tokens_in": gen.tokens_in,
        "tokens_out": gen.tokens_out,
        "backend": reader.name,
        "model_id": reader.model_id,
        "model_revision": reader.revision,
        "cache_key": key,
        **measured_fields(gen.record),
    }


def reader_record(reader: Reader) -> dict[str, Any]:
    """What a backend records of itself beyond its decoding parameters (may be empty)."""
    return dict(reader.record())


def run_stats(reader: Reader, run: CachedRun) -> dict[str, Any]:
    """What a run records besides its answers: facts (counts, tokens, the reader's identity,
    decoding and record, the image) and observations (cache counts, timings, the process, the
    backend's counters); :data:`STATS_FACTS` tells them apart."""
    window = run.compute_window()
    generation_seconds = sum(g.seconds for g in run.generations)
    tokens_out = sum(g.tokens_out for g in run.generations)
    return {
        "requests": len(run.generations),
        **run.stats.as_dict(),
        "tokens_in": sum(g.tokens_in for g in run.generations),
        "tokens_out": tokens_out,
        "generation_seconds": generation_seconds,
        "tokens_per_s": tokens_out / generation_seconds if generation_seconds else 0.0,
        "backend": reader.name,
        "model_id": reader.model_id,
        "model_revision": reader.revision,
        "decoding": reader.decoding(),
        # the backend's own record (package version, model file, threads, seed) and counters
        # (llamacpp: prompt tokens sent and evaluated; openai: calls and retries)
        "reader": reader_record(reader),
        "reader_stats": dict(reader.stats),
        "image": image_identity(),
        # the process that answered: a reader worker (reader.worker) answers many cells with
        # one load, so its pid repeats and its loads stay at 1
        "process": {"pid": os.getpid(), "reader_loads": len(BUILDS)},
        "compute_started_at": window[0] if window else None,
        "compute_ended_at": window[1] if window else None,
    }


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


@stage(
    "answers",
    over=("dataset", "method", "ratio"),
    params=("reader", "method_params"),  # method_params: the press preset and its mode
    code=(
        *PROBE_TYPE_CODE,
        "compress",
        "readers",
        "tpbench/prompts.py",
        "pipeline/reader_factory.py",
        "tpbench/stages/rows.py",
        "tpbench/stages/answer_records.py",
        "flops",
    ),
    deps=(paths.CONTEXTS,),
    outs=(paths.ANSWERS, paths.ANSWER_STATS),
    worker=True,  # asks the reader: runs in the reader worker with reader.worker
)
def stage_answers(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Ask the reader every prompt of a cell; cached answers are never regenerated.

    The answers file holds only deterministic fields, so a run killed part-way and resumed
    writes the same bytes as an uninterrupted one; so does the ``.stats.json`` beside it (facts
    only), while timings go to the cell's run log (:mod:`compressbench.pipeline.run_log`).
    """
    cell = paths.CellFiles(dataset, method, ratio)
    contexts = list(read_jsonl(cell.contexts))
    requests = cell_requests(params.reader, contexts)
    reader = cell_reader(build_reader(params.reader), params, method, ratio)
    run = ask_cached(reader, requests)
    write_answers(cell, contexts, requests, reader, run)
    return cell.answers


def cell_requests(spec: ReaderSpec, contexts: list[dict[str, Any]]) -> list[ChatRequest]:
    """One chat request per context row (its probe's output budget from ``spec``; its answer
    schema when ``spec.structured``)."""
    return [
        context_request(
            request_id(row),
            row["prompt_system"],
            row["prompt_user"],
            row.get("compressed_text_used"),
            get_probe_type(row["probe_type"]).output_budget(spec.max_new_tokens),
            answer_schema(spec, row["probe_type"]),
        )
        for row in contexts
    ]


def answer_schema(spec: ReaderSpec, probe_type: str) -> dict[str, Any] | None:
    """The probe's answer JSON Schema for a structured-output reader, else None."""
    if not spec.structured:
        return None
    return get_probe_type(probe_type, pipeline=True).answer_json_schema()


def cell_reader(reader: Reader, params: Params, method: str, ratio: float) -> Reader:
    """``reader`` as the cell's method needs it: with the method's KV press, if it has one."""
    compressor = get_method(method, params.method_params.get(method))
    hook = compressor.reader_hook(ratio, max_input_tokens=params.reader.max_input_tokens)
    if hook is not None:  # the method runs inside the reader (a KV press)
        reader = reader.with_press(hook, hook.spec)
    return reader


def write_answers(
    cell: paths.CellFiles,
    contexts: list[dict[str, Any]],
    requests: list[ChatRequest],
    reader: Reader,
    run: CachedRun,
) -> None:
    """Write the cell's answers file (deterministic fields), its ``.stats.json`` (the facts
    of :data:`STATS_FACTS`, e.g. whether the answers were constrained to the probe's schema: a
    labelled variant) and its run log (the run's observations: timings, cache counts).
    A cell whose calls mostly raised writes nothing (:mod:`compressbench.readers.failures`)."""
    dataset, method, ratio = cell.dataset, cell.method, cell.ratio
    check_model_calls(
        f"answers cell {dataset} {method} r={ratio}", [g.error for g in run.generations]
    )
    answer_rows = [
        {
            **{k: row[k] for k in ANSWER_CARRY},
            "method": method,
            "ratio": ratio,
            **generation_fields(reader, gen, key),
        }
        for row, gen, key in zip(contexts, run.generations, run.keys, strict=True)
    ]
    write_jsonl(cell.answers, answer_rows)
    records = [g.record for g in run.generations]
    kv = None
    if reader.press is not None or any(r is not None for r in records):
        kv = kv_summary(records)
        warn_fallbacks(f"answers {dataset} {method} r={ratio}", kv)
    stats = {
        "cell": {"dataset": dataset, "method": method, "ratio": ratio},
        **run_stats(reader, run),
        "structured_output": any(r.response_schema is not None for r in requests),
        "kv": kv,
        "flops": reader_cell_flops(reader, answer_rows),  # KEEP-Bench App. C.4 accounting
    }
    write_stats(cell.answer_stats, stats, STATS_FACTS, describes=[cell.answers])
