"""The deletion_answers stage: the reader's answers to every deletion prompt, through the cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compressbench.config import Params
from compressbench.jsonl import read_jsonl, write_json, write_jsonl
from compressbench.pipeline.reader_factory import build_reader
from compressbench.pipeline.run_log import write_stats
from compressbench.readers.failures import check_model_calls
from compressbench.tpbench.pipeline_spec import DELETIONS
from compressbench.tpbench.prompts import context_request
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.answer_records import STATS_FACTS
from compressbench.tpbench.stages.answers import (
    answer_schema,
    ask_cached,
    generation_fields,
    run_stats,
)
from compressbench.tpbench.stages.rows import PROBE_FIELDS
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage

# Fields of a deletion context row that its answer row keeps.
CARRY = (
    "probe_id",
    "probe_type",
    "condition",
    "task_id",
    *PROBE_FIELDS,
    "ratio",
    "n_turns",
    "removed_turn_ids",
    "kept_turn_ids",
    "meta",
)


def deletion_request_id(row: dict[str, Any]) -> str:
    """Unique id of a deletion prompt: ``<condition>|<seed>|<probe id>``."""
    return f"{row['condition']}|{row['seed']}|{row['probe_id']}"


@stage(
    "deletion_answers",
    over=("dataset",),
    params=("reader", "deletions"),
    code=(
        *PROBE_TYPE_CODE,
        "pipeline/reader_factory.py",
        "tpbench/stages/answers.py",
        "tpbench/stages/answer_records.py",
        "tpbench/stages/rows.py",
        "tpbench/prompts.py",
        "flops",  # answers.py imports the FLOPs accounting of a cell
    ),
    deps=(paths.DELETION_CONTEXTS,),
    outs=(paths.DELETION_ANSWERS, paths.DELETION_ANSWER_STATS),
    worker=True,  # asks the reader: runs in the reader worker with reader.worker
)
def stage_deletion_answers(params: Params, dataset: str) -> Path:
    """Ask the reader every deletion prompt (``deletions.max_new_tokens``); cached answers are
    never regenerated; the ``.stats.json`` beside the answers holds the run's facts, its run log
    the timings (:mod:`compressbench.pipeline.run_log`)."""
    contexts = list(read_jsonl(paths.fill(paths.DELETION_CONTEXTS, dataset)))
    requests = [
        context_request(
            deletion_request_id(row),
            row["prompt_system"],
            row["prompt_user"],
            row.get("compressed_text_used"),
            DELETIONS.of(params).max_new_tokens,
            answer_schema(params.reader, "P2"),  # deletions probe P2 only
        )
        for row in contexts
    ]
    out = paths.fill(paths.DELETION_ANSWERS, dataset)
    stats_file = paths.fill(paths.DELETION_ANSWER_STATS, dataset)
    if not requests:  # disabled or no P2 probe: no reader to load
        write_jsonl(out, [])
        write_json(stats_file, {"dataset": dataset, "requests": 0})
        return out
    reader = build_reader(params.reader)
    run = ask_cached(reader, requests)
    check_model_calls(f"deletion answers {dataset}", [g.error for g in run.generations])
    write_jsonl(
        out,
        (
            {**{k: row[k] for k in CARRY}, **generation_fields(reader, gen, key)}
            for row, gen, key in zip(contexts, run.generations, run.keys, strict=True)
        ),
    )
    stats = {"dataset": dataset, **run_stats(reader, run)}
    write_stats(stats_file, stats, STATS_FACTS, describes=[out])
    return out
