"""Probe construction (spec §3.4-§3.7): the candidate pool, P1/P2/P3 sampling, probe records.

* **Pool** - every change event of the corpus is a candidate question, in corpus order, with the
  stable id ``<dataset>:<dialogue_id>:qa<NN>`` (``NN`` = the event's index in its dialogue).
* **P1 / P2** (§3.6) - ``random.Random(seed).shuffle`` a copy of the pool, take the first ``n``;
  P1 = all of them (gold: the goal's first sentence), P2 = those passing §3.4 (final update, not
  alias-equivalent, value present; gold: the new value), in shuffled order.
* **P3** (§3.5, §3.6) - eligible ids sorted, ``random.Random(seed).sample(eligible, min(n, m))``,
  sorted again; gold ``"<story label>; <slot human>: <new value>"``.

One :class:`ProbeRecord` per (probe type, seed, ratio, question); it carries the dialogue's turns
so later stages need no corpus.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from compressbench.compress.budgets import budget_k
from compressbench.corpora.model import SYSTEM, USER, Dialogue, Turn
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl
from compressbench.text.normalize import humanize_slot
from compressbench.tpbench.goals import goal_first_sentence, goal_text, normalize_task
from compressbench.tpbench.prompts import ARTIFACT_PROBE_TYPES
from compressbench.tpbench.transitions import Transition, dialogue_transitions

PROBE_TYPES: tuple[str, ...] = ("P1", "P2", "P3")
DEFAULT_N = 200


def probe_id_for(dataset: str, dialogue_id: str, event_index: int) -> str:
    """Stable probe id ``<dataset>:<dialogue_id>:qa<NN>``."""
    return f"{dataset}:{dialogue_id}:qa{event_index:02d}"


@dataclass(frozen=True)
class Candidate:
    """A candidate question: one change event of one dialogue."""

    probe_id: str
    dialogue: Dialogue
    transition: Transition


def candidate_pool(dialogues: Iterable[Dialogue]) -> list[Candidate]:
    """Every change event as a candidate, in corpus order; ids must be unique."""
    pool: list[Candidate] = []
    seen: dict[str, str] = {}
    for d in dialogues:
        for t in dialogue_transitions(d):
            pid = probe_id_for(d.dataset, d.dialogue_id, t.event_index)
            if pid in seen:
                raise InputError(
                    f"probe id {pid} occurs in split {seen[pid] or '?'} and in split "
                    f"{d.split or '?'} (dialogue ids repeat across splits); build probes from "
                    "one split at a time",
                    file=d.source or None,
                    record=d.dialogue_id,
                )
            seen[pid] = d.split
            pool.append(Candidate(pid, d, t))
    return pool


# --- sampling (spec §3.6) -------------------------------------------------------------------


def sample_questions(pool: Sequence[Candidate], seed: int, n: int) -> list[Candidate]:
    """The P1/P2 sample: shuffle a copy of the pool with ``Random(seed)``, keep the first ``n``."""
    shuffled = list(pool)
    random.Random(seed).shuffle(shuffled)
    return shuffled[:n]


def sample_p1(pool: Sequence[Candidate], seed: int, n: int) -> list[Candidate]:
    return sample_questions(pool, seed, n)


def sample_p2(pool: Sequence[Candidate], seed: int, n: int) -> list[Candidate]:
    """Survivors of the §3.4 filters among the P1/P2 sample, in sampled order."""
    return [c for c in sample_questions(pool, seed, n) if c.transition.p2_eligible]


def sample_p3(pool: Sequence[Candidate], seed: int, n: int) -> list[Candidate]:
    """Sorted ``Random(seed).sample`` of the sorted P3-eligible ids."""
    by_id = {c.probe_id: c for c in pool if c.transition.p3_eligible}
    eligible = sorted(by_id)
    picked = random.Random(seed).sample(eligible, min(n, len(eligible)))
    return [by_id[pid] for pid in sorted(picked)]


SAMPLERS = {"P1": sample_p1, "P2": sample_p2, "P3": sample_p3}


# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeRecord:
    """One probe of one cell (the probes stage record)."""

    probe_id: str
    probe_type: str  # "P1" | "P2" | "P3" (paper names)
    dataset: str
    dialogue_id: str
    seed: int
    ratio: float
    slot: str
    slot_human: str
    old_value: str
    new_value: str
    gold: str
    turns: tuple[tuple[str, str], ...]  # (speaker, text), turn i at position i
    gold_value: str = ""
    gold_story_label: str = ""
    split: str = ""
    slot_key: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def artifact_probe_type(self) -> str:
        """The released artifact's name for this probe type (P2 -> "P3", P3 -> "P1_LATE")."""
        return ARTIFACT_PROBE_TYPES[self.probe_type]

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    def dialogue_turns(self) -> tuple[Turn, ...]:
        """The probe's dialogue as :class:`Turn` objects (index = position)."""
        return tuple(Turn(i, speaker, text) for i, (speaker, text) in enumerate(self.turns))

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["artifact_probe_type"] = self.artifact_probe_type
        row["turns"] = [list(t) for t in self.turns]
        row["meta"] = dict(self.meta)
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any], *, file: str = "", record: str = "") -> ProbeRecord:
        """Validate and rebuild a record written by :meth:`to_row`."""

        def fail(name: str, message: str) -> InputError:
            return InputError(message, file=file or None, record=record or None, field=name)

        def get(name: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
            if name not in row:
                if default is not None:
                    return default
                raise fail(name, "missing required field")
            value = row[name]
            if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
                raise fail(name, f"unexpected type {type(value).__name__}")
            return value

        probe_type = get("probe_type", str)
        if probe_type not in PROBE_TYPES:
            raise fail("probe_type", f"unknown probe type {probe_type!r} (P1, P2, P3)")
        raw_turns = get("turns", list)
        turns = []
        for i, t in enumerate(raw_turns):
            if not (isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t)):
                raise fail(f"turns[{i}]", "expected [speaker, text]")
            if t[0] not in (USER, SYSTEM):
                raise fail(f"turns[{i}]", f"unknown speaker {t[0]!r}")
            turns.append((t[0], t[1]))
        return cls(
            probe_id=get("probe_id", str),
            probe_type=probe_type,
            dataset=get("dataset", str),
            dialogue_id=get("dialogue_id", str),
            seed=get("seed", int),
            ratio=float(get("ratio", (int, float))),
            slot=get("slot", str, ""),
            slot_human=get("slot_human", str, ""),
            old_value=get("old_value", str, ""),
            new_value=get("new_value", str, ""),
            gold=get("gold", str),
            turns=tuple(turns),
            gold_value=get("gold_value", str, ""),
            gold_story_label=get("gold_story_label", str, ""),
            split=get("split", str, ""),
            slot_key=get("slot_key", str, ""),
            meta=get("meta", dict, {}),
        )


