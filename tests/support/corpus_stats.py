"""Turning-point statistics of loaded corpora, as defined in ../shared/corpora/README.md.

Test helper (not the project's transition builder): a *change event* is (dialogue, state key,
USER turn) where the key had a non-empty value set at the previous USER turn and a different
non-empty set now; it is *final* when no later USER turn alters that key's value set.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from compressbench.corpora.model import Dialogue
from compressbench.text.normalize import dataset_key, normalize_value


@dataclass(frozen=True)
class ChangeEvent:
    dialogue: Dialogue
    key: str
    turn: int
    old: tuple[str, ...]
    new: tuple[str, ...]
    final: bool

    @property
    def p3_eligible(self) -> bool:
        n = self.dialogue.n_turns
        return self.final and n >= 10 and self.turn >= 6 and self.turn / max(1, n - 1) >= 0.5

    @property
    def alias_equivalent(self) -> bool:
        return is_alias_equivalent(self.old[0], self.new[0], dataset_key(self.dialogue.dataset))

    @property
    def value_in_text(self) -> bool:
        ds = dataset_key(self.dialogue.dataset)
        value = normalize_value(self.new[0], ds)
        return bool(value) and any(value in normalize_value(t, ds) for t in self.dialogue.texts)

    @property
    def p2_eligible(self) -> bool:
        return self.final and not self.alias_equivalent and self.value_in_text


def is_alias_equivalent(old: str, new: str, dataset: str = "") -> bool:
    """Spec §3.3: equal after normalisation, or one (>= 3 chars) a plain substring of the other."""
    a, b = normalize_value(old, dataset), normalize_value(new, dataset)
    if not a or not b:
        return False
    a, b = a.split(",")[0].strip(), b.split(",")[0].strip()
    return a == b or (min(len(a), len(b)) >= 3 and (a in b or b in a))


def change_events(dialogue: Dialogue) -> list[ChangeEvent]:
    """All change events of one dialogue, in turn order."""
    history: list[tuple[int, dict[str, frozenset[str]], dict[str, tuple[str, ...]]]] = []
    for turn in dialogue.turns:
        if turn.state is not None:
            sets = {k: frozenset(v) for k, v in turn.state.items() if v}
            history.append((turn.index, sets, turn.state))
    raw: list[tuple[str, int, int]] = []  # key, history position, turn index
    for pos in range(1, len(history)):
        prev, cur = history[pos - 1][1], history[pos][1]
        for key, values in cur.items():
            if key in prev and prev[key] != values:
                raw.append((key, pos, history[pos][0]))
    events = []
    for key, pos, index in raw:
        value = history[pos][1][key]
        final = all(h[1].get(key) == value for h in history[pos + 1 :])
        old, new = history[pos - 1][2][key], history[pos][2][key]
        events.append(ChangeEvent(dialogue, key, index, old, new, final))
    return events


@dataclass(frozen=True)
class CorpusStats:
    dialogues: int
    dialogues_with_change: int
    change_events: int
    changed_pairs: int
    final_events: int
    p3_like: int


def corpus_stats(dialogues: Iterable[Dialogue]) -> CorpusStats:
    """The columns of the reference-statistics table in ../shared/corpora/README.md."""
    n = with_change = n_events = pairs = final = p3 = 0
    for dialogue in dialogues:
        n += 1
        events = change_events(dialogue)
        with_change += bool(events)
        n_events += len(events)
        pairs += len({e.key for e in events})
        final += sum(e.final for e in events)
        p3 += sum(e.p3_eligible for e in events)
    return CorpusStats(n, with_change, n_events, pairs, final, p3)
