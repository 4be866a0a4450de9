"""The KEEP-Bench judge stage: one verdict row per proposition of every compressed case."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

from compressbench.jsonl import read_jsonl, write_jsonl
from compressbench.keepbench.judges.calls import JudgeInput
from compressbench.keepbench.judges.registry import check_judge, get_judge
from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.stages.keep_common import read_cases
from compressbench.pipeline import paths
from compressbench.pipeline.declare import stage
from compressbench.pipeline.run_log import write_stats
from compressbench.readers.cache import AnswerCache
from compressbench.readers.failures import check_model_calls

log = logging.getLogger(__name__)
CARRY = ("compressor", "budget_scale", "budget")
# The keys of a cell's ``.stats.json`` that are facts of its verdicts (which judge, how it
# judges); the rest (model calls, cache hits, when it ran) is the run's observation and goes to
# its run log (:mod:`compressbench.pipeline.run_log`).
STATS_FACTS = ("cell", "info")


@stage(
    "keep_verdicts",
    over=("compressor",),
    params=("keepbench.budgets", "keepbench.judge", "keepbench.judge_params"),
    code=(
        "keepbench/cases.py",
        "keepbench/judges",
        "keepbench/prompts",
        "keepbench/stages/keep_paths.py",
        "keepbench/stages/keep_common.py",
    ),
    deps=(keep_paths.CASES, keep_paths.COMPRESSED_CELL),
    outs=(keep_paths.VERDICTS_CELL,),
)
def stage_keep_verdicts(params: Any, compressor: str) -> Path:
    """Judge one compressor's compressed cases proposition by proposition with
    ``keepbench.judge``, at every budget scale; LLM verdicts are cached like answers (a killed
    run resumes, a rerun asks nothing again)."""
    spec = KEEPBENCH.of(params)
    check_judge(spec.judge, spec.judge_params, source=params.source, field="keepbench.judge")
    cases = {c.case_id: c for c in read_cases()}
    judge = get_judge(spec.judge, **spec.judge_params)
    name = compressor
    out = Path(keep_paths.VERDICTS_CELL.format(compressor=name))
    shutil.rmtree(out, ignore_errors=True)
    cells: dict[float, tuple[list[dict[str, Any]], dict[str, Any]]] = {}
    with AnswerCache(paths.answer_cache()) as cache:
        for scale in spec.budgets:
            source = keep_paths.compressed_file(name, scale)
            rows = list(read_jsonl(source))
            inputs = [
                JudgeInput(cases[r["case_id"]], r["compressed"], {k: r[k] for k in CARRY})
                for r in rows
            ]
            log.info(
                "keep_verdicts: %s judges %s x%s (%d cases)", judge.name, name, scale, len(rows)
            )
            started = time.time()
            run = judge.judge(inputs, cache, progress=True)
            ended = time.time()
            # calls that raised: too many, and nothing is written
            errors = [r.get("error") for r in run.rows]
            check_model_calls(f"keep_verdicts {name} x{scale}", errors, noun="verdicts")
            stats = {
                "cell": {"compressor": name, "budget_scale": scale, "judge": spec.judge},
                **run.stats,
                "info": run.info,
                "started_at": started,
                "ended_at": ended,
            }
            cells[scale] = run.rows, stats
    for scale, (rows, stats) in cells.items():
        write_jsonl(keep_paths.verdicts_file(spec.judge, name, scale), rows)
        write_stats(
            keep_paths.verdict_stats(spec.judge, name, scale),
            stats,
            STATS_FACTS,
            describes=[keep_paths.verdicts_file(spec.judge, name, scale)],
        )
    return out
