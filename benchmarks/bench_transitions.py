"""Benchmark: the transitions pass (load + state diffs + alias/value/evidence rules) on the whole
present SGD (train + dev + test) on one core, against a baseline measured in the same run (plain
``gzip`` + ``json.load`` of the same files). Then the statistics tables of SGD test+dev and the
MultiWOZ 2.2 subset with their wall times.

    python benchmarks/bench_transitions.py [--corpora ../shared/corpora] [--limit-s 60]

Exits 1 if the full-SGD pass takes ``--limit-s`` seconds or more.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import sys
import time
from pathlib import Path

from compressbench.corpora.files import iter_dialogue_files
from compressbench.corpora.loaders import load_corpus
from compressbench.tpbench.transitions import (
    TransitionStats,
    corpus_stats,
    corpus_transitions,
    format_table,
)

DEFAULT_CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity)"


def baseline_json(root: Path) -> tuple[float, int]:
    """Seconds to gunzip and json.load every dialogue file; number of dialogues."""
    start = time.perf_counter()
    n = 0
    for path in iter_dialogue_files(root):
        with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open() as fh:
            n += len(json.load(fh))
    return time.perf_counter() - start, n


def transitions_pass(
    corpus: str, root: Path, splits: list[str] | None
) -> tuple[float, list[TransitionStats]]:
    start = time.perf_counter()
    rows = corpus_stats(corpus_transitions(load_corpus(corpus, root, splits)), corpus)
    return time.perf_counter() - start, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--limit-s", type=float, default=60.0)
    args = ap.parse_args()
    sgd, mwoz = args.corpora / "sgd", args.corpora / "multiwoz22"
    if not sgd.is_dir():
        print(f"SGD not found under {args.corpora}", file=sys.stderr)
        return 2
    print(pin_one_core(), f"python {sys.version.split()[0]}")

    base_s, n_dialogues = baseline_json(sgd)
    gc.collect()
    full_s, full_rows = transitions_pass("sgd", sgd, None)
    total = full_rows[-1]
    print(f"\nFull SGD ({n_dialogues} dialogues, {total.change_events} change events):")
    print(f"  baseline gzip+json.load: {base_s:6.2f} s")
    print(
        f"  transitions pass:        {full_s:6.2f} s  ({full_s / base_s:.2f}x baseline, "
        f"{n_dialogues / full_s:,.0f} dialogues/s; limit {args.limit_s:.0f} s)"
    )

    # Later passes reuse the value-normalisation cache the full pass filled (same process).
    print("\nSGD test + dev (normalisation cache warm):")
    s, rows = transitions_pass("sgd", sgd, ["test", "dev"])
    print(format_table(rows))
    print(f"wall time {s:.2f} s")
    if mwoz.is_dir():
        print("\nMultiWOZ 2.2 test subset:")
        s, rows = transitions_pass("multiwoz", mwoz, None)
        print(format_table(rows))
        print(f"wall time {s:.2f} s")
    return 0 if full_s < args.limit_s else 1


if __name__ == "__main__":
    raise SystemExit(main())
