"""Probe records (spec §3.4-§3.7): one per (probe type, seed, ratio, question) of a cell.

The probe types (their samplers and golds) are in :mod:`compressbench.tpbench.probe_types`;
the candidate pool in :mod:`compressbench.tpbench.candidates`. A record carries the dialogue's
turns so later stages need no corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from compressbench.compress.budgets import budget_k
from compressbench.corpora.model import SYSTEM, USER, Turn
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl
from compressbench.text.normalize import humanize_slot
from compressbench.tpbench.candidates import Candidate
from compressbench.tpbench.probe_types import PIPELINE_PROBES, PROBE_TYPES, get_probe_type

DEFAULT_N = 200


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
        return PROBE_TYPES[self.probe_type].artifact_name

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
        if probe_type not in PIPELINE_PROBES:
            allowed = ", ".join(PIPELINE_PROBES)
            raise fail("probe_type", f"unknown probe type {probe_type!r} ({allowed})")
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
        **PROBE_TYPES[probe_type].meta(t),
    }
    if c.dialogue.source:  # file name only: output bytes must not depend on where corpora live
        meta["source_file"] = Path(c.dialogue.source).name
    return meta


def make_probe(c: Candidate, probe_type: str, seed: int, ratio: float) -> ProbeRecord:
    """The probe record of one sampled candidate in one cell."""
    t, d = c.transition, c.dialogue
    slot_human = humanize_slot(t.slot)
    gold_of = get_probe_type(probe_type, pipeline=True).gold
    assert gold_of is not None  # every pipeline probe type has one
    gold = gold_of(c, slot_human)
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
        gold=gold.gold,
        turns=tuple((turn.speaker, turn.text) for turn in d.turns),
        gold_value=gold.value,
        gold_story_label=gold.story_label,
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
        if pt not in PIPELINE_PROBES:
            allowed = ", ".join(PIPELINE_PROBES)
            raise InputError(f"unknown probe type {pt!r} ({allowed})", field="probes")
        for seed in seeds:
            for ratio in overrides.get(pt, ratios):
                out.append(Cell(pt, seed, ratio))
    return out


def build_probes(
    pool: Sequence[Candidate], grid: Iterable[Cell], n: int = DEFAULT_N
) -> Iterator[ProbeRecord]:
    """Probe records of every cell, cell by cell, in sampled order."""
    for cell in grid:
        sample = PROBE_TYPES[cell.probe_type].sample
        assert sample is not None  # cells() admits pipeline probe types only
        for c in sample(pool, cell.seed, n):
            yield make_probe(c, cell.probe_type, cell.seed, cell.ratio)
