"""``compressbench answers-ray``: the answers stage of many cells on a Ray pool of readers.

``compressbench answers-ray --workers 4`` answers every (dataset, method, ratio) cell of
``params.yaml`` whose contexts exist, on a local Ray instance; ``--address auto`` (or
``ray://head:10001``) uses a running cluster. Answers go into the answer cache and the cells'
answers files; a later ``dvc repro`` finds every answer cached.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from compressbench.commands._args import positive_int, ratio


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number >= 0") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number >= 0")
    return value


def run(args: argparse.Namespace) -> int:
    from compressbench.config import load_params
    from compressbench.pipeline.declare import check_cell
    from compressbench.scale.ray_answers import run_answers

    params = load_params(args.params)
    check_cell(params, {"dataset": args.dataset, "method": args.method, "ratio": args.ratio})
    cells = [
        (d, m, r)
        for d in params.datasets
        for m in params.methods
        for r in params.ratios
        if args.dataset in (None, d) and args.method in (None, m) and args.ratio in (None, r)
    ]
    summary = run_answers(
        params,
        cells,
        workers=args.workers,
        address=args.address,
        cpus_per_worker=args.cpus_per_worker,
        gpus_per_worker=args.gpus_per_worker,
        base_urls=args.base_url or (),
        write=not args.no_write,
    )
    print(json.dumps(summary.as_dict(), indent=2))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "answers-ray",
        help="answer many cells on a Ray pool of reader workers (local or a cluster)",
        description=(
            "Answer every cell of params.yaml (or the one --dataset/--method/--ratio pick) on "
            "WORKERS Ray actors, each with its own reader; results join in the answer cache; "
            "the cells' answers files are the ones a serial run writes."
        ),
    )
    p.add_argument("--workers", type=positive_int, required=True, help="reader workers (actors)")
    p.add_argument("--address", help="Ray cluster (auto, ray://head:10001); default: local")
    p.add_argument("--params", default="params.yaml", help="parameters file (default params.yaml)")
    p.add_argument("--dataset", help="only this corpus of params.yaml `datasets`")
    p.add_argument("--method", help="only this method of params.yaml `methods`")
    p.add_argument("--ratio", type=ratio, help="only this retained fraction")
    p.add_argument(
        "--cpus-per-worker", type=_positive_float, default=1.0, help="Ray CPUs per actor (1)"
    )
    p.add_argument(
        "--gpus-per-worker", type=_positive_float, default=0.0, help="Ray GPUs per actor (0)"
    )
    p.add_argument(
        "--base-url",
        action="append",
        help="an OpenAI-compatible server for the openai backend; repeat for a pool "
        "(worker i uses server i mod n)",
    )
    p.add_argument(
        "--no-write", action="store_true", help="fill the answer cache only (no cell files)"
    )
    p.set_defaults(func=run)
