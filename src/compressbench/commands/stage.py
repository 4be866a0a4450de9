"""``compressbench stage NAME``: run one pipeline stage (what ``dvc.yaml`` calls).

``compressbench stage contexts --dataset builtin --method recency --ratio 0.3`` reads
``params.yaml`` (``--params`` to use another file) and writes that cell's files.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compressbench.commands._args import ratio
from compressbench.config import Params, load_params

# stage name -> (needs dataset, needs method, needs ratio)
STAGE_ARGS: dict[str, tuple[bool, bool, bool]] = {
    "corpora": (True, False, False),
    "transitions": (True, False, False),
    "retention": (True, False, False),
    "probes": (True, False, True),
    "contexts": (True, True, True),
    "answers": (True, True, True),
    "scores": (True, True, True),
    "metrics": (False, False, False),
}


def _stage_function(name: str) -> Callable[..., Path]:
    from compressbench.pipeline import stages

    fn: Callable[..., Path] = getattr(stages, f"stage_{name}")
    return fn


def run(args: argparse.Namespace) -> int:
    params: Params = load_params(args.params)
    needs = STAGE_ARGS[args.stage]
    values = (args.dataset, args.method, args.ratio)
    names = ("--dataset", "--method", "--ratio")
    call: list[Any] = [params]
    for needed, value, flag in zip(needs, values, names, strict=True):
        if needed and value is None:
            raise SystemExit(f"compressbench stage {args.stage}: {flag} is required")
        if needed:
            call.append(value)
    _stage_function(args.stage)(*call)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("stage", help="run one pipeline stage (called by dvc.yaml)")
    p.add_argument("stage", choices=list(STAGE_ARGS))
    p.add_argument("--params", default="params.yaml", help="parameters file (default params.yaml)")
    p.add_argument("--dataset", help="corpus name from params.yaml `datasets`")
    p.add_argument("--method", help="compressor name from params.yaml `methods`")
    p.add_argument("--ratio", type=ratio, help="retained fraction r")
    p.set_defaults(func=run)
