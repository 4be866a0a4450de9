"""The turns of a probe's dialogue that matter, and what a KV press kept of each turn.

Marks (from the probe's transition, the rules of :mod:`compressbench.tpbench.transitions`):
``goal`` the first USER turn (the P1 gold's source), ``update`` the USER turn where the slot
took its new value (``origin_turn_id``), ``later`` later USER turns that changed the slot
again, ``new`` / ``old`` the turns holding the new / old value at phrase boundaries (§3.12's
evidence rule, applied to each value).

A press keeps cache entries, not turns. Its record's ``kept_token_text`` holds the decoded
runs of kept context tokens (joined by :data:`~compressbench.compress.kv.positions.GAP`); each
run is found, in order, in the rendered context, and a turn's kept share is the share of its
characters those runs cover. Runs not found verbatim (a tokenizer that does not decode back
to the text) are counted, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.kv.positions import GAP
from compressbench.corpora.model import USER
from compressbench.text.normalize import dataset_key, normalize_value
from compressbench.tpbench.transitions import evidence_turns

MARK_KEYS = ("goal", "update", "later", "new", "old")


def turn_marks(
    turns: Sequence[Sequence[str]],
    meta: Mapping[str, Any],
    old_value: str,
    new_value: str,
    dataset: str,
) -> dict[str, list[int]]:
    """Turn indices per mark (see the module docstring); empty lists where none applies."""
    ds = dataset_key(dataset)
    texts = [normalize_value(t[1], ds) for t in turns]
    goal = next((i for i, t in enumerate(turns) if t[0] == USER), None)
    origin = meta.get("origin_turn_id")
    return {
        "goal": [] if goal is None else [goal],
        "update": [int(origin)] if isinstance(origin, int) else [],
        "later": [int(i) for i in meta.get("later_slot_update_turn_ids") or ()],
        "new": list(evidence_turns(new_value, texts, ds)) if new_value else [],
        "old": list(evidence_turns(old_value, texts, ds)) if old_value else [],
    }


@dataclass(frozen=True)
class Heat:
    """A press's kept share of each turn (None where the turn's text was not found)."""

    shares: list[float | None]
    runs: int
    runs_found: int

    def to_dict(self) -> dict[str, Any]:
        return {"shares": self.shares, "runs": self.runs, "runs_found": self.runs_found}


def turn_spans(context: str, turns: Sequence[Sequence[str]]) -> list[tuple[int, int] | None]:
    """Character span of each turn's text in the rendered ``context``, found in order."""
    spans: list[tuple[int, int] | None] = []
    at = 0
    for _, text in turns:
        start = context.find(text, at) if text else -1
        if start < 0:
            spans.append(None)
            continue
        spans.append((start, start + len(text)))
        at = start + len(text)
    return spans


def _kept_chars(context: str, kept_text: str) -> tuple[list[bool], int, int]:
    covered = [False] * len(context)
    runs = [r for r in kept_text.split(GAP) if r.strip()]
    found, at = 0, 0
    for run in runs:
        needle = run.strip()
        start = context.find(needle, at)
        if start < 0:
            continue
        found += 1
        for i in range(start, start + len(needle)):
            covered[i] = True
        at = start + len(needle)
    return covered, len(runs), found


def press_heat(
    context: str, turns: Sequence[Sequence[str]], record: Mapping[str, Any] | None
) -> Heat | None:
    """Each turn's kept share under a press, from its answer's KV record (None without a
    record or without recovered kept tokens)."""
    if not record or not isinstance(record.get("kept_token_text"), str):
        return None
    covered, runs, found = _kept_chars(context, record["kept_token_text"])
    shares: list[float | None] = []
    for span in turn_spans(context, turns):
        if span is None or span[1] == span[0]:
            shares.append(None)
            continue
        kept = sum(covered[span[0] : span[1]])
        shares.append(round(kept / (span[1] - span[0]), 3))
    return Heat(shares, runs, found)
