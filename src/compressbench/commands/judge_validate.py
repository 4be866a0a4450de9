"""``compressbench judge-validate``: agreement of the semantic judge with human labels."""

from __future__ import annotations

import argparse
import json
from typing import Any

from compressbench.commands._args import output_file
from compressbench.commands._judge import add_judge_args, cache_path, judge_from_args


def run(args: argparse.Namespace) -> int:
    from compressbench.analysis.agreement import binary_agreement
    from compressbench.jsonl import write_json
    from compressbench.readers.cache import AnswerCache
    from compressbench.tpbench.judge.ae import read_labelled

    labelled = read_labelled(args.inputs, args.key)  # every input checked before any judging
    judge = judge_from_args(args)
    with AnswerCache(cache_path(args)) as cache:
        judged = judge.judge([x.item for x in labelled], cache)
    verdicts = judged.rows
    agreement = binary_agreement(
        [x.label for x in labelled],
        [v["equivalent"] for v in verdicts],
        [v["error"] is not None for v in verdicts],
    )
    summary: dict[str, Any] = {
        "inputs": args.inputs,
        "key": args.key,
        **agreement,
        "judge": judged.info,
        "judge_calls": judged.stats,
    }
    items = [
        {"id": x.item.id, "label": x.label, **{k: v for k, v in verdict.items() if k != "judge_id"}}
        for x, verdict in zip(labelled, verdicts, strict=True)
    ]
    if args.output:
        write_json(args.output, {**summary, "items": items})
    print(json.dumps(summary, indent=2))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "judge-validate",
        help="agreement of the semantic judge with human answer-equivalence labels",
        description=(
            "Judge answer-equivalence items (inputs JSONL: id, question, context, reference, "
            "candidate) with the TPBench semantic judge and report agreement with the human "
            "majority labels (key JSONL: id, majority_label): accuracy, balanced accuracy, "
            "Cohen's kappa, confusion counts, uncertain and failed verdicts. Tied labels "
            "(null) stay unresolved and out of the figures."
        ),
    )
    p.add_argument("--inputs", required=True, help="items JSONL (.gz ok)")
    p.add_argument("--key", required=True, help="human labels JSONL (.gz ok)")
    p.add_argument(
        "--output", type=output_file, help="also write the figures and every verdict (JSON)"
    )
    add_judge_args(p)
    p.set_defaults(func=run)
