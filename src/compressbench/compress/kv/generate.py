"""Greedy generation under a kvpress press, in one of two modes (plus ``context_shared``,
``context_only`` with one compression per distinct context: :mod:`.batched`).

- ``context_only``: the prompt before the *last* occurrence of ``question_marker`` (the system
  prompt and the dialogue) is prefilled with the press active; the question tail is then fed
  to the compressed cache and the answer generated without the press. Falls back to
  ``full_prompt`` (and records why) if the marker is missing or the context has at most
  ``window_size + 4`` tokens. This is how TPBench's ChunkKV rows were produced.
- ``full_prompt``: the whole prompt is prefilled under the press (the question is inside the
  compressed window), then the answer is generated. kvpress compresses only while
  prefilling, so generation never runs under the press.

Why not kvpress's own ``pipeline("kv-press-text-generation")`` (checked against kvpress
0.5.5, ``kvpress/pipeline.py``), which also prefills a context under a press, feeds a question
and decodes greedily at the original rotary positions:

1. its ``preprocess`` re-templates the context as one user message of the tokenizer's chat
   template (no system message; without a template it prepends BOS and appends ``"\\n"`` to
   the question), while TPBench prompts are rendered by the reader's template and must equal
   the no-press reader's prompt token for token;
2. it has no ``full_prompt`` mode: the first logits always come from a question forward
   after the prefill (it prefills through ``model.model`` without the LM head);
3. it feeds the question as one block, but per-layer budgets (PyramidKV, ChunkKV's short last
   chunk) leave layers of different lengths, which one causal mask cannot fit (under eager
   attention it is sized from layer 0); here such questions go token by token;
4. it returns decoded text and trims the cache, while the HF reader needs token ids and the
   record needs the cache measured after the question (``cache_entries_after_question``) and
   the kept positions (:mod:`compressbench.compress.kv.positions`).

The loop below is therefore kept: a prefill under ``press(model)`` (kvpress's own context
manager, which does the compression), then plain forwards at positions continuing from the
uncompressed length, as kvpress's pipeline does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.kv.build import compression_ratio_of, press_spec, window_size_of
from compressbench.compress.kv.positions import instrumented, positions_summary, unavailable
from compressbench.compress.kv.record import (
    DEFAULT_MAX_INPUT_TOKENS,
    DEFAULT_QUESTION_MARKER,
    KVRecord,
    check_mode,
)


def cache_lengths(cache: Any) -> list[int]:
    """Stored entries per layer of a transformers cache."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [
            int(layer.keys.shape[-2]) if layer.keys is not None and layer.keys.dim() == 4 else 0
            for layer in layers
        ]
    return [int(k.shape[-2]) for k in cache.key_cache]  # pragma: no cover - old transformers


def eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def _forward(
    model: Any, ids: list[int], cache: Any, start: int, device: Any, uneven: bool = False
) -> Any:
    """One forward over ``ids`` at rotary positions ``start...``; returns last-token logits.

    ``uneven``: the layers' caches hold different numbers of entries (per-layer budgets).
    SDPA and flash attention need no mask for one new query, but eager attention adds
    transformers' mask, sized from layer 0, which fits no other layer. A single new query may
    see every cached key, so under eager it gets a zero additive mask of shape ``[1, 1, 1, 1]``
    that broadcasts over any key length (the other implementations are left as they are).
    """
    import torch

    input_ids = torch.tensor([ids], dtype=torch.long, device=device)
    position_ids = torch.arange(start, start + len(ids), device=device).unsqueeze(0)
    extra: dict[str, Any] = {}
    if uneven and len(ids) != 1:
        raise ValueError("uneven per-layer caches take one token per forward")
    if uneven and getattr(model.config, "_attn_implementation", None) == "eager":
        extra["attention_mask"] = torch.zeros((1, 1, 1, 1), dtype=model.dtype, device=device)
    out = model(
        input_ids=input_ids,
        past_key_values=cache,
        position_ids=position_ids,
        use_cache=True,
        logits_to_keep=1,
        **extra,
    )
    return out.logits[0, -1]


@dataclass
class Pressed:
    """One prompt after its prefill under a press (and its question, fed without the press):
    where greedy decoding starts. ``info`` holds the :class:`KVRecord` measurements."""

    cache: Any  # the compressed cache (context, then question entries)
    logits: Any  # logits of the last fed token
    position: int  # rotary position of the next token
    uneven: bool  # the layers hold different numbers of entries
    info: dict[str, Any]


@dataclass
class Compressed:
    """A context prefilled under a press: its cache, last logits and measurements."""

    cache: Any
    logits: Any
    context_tokens: int
    kept: list[int]
    positions: dict[str, Any]  # kept positions and text, or why they are unavailable


