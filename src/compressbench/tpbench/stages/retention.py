"""The retention stage: reader-free answer retention of every method at several ratios."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from compressbench.config import Params
from compressbench.jsonl import write_json
from compressbench.pipeline.reader_factory import build_reader
from compressbench.tpbench.pipeline_spec import RETENTION
from compressbench.tpbench.retention import retention_rows
from compressbench.tpbench.retention_log import RetentionLog
from compressbench.tpbench.retention_reader import LazyReader
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.rows import read_corpus
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage
from compressbench.tpbench.stages.track import log_retention

log = logging.getLogger(__name__)


def prefill_identity(share_prefix: bool) -> dict[str, str]:
    """How KV kept positions were computed, for the retention log's fingerprints (a log made
    one way is never reused for the other)."""
    return {"prefill": "shared_prefix" if share_prefix else "per_sequence"}


def retention_setup(params: Params, *, share_prefix: bool = False) -> dict[str, Any]:
    """The keyword arguments of :func:`retention_rows` from ``params``: the methods'
    parameters, the reader (loaded only if a method needs it, e.g. a KV press) and the
    reader's identity, which the retention log adds to those methods' fingerprints."""
    spec = params.reader
    return {
        "method_params": params.method_params,
        "reader": LazyReader(lambda: build_reader(spec), share_prefix=share_prefix),
        "reader_identity": {
            "reader": spec.model,
            "dtype": spec.dtype,
            "attn": spec.attn_implementation,
            **prefill_identity(share_prefix),
        },
    }


@stage(
    "retention",
    over=("dataset",),
    params=("retention", "methods", "method_params", "reader", "tracking"),
    code=(
        *PROBE_TYPE_CODE,
        "tpbench/retention.py",
        "tpbench/retention_reader.py",
        "tpbench/retention_log.py",
        "tpbench/slot_types.py",
        "tpbench/probes.py",
        "tpbench/prompts.py",
        "compress",
        "readers",
        "tracking",
        "pipeline/reader_factory.py",
        "tpbench/stages/track.py",
        "tpbench/stages/answer_table.py",
        "tpbench/stages/rows.py",
    ),
    deps=(paths.CORPUS,),
    metrics=(paths.RETENTION,),  # DVC-cached: `dvc exp show` reads it from the cache
    worker=True,  # asks the reader: runs in the reader worker with reader.worker
)
def stage_retention(params: Params, dataset: str) -> Path:
    """Reader-free answer retention of every configured method at the retention ratios.

    Outcomes go to a resumable log (``paths.retention_log``) as they are measured, so a
    killed run resumes where it stopped and a rerun reuses every unchanged measurement.
    """
    methods = list(RETENTION.of(params).methods or params.methods)
    rows = retention_rows(
        read_corpus(dataset),
        methods,
        RETENTION.of(params).ratios,
        **retention_setup(params),
        log=RetentionLog(paths.retention_log(dataset)),
        progress=lambda it: tqdm(it, desc=f"retention {dataset}", unit="dlg", disable=None),
    )
    out = paths.retention_file(dataset)
    # A DVC metrics file holds measurements that the same inputs reproduce byte for byte: the
    # wall time of each row goes to MLflow (metric `seconds`), not here.
    write_json(out, {"rows": [{k: v for k, v in r.items() if k != "seconds"} for r in rows]})
    log_retention(params, dataset, rows, out)
    return out
