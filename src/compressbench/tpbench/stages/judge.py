"""The judge stage: P1 semantic verdicts of one cell (paper §6.1.1, spec §8 H8).

With ``judge.enabled`` the cell's P1 answers go to the judge (:mod:`compressbench.tpbench.judge`)
on an OpenAI-compatible server through the answer cache (a verdict is never asked twice), the
verdict rows go to ``data/verdicts/<dataset>/<method>/<r>.jsonl`` and the run (judge model,
revision, prompt and schema sha256, the cell, input/output sha256, semantic accuracy) to
MLflow. Disabled (the default: nothing judges offline), the stage writes one "not judged" row
saying why (:mod:`~compressbench.tpbench.judge.verdict_file`: an empty output would make ``dvc
status`` warn about it) without loading any client, and the report reads such a file as "not
judged" - so the graph is the same either way and the report's dependency on the verdicts is
declared.
"""

from __future__ import annotations

import logging
from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import read_jsonl, write_jsonl
from compressbench.pipeline.paths import answer_cache
from compressbench.tpbench.judge.verdict_file import not_judged
from compressbench.tpbench.pipeline_spec import JUDGE
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage

log = logging.getLogger(__name__)


@stage(
    "judge",
    over=("dataset", "method", "ratio"),
    params=("judge", "tracking"),
    code=(
        *PROBE_TYPE_CODE,
        "tpbench/judge",
        "tpbench/prompts.py",
        "tracking",
    ),
    deps=(paths.SCORES,),
    outs=(paths.VERDICTS,),
)
def stage_judge(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Judge the cell's P1 answers when ``judge.enabled`` (verdicts cached, never asked twice;
    the run logged to MLflow); otherwise write the one "not judged" row, which the report
    reads as "not judged"."""
    out = paths.fill(paths.VERDICTS, dataset, method, ratio)
    if not JUDGE.of(params).enabled:
        write_jsonl(out, not_judged("judge.enabled is false"))
        return out
    from compressbench.readers.cache import AnswerCache
    from compressbench.readers.failures import check_model_calls
    from compressbench.tpbench.judge.judge import build_judge
    from compressbench.tpbench.judge.p1 import judge_p1_rows, p1_item, summarize
    from compressbench.tpbench.judge.track import log_judge_run
    from compressbench.tracking import sha256_file

    scores = paths.fill(paths.SCORES, dataset, method, ratio)
    cell = {"dataset": dataset, "method": method, "ratio": ratio}
    rows = []  # every row checked before any judging
    for line, scored in enumerate(read_jsonl(scores), start=1):
        if scored.get("probe_type") == "P1":
            row = {**scored, **cell}
            rows.append((row, p1_item(row, str(scores), f"line {line}")))
    if not rows:
        log.warning("judge %s: no P1 answers in %s; nothing to judge", out, scores)
        write_jsonl(out, not_judged(f"no P1 answers in {scores.as_posix()}"))
        return out
    spec = JUDGE.of(params)
    judge = build_judge(
        spec.model,
        base_url=spec.base_url,
        style=spec.response_format,
        retries=spec.retries,
        max_tokens=spec.max_tokens,
        concurrency=spec.concurrency,
        revision=spec.revision,
    )
    with AnswerCache(answer_cache()) as cache:
        verdicts, run = judge_p1_rows(judge, rows, cache)
    # calls that raised: too many, and nothing is written
    errors = [v.get("error") for v in verdicts]
    check_model_calls(f"judge cell {dataset} {method} r={ratio}", errors, noun="verdicts")
    write_jsonl(out, verdicts)
    summary = summarize(verdicts)
    log_judge_run(
        f"judge {dataset} {method} {paths.ratio_name(ratio)}",
        run.info,
        {**summary, **{f"calls.{k}": v for k, v in run.stats.items()}},
        [out],
        tracking_uri=params.tracking.uri,
        experiment=params.tracking.experiment,
        stage=f"judge@{dataset}-{method}-{paths.ratio_name(ratio)}",
        cell=cell,
        tags={
            f"sha256.input.{scores.as_posix()}": sha256_file(scores),
            f"sha256.output.{out.as_posix()}": sha256_file(out),
        },
    )
    log.info("judge %s: semantic accuracy %s over %d", out, summary["semantic_accuracy"], len(rows))
    return out
