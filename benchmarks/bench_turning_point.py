"""Benchmark: CPU milliseconds per dialogue of ``turning_point`` on one core, against the
token-budgeted positional selectors measured in the same run (ratios, as the design asks).

Per dialogue: one compression at each ratio (0.1, 0.3, 0.5), from the dialogue's texts, with
the reader-token counting included (the default reader's tokenizer, loaded before timing).
CPU time (``time.process_time``) is reported beside wall time because the build machine is
shared: wall time there measures the other jobs as much as this code.

    python benchmarks/bench_turning_point.py [--corpus sgd --path ../shared/corpora/sgd
        --splits dev] [--dialogues 500] [--limit-ms 20]

Exits 1 if ``turning_point`` takes ``--limit-ms`` CPU milliseconds or more per dialogue.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

from compressbench.compress.budgets import READER_TOKENS
from compressbench.compress.method import Source
from compressbench.compress.reader_tokens import reader_counter
from compressbench.compress.registry import get_method
from compressbench.compress.token_budget import with_budget_unit
from compressbench.corpora.loaders import load_corpus

SGD = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "sgd"
RATIOS = (0.1, 0.3, 0.5)
BASELINES = ("recency", "uniform_stride", "first_user_recent")


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity)"


def per_dialogue_ms(name: str, dialogues: list) -> tuple[float, float]:
    """(CPU ms, wall ms) per dialogue for all ratios of one method, on fresh instances."""
    method = with_budget_unit(get_method(name), READER_TOKENS)
    cpu, wall = time.process_time(), time.perf_counter()
    for d in dialogues:
        for r in RATIOS:
            method.compress(Source(d.turns, key=d.dialogue_id), r)
    n = len(dialogues)
    return 1000 * (time.process_time() - cpu) / n, 1000 * (time.perf_counter() - wall) / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="sgd" if SGD.exists() else "builtin")
    ap.add_argument("--path", default=str(SGD) if SGD.exists() else None)
    ap.add_argument("--splits", default="dev" if SGD.exists() else None)
    ap.add_argument("--dialogues", type=int, default=500)
    ap.add_argument("--limit-ms", type=float, default=20.0)
    args = ap.parse_args()
    print(pin_one_core())
    splits = args.splits.split(",") if args.splits else None
    dialogues = list(itertools.islice(load_corpus(args.corpus, args.path, splits), args.dialogues))
    reader_counter()("warm up")  # load the tokenizer outside the timing
    print(f"{len(dialogues)} dialogues of {args.corpus}, ratios {RATIOS}")
    rows = {name: per_dialogue_ms(name, dialogues) for name in ("turning_point", *BASELINES)}
    base = rows["uniform_stride"][0]
    print("| method | CPU ms / dialogue (3 ratios) | wall ms | CPU vs uniform_stride |")
    print("|---|---|---|---|")
    for name, (cpu, wall) in rows.items():
        print(f"| {name} | {cpu:.2f} | {wall:.2f} | {cpu / base:.1f}x |")
    ok = rows["turning_point"][0] < args.limit_ms
    print(f"turning_point: {'within' if ok else 'OVER'} the {args.limit_ms} ms limit")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