def compress_context(
    model: Any,
    tokenizer: Any,
    context_ids: Sequence[int],
    press: Any,
    *,
    cache: Any = None,
    track_positions: bool = True,
) -> Compressed:
    """Prefill ``context_ids`` under ``press`` into ``cache`` (a new ``DynamicCache`` if None)."""
    import torch
    from transformers import DynamicCache

    device = next(model.parameters()).device
    if cache is None:
        cache = DynamicCache()
    positions: dict[int, Any] = {}
    with torch.inference_mode(), instrumented(press, positions, track_positions), press(model):
        logits = _forward(model, list(context_ids), cache, 0, device)
    kept = cache_lengths(cache)
    if track_positions:
        summary = positions_summary(tokenizer, list(context_ids), kept, positions)
    else:
        summary = unavailable("not tracked (track_positions=False)")
    return Compressed(cache, logits, len(context_ids), kept, summary)


def feed_question(model: Any, compressed: Compressed, question_ids: Sequence[int]) -> Pressed:
    """Feed ``question_ids`` (may be empty) to the compressed cache without the press: in one
    block when every layer holds as many entries, else token by token (see :func:`_forward`)."""
    import torch

    device = next(model.parameters()).device
    cache, logits, n_ctx = compressed.cache, compressed.logits, compressed.context_tokens
    uneven = len(set(compressed.kept)) > 1
    feed = None
    after_q: list[int] | None = None
    with torch.inference_mode():
        if question_ids:
            if not uneven:
                feed = "block"
                logits = _forward(model, list(question_ids), cache, n_ctx, device)
            else:
                feed = "token_by_token"
                for j, tok in enumerate(question_ids):
                    logits = _forward(model, [tok], cache, n_ctx + j, device, uneven)
            after_q = cache_lengths(cache)
    info: dict[str, Any] = {
        "kept_entries_per_layer": compressed.kept,
        "cache_entries_after_question": after_q,
        "question_feed": feed,
        **compressed.positions,
    }
    return Pressed(cache, logits, n_ctx + len(question_ids), uneven, info)


def decode_greedy(
    model: Any, pressed: Pressed, max_new_tokens: int, eos_token_ids: set[int]
) -> list[int]:
    """Greedy new ids from ``pressed`` (ending at the first eos, inclusive)."""
    import torch

    device = next(model.parameters()).device
    logits, pos = pressed.logits, pressed.position
    new_ids: list[int] = []
    with torch.inference_mode():
        for step in range(max_new_tokens):
            token = int(torch.argmax(logits).item())
            new_ids.append(token)
            if token in eos_token_ids or step == max_new_tokens - 1:
                break
            logits = _forward(model, [token], pressed.cache, pos, device, pressed.uneven)
            pos += 1
    return new_ids


def prefill_with_press(
    model: Any,
    tokenizer: Any,
    context_ids: Sequence[int],
    question_ids: Sequence[int],
    press: Any,
    *,
    cache: Any = None,
    track_positions: bool = True,
) -> Pressed:
    """:func:`compress_context` then :func:`feed_question`."""
    compressed = compress_context(
        model, tokenizer, context_ids, press, cache=cache, track_positions=track_positions
    )
    return feed_question(model, compressed, question_ids)


def generate_ids_with_press(
    model: Any,
    tokenizer: Any,
    context_ids: Sequence[int],
    question_ids: Sequence[int],
    press: Any,
    max_new_tokens: int,
    *,
    eos_token_ids: set[int] | None = None,
    cache: Any = None,
    track_positions: bool = True,
) -> tuple[list[int], dict[str, Any]]:
    """Prefill ``context_ids`` under ``press``, feed ``question_ids`` (may be empty) without it,
    then greedy-decode. Returns the new ids (ending at the first eos, inclusive) and the
    measurements (see :class:`KVRecord`). ``cache`` (an empty ``DynamicCache``) may be passed
    to inspect it afterwards; it then holds context, question and generated entries.
    ``track_positions=False`` skips recovering the kept positions (one hash pass over each
    layer's keys)."""
    eos = eos_token_ids if eos_token_ids is not None else eos_ids(model, tokenizer)
    pressed = prefill_with_press(
        model,
        tokenizer,
        context_ids,
        question_ids,
        press,
        cache=cache,
        track_positions=track_positions,
    )
    return decode_greedy(model, pressed, max_new_tokens, eos), pressed.info


def split_prompt(
    prompt_text: str, question_marker: str, question_at: int | None = None
) -> tuple[str, str] | None:
    """``(context, question tail)``: split at ``question_at`` (where the request's question
    starts in the prompt, :func:`~compressbench.readers.base.question_offset`), else at the
    last occurrence of ``question_marker`` (a prompt whose request carries no question), else
    None."""
    at = prompt_text.rfind(question_marker) if question_at is None else question_at
    if at < 0:
        return None
    return prompt_text[:at], prompt_text[at:]


def _encode(tokenizer: Any, text: str, special: bool) -> list[int]:
    return list(tokenizer(text, add_special_tokens=special)["input_ids"])


