"""Date and time roles in the state line (issue #31), reader-free: a tried idea, not a method.

``turning_point_counted``'s line lists one ``date`` (the dialogue's last date mention), so a
dialogue with two date slots (check-in and check-out, pick-up and drop-off) shows only the later
one. This script learns, on SGD **train**, which words before a date or time mention name its
slot ("check out on" -> ``check_out_date``, "pick it up at" -> ``pickup_time``): a mention is
labelled with the one slot whose value it is (a USER turn: the slots it changed; a SYSTEM turn:
the next USER state), and a cue (one or two of the ``--window`` words before it, in its
sentence) is kept when at least ``--min-count`` labelled mentions have it and ``--precision``
of them one slot. A role line then splits each date and time kind by the nearest cue
(``check out date March 7th``) and lists every role of a kind that changed.

For every P2 event of a date or time slot in the first N dialogues of ``--splits`` (SGD's
annotations as the answer key), it says what each line holds under the event's slot name
(else under the plain ``date`` / ``time`` label): the current value, another text, or nothing.

    python benchmarks/tp_date_roles.py [--path ../shared/corpora/sgd] [--train 6000]
        [--splits dev] [--dialogues 400]
"""

from __future__ import annotations

import argparse
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from compressbench.compress.turning_point.features import MentionRules, mention_spans
from compressbench.compress.turning_point.method import mention_rules
from compressbench.compress.turning_point.state import line_entries
from compressbench.corpora.model import Dialogue, Turn
from compressbench.corpora.sgd import load_sgd
from compressbench.text.normalize import normalize_value, phrase_occurs
from compressbench.tpbench.retention import survives
from compressbench.tpbench.transitions import dialogue_transitions

SGD = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "sgd"
BASES = ("date", "time")
Table = dict[tuple[str, str], str]  # (date | time, cue) -> slot


def cues(text: str, at: int, window: int) -> list[str]:
    """The words before ``text[at:]`` in its sentence, nearest first, each word then the
    two-word cue it ends."""
    words = re.findall(r"[a-z']+", re.split(r"[.?!;:]", text[:at])[-1].lower())[-window:]
    out = []
    for i in range(len(words) - 1, -1, -1):
        out.append(words[i])
        if i:
            out.append(f"{words[i - 1]} {words[i]}")
    return out


def _slots_of(value: str, state: dict[str, tuple[str, ...]]) -> set[str]:
    """The slots of ``state`` holding ``value`` (normalised, either inside the other)."""
    return {
        key.rsplit(":", 1)[-1]
        for key, values in state.items()
        for v in values
        if phrase_occurs(normalize_value(v, "sgd"), value)
        or phrase_occurs(value, normalize_value(v, "sgd"))
    }


def fit(
    dialogues: Iterable[Dialogue],
    rules: MentionRules,
    window: int,
    min_count: int,
    precision: float,
) -> Table:
    """The cue table learned from ``dialogues``' state annotations (see the module docstring)."""
    counts: defaultdict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for d in dialogues:
        before: dict[str, tuple[str, ...]] = {}
        for i, t in enumerate(d.turns):
            if t.state is None:  # a SYSTEM turn: the slots of the next USER state
                state = next((u.state for u in d.turns[i + 1 :] if u.state is not None), None)
                if state is None:
                    continue
            else:
                state = {k: v for k, v in t.state.items() if before.get(k) != v}
                before = dict(t.state)
            for a, b, kind in mention_spans(t.text, rules):
                slots = _slots_of(normalize_value(t.text[a:b], "sgd"), state)
                if kind in BASES and len(slots) == 1:
                    for cue in set(cues(t.text, a, window)):
                        counts[kind, cue][next(iter(slots))] += 1
    table: Table = {}
    for key, by_slot in counts.items():
        slot, top = by_slot.most_common(1)[0]
        if top >= min_count and top / sum(by_slot.values()) >= precision and slot not in BASES:
            table[key] = slot
    return table


def role_entries(
    turns: Sequence[Turn], rules: MentionRules, table: Table, window: int
) -> dict[str, str]:
    """The role line's entries, kind or slot -> text: the counted line's, with each date or
    time kind split by its mentions' nearest cue (its slot; no cue: the kind), every role of a
    kind with two or more distinct texts listed with its last mention."""
    last: dict[tuple[str, str], str] = {}  # (kind, role) -> the last mention's text
    texts: defaultdict[str, set[str]] = defaultdict(set)
    for t in turns:
        for a, b, kind in mention_spans(t.text, rules):
            if kind in BASES:
                near = (table.get((kind, c)) for c in cues(t.text, a, window))
                last[kind, next((slot for slot in near if slot), kind)] = t.text[a:b]
                texts[kind].add(t.text[a:b].lower())
    counted = line_entries(turns, rules, counts=True, names=False)
    roles = {role: text for (kind, role), text in last.items() if len(texts[kind]) > 1}
    return {**{k: v for k, v in counted.items() if k not in BASES}, **roles}


def outcome(slot: str, new_value: str, entries: dict[str, str]) -> str:
    """What ``entries`` hold under ``slot``'s name (else its plain kind)."""
    base = "date" if "date" in slot else "time"
    text = entries.get(slot, entries.get(base))
    if text is None:
        return "nothing"
    return "the current value" if survives(new_value, text, "sgd") else "another text"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", default=str(SGD))
    ap.add_argument("--train", type=int, default=6000, help="first N SGD train dialogues")
    ap.add_argument("--splits", default="dev")
    ap.add_argument("--dialogues", type=int, default=400, help="first N (corpus order)")
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--min-count", type=int, default=15)
    ap.add_argument("--precision", type=float, default=0.8)
    args = ap.parse_args(argv)
    rules = mention_rules(None, None, "in_names")  # the packaged lexicon, the first date rule
    train = itertools.islice(load_sgd(args.path, ["train"]), args.train)
    table = fit(train, rules, args.window, args.min_count, args.precision)
    found: Counter[tuple[str, str]] = Counter()
    for d in itertools.islice(load_sgd(args.path, args.splits.split(",")), args.dialogues):
        events = [e for e in dialogue_transitions(d) if e.p2_eligible]
        events = [e for e in events if any(b in e.slot for b in BASES)]
        if not events:
            continue
        lines = {
            "counted": line_entries(d.turns, rules, counts=True, names=False),
            "roles": role_entries(d.turns, rules, table, args.window),
        }
        for e in events:
            for name, entries in lines.items():
                found[name, outcome(e.slot, e.new_value, entries)] += 1
    n = sum(found["counted", o] for o in ("the current value", "another text", "nothing"))
    print(
        f"{len(table)} cues from SGD train's first {args.train} dialogues; SGD {args.splits}, "
        f"first {args.dialogues} dialogues: {n} P2 events of a date or time slot\n"
    )
    print("| under the slot's name (else date / time) | counted line | role line |")
    print("|---|---|---|")
    for o in ("the current value", "another text", "nothing"):
        print(f"| {o} | {found['counted', o]} | {found['roles', o]} |")


if __name__ == "__main__":
    main()
