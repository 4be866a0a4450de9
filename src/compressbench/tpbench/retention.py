"""Answer-retention diagnostic (paper §6.1.3; reader-free): what did a compressor keep?

For every P2-eligible change event: does the current value survive compression, i.e. occur
as a complete phrase (spec §1.2 matcher on §1.1-normalised text) in the kept text? For every
P3-eligible event: does the initial goal (the first sentence of the first user turn, the P1
gold) survive the same way, and do both survive (joint)? The kept text is what each method
reports (:meth:`~compressbench.compress.method.Method.retained_text`): a turn selector's kept
turns' own texts joined by newlines (turn markers are left out so that a value such as "user"
cannot match a ``USER:`` label); a KV press's kept cache positions, decoded.

Budgets: ``budget_unit="dialogue_turns"`` (the published one: each selector's turn rule) or
``"reader_tokens"`` (every turn selector keeps at most ``floor(r * T)`` reader tokens, see
:mod:`compressbench.compress.token_budget`; span methods budget in reader tokens themselves,
presses in cache entries). Every row says which unit its method ran under. Stale values: for a
P2-eligible event whose superseded (old) value survives and is not part of the new value, was
the revision (the new value) kept too (``stale_revision_kept``)?
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compressbench.compress.method import TURN_BUDGET_UNIT, Method, ReaderHook, Source
from compressbench.compress.press_method import PressMethod
from compressbench.compress.registry import get_method
from compressbench.compress.token_budget import with_budget_unit
from compressbench.corpora.model import Dialogue
from compressbench.readers.base import ChatRequest
from compressbench.text.normalize import dataset_key, humanize_slot, normalize_value, phrase_occurs
from compressbench.tpbench.candidates import probe_id_for
from compressbench.tpbench.goals import goal_first_sentence, goal_text
from compressbench.tpbench.prompts import build_prompt, question
from compressbench.tpbench.retention_log import RetentionLog, dialogue_identity, method_fingerprint
from compressbench.tpbench.slot_types import slot_type
from compressbench.tpbench.transitions import Transition, dialogue_transitions


def survives(phrase: str, text: str, dataset: str) -> bool:
    """True iff the normalised phrase occurs at phrase boundaries in the normalised text."""
    ds = dataset_key(dataset)
    return phrase_occurs(normalize_value(phrase, ds), normalize_value(text, ds))


# A function from (dialogue, transition, ratio) to the kept text of that probe's context.
KeptTextFn = Callable[[Dialogue, Transition, float], str]


def method_kept_text(method: Method, reader: ReaderHook | None = None) -> KeptTextFn:
    """The kept text of any method at a ratio, as the method reports it
    (:meth:`~compressbench.compress.method.Method.retained_text`): for a text method its kept
    units' own texts; for a press the kept cache positions of the event's P2 prompt (full
    context, rendered as the reader sees it) prefilled on ``reader``'s model."""

    def kept(dialogue: Dialogue, t: Transition, ratio: float) -> str:
        pid = probe_id_for(dialogue.dataset, dialogue.dialogue_id, t.event_index)

        def p2_prompt(context: str) -> ChatRequest:
            prompt = build_prompt("P2", context, humanize_slot(t.slot))
            # prefilled only, no answer generated: the output budget is the default, unused
            return ChatRequest(pid, prompt.system, prompt.context, question=prompt.question)

        # the query a query-aware method reads: the event's P2 question
        source = Source(dialogue.turns, key=pid, query=question("P2", humanize_slot(t.slot)))
        return method.retained_text(source, ratio, p2_prompt, reader)

    return kept


def share_presses(
    reader: ReaderHook | None, methods: Iterable[Any], ratios: Sequence[float]
) -> None:
    """Register every press method x ratio with the reader's shared prefill (if it has one), so
    the first press asked about a prompt gets all of them from one forward pass
    (:mod:`compressbench.compress.kv.shared`)."""
    shared = None if reader is None else reader.shared_prefill
    if shared is None:
        return
    for method in methods:
        if not isinstance(method, PressMethod):  # only a press has a job to share
            continue
        for r in ratios:
            key, press_job = method.press_job(r)
            if press_job is not None:
                shared.register(key, press_job)


# One event's outcome: [event_index, slot, p2_eligible, p3_eligible, value_kept, goal_kept,
# stale_kept] (stale_kept: the old value survives, None where it cannot be told from the new one;
# logs written before it have six fields).
Outcome = list[Any]


def event_outcomes(
    dialogue: Dialogue, events: Sequence[Transition], goal: str, fn: KeptTextFn, ratio: float
) -> list[Outcome]:
    """Whether each event's current value (and, for P3 events, the goal) survives ``fn``."""
    out = []
    for t in events:
        text = fn(dialogue, t, ratio)
        goal_kept = survives(goal, text, dialogue.dataset) if t.p3_eligible else None
        value_kept = survives(t.new_value, text, dialogue.dataset)
        distinct = not survives(t.old_value, t.new_value, dialogue.dataset)
        stale = survives(t.old_value, text, dialogue.dataset) if distinct else None
        out.append(
            [t.event_index, t.slot, t.p2_eligible, t.p3_eligible, value_kept, goal_kept, stale]
        )
    return out