def press_context(
    tokenizer: Any,
    prompt_text: str,
    press: Any,
    mode: str = "context_only",
    question_marker: str = DEFAULT_QUESTION_MARKER,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    prompt_ids: Sequence[int] | None = None,
    question_at: int | None = None,
) -> tuple[str, str | None, list[int], list[int]]:
    """``(mode used, fallback reason, context ids, question ids)``: what is prefilled under
    ``press`` and what is fed after it (see :func:`run_with_press`; ``question_at``: where the
    question starts in ``prompt_text``, see :func:`split_prompt`)."""
    check_mode(mode)
    used, reason = ("context_only" if mode == "context_shared" else mode), None
    context_ids: list[int] = []
    question_ids: list[int] = []
    if used == "context_only":
        parts = split_prompt(prompt_text, question_marker, question_at)
        if parts is None:
            used, reason = "full_prompt", f"question marker {question_marker!r} not in prompt"
        else:
            context_ids = _encode(tokenizer, parts[0], special=False)[:max_input_tokens]
            question_ids = _encode(tokenizer, parts[1], special=False)
            limit = window_size_of(press) + 4
            if len(context_ids) <= limit:
                used = "full_prompt"
                reason = f"context has {len(context_ids)} tokens <= window_size + 4 = {limit}"
    if used == "full_prompt":
        ids = list(prompt_ids) if prompt_ids is not None else _encode(tokenizer, prompt_text, True)
        context_ids, question_ids = ids[-max_input_tokens:], []
    return used, reason, context_ids, question_ids


def run_with_press(
    model: Any,
    tokenizer: Any,
    prompt_text: str,
    press: Any,
    max_new_tokens: int,
    mode: str = "context_only",
    question_marker: str = DEFAULT_QUESTION_MARKER,
    *,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    prompt_ids: Sequence[int] | None = None,
    track_positions: bool = True,
    question_at: int | None = None,
) -> tuple[list[int], KVRecord]:
    """Greedy generation for one templated prompt under ``press`` (see module docstring).

    ``context_only`` tokenizes the context without special tokens, right-truncated at
    ``max_input_tokens``, and the question tail without special tokens. ``full_prompt``
    tokenizes the prompt with the tokenizer's default special tokens, left-truncated at
    ``max_input_tokens`` (the reader's rule), unless ``prompt_ids`` are given. The context ends
    where the question starts: at ``question_at`` when the request says where (a character
    offset in ``prompt_text``), else at the last ``question_marker``. Returns the new token ids
    and the :class:`KVRecord`.
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    used, reason, context_ids, question_ids = press_context(
        tokenizer,
        prompt_text,
        press,
        mode,
        question_marker,
        max_input_tokens,
        prompt_ids,
        question_at,
    )
    new_ids, info = generate_ids_with_press(
        model,
        tokenizer,
        context_ids,
        question_ids,
        press,
        max_new_tokens,
        track_positions=track_positions,
    )
    planned = Planned(mode, used, reason, context_ids, question_ids)
    return new_ids, kv_record(model, press, planned, info, len(new_ids))


@dataclass(frozen=True)
class Planned:
    """What :func:`press_context` chose for one prompt."""

    mode_requested: str
    mode: str
    fallback_reason: str | None
    context_ids: list[int]
    question_ids: list[int]


def kv_record(
    model: Any, press: Any, planned: Planned, info: dict[str, Any], new_tokens: int
) -> KVRecord:
    """The :class:`KVRecord` of one generation from its plan and measurements ``info``."""
    info = dict(info)
    kept = info.pop("kept_entries_per_layer")
    n_ctx = len(planned.context_ids)
    return KVRecord(
        mode_requested=planned.mode_requested,
        mode=planned.mode,
        press=press_spec(press),
        compression_ratio=compression_ratio_of(press),
        context_tokens=n_ctx,
        question_tokens=len(planned.question_ids),
        kept_entries_per_layer=kept,
        kept_fraction=(sum(kept) / len(kept) / n_ctx) if kept and n_ctx else 1.0,
        fallback_reason=planned.fallback_reason,
        new_tokens=new_tokens,
        attn_implementation=getattr(model.config, "_attn_implementation", None),
        **info,
    )


def generate_with_press(
    model: Any,
    tokenizer: Any,
    prompt_text: str,
    press: Any,
    max_new_tokens: int,
    mode: str = "context_only",
    question_marker: str = DEFAULT_QUESTION_MARKER,
    **kwargs: Any,
) -> tuple[str, KVRecord]:
    """:func:`run_with_press` returning the decoded answer (special tokens skipped)."""
    new_ids, record = run_with_press(
        model, tokenizer, prompt_text, press, max_new_tokens, mode, question_marker, **kwargs
    )
    return tokenizer.decode(new_ids, skip_special_tokens=True), record
