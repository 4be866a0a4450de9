"""The keep_method_files stage: fingerprint the files a KEEP compressor's parameters name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compressbench.jsonl import atomic_writer
from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.stages import keep_paths
from compressbench.pipeline.declare import stage
from compressbench.pipeline.method_files import method_files, path_fingerprint


@stage(
    "keep_method_files",
    over=("compressor",),
    params=("keepbench.compressors.{compressor}", "keepbench.flops_configs"),
    code=("keepbench/compressors", "pipeline/method_files.py", "keepbench/stages/keep_paths.py"),
    outs=(keep_paths.METHOD_FILES,),
    # as method_files: after editing a named file in place, rerun it alone
    # (`dvc repro -f -s keep_method_files@<compressor>`)
)
def stage_keep_method_files(params: Any, compressor: str) -> Path:
    """Fingerprint (name, size, SHA-256) every file a KEEP compressor's parameters and its
    FLOPs config name: the compressor's cell depends on it, so it reruns when one changes."""
    spec = KEEPBENCH.of(params)
    files = method_files(compressor, spec.compressors[compressor])
    flops = spec.flops_configs.get(compressor)
    if flops:
        files["flops_config"] = [path_fingerprint(str(flops))]
    out = Path(keep_paths.METHOD_FILES.format(compressor=compressor))
    text = json.dumps({"compressor": compressor, "files": files}, indent=1, sort_keys=True)
    with atomic_writer(out) as fh:
        fh.write(text + "\n")
    return out
