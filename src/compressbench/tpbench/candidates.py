"""The candidate pool of a corpus (spec §3.4, §3.6) and the two seeded draws probes sample with.

Every change event of the corpus is a candidate question, in corpus order, with the stable id
``<dataset>:<dialogue_id>:qa<NN>`` (``NN`` = the event's index in its dialogue).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from compressbench.corpora.model import Dialogue
from compressbench.errors import InputError
from compressbench.tpbench.transitions import Transition, dialogue_transitions

Sampler = Callable[[Sequence["Candidate"], int, int], list["Candidate"]]
"""``(pool, seed, n) -> sampled candidates``: how a probe type draws its questions."""


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


def sample_questions(pool: Sequence[Candidate], seed: int, n: int) -> list[Candidate]:
    """The P1/P2 draw: shuffle a copy of the pool with ``Random(seed)``, keep the first ``n``."""
    shuffled = list(pool)
    random.Random(seed).shuffle(shuffled)
    return shuffled[:n]


def sample_sorted_ids(
    pool: Sequence[Candidate], seed: int, n: int, eligible: Callable[[Candidate], bool]
) -> list[Candidate]:
    """The P3 draw: sorted ``Random(seed).sample`` of the sorted ids of the eligible candidates."""
    by_id = {c.probe_id: c for c in pool if eligible(c)}
    ids = sorted(by_id)
    picked = random.Random(seed).sample(ids, min(n, len(ids)))
    return [by_id[pid] for pid in sorted(picked)]
