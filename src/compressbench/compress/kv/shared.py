"""Kept positions of many presses and ratios from one forward pass per prompt.

kvpress compresses layer ``l``'s cache in a forward hook that runs *after* layer ``l``'s
attention has used every key, so a pressed prefill computes the same hidden states, keys,
values and attention weights as a plain one; a press only chooses which rows of each layer's
cache to keep, from those tensors (SnapKV, PyramidKV and ChunkKV from the window attention of
the last queries, StreamingLLM from positions alone). One plain forward that captures, per
layer, what ``compress`` would get therefore lets every press and ratio be replayed layer by
layer: the same ``compress`` call on the same tensors keeps the same rows.

A context-only press prefills the part of the prompt before the question marker, so by default
that sequence gets its own forward (one per distinct prefilled sequence: 2 per prompt when both
modes are asked for). With ``share_prefix`` it is cut from the full prompt's forward instead: a
causal model's states for a prefix are mathematically the longer sequence's states cut at that
length, but not bit for bit (CPU kernels sum in another order for another length), and on real
SGD prompts that flipped a near-tie between two ChunkKV chunks in one layer of one of 96
(event, press, ratio) jobs (kept positions equal, one layer's count not:
``benchmarks/bench_kv_prefill.py --share-prefix``). Without it every job equals a separate
pressed prefill exactly.

Replay is limited to presses known to read only those tensors (:data:`REPLAYABLE`, nested
presses too); callers run :func:`~.generate.run_with_press` for any other.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from compressbench.compress.kv.build import window_size_of
from compressbench.compress.kv.generate import press_context
from compressbench.compress.kv.positions import (
    layer_positions,
    positions_summary,
    row_index,
    withholds_attentions,
)
from compressbench.compress.kv.record import DEFAULT_MAX_INPUT_TOKENS, DEFAULT_QUESTION_MARKER

REPLAYABLE = frozenset({"SnapKVPress", "PyramidKVPress", "StreamingLLMPress", "ChunkKVPress"})


def replayable(press: Any) -> bool:
    """True if ``press`` (and any press nested in it) is in :data:`REPLAYABLE`."""
    inner = getattr(press, "press", None)
    return type(press).__name__ in REPLAYABLE and (inner is None or replayable(inner))


@dataclass(frozen=True)
class PressJob:
    """One press in one mode, as :func:`~.generate.run_with_press` would run it."""

    press: Any
    mode: str
    question_marker: str = DEFAULT_QUESTION_MARKER


@dataclass
class _Layer:
    module: Any
    hidden: Any  # [1, T, d]: the attention layer's input
    keys: Any  # [1, h, T, d]
    values: Any
    attention_rows: dict[int, Any] = field(default_factory=dict)  # length n -> weights' rows


@dataclass
class Prefill:
    """What every layer's ``compress`` gets in a prefill of ``ids``, for prefixes too."""

    ids: tuple[int, ...]
    layers: list[_Layer]
    position_embeddings: tuple[Any, Any]
    scores: dict[Any, Any] = field(default_factory=dict)  # shared by presses replayed from it
    row_indexes: dict[tuple[int, int], Any] = field(default_factory=dict)  # (layer, n) -> index


def _layers(model: Any) -> Any:
    inner = model.model
    return (inner.language_model if hasattr(inner, "language_model") else inner).layers


