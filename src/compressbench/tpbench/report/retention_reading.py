"""Retention versus reading (paper §6.1.4, Tables 6 and 7): per example, did the answer survive
compression and did the reader get it right?

An answer is *retained* when its normalised value occurs at phrase boundaries (spec §1.1, §1.2;
the P2-loose matcher) in what the reader was given: a turn selector's compressed context, or,
for a KV press, the text of the cache positions the press kept (the answer row's
``kv_record.kept_token_text``); when a press left no such record, retention is unknown and the
example counts in neither retained nor lost. Accuracy on the retained examples is not a method
ranking: each method is scored on the subset it keeps.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.errors import InputError
from compressbench.text.normalize import dataset_key, value_occurs_in_text
from compressbench.tpbench.probe_types import get_probe_type

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Example:
    """One answered probe: whether its value survived (None: unknown) and whether the reader
    was right."""

    probe_id: str
    seed: int
    dialogue_id: str
    slot: str
    retained: bool | None
    correct: bool


def kept_text(context: Row, answer: Row) -> str | None:
    """What the reader was given to find the value in: the press's kept-token text for a KV
    press (None when it recorded none), else the compressed context."""
    if answer.get("kv"):
        record = answer.get("kv_record") or {}
        text = record.get("kept_token_text")
        return text if isinstance(text, str) else None
    return str(context["compressed_text_used"])


def _key(row: Row) -> tuple[str, int, str]:
    return (str(row["probe_type"]), int(row["seed"]), str(row["probe_id"]))


def examples(
    contexts: Iterable[Row], scored: Iterable[Row], probe_type: str = "P2", metric: str = "strict"
) -> list[Example]:
    """The examples of one cell: each scored ``probe_type`` row joined with its context row by
    (probe type, seed, probe id); correct = ``scores.<metric>``."""
    field = get_probe_type(probe_type).retention_field  # P3: the value part of its answer
    if field is None:
        raise ValueError(f"probe type {probe_type} has no value retention could look for")
    by_key = {_key(c): c for c in contexts if c["probe_type"] == probe_type}
    out = []
    for row in scored:
        if row["probe_type"] != probe_type:
            continue
        context = by_key.get(_key(row))
        if context is None:
            raise InputError("no context row for this answer", record="|".join(map(str, _key(row))))
        text = kept_text(context, row)
        retained = (
            None
            if text is None
            else value_occurs_in_text(row[field], text, dataset_key(row["dataset"]))
        )
        out.append(
            Example(
                probe_id=str(row["probe_id"]),
                seed=int(row["seed"]),
                dialogue_id=str(row["dialogue_id"]),
                slot=str(row.get("slot") or ""),
                retained=retained,
                correct=bool(row["scores"][metric]),
            )
        )
    return out


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


@dataclass(frozen=True)
class Reading:
    """Counts of a set of examples and the rates they give (None where a denominator is 0)."""

    n: int
    n_unknown: int
    n_retained: int
    correct_retained: int
    n_lost: int
    correct_lost: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return _rate(self.correct, self.n)

    @property
    def retention(self) -> float | None:
        """Share of examples with known retention whose value survived."""
        return _rate(self.n_retained, self.n_retained + self.n_lost)

    @property
    def accuracy_retained(self) -> float | None:
        return _rate(self.correct_retained, self.n_retained)

    @property
    def accuracy_lost(self) -> float | None:
        return _rate(self.correct_lost, self.n_lost)


def reading(items: Iterable[Example]) -> Reading:
    """The counts of ``items``."""
    items = list(items)
    kept = [e for e in items if e.retained is True]
    lost = [e for e in items if e.retained is False]
    return Reading(
        n=len(items),
        n_unknown=sum(e.retained is None for e in items),
        n_retained=len(kept),
        correct_retained=sum(e.correct for e in kept),
        n_lost=len(lost),
        correct_lost=sum(e.correct for e in lost),
        correct=sum(e.correct for e in items),
    )


def by_seed(items: Iterable[Example]) -> dict[int, Reading]:
    """:func:`reading` per seed (seeds ascending)."""
    groups: dict[int, list[Example]] = defaultdict(list)
    for e in items:
        groups[e.seed].append(e)
    return {seed: reading(groups[seed]) for seed in sorted(groups)}


def by_group(items: Iterable[Example], group_of: Callable[[str], str]) -> dict[str, list[Example]]:
    """Examples by the group of their slot (e.g. the paper's Table 7 slot types)."""
    groups: dict[str, list[Example]] = defaultdict(list)
    for e in items:
        groups[group_of(e.slot)].append(e)
    return dict(sorted(groups.items()))


def seed_mean(per_seed: Sequence[Reading], rate: str) -> float | None:
    """Unweighted mean over seeds of one rate (seeds where it is undefined are left out)."""
    values = [v for r in per_seed if (v := getattr(r, rate)) is not None]
    return math.fsum(values) / len(values) if values else None
