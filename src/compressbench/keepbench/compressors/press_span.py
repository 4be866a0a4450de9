"""What a KV press kept of a KEEP case's context: the kept context tokens, decoded in order.

The case becomes one reader prompt (:func:`press_prompt`: a short system line, then
``Context:\\n<context>\\n\\nQuestion: <query>`` through the reader's chat template, left-truncated
at its ``max_input_tokens``), prefilled under the press by
:func:`compressbench.compress.kv.generate.run_with_press` - the same call, mode handling
(``context_only`` falls back to ``full_prompt`` when the context is too short; the fallback
and its reason are returned) and kept-position recovery (positions kept by a majority of the
(layer, KV-head) slots, :mod:`compressbench.compress.kv.positions`) as TPBench's retention
diagnostic uses for a press. Only the kept positions inside the case's context are the
compressed text: template, system and question tokens are not part of the context. A token
belongs to the context when its character span (the fast tokenizer's offsets) lies wholly
inside the context's span in the templated prompt. Runs of kept tokens are decoded and joined
by :data:`~compressbench.compress.kv.positions.GAP`, as TPBench's kept text is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.kv.generate import press_context, run_with_press, split_prompt
from compressbench.compress.kv.positions import kept_text
from compressbench.compress.kv.record import DEFAULT_QUESTION_MARKER
from compressbench.compress.method import RetentionUnavailable
from compressbench.keepbench.cases import KeepCase
from compressbench.readers.base import ChatRequest, question_offset
from compressbench.readers.chat import encode, render_chat

PROMPT_VERSION = "v1"  # recorded; changing the prompt below changes the version
SYSTEM = "Answer the question using only the context."


def press_request(case: KeepCase) -> ChatRequest:
    """The prompt a press prefills for ``case``: the context, then its question (last, so
    ``context_only`` prefills everything before it)."""
    return ChatRequest(case.case_id, SYSTEM, f"Context:\n{case.context}", question=case.query)


def press_prompt(case: KeepCase) -> tuple[str, str]:
    """``(system, user)`` of :func:`press_request`."""
    request = press_request(case)
    return request.system, request.user


@dataclass(frozen=True)
class PressedContext:
    """The kept context text and what the prefill did (JSON-ready ``record``)."""

    text: str
    record: dict[str, Any]


def _offsets(
    tokenizer: Any,
    text: str,
    mode: str,
    ids: Sequence[int],
    max_input_tokens: int,
    question_at: int | None,
) -> list[tuple[int, int]]:
    """Character spans in ``text`` of the prefilled ``ids`` (tokenised again with offsets,
    exactly as :func:`~compressbench.compress.kv.generate.press_context` tokenised them)."""
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("KV presses on KEEP cases need a fast tokenizer (character offsets)")
    if mode == "full_prompt":
        enc = tokenizer(
            text, truncation=True, max_length=max_input_tokens, return_offsets_mapping=True
        )
        got, spans = list(enc["input_ids"]), list(enc["offset_mapping"])
    else:
        parts = split_prompt(text, DEFAULT_QUESTION_MARKER, question_at)
        assert parts is not None  # context_only ran, so the prompt splits
        enc = tokenizer(parts[0], add_special_tokens=False, return_offsets_mapping=True)
        got = list(enc["input_ids"])[:max_input_tokens]
        spans = list(enc["offset_mapping"])[:max_input_tokens]
    if got != list(ids):
        raise ValueError("token offsets do not match the prefilled ids")
    return [(int(a), int(b)) for a, b in spans]


def context_positions(
    tokenizer: Any,
    text: str,
    mode: str,
    ids: Sequence[int],
    context: str,
    max_input_tokens: int,
    question_at: int | None = None,
) -> list[int]:
    """Positions of ``ids`` (prefilled in ``mode`` from the templated ``text``) whose
    characters lie wholly inside ``context``'s span in ``text``."""
    start = text.find(context)
    if start < 0:
        raise ValueError("the chat template altered the context; its tokens cannot be found")
    end = start + len(context)
    spans = _offsets(tokenizer, text, mode, ids, max_input_tokens, question_at)
    return [i for i, (a, b) in enumerate(spans) if start <= a < b <= end]


def press_case(
    model: Any, tokenizer: Any, case: KeepCase, press: Any, mode: str, max_input_tokens: int
) -> PressedContext:
    """Prefill ``case``'s prompt under ``press`` in ``mode``; the kept context tokens' text.

    Raises :class:`~compressbench.compress.method.RetentionUnavailable` when the press's kept
    positions cannot be recovered (it masks or merges entries instead of pruning them).
    """
    request = press_request(case)
    text = render_chat(tokenizer, request.system, request.user)
    ids = encode(tokenizer, text, max_input_tokens)
    at = question_offset(text, request)  # where the question starts in the templated prompt
    _, kv = run_with_press(
        model,
        tokenizer,
        text,
        press,
        1,
        mode,
        max_input_tokens=max_input_tokens,
        prompt_ids=ids,
        question_at=at,
    )
    used, _, prefill, _ = press_context(
        tokenizer, text, press, mode, DEFAULT_QUESTION_MARKER, max_input_tokens, ids, at
    )
    if used != kv.mode or len(prefill) != kv.context_tokens:  # pragma: no cover - same call
        raise RuntimeError("press_context disagrees with run_with_press")
    if kv.kept_positions is None:
        raise RetentionUnavailable(kv.kept_tokens_unavailable_reason or "no kept positions")
    span = context_positions(tokenizer, text, used, prefill, case.context, max_input_tokens, at)
    inside = set(span)
    kept = [p for p in kv.kept_positions if p in inside]
    entries = kv.kept_entries_per_layer
    record = {
        "prompt_version": PROMPT_VERSION,
        "mode_requested": kv.mode_requested,
        "mode": kv.mode,
        "fallback_reason": kv.fallback_reason,
        "compression_ratio": kv.compression_ratio,
        "press_spec": kv.press,
        "prefill_tokens": kv.context_tokens,
        "question_tokens_after_press": kv.question_tokens,
        "kept_entries_mean": sum(entries) / len(entries) if entries else None,
        "prefill_kept_fraction": kv.kept_fraction,
        "context_tokens": len(span),
        "kept_context_tokens": len(kept),
        "kept_context_fraction": len(kept) / len(span) if span else None,
        "attn_implementation": kv.attn_implementation,
    }
    return PressedContext(kept_text(tokenizer, prefill, kept) if kept else "", record)