def read_probes(path: str | Path) -> Iterator[ProbeRecord]:
    """Probe records of a probes JSONL file, validated (errors name file, line and field)."""
    for lineno, row in enumerate(read_jsonl(path), start=1):
        yield ProbeRecord.from_row(row, file=str(path), record=f"row {lineno}")


def _meta(c: Candidate, probe_type: str, seed: int, ratio: float) -> dict[str, Any]:
    t = c.transition
    meta: dict[str, Any] = {
        "n_turns": t.n_turns,
        "k_turns": budget_k(t.n_turns, ratio, "round"),
        "ratio": ratio,
        "sample_seed": seed,
        "budget_unit": "dialogue_turns",
        "origin_turn_id": t.turn_index,
        "rel_origin": t.rel_origin,
        "final_slot_update_turn_id": t.final_slot_update_turn_id,
        "is_final_slot_update": t.is_final,
        "later_slot_update_turn_ids": list(t.later_update_turn_ids),
        "alias_equivalent": t.alias_equivalent,
        "value_present": t.value_present,
    }
    if probe_type == "P2":
        meta.update(
            s_origin=list(t.s_origin),
            s_evidence=list(t.s_evidence),
            s_transition_support=list(t.s_transition_support),
        )
    if c.dialogue.source:  # file name only: output bytes must not depend on where corpora live
        meta["source_file"] = Path(c.dialogue.source).name
    return meta


def make_probe(c: Candidate, probe_type: str, seed: int, ratio: float) -> ProbeRecord:
    """The probe record of one sampled candidate in one cell."""
    t, d = c.transition, c.dialogue
    slot_human = humanize_slot(t.slot)
    goal = goal_text(d.turns)
    first_sentence = goal_first_sentence(goal)
    gold, gold_value, story = first_sentence, "", ""
    if probe_type == "P2":
        gold = gold_value = t.new_value
    elif probe_type == "P3":
        story = normalize_task(first_sentence or goal)
        gold_value = t.new_value
        gold = f"{story}; {slot_human}: {t.new_value}"
    return ProbeRecord(
        probe_id=c.probe_id,
        probe_type=probe_type,
        dataset=d.dataset,
        dialogue_id=d.dialogue_id,
        seed=seed,
        ratio=ratio,
        slot=t.slot,
        slot_human=slot_human,
        old_value=t.old_value,
        new_value=t.new_value,
        gold=gold,
        turns=tuple((turn.speaker, turn.text) for turn in d.turns),
        gold_value=gold_value,
        gold_story_label=story,
        split=d.split,
        slot_key=t.key,
        meta=_meta(c, probe_type, seed, ratio),
    )


@dataclass(frozen=True)
class Cell:
    """One (probe type, sample seed, ratio) cell of a dataset."""

    probe_type: str
    seed: int
    ratio: float


def cells(
    probe_types: Sequence[str],
    seeds: Sequence[int],
    ratios: Sequence[float],
    ratios_by_probe: Mapping[str, Sequence[float]] | None = None,
) -> list[Cell]:
    """The cell grid; ``ratios_by_probe`` overrides ``ratios`` per probe type."""
    overrides = ratios_by_probe or {}
    out = []
    for pt in probe_types:
        if pt not in SAMPLERS:
            raise InputError(f"unknown probe type {pt!r} (P1, P2, P3)", field="probes")
        for seed in seeds:
            for ratio in overrides.get(pt, ratios):
                out.append(Cell(pt, seed, ratio))
    return out


def build_probes(
    pool: Sequence[Candidate], grid: Iterable[Cell], n: int = DEFAULT_N
) -> Iterator[ProbeRecord]:
    """Probe records of every cell, cell by cell, in sampled order."""
    for cell in grid:
        for c in SAMPLERS[cell.probe_type](pool, cell.seed, n):
            yield make_probe(c, cell.probe_type, cell.seed, cell.ratio)
