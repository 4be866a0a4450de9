"""Slot transitions: dialogue-state diffs between adjacent USER turns (spec §3.1, §3.3, §3.4,
§3.5, §3.12) and the statistics table of a corpus.

Definitions (they reproduce the reference table of ``corpora/README.md``):

* The state at a USER turn maps ``service:slot`` to a set of values (the loader carries a
  service's last state forward when its frame is absent). A USER turn without state keeps the
  previous state.
* A **change event** is (dialogue, state key, USER turn) where the key had a non-empty value set
  at the previous USER turn and a different non-empty one now. Its old/new value is the first
  listed value of the set. Events are ordered by turn, then key; ``event_index`` numbers them
  within the dialogue (the ``qaNN`` of a probe id).
* ``later_update_turn_ids`` - later USER turns that alter the key's value set in any way
  (including clearing it); the event is **final** when there is none.
* **Alias-equivalent** (§3.3) and **value present** (§3.4 rule 3: plain substring of a
  normalised turn text, any turn) drive P2 eligibility; **evidence** turns (§3.12) use the
  phrase-bounded matcher on every USER/SYSTEM turn.
* **P2-eligible** = final, not alias-equivalent, value present. **P3-eligible** (§3.5) = final,
  ``n_turns >= 10``, origin ``>= 6``, ``origin / max(1, n_turns - 1) >= 0.5``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from compressbench.corpora.model import USER, Dialogue, State, Turn, slot_of
from compressbench.text.normalize import dataset_key, normalize_value, phrase_occurs

P3_MIN_TURNS = 10
P3_MIN_ORIGIN = 6
P3_MIN_REL_ORIGIN = 0.5


@dataclass(frozen=True)
class Transition:
    """One change event with everything later stages need (the transitions stage record)."""

    dataset: str
    dialogue_id: str
    split: str
    event_index: int
    key: str  # "service:slot"
    turn_index: int  # origin: the USER turn where the value changed
    old_value: str
    new_value: str
    n_turns: int
    later_update_turn_ids: tuple[int, ...]
    alias_equivalent: bool
    value_present: bool
    s_evidence: tuple[int, ...]

    @property
    def slot(self) -> str:
        return slot_of(self.key)

    @property
    def is_final(self) -> bool:
        """No later USER turn alters this key's value set."""
        return not self.later_update_turn_ids

    @property
    def final_slot_update_turn_id(self) -> int:
        return self.later_update_turn_ids[-1] if self.later_update_turn_ids else self.turn_index

    @property
    def rel_origin(self) -> float:
        return self.turn_index / max(1, self.n_turns - 1)

    @property
    def s_origin(self) -> tuple[int, ...]:
        return (self.turn_index,)

    @property
    def s_transition_support(self) -> tuple[int, ...]:
        return tuple(sorted({*self.s_evidence, self.turn_index}))

    @property
    def p2_eligible(self) -> bool:
        """§3.4: final update, not alias-equivalent, value occurs in some turn."""
        return self.is_final and not self.alias_equivalent and self.value_present

    @property
    def p3_eligible(self) -> bool:
        """§3.5: final update late in a long enough dialogue (no alias/value filter)."""
        return (
            self.is_final
            and self.n_turns >= P3_MIN_TURNS
            and self.turn_index >= P3_MIN_ORIGIN
            and self.rel_origin >= P3_MIN_REL_ORIGIN
        )

    def to_row(self) -> dict[str, Any]:
        """JSON row with the derived fields spelled out."""
        row = asdict(self)
        row.update(
            slot=self.slot,
            is_final_slot_update=self.is_final,
            final_slot_update_turn_id=self.final_slot_update_turn_id,
            rel_origin=self.rel_origin,
            s_origin=list(self.s_origin),
            s_transition_support=list(self.s_transition_support),
            p2_eligible=self.p2_eligible,
            p3_eligible=self.p3_eligible,
        )
        return row


# --- pure rules --------------------------------------------------------------------------


def is_alias_equivalent(old: object, new: object, dataset: str = "") -> bool:
    """Alias-equivalence heuristic (spec §3.3); ``dataset`` is a raw dataset name."""
    if not old or not new:
        return False
    ds = dataset_key(dataset)
    a_norm, b_norm = normalize_value(old, ds), normalize_value(new, ds)
    if not a_norm or not b_norm:
        return False
    if a_norm == b_norm:
        return True
    a, b = a_norm.split(",", 1)[0].strip(), b_norm.split(",", 1)[0].strip()
    if a and a == b:
        return True
    return min(len(a), len(b)) >= 3 and (a in b or b in a)


def value_present(value: str, normalized_texts: Sequence[str], ds: str) -> bool:
    """§3.4 rule 3: the normalised value is a plain substring of some normalised turn text."""
    needle = normalize_value(value, ds)
    return bool(needle) and any(needle in text for text in normalized_texts)


def evidence_turns(value: str, normalized_texts: Sequence[str], ds: str) -> tuple[int, ...]:
    """§3.12 ``s_evidence``: turns containing the normalised value at phrase boundaries."""
    needle = normalize_value(value, ds)
    return tuple(i for i, text in enumerate(normalized_texts) if phrase_occurs(needle, text))


