"""``compressbench transitions``: change-event statistics of a corpus (spec §3.1-§3.5)."""

from __future__ import annotations

import argparse
import json
import logging
import time
from typing import Any

from tqdm import tqdm

from compressbench.commands._args import add_corpus_args, output_file
from compressbench.corpora.loaders import load_corpus
from compressbench.jsonl import atomic_writer, write_jsonl
from compressbench.tpbench.transitions import (
    Transition,
    corpus_stats,
    dialogue_transitions,
    format_table,
)

log = logging.getLogger(__name__)


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    dialogues = load_corpus(args.corpus, args.path, args.splits)
    pairs = []
    events: list[Transition] = []
    for d in tqdm(dialogues, desc="transitions", unit="dlg", disable=None):
        ts = dialogue_transitions(d)
        pairs.append((d, ts))
        events.extend(ts)
    rows = corpus_stats(pairs, args.corpus)
    elapsed = time.perf_counter() - start
    print(format_table(rows))
    log.info("%d dialogues, %d change events in %.1f s", len(pairs), len(events), elapsed)
    if args.output:
        report = {
            "corpus": args.corpus,
            "path": str(args.path) if args.path else None,
            "splits": args.splits,
            "rows": [r.to_row() for r in rows],
        }
        with atomic_writer(args.output) as fh:
            fh.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        log.info("statistics -> %s", args.output)
    if args.events:
        n = write_jsonl(args.events, (t.to_row() for t in events))
        log.info("%d change events -> %s", n, args.events)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "transitions",
        help="slot-change statistics of a corpus",
        description=(
            "Diff the dialogue state of adjacent USER turns, count change events, final updates, "
            "alias-excluded, value-absent, P2- and P3-eligible events; print the table."
        ),
    )
    add_corpus_args(p)
    p.add_argument("--output", type=output_file, help="statistics JSON (written atomically)")
    p.add_argument("--events", type=output_file, help="also write every change event as JSONL")
    p.set_defaults(func=run)
