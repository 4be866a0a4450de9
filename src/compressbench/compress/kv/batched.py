"""Press prompts answered in batches: each prompt compressed on its own, then decoded together.

kvpress compresses while a prompt is prefilled, and a press keeps a different number of cache
entries per prompt (and, under PyramidKV or ChunkKV's short last chunk, per layer). So:

1. every prompt is planned (:func:`~.generate.press_context`), prefilled under the press and
   has its question fed on its own, exactly as :func:`~.generate.run_with_press` does: the
   kept positions and the record are those of a one-at-a-time run;
2. the compressed caches are stacked layer by layer, each row left-padded with zeros to the
   longest row of that layer, and decoded together, one token per forward, every row at its
   own rotary position. A forward pre-hook on every attention module gives that layer its own
   additive mask ``[rows, 1, 1, keys]`` (0 on a row's entries, the dtype's minimum on its
   padding), so each row attends to exactly its own entries under eager and SDPA attention
   (the model's own mask, sized from layer 0, is replaced). Rows that reach eos leave the
   batch.

``context_shared`` mode (:data:`~.record.MODES`): prompts whose context (the text before the
question marker) tokenizes the same share one compression; each gets a copy of that cache and
feeds its own question. The compression is the same computation as ``context_only``'s, so
the answers and records equal ``context_only``'s but for ``mode_requested``.

Tested on CPU in fp32 with tiny Llamas for every registered preset: the answers are the
one-at-a-time answers token for token, the records identical
(``tests/compress/test_kv_batched.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from compressbench.compress.kv.generate import (
    Compressed,
    Planned,
    Pressed,
    compress_context,
    decode_greedy,
    feed_question,
    kv_record,
    press_context,
)
from compressbench.compress.kv.record import (
    DEFAULT_MAX_INPUT_TOKENS,
    DEFAULT_QUESTION_MARKER,
    KVRecord,
)

# Compressed contexts a ``context_shared`` store holds (the least recently used leave first).
DEFAULT_SHARED_CONTEXTS = 64


def _layers(model: Any) -> Any:
    inner = model.model
    return (inner.language_model if hasattr(inner, "language_model") else inner).layers


class ContextStore:
    """Compressed contexts by (press spec, context ids), for ``context_shared`` mode. A hit
    hands out a copy of the cache, so the stored one never sees a question."""

    def __init__(self, max_contexts: int = DEFAULT_SHARED_CONTEXTS) -> None:
        self.max_contexts = max_contexts
        self.entries: OrderedDict[tuple[Any, ...], Compressed] = OrderedDict()
        self.compressions = 0  # contexts prefilled under the press
        self.hits = 0  # prompts answered from a stored compression

    def get(self, key: tuple[Any, ...], compress: Any) -> Compressed:  # compress: () -> Compressed
        found = self.entries.get(key)
        if found is None:
            found = compress()
            self.compressions += 1
            self.entries[key] = found
            while len(self.entries) > self.max_contexts:
                self.entries.popitem(last=False)
        else:
            self.hits += 1
        self.entries.move_to_end(key)
        return Compressed(
            copy_cache(found.cache),
            found.logits,
            found.context_tokens,
            list(found.kept),
            dict(found.positions),
        )


def copy_cache(cache: Any) -> Any:
    """A ``DynamicCache`` holding copies of ``cache``'s keys and values."""
    from transformers import DynamicCache

    return DynamicCache(
        ddp_cache_data=[(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
    )


def prefill_rows(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    prompt_ids: Sequence[Sequence[int]],
    press: Any,
    mode: str,
    *,
    question_marker: str = DEFAULT_QUESTION_MARKER,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    track_positions: bool = True,
    store: ContextStore | None = None,
    questions_at: Sequence[int | None] | None = None,
) -> list[tuple[Planned, Pressed]]:
    """Every prompt planned, compressed under ``press`` and its question fed, one by one.
    ``store`` (``context_shared`` mode): compressions of contexts seen before are reused.
    ``questions_at``: where each prompt's question starts (see :func:`.generate.split_prompt`)."""
    from compressbench.compress.kv.build import press_spec

    spec_key = repr(press_spec(press))
    out = []
    starts = questions_at if questions_at is not None else [None] * len(prompts)
    for text, ids, at in zip(prompts, prompt_ids, starts, strict=True):
        used, reason, context_ids, question_ids = press_context(
            tokenizer, text, press, mode, question_marker, max_input_tokens, ids, at
        )
        planned = Planned(mode, used, reason, context_ids, question_ids)

        def compress(context: list[int] = context_ids) -> Compressed:
            return compress_context(
                model, tokenizer, context, press, track_positions=track_positions
            )

        if store is not None and used == "context_only":
            compressed = store.get((spec_key, track_positions, tuple(context_ids)), compress)
        else:
            compressed = compress()
        out.append((planned, feed_question(model, compressed, question_ids)))
    return out


@dataclass
class _Batch:
    """The rows still decoding: their index in the call, last token, next position."""

    rows: list[int]
    cache: Any
    valid: list[Any]  # per layer: [rows, keys] bool, True on a row's own entries


def _stack(model: Any, pressed: Sequence[Pressed], rows: list[int]) -> _Batch:
    """One cache for ``rows``: per layer, every row left-padded with zeros to the longest."""
    import torch
    import torch.nn.functional as F
    from transformers import DynamicCache

    data = []
    valid = []
    n_layers = len(pressed[rows[0]].cache.layers)
    for layer in range(n_layers):
        keys = [pressed[r].cache.layers[layer].keys for r in rows]
        values = [pressed[r].cache.layers[layer].values for r in rows]
        width = max(int(k.shape[-2]) for k in keys)
        pads = [width - int(k.shape[-2]) for k in keys]
        data.append(
            (
                torch.cat([F.pad(k, (0, 0, p, 0)) for k, p in zip(keys, pads, strict=True)]),
                torch.cat([F.pad(v, (0, 0, p, 0)) for v, p in zip(values, pads, strict=True)]),
            )
        )
        mask = torch.ones((len(rows), width), dtype=torch.bool, device=keys[0].device)
        for i, p in enumerate(pads):
            mask[i, :p] = False
        valid.append(mask)
    return _Batch(list(rows), DynamicCache(ddp_cache_data=data), valid)


def _keep(batch: _Batch, keep: list[int]) -> _Batch:
    """``batch`` restricted to its rows at positions ``keep``."""
    import torch

    index = torch.tensor(keep, dtype=torch.long, device=batch.valid[0].device)
    for layer in batch.cache.layers:
        layer.keys = layer.keys.index_select(0, index)
        layer.values = layer.values.index_select(0, index)
    return _Batch(
        [batch.rows[i] for i in keep], batch.cache, [v.index_select(0, index) for v in batch.valid]
    )


@contextmanager
def _per_layer_masks(model: Any, masks: list[Any]) -> Iterator[None]:
    """Every attention module gets ``masks[layer]`` as its attention mask while inside."""

    def hook(module: Any, args: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        kwargs["attention_mask"] = masks[module.layer_idx]
        return args, kwargs

    handles = [
        layer.self_attn.register_forward_pre_hook(hook, with_kwargs=True)
        for layer in _layers(model)
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def decode_together(
    model: Any, pressed: Sequence[Pressed], max_new_tokens: int, eos_token_ids: set[int]
) -> list[list[int]]:
    """Greedy new ids of every row (ending at its first eos, inclusive), the rows' compressed
    caches decoded together; each row's ids equal :func:`~.generate.decode_greedy`'s."""
    import torch

    if len(pressed) == 1:  # one row: the one-at-a-time loop itself
        return [decode_greedy(model, pressed[0], max_new_tokens, eos_token_ids)]
    device = next(model.parameters()).device
    new_ids = [[int(torch.argmax(p.logits).item())] for p in pressed]

    def running(i: int) -> bool:
        return new_ids[i][-1] not in eos_token_ids and len(new_ids[i]) < max_new_tokens

    rows = [i for i in range(len(pressed)) if running(i)]
    if not rows:
        return new_ids
    batch = _stack(model, pressed, rows)
    low = torch.finfo(model.dtype).min
    with torch.inference_mode():
        while batch.rows:
            n = len(batch.rows)
            grow = torch.ones((n, 1), dtype=torch.bool, device=device)
            batch.valid = [torch.cat([v, grow], dim=1) for v in batch.valid]
            masks = [
                torch.where(v, 0.0, low).to(model.dtype)[:, None, None, :] for v in batch.valid
            ]
            tokens = [new_ids[r][-1] for r in batch.rows]
            positions = [pressed[r].position + len(new_ids[r]) - 1 for r in batch.rows]
            with _per_layer_masks(model, masks):
                out = model(
                    input_ids=torch.tensor([[t] for t in tokens], dtype=torch.long, device=device),
                    past_key_values=batch.cache,
                    position_ids=torch.tensor([[p] for p in positions], device=device),
                    use_cache=True,
                    logits_to_keep=1,
                )
            for j, r in enumerate(batch.rows):
                new_ids[r].append(int(torch.argmax(out.logits[j, -1]).item()))
            keep = [j for j, r in enumerate(batch.rows) if running(r)]
            if len(keep) != n:
                batch = _keep(batch, keep) if keep else _Batch([], None, [])
    return new_ids


def run_batch_with_press(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    prompt_ids: Sequence[Sequence[int]],
    press: Any,
    max_new_tokens: int,
    mode: str,
    eos_token_ids: set[int],
    *,
    question_marker: str = DEFAULT_QUESTION_MARKER,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    track_positions: bool = True,
    store: ContextStore | None = None,
    questions_at: Sequence[int | None] | None = None,
) -> list[tuple[list[int], KVRecord]]:
    """:func:`~.generate.run_with_press` for many prompts: compressed one by one, decoded
    together. Returns the new ids and the record of every prompt, in order."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    done = prefill_rows(
        model,
        tokenizer,
        prompts,
        prompt_ids,
        press,
        mode,
        question_marker=question_marker,
        max_input_tokens=max_input_tokens,
        track_positions=track_positions,
        store=store,
        questions_at=questions_at,
    )
    new_ids = decode_together(model, [p for _, p in done], max_new_tokens, eos_token_ids)
    return [
        (ids, kv_record(model, press, planned, pressed.info, len(ids)))
        for ids, (planned, pressed) in zip(new_ids, done, strict=True)
    ]
