"""``compressbench stage NAME``: run one pipeline stage (what ``dvc.yaml`` calls).

``compressbench stage contexts --dataset builtin --method recency --ratio 0.3`` reads
``params.yaml`` (``--params`` to use another file) and writes that cell's files. Which options a
stage needs comes from its declaration (``over``); the stage sees only its declared params. The
MLflow runs it opens record the DVC hashes of its declared deps
(:mod:`compressbench.tracking.data_version`).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from compressbench.commands._args import ratio
from compressbench.commands.worker import ENV_IN_WORKER, forward
from compressbench.config import load_params
from compressbench.errors import InputError
from compressbench.pipeline.declare import check_cell
from compressbench.pipeline.stage_deps import cell_deps
from compressbench.stages import STAGES, declaration
from compressbench.tracking.data_version import stage_deps


def run(args: argparse.Namespace) -> int:
    decl = declaration(args.stage)
    values = []
    for key in decl.over:
        value = getattr(args, key)
        if value is None:
            raise InputError(f"stage {args.stage} needs --{key}", field=f"--{key}")
        values.append(value)
    params = load_params(args.params)
    cell = dict(zip(decl.over, values, strict=True))
    check_cell(params, cell)
    if decl.worker and params.reader.worker and os.environ.get(ENV_IN_WORKER) != "1":
        options = [f"--{key}={value}" for key, value in cell.items()]
        return forward(["stage", args.stage, "--params", args.params, *options])
    declared = cell_deps(decl, cell, args.params)
    with stage_deps(declared.deps, declared.lock_file):  # the data version its runs record
        decl.run(params, *values)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("stage", help="run one pipeline stage (called by dvc.yaml)")
    p.add_argument("stage", choices=STAGES)
    p.add_argument("--params", default="params.yaml", help="parameters file (default params.yaml)")
    p.add_argument("--dataset", help="corpus name from params.yaml `datasets`")
    p.add_argument("--method", help="compressor name from params.yaml `methods`")
    p.add_argument("--ratio", type=ratio, help="retained fraction r")
    p.add_argument("--compressor", help="KEEP compressor name from params.yaml `keepbench`")
    p.set_defaults(func=run)
