"""The retention stage: reader-free answer retention of every method at several ratios."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from compressbench.config import Params
from compressbench.jsonl import write_json
from compressbench.pipeline import paths
from compressbench.pipeline.reader_factory import build_reader
from compressbench.pipeline.stages.rows import read_corpus
from compressbench.pipeline.track import log_retention
from compressbench.tpbench.retention import KeptTextFn, retention_rows
from compressbench.tpbench.retention_kv import kv_kept_text_fns
from compressbench.tpbench.retention_log import RetentionLog

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.


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