def capture(model: Any, ids: Sequence[int], rows: Mapping[int, int]) -> Prefill:
    """One plain forward over ``ids``. ``rows`` maps a prefix length ``n`` to how many of the
    last query rows of the (eager) attention weights over its first ``n`` keys to keep
    (0: all ``n``); under SDPA there are no weights and presses get None, as in a prefill."""
    import torch
    from transformers import DynamicCache

    got: dict[int, _Layer] = {}
    pe: list[Any] = []

    def hook(module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> None:
        layer = kwargs["past_key_values"].layers[module.layer_idx]
        weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
        kept = {}
        if weights is not None:
            for n, w in rows.items():
                kept[n] = weights[..., (n - w if w else 0) : n, :n]
        got[module.layer_idx] = _Layer(
            module, kwargs["hidden_states"], layer.keys, layer.values, kept
        )
        pe[:] = [kwargs["position_embeddings"]]

    device = next(model.parameters()).device
    handles = [
        layer.self_attn.register_forward_hook(hook, with_kwargs=True) for layer in _layers(model)
    ]
    try:
        with torch.inference_mode():
            model(
                input_ids=torch.tensor([list(ids)], dtype=torch.long, device=device),
                past_key_values=DynamicCache(),
                position_ids=torch.arange(len(ids), device=device).unsqueeze(0),
                use_cache=True,
                logits_to_keep=1,
            )
    finally:
        for h in handles:
            h.remove()
    return Prefill(tuple(ids), [got[i] for i in sorted(got)], pe[0])


# Presses whose ``score`` does not depend on ``compression_ratio`` (PyramidKV inherits
# SnapKV's): one score per (window, kernel, layer, length, attentions given) serves them all.
RATIO_FREE_SCORES = frozenset({"SnapKVPress", "PyramidKVPress"})


@contextmanager
def _shared_scores(press: Any, memo: dict[Any, Any]) -> Iterator[None]:
    """Memoise the scorer's ``score`` in ``memo`` while replaying ``press`` (ChunkKV: its inner
    press), so ratios and presses with the same scorer settings score each layer once."""
    scorer = getattr(press, "press", None) or press
    if type(scorer).__name__ not in RATIO_FREE_SCORES:
        yield
        return
    original = scorer.score
    setting = (scorer.window_size, scorer.kernel_size)

    def score(module: Any, hidden: Any, keys: Any, values: Any, att: Any, kwargs: Any) -> Any:
        key = (*setting, module.layer_idx, keys.shape[-2], att is None)
        if key not in memo:
            memo[key] = original(module, hidden, keys, values, att, kwargs)
        return memo[key]

    scorer.score = score
    try:
        yield
    finally:
        del scorer.score


def replay(model: Any, press: Any, prefill: Prefill, n: int) -> tuple[list[int], dict[int, Any]]:
    """Per layer, the entries ``press`` keeps of the first ``n`` prefilled tokens and their
    positions (as :func:`~.positions.instrumented` records them). Scores and key-row indexes
    are kept on ``prefill`` for the next press replayed from it."""
    import torch

    press.post_init_from_model(model)
    withhold = withholds_attentions(press)
    cos, sin = prefill.position_embeddings
    kwargs = {
        "position_embeddings": (cos[:, :n], sin[:, :n]),
        "cache_position": torch.arange(n, device=cos.device),
    }
    kept: list[int] = []
    positions: dict[int, Any] = {}
    with torch.inference_mode(), _shared_scores(press, prefill.scores):
        for i, layer in enumerate(prefill.layers):
            keys = layer.keys[:, :, :n].contiguous()
            values = layer.values[:, :, :n].contiguous()
            attentions = None if withhold else layer.attention_rows.get(n)
            new_keys, _ = press.compress(
                layer.module, layer.hidden[:, :n], keys, values, attentions, kwargs
            )
            kept.append(int(new_keys.shape[-2]))
            if (i, n) not in prefill.row_indexes:
                prefill.row_indexes[(i, n)] = row_index(keys)
            positions[i] = layer_positions(
                layer.module, keys, new_keys, prefill.row_indexes[(i, n)]
            )
    return kept, positions


def kept_positions_many(
    model: Any,
    tokenizer: Any,
    prompt_text: str,
    jobs: Mapping[Hashable, PressJob],
    *,
    prompt_ids: Sequence[int] | None = None,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    share_prefix: bool = False,
    question_at: int | None = None,
) -> tuple[dict[Hashable, dict[str, Any]], int]:
    """For every job: ``mode``, ``fallback_reason``, ``context_tokens``,
    ``kept_entries_per_layer`` and the kept positions and text (the fields of
    :class:`~.record.KVRecord`), all from one forward per distinct prefilled sequence
    (``share_prefix``: per sequence that is not a prefix of another; see the module notes).
    ``question_at``: where the question starts in ``prompt_text`` (None: at the job's question
    marker, for a prompt whose request carries no question). Returns them and the number of
    forwards."""
    contexts = {
        key: press_context(
            tokenizer,
            prompt_text,
            job.press,
            job.mode,
            job.question_marker,
            max_input_tokens,
            prompt_ids,
            question_at,
        )
        for key, job in jobs.items()
    }
    bases: list[tuple[int, ...]] = []
    for seq in sorted({tuple(c[2]) for c in contexts.values()}, key=len, reverse=True):
        if not (share_prefix and any(b[: len(seq)] == seq for b in bases)):
            bases.append(seq)

    def base_of(ids: Sequence[int]) -> tuple[int, ...]:
        own = tuple(ids)
        return own if own in bases else next(b for b in bases if b[: len(own)] == own)

    windows: dict[tuple[int, ...], dict[int, list[int]]] = {b: {} for b in bases}
    for key, job in jobs.items():
        if not withholds_attentions(job.press):  # it gets the eager weights' last rows
            ids = contexts[key][2]
            windows[base_of(ids)].setdefault(len(ids), []).append(window_size_of(job.press))
    prefills = {
        b: capture(model, b, {n: 0 if 0 in ws else max(ws) for n, ws in windows[b].items()})
        for b in bases
    }
    out: dict[Hashable, dict[str, Any]] = {}
    for key, job in jobs.items():
        used, reason, ids, _ = contexts[key]
        kept, positions = replay(model, job.press, prefills[base_of(ids)], len(ids))
        out[key] = {
            "mode": used,
            "fallback_reason": reason,
            "context_tokens": len(ids),
            "kept_entries_per_layer": kept,
            **positions_summary(tokenizer, list(ids), kept, positions),
        }
    return out, len(bases)


class SharedPrefill:
    """Kept positions per (prompt, job); the first request for a prompt computes every
    registered job for it (:func:`kept_positions_many`, ``share_prefix`` passed on). Holds the
    results of the last ``max_prompts`` prompts; ``forwards`` counts the forward passes."""

    def __init__(self, max_prompts: int = 256, *, share_prefix: bool = False) -> None:
        self.share_prefix = share_prefix
        self.jobs: dict[Hashable, PressJob] = {}
        self.results: OrderedDict[Hashable, dict[Hashable, dict[str, Any]]] = OrderedDict()
        self.max_prompts = max_prompts
        self.forwards = 0

    def register(self, key: Hashable, job: PressJob) -> None:
        if not replayable(job.press):
            raise ValueError(f"{type(job.press).__name__} cannot be replayed from a prefill")
        self.jobs.setdefault(key, job)

    def get(
        self,
        model: Any,
        tokenizer: Any,
        prompt_text: str,
        prompt_ids: Sequence[int],
        key: Hashable,
        job: PressJob,
        max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
        *,
        question_at: int | None = None,
    ) -> dict[str, Any]:
        """The job's fields for this prompt (see :func:`kept_positions_many`)."""
        self.register(key, job)
        at = (prompt_text, tuple(prompt_ids), max_input_tokens, question_at)
        done = self.results.get(at, {})
        if key not in done:
            todo = {k: j for k, j in self.jobs.items() if k not in done}
            new, forwards = kept_positions_many(
                model,
                tokenizer,
                prompt_text,
                todo,
                prompt_ids=prompt_ids,
                max_input_tokens=max_input_tokens,
                share_prefix=self.share_prefix,
                question_at=question_at,
            )
            self.forwards += forwards
            done = {**done, **new}
            self.results[at] = done
        self.results.move_to_end(at)
        while len(self.results) > self.max_prompts:
            self.results.popitem(last=False)
        return done[key]