@dataclass
class RetentionCounts:
    """Counts behind one (dataset, method, ratio) row."""

    n: int = 0
    p2_kept: int = 0
    n_p3: int = 0
    goal_kept: int = 0
    joint_kept: int = 0
    n_stale: int = 0  # P2 events whose superseded value survives
    stale_revised: int = 0  # ... and whose new value survives with it
    by_slot_type: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def add(self, outcome: Outcome) -> None:
        _, slot, p2_eligible, p3_eligible, value_kept, goal_kept = outcome[:6]
        if p2_eligible and len(outcome) > 6 and outcome[6]:
            self.n_stale += 1
            self.stale_revised += value_kept
        if p2_eligible:
            self.n += 1
            self.p2_kept += value_kept
            group = self.by_slot_type[slot_type(slot)]
            group[0] += 1
            group[1] += value_kept
        if p3_eligible:
            self.n_p3 += 1
            self.goal_kept += goal_kept
            self.joint_kept += goal_kept and value_kept

    def row(self) -> dict[str, Any]:
        def rate(kept: int, n: int) -> float | None:
            return kept / n if n else None

        return {
            "n": self.n,
            "p2_retention": rate(self.p2_kept, self.n),
            "n_p3": self.n_p3,
            "p3_goal_retention": rate(self.goal_kept, self.n_p3),
            "p3_joint_retention": rate(self.joint_kept, self.n_p3),
            "n_stale": self.n_stale,
            "stale_revision_kept": rate(self.stale_revised, self.n_stale),
            "by_slot_type": {
                g: {"n": n, "p2_retention": rate(k, n)}
                for g, (n, k) in sorted(self.by_slot_type.items())
            },
        }


def retention_rows(
    dialogues: Iterable[Dialogue],
    methods: Sequence[str],
    ratios: Sequence[float],
    *,
    method_params: dict[str, Any] | None = None,
    reader: ReaderHook | None = None,
    reader_identity: dict[str, Any] | None = None,
    kept_text_fns: dict[str, KeptTextFn] | None = None,
    log: RetentionLog | None = None,
    progress: Callable[[Iterable[Any]], Iterable[Any]] = lambda x: x,
    budget_unit: str = TURN_BUDGET_UNIT,
    tokenizer: Any = None,
) -> list[dict[str, Any]]:
    """One row per (dataset, method, ratio): ``n``, the three retention rates, ``seconds``.

    Every method is built from the registry with its ``method_params``; methods that need the
    reader measure on ``reader`` and their log fingerprint adds ``reader_identity``.
    ``kept_text_fns`` replaces the kept text of some methods. With a ``log``, every (dialogue,
    method, ratio) it already holds is reused and every new one is appended as soon as its
    dialogue is done (resumable runs); ``seconds`` then counts the time the outcomes took when
    they were measured. ``budget_unit="reader_tokens"`` budgets every turn selector in reader
    tokens of ``tokenizer`` (None: the default reader's).
    """
    given, mp = kept_text_fns or {}, method_params or {}
    # a given kept-text function still reports the unit of its method (built without its params,
    # which may be meant for the given function only)
    built = {
        m: with_budget_unit(
            get_method(m, None if m in given else mp.get(m)), budget_unit, tokenizer
        )
        for m in methods
    }
    units = {m: built[m].budget_unit for m in methods}
    fns = {m: given.get(m) or method_kept_text(built[m], reader) for m in methods}
    share_presses(reader, [built[m] for m in methods if m not in given], ratios)

    def fingerprint_params(m: str) -> dict[str, Any]:
        needs_reader = m not in given and built[m].needs_reader
        # the budget unit joins the fingerprint only where it is not the published one
        unit = {} if units[m] == TURN_BUDGET_UNIT else {"budget_unit": units[m]}
        return {**mp.get(m, {}), **((reader_identity or {}) if needs_reader else {}), **unit}

    prints = {m: method_fingerprint(m, fingerprint_params(m)) for m in methods}
    counts: dict[tuple[str, str, float], RetentionCounts] = defaultdict(RetentionCounts)
    seconds: dict[tuple[str, str, float], float] = defaultdict(float)
    for dialogue in progress(dialogues):
        events = [t for t in dialogue_transitions(dialogue) if t.p2_eligible or t.p3_eligible]
        if not events:
            continue
        goal = goal_first_sentence(goal_text(dialogue.turns))
        # The content hash keys the log; without a log nothing needs it.
        identity = dialogue_identity(dialogue) if log is not None else {}
        new: list[dict[str, Any]] = []
        for method, fn in fns.items():
            for ratio in ratios:
                record = log.get(identity, prints[method], ratio) if log is not None else None
                if record is None:
                    start = time.perf_counter()
                    outcomes = event_outcomes(dialogue, events, goal, fn, ratio)
                    record = {
                        **identity,
                        "method": method,
                        "fingerprint": prints[method],
                        "ratio": ratio,
                        "seconds": time.perf_counter() - start,
                        "events": outcomes,
                    }
                    new.append(record)
                key = (dialogue.dataset, method, ratio)
                for outcome in record["events"]:
                    counts[key].add(outcome)
                seconds[key] += record["seconds"]
        if log is not None:
            log.append(new)
    return [
        {
            "dataset": ds,
            "method": m,
            "ratio": r,
            "budget_unit": units[m],
            **counts[(ds, m, r)].row(),
            "seconds": seconds[(ds, m, r)],
        }
        for (ds, m, r) in sorted(counts, key=lambda k: (k[0], methods.index(k[1]), k[2]))
    ]
