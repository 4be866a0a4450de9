"""The method_files stage: fingerprint the files a method's ``method_params`` name."""

from __future__ import annotations

import json
from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import atomic_writer
from compressbench.pipeline.method_files import method_files
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import stage


@stage(
    "method_files",
    over=("method",),
    params=("method_params",),
    code=("compress", "pipeline/method_files.py"),
    outs=(paths.METHOD_FILES,),
    # Not always_changed (that would keep `dvc status` from ever reading up to date): it reruns
    # when method_params change; after editing a named file in place, rerun it alone
    # (`dvc repro -f -s method_files@<method>`): the contexts cells rerun only if it changed.
)
def stage_method_files(params: Params, method: str) -> Path:
    """Fingerprint (name, size, SHA-256) every file a method's method_params name (a scorer, a
    schema, an encoder): the method's contexts cells depend on it, so they rerun when one
    changes."""
    out = paths.fill(paths.METHOD_FILES, method=method)
    files = method_files(method, params.method_params.get(method))
    text = json.dumps({"method": method, "files": files}, indent=1, sort_keys=True)
    with atomic_writer(out) as fh:
        fh.write(text + "\n")
    return out
