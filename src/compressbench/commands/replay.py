"""``compressbench tpbench-replay``: rebuild TPBench's released probe rows and compare texts."""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from typing import Any

from compressbench.commands._args import csv_of, output_file
from compressbench.errors import InputError
from compressbench.jsonl import write_jsonl
from compressbench.tpbench.contexts import RENDER_CHOICES
from compressbench.tpbench.released import read_released
from compressbench.tpbench.replay import replay, summarize

log = logging.getLogger(__name__)


def run(args: argparse.Namespace) -> int:
    rows = list(read_released(args.input))
    present = sorted({r.method for r in rows})
    unknown = sorted(set(args.methods or ()) - set(present))
    if unknown:
        raise InputError(
            f"--methods {', '.join(unknown)} not among the released methods; "
            f"allowed: {', '.join(present)}",
            file=args.input,
        )
    records = list(replay(rows, args.render, args.methods))
    write_jsonl(args.output, (r.to_row() for r in records))
    summary = summarize(records)
    for method, counts in summary.items():
        parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{method}: {parts}")
    total: Counter[str] = Counter()
    for counts in summary.values():
        total.update(counts)
    print("all: " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    log.info("%d replayed rows -> %s", len(records), args.output)
    if args.fail_on_mismatch and any(r.match is False for r in records):
        return 1
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tpbench-replay",
        help="rebuild released TPBench probe rows and check them byte for byte",
        description=(
            "For every released row, rebuild compressed_text_used, prompt_system and prompt_user "
            "from the full_context row of the same dialogue with this project's selectors, "
            "budgets and prompts; write them with match true/false, or null and a reason for "
            "methods that cannot be rebuilt from text."
        ),
    )
    p.add_argument("--input", required=True, help="released probe JSONL (.gz ok)")
    p.add_argument(
        "--output", required=True, type=output_file, help="replay JSONL (written atomically)"
    )
    p.add_argument(
        "--render",
        choices=RENDER_CHOICES,
        default="published",
        help="context rendering (default: each method's published one)",
    )
    p.add_argument(
        "--methods",
        type=csv_of(str),
        help=(
            "rebuild only these released methods (others: match null); default all - "
            "content-aware ones then load their feature models"
        ),
    )
    p.add_argument("--fail-on-mismatch", action="store_true", help="exit 1 if any row differs")
    p.set_defaults(func=run)
