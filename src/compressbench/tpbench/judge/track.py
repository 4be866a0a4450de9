"""Log a judge run to MLflow through :mod:`compressbench.tracking`'s public functions.

One run per judge invocation: the judge's identity (model, revision, server, prompt and schema
sha256, response format, retries, max tokens) and the judged cell's keys as params, the identity
also as ``judge.*`` tags, the summary numbers as metrics, the verdict file and the summary JSON
as artifacts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.tracking import DEFAULT_EXPERIMENT, split_numeric, start_pipeline_run

TAGGED = ("judge_model", "judge_revision", "judge_prompt_sha256", "judge_schema_sha256")


def log_judge_run(
    name: str,
    info: Mapping[str, Any],
    summary: Mapping[str, Any],
    artifacts: Sequence[str | Path] = (),
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    repo_root: str | Path | None = None,
    stage: str | None = None,
    cell: Mapping[str, Any] | None = None,
    tags: Mapping[str, Any] | None = None,
) -> str:
    """Log one judge run (``info`` from :meth:`Judge.info`, ``summary`` of its verdicts, the
    judged ``cell``'s keys, extra ``tags`` such as file sha256s); returns the MLflow run id."""
    judge_tags = {k.replace("_", ".", 1): info[k] for k in TAGGED if info.get(k) is not None}
    with start_pipeline_run(
        name,
        params={**(cell or {}), **info},
        tracking_uri=tracking_uri,
        experiment=experiment,
        tags={**judge_tags, **(tags or {})},
        stage=stage,
        repo_root=repo_root,
    ) as run:
        metrics, _ = split_numeric(summary)
        run.log_metrics(metrics)
        if artifacts:
            run.log_artifacts(list(artifacts))
        return run.run_id