def user_states(turns: Sequence[Turn]) -> list[tuple[int, State]]:
    """(turn index, state) for every USER turn; a missing state repeats the previous one."""
    out: list[tuple[int, State]] = []
    previous: State = {}
    for t in turns:
        if t.speaker != USER:
            continue
        state = previous if t.state is None else t.state
        out.append((t.index, state))
        previous = state
    return out


@dataclass
class _RawEvent:
    key: str
    turn_index: int
    old: tuple[str, ...]
    new: tuple[str, ...]
    later: list[int] = field(default_factory=list)


def _raw_events(states: Sequence[tuple[int, State]]) -> list[_RawEvent]:
    events: list[_RawEvent] = []
    open_by_key: dict[str, list[_RawEvent]] = {}
    for (_, prev), (turn, cur) in itertools.pairwise(states):
        for key in sorted(prev.keys() | cur.keys()):
            before, after = prev.get(key, ()), cur.get(key, ())
            if set(before) == set(after):
                continue
            for ev in open_by_key.get(key, ()):
                ev.later.append(turn)
            if before and after:
                ev = _RawEvent(key, turn, before, after)
                events.append(ev)
                open_by_key.setdefault(key, []).append(ev)
    return events


def dialogue_transitions(dialogue: Dialogue) -> list[Transition]:
    """Every change event of a dialogue, annotated (pure)."""
    raw = _raw_events(user_states(dialogue.turns))
    if not raw:
        return []
    ds = dataset_key(dialogue.dataset)
    texts = [normalize_value(t.text, ds) for t in dialogue.turns]
    out = []
    for i, ev in enumerate(raw):
        old, new = ev.old[0], ev.new[0]
        out.append(
            Transition(
                dataset=dialogue.dataset,
                dialogue_id=dialogue.dialogue_id,
                split=dialogue.split,
                event_index=i,
                key=ev.key,
                turn_index=ev.turn_index,
                old_value=old,
                new_value=new,
                n_turns=dialogue.n_turns,
                later_update_turn_ids=tuple(ev.later),
                alias_equivalent=is_alias_equivalent(old, new, dialogue.dataset),
                value_present=value_present(new, texts, ds),
                s_evidence=evidence_turns(new, texts, ds),
            )
        )
    return out


def corpus_transitions(
    dialogues: Iterable[Dialogue],
) -> Iterator[tuple[Dialogue, list[Transition]]]:
    """(dialogue, its transitions) for every dialogue, in corpus order."""
    for d in dialogues:
        yield d, dialogue_transitions(d)


# --- statistics ---------------------------------------------------------------------------

STAT_FIELDS: tuple[tuple[str, str], ...] = (
    ("dialogues", "dialogues"),
    ("dialogues_with_change", "dialogues with a change"),
    ("change_events", "change events"),
    ("changed_pairs", "(dialogue, slot) pairs with a change"),
    ("final_updates", "final change events"),
    ("alias_excluded", "final, alias-equivalent"),
    ("value_absent", "final, not alias, value absent"),
    ("p2_eligible", "P2-eligible"),
    ("p3_eligible", "P3-eligible"),
)


@dataclass
class TransitionStats:
    """Counts of one set of dialogues (a row of the statistics table)."""

    name: str
    dialogues: int = 0
    dialogues_with_change: int = 0
    change_events: int = 0
    changed_pairs: int = 0
    final_updates: int = 0
    alias_excluded: int = 0
    value_absent: int = 0
    p2_eligible: int = 0
    p3_eligible: int = 0

    def add(self, transitions: Sequence[Transition]) -> None:
        """Count one dialogue's transitions."""
        self.dialogues += 1
        if not transitions:
            return
        self.dialogues_with_change += 1
        self.change_events += len(transitions)
        self.changed_pairs += len({t.key for t in transitions})
        for t in transitions:
            if not t.is_final:
                continue
            self.final_updates += 1
            self.p3_eligible += t.p3_eligible
            if t.alias_equivalent:
                self.alias_excluded += 1
            elif not t.value_present:
                self.value_absent += 1
            else:
                self.p2_eligible += 1

    def merged(self, other: TransitionStats, name: str) -> TransitionStats:
        out = TransitionStats(name)
        for key, _ in STAT_FIELDS:
            setattr(out, key, getattr(self, key) + getattr(other, key))
        return out

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def corpus_stats(
    pairs: Iterable[tuple[Dialogue, Sequence[Transition]]], corpus: str
) -> list[TransitionStats]:
    """One stats row per split (``<corpus> <split>``, in first-seen order) plus ``all`` when
    there are several splits."""
    by_split: dict[str, TransitionStats] = {}
    for dialogue, transitions in pairs:
        name = f"{corpus} {dialogue.split}".strip()
        by_split.setdefault(name, TransitionStats(name)).add(transitions)
    rows = list(by_split.values())
    if len(rows) > 1:
        total = TransitionStats(f"{corpus} all")
        for row in rows:
            total = total.merged(row, total.name)
        rows.append(total)
    return rows


def format_table(rows: Sequence[TransitionStats]) -> str:
    """Markdown table of stats rows."""
    header = "| set | " + " | ".join(label for _, label in STAT_FIELDS) + " |"
    sep = "|---|" + "---|" * len(STAT_FIELDS)
    lines = [header, sep]
    for row in rows:
        cells = " | ".join(str(getattr(row, key)) for key, _ in STAT_FIELDS)
        lines.append(f"| {row.name} | {cells} |")
    return "\n".join(lines)
