"""What the state line of ``turning_point_stated`` would say (issue #31), reader-free.

For every P2 event (a revised slot, SGD's annotations as the answer key) of the first N
dialogues: the kinds of the value-like mentions that hold the current value, and whether the
dialogue's last mention of that kind is the current value (the rule the state line lists,
:mod:`compressbench.compress.turning_point.state`); then whether the line the method writes
names the current value, or the superseded one instead.

    python benchmarks/tp_state_line.py [--path ../shared/corpora/sgd] [--splits dev]
        [--dialogues 400]

Prints one markdown row per mention kind (schema kinds pooled as ``schema``), then the line's
counts.
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from pathlib import Path

from compressbench.compress.turning_point.features import mention_spans
from compressbench.compress.turning_point.method import mention_vocabulary
from compressbench.compress.turning_point.schema import KIND_PREFIX
from compressbench.compress.turning_point.state import STATES, last_mentions
from compressbench.corpora.sgd import load_sgd
from compressbench.tpbench.retention import survives
from compressbench.tpbench.transitions import dialogue_transitions

SGD = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "sgd"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", default=str(SGD))
    ap.add_argument("--splits", default="dev")
    ap.add_argument("--dialogues", type=int, default=400, help="first N (corpus order)")
    args = ap.parse_args(argv)
    vocab = mention_vocabulary(None, None)  # the packaged scorer's lexicon, as the method reads it
    dialogues = itertools.islice(load_sgd(args.path, args.splits.split(",")), args.dialogues)
    by_kind: Counter[tuple[str, bool]] = Counter()
    line_counts: Counter[str] = Counter()
    for d in dialogues:
        events = [t for t in dialogue_transitions(d) if t.p2_eligible]
        if not events:
            continue
        found = [(k, t.text[a:b]) for t in d.turns for a, b, k in mention_spans(t.text, vocab)]
        last = last_mentions(d.turns, vocab)  # kind -> (its last mention's text, distinct texts)
        line = STATES["latest"](d.turns, vocab)
        for e in events:
            line_counts["P2 events"] += 1
            kinds = {k for k, text in found if survives(e.new_value, text, d.dataset)}
            for k in kinds:
                ok = survives(e.new_value, last[k][0], d.dataset)
                by_kind["schema" if k.startswith(KIND_PREFIX) else k, ok] += 1
            if not kinds:
                line_counts["current value in no mention"] += 1
            if survives(e.new_value, line, d.dataset):
                line_counts["line names the current value"] += 1
            elif survives(e.old_value, line, d.dataset):
                line_counts["line names the superseded value instead"] += 1
    print(f"SGD {args.splits}, first {args.dialogues} dialogues\n")
    print("| kind of the current value's mention | events | its kind's last mention is it |")
    print("|---|---|---|")
    for k in sorted({k for k, _ in by_kind}):
        n = by_kind[k, True] + by_kind[k, False]
        print(f"| {k} | {n} | {by_kind[k, True]} |")
    print()
    for name, n in line_counts.items():
        print(f"- {name}: {n}")


if __name__ == "__main__":
    main()
