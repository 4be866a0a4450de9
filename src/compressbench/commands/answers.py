"""``compressbench answers export|import``: carry answer-cache rows between machines, so a long
study resumes where it stopped (see :mod:`compressbench.readers.cache_transfer`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from compressbench.pipeline import paths
from compressbench.readers.cache_transfer import export_answers, import_answers


def run(args: argparse.Namespace) -> int:
    cache = args.cache or paths.answer_cache()
    if args.action == "export":
        n = export_answers(cache, args.file, args.model, args.with_text)
        print(f"{args.file}: {n} answers from {cache}")
    else:
        added, total = import_answers(cache, args.file)
        print(f"{cache}: {added} of {total} answers added from {args.file}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("answers", help="export or import answer-cache rows (.jsonl.gz)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="write the cache's answers to a .jsonl.gz file")
    imp = actions.add_parser("import", help="add a .jsonl.gz file's answers the cache lacks")
    for action in (export, imp):
        action.add_argument("file", type=Path, help="the .jsonl.gz file to write or read")
        action.add_argument(
            "--cache", type=Path, default=None, help="default: the pipeline's answer cache"
        )
    export.add_argument("--model", default=None, help="only this reader model id")
    export.add_argument(
        "--with-text",
        action="store_true",
        help="keep each request's prompt text (default: its sha256 only)",
    )
    p.set_defaults(func=run)
