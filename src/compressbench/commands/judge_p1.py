"""``compressbench judge-p1``: semantic judging of the P1 answers of a scored file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from compressbench.commands._args import output_file
from compressbench.commands._judge import add_judge_args, cache_path, judge_from_args


def run(args: argparse.Namespace) -> int:
    from compressbench.jsonl import write_json, write_jsonl
    from compressbench.readers.cache import AnswerCache
    from compressbench.tpbench.judge.p1 import judge_p1_rows, read_p1_rows, summarize, summarize_by

    rows = read_p1_rows(args.input)  # every row checked before any judging
    judge = judge_from_args(args)
    with AnswerCache(cache_path(args)) as cache:
        verdicts, judged = judge_p1_rows(judge, rows, cache)
    summary = {
        "input": args.input,
        "overall": summarize(verdicts),
        "by_cell": summarize_by(verdicts),
        "judge": judged.info,
        "judge_calls": judged.stats,
    }
    write_jsonl(args.output, verdicts)
    if args.summary:
        write_json(args.summary, summary)
    if args.track:
        from compressbench.tpbench.judge.track import log_judge_run

        files = [args.output, *([args.summary] if args.summary else [])]
        summary["mlflow_run_id"] = log_judge_run(
            f"judge-p1 {Path(args.input).name}", judged.info, summary["overall"], files
        )
    print(json.dumps(summary, indent=2))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "judge-p1",
        help="semantic equivalence of scored P1 answers (the TPBench judge)",
        description=(
            "Judge every P1 row of a scores file with the released TPBench judge prompt and "
            "write one verdict row per P1 row (equivalent true/false/null, core_goal, "
            "reference_type, reason, or error). Prints the semantic P1 accuracy (share judged "
            "equivalent; null verdicts and errors count, without credit) overall and per "
            "dataset, method and ratio. Verdicts are cached in the answer cache."
        ),
    )
    p.add_argument("--input", required=True, help="scores JSONL (.gz ok)")
    p.add_argument("--output", required=True, type=output_file, help="verdict rows (JSONL)")
    p.add_argument("--summary", type=output_file, help="also write the summary here (JSON)")
    p.add_argument("--track", action="store_true", help="log the judge run to MLflow")
    add_judge_args(p)
    p.set_defaults(func=run)
