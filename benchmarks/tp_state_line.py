"""What the state lines of ``turning_point_stated``, ``_counted``, ``_named`` and the schema
variants would say (issue #31), reader-free.

For every P2 event (a revised slot, SGD's annotations as the answer key) of the first N
dialogues: the kinds of the value-like mentions that hold the current value, and whether the
dialogue's last mention of that kind is the current value (the rule the state line lists,
:mod:`compressbench.compress.turning_point.state`); then, for each line rule
(:data:`~compressbench.compress.turning_point.state.LINE_RULES`), what its line says of the
event: the current value in an entry of its kind, the current value only in another kind's
entry, another text of its kind (a misleading entry), the superseded value, other kinds only,
or no line; and, for the events whose current value is one of the two dates of the last turn
naming a date (the ``ranged`` and ``spanned`` lines' date entries), which of them it is, by
slot.

    python benchmarks/tp_state_line.py [--path ../shared/corpora/sgd] [--splits dev]
        [--dialogues 400] [--dates whole] [--schema ../shared/corpora/sgd/dev/schema.json.gz]

Prints one markdown row per mention kind (schema kinds pooled as ``schema``, counts as
``count``), then one row per line outcome, then one row per slot of the date ranges.
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from pathlib import Path

from compressbench.compress.turning_point.features import DATE_RULES, mention_spans
from compressbench.compress.turning_point.method import mention_rules
from compressbench.compress.turning_point.schema import KIND_PREFIX
from compressbench.compress.turning_point.state import (
    COUNT_PREFIX,
    DATE_PART,
    LINE_RULES,
    count_kind,
    last_dates,
    last_mentions,
    line_entries,
)
from compressbench.corpora.sgd import load_sgd
from compressbench.tpbench.retention import survives
from compressbench.tpbench.transitions import Transition, dialogue_transitions

SGD = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "sgd"


OUTCOMES = (
    "current value",
    "current value, another kind's entry",
    "another text of its kind",
    "superseded value",
    "other kinds only",
    "no line",
)


def _pooled(kind: str) -> str:
    return next((p.rstrip(":") for p in (KIND_PREFIX, COUNT_PREFIX) if kind.startswith(p)), kind)


def outcome(event: Transition, kinds: set[str], entries: dict[str, str], dataset: str) -> str:
    """What a line with ``entries`` (kind -> text) says of ``event``, whose current value is
    held by mentions of ``kinds``."""
    line = " ; ".join(entries.values())
    # a date part (``date:start``) is an entry of the date kind
    own = [t for k, t in entries.items() if ("date" if k.startswith(DATE_PART) else k) in kinds]
    if any(survives(event.new_value, text, dataset) for text in own):
        return OUTCOMES[0]
    if survives(event.new_value, line, dataset):
        return OUTCOMES[1]
    if own:
        return OUTCOMES[2]
    if survives(event.old_value, line, dataset):
        return OUTCOMES[3]
    return OUTCOMES[4] if entries else OUTCOMES[5]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", default=str(SGD))
    ap.add_argument("--splits", default="dev")
    ap.add_argument("--dialogues", type=int, default=400, help="first N (corpus order)")
    ap.add_argument("--dates", choices=tuple(DATE_RULES), default="in_names", help="date rule")
    ap.add_argument("--schema", default=None, help="schema files whose terms are mentions too")
    args = ap.parse_args(argv)
    # the packaged scorer's lexicon (and the schema's terms), as the method reads them
    rules = mention_rules(None, args.schema, args.dates)
    dialogues = itertools.islice(load_sgd(args.path, args.splits.split(",")), args.dialogues)
    by_kind: Counter[tuple[str, bool]] = Counter()
    lines: Counter[tuple[str, str]] = Counter()
    ranges: Counter[tuple[str, int]] = Counter()  # (slot, the current value's place in a range)
    n_events = 0
    for d in dialogues:
        events = [t for t in dialogue_transitions(d) if t.p2_eligible]
        if not events:
            continue
        n_events += len(events)
        found = [
            (count_kind(k, t.text[a:b]), t.text[a:b])
            for t in d.turns
            for a, b, k in mention_spans(t.text, rules)
        ]
        last = last_mentions(d.turns, rules, counts=True)  # kind -> (last text, distinct texts)
        # each event's kinds: those of the mentions that hold its current value
        held = [
            (e, {k for k, text in found if survives(e.new_value, text, d.dataset)}) for e in events
        ]
        for rule, settings in LINE_RULES.items():
            entries = line_entries(d.turns, rules, *settings)
            for e, kinds in held:
                lines[rule, outcome(e, kinds, entries, d.dataset)] += 1
        dates = last_dates(d.turns, rules)
        for e, kinds in held:
            places = [i for i, date in enumerate(dates) if survives(e.new_value, date, d.dataset)]
            if len(dates) == 2 and places:  # a two-date turn holds the current value
                ranges[e.slot, places[0]] += 1
            for k in kinds:
                by_kind[_pooled(k), survives(e.new_value, last[k][0], d.dataset)] += 1
    print(f"SGD {args.splits}, first {args.dialogues} dialogues: {n_events} P2 events\n")
    print("| kind of the current value's mention | events | its kind's last mention is it |")
    print("|---|---|---|")
    for k in sorted({k for k, _ in by_kind}):
        n = by_kind[k, True] + by_kind[k, False]
        print(f"| {k} | {n} | {by_kind[k, True]} |")
    print()
    print("| the line says | " + " | ".join(f"`{r}`" for r in LINE_RULES) + " |")
    print("|---|" + "---|" * len(LINE_RULES))
    for o in OUTCOMES:
        print(f"| {o} | " + " | ".join(str(lines[r, o]) for r in LINE_RULES) + " |")
    print("\n| slot (current value in a two-date range) | first date | second date |")
    print("|---|---|---|")
    for slot in sorted({slot for slot, _ in ranges}):
        print(f"| {slot} | {ranges[slot, 0]} | {ranges[slot, 1]} |")


if __name__ == "__main__":
    main()
