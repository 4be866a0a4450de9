"""``compressbench compare``: paired comparison of one 0/1 metric between two scored files."""

from __future__ import annotations

import argparse
import json
from typing import Any

from compressbench.commands._args import non_negative_int, positive_int


def run(args: argparse.Namespace) -> int:
    from compressbench.analysis.compare import compare_files
    from compressbench.jsonl import write_json

    # Unset options take the published defaults of compressbench.analysis.stats (imported only
    # when the command runs, so that building the CLI loads no scipy).
    settings = {
        k: v for k, v in (("resamples", args.resamples), ("seed", args.seed)) if v is not None
    }
    result = compare_files(args.a, args.b, args.metric, **settings)
    if args.output:
        write_json(args.output, result)
    print(json.dumps(result, indent=2))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare",
        help="paired comparison of two scored files (bootstrap interval, exact McNemar)",
        description=(
            "Pair the rows of two scored files by (probe_type, seed, probe_id) and report the "
            "means of a 0/1 metric, their difference b - a with a paired dialogue-clustered "
            "percentile bootstrap interval, the discordant pairs with an exact McNemar p-value, "
            "and how many rows of each file found no partner."
        ),
    )
    p.add_argument("--a", required=True, help="scored JSONL of method a (.gz ok)")
    p.add_argument("--b", required=True, help="scored JSONL of method b (.gz ok)")
    p.add_argument("--metric", required=True, help="a 0/1 score under 'scores' (e.g. strict)")
    p.add_argument(
        "--resamples", type=positive_int, help="bootstrap resamples (default: published 10000)"
    )
    p.add_argument(
        "--seed", type=non_negative_int, help="bootstrap seed (default: published 20260811)"
    )
    p.add_argument("--output", help="also write the JSON object here (atomically)")
    p.set_defaults(func=run)
