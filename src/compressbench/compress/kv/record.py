"""What one generation under a press did, and the constants every KV module shares."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from compressbench.readers.base import QUESTION_JOIN
from compressbench.readers.defaults import DEFAULT_MAX_INPUT_TOKENS as DEFAULT_MAX_INPUT_TOKENS

BUDGET_UNIT = "kv_cache_entries"
# ``context_shared``: ``context_only``'s computation, with a context prefilled and compressed once
# and its cache copied for every prompt that has the same context (every probe of a dialogue);
# a label of its own, though each answer equals ``context_only``'s (tests/compress/test_kv_batched).
MODES = ("context_only", "full_prompt", "context_shared")
# Where a prompt whose request does not say where its question starts is split: the last
# occurrence of the question join without its trailing space (named in every press's cache key)
DEFAULT_QUESTION_MARKER = QUESTION_JOIN.rstrip()


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else ValueError."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


@dataclass
class KVRecord:
    """What one generation under a press did (JSON-ready through :meth:`to_dict`).

    ``kept_positions`` / ``kept_token_text`` are the context positions kept by at least half
    of the (layer, KV-head) slots, ``*_any`` those kept by at least one; when they cannot be
    recovered ``kept_tokens_unavailable_reason`` says why.
    """

    mode_requested: str
    mode: str
    press: dict[str, Any]
    compression_ratio: float | None
    context_tokens: int  # tokens prefilled under the press
    question_tokens: int  # tokens fed after compression (0 in full_prompt mode)
    kept_entries_per_layer: list[int]
    kept_fraction: float  # mean kept entries / context tokens
    budget_unit: str = BUDGET_UNIT
    fallback_reason: str | None = None
    cache_entries_after_question: list[int] | None = None
    question_feed: str | None = None  # "block" | "token_by_token" (context_only)
    new_tokens: int = 0
    attn_implementation: str | None = None
    kept_positions: list[int] | None = None  # kept by a majority of (layer, kv-head) slots
    kept_positions_any: list[int] | None = None  # kept by at least one slot
    kept_token_text: str | None = None  # text of kept_positions, runs joined by GAP
    kept_token_text_any: str | None = None
    kept_tokens_unavailable_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
