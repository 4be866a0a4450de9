"""Which context positions a press kept: exact row matching per layer, then head voting.

Presses that prune by gathering cache rows (SnapKV, PyramidKV, StreamingLLM, ChunkKV...) keep
exact copies of prefill keys, so each kept key row is matched back to its position by an
exact integer hash of its bytes. Presses keep different entries per head and layer:
``kept_positions`` are the positions kept by at least half of the (layer, KV-head) slots,
``kept_positions_any`` those kept by at least one; runs of kept tokens are decoded and joined
by :data:`GAP` so no phrase spans a gap. Presses that mask entries per head instead of pruning
them (AdaKV style) leave the cache full; then, and wherever positions cannot be recovered,
``kept_tokens_unavailable_reason`` says why.

kvpress's chunk presses assert ``attentions is None`` (they rescore from hidden states), so
:func:`instrumented` withholds eager attention weights from them; ChunkKV therefore also runs
with eager attention, the setting of the paper's ChunkKV P3 reader.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

GAP = " \u2026 "  # between non-contiguous runs of kept tokens in ``kept_token_text``
MASKED = "masked"  # per-layer marker: the press masked entries instead of pruning them
# kvpress presses that assert ``attentions is None`` (they rescore from hidden states).
_WITHHOLD_ATTENTIONS = frozenset(
    {"ChunkKVPress", "ChunkPress", "BlockPress", "EntropyGatedChunkKVPress"}
)


@functools.lru_cache(maxsize=4)
def _hash_weights(width: int) -> torch.Tensor:
    import torch

    gen = torch.Generator().manual_seed(20260928)
    return torch.randint(1, 2**31 - 1, (width,), generator=gen, dtype=torch.int64)


def _row_hashes(x: torch.Tensor) -> torch.Tensor:
    """Exact integer hash of every row ``x[..., t, :]`` from its bytes (order-free, exact)."""
    import torch

    raw = x.detach().contiguous()
    as_bytes = raw.view(torch.uint8).to(torch.int64)  # [..., t, d * itemsize], on x's device
    return (as_bytes * _hash_weights(as_bytes.shape[-1]).to(x.device)).sum(dim=-1)


def row_index(before: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per head of ``before`` ``[b, h, T, d]`` (batch row 0): the argsort of its row hashes
    and the sorted hashes, for :func:`match_kept_rows` (reusable across presses)."""
    import torch

    hb = _row_hashes(before[0])
    out = []
    for h in range(hb.shape[0]):
        order = torch.argsort(hb[h])
        out.append((order, hb[h][order]))
    return out


def match_kept_rows(
    before: torch.Tensor,
    after: torch.Tensor,
    index: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> torch.Tensor | None:
    """Positions in ``before`` ``[b, h, T, d]`` of each row of ``after`` ``[b, h, T', d]``.

    Returns ``[h, T']`` (batch row 0), or None if some kept row is not an exact copy of a
    prefill row (the press transformed keys instead of pruning them). ``index`` is
    :func:`row_index` of ``before`` when already computed.
    """
    import torch

    b0, a0 = before[0], after[0]
    index = index if index is not None else row_index(before)
    ha = _row_hashes(a0)  # [h, T']
    out = torch.empty(ha.shape, dtype=torch.long)
    for h, (order, sorted_h) in enumerate(index):
        idx = torch.searchsorted(sorted_h, ha[h]).clamp(max=sorted_h.numel() - 1)
        if not torch.equal(sorted_h[idx], ha[h]):
            return None
        pos = order[idx]
        if not torch.equal(b0[h][pos], a0[h]):
            return None
        out[h] = pos.cpu()
    return out


def withholds_attentions(press: Any) -> bool:
    """True for presses that assert ``attentions is None`` (they get None instead)."""
    return type(press).__name__ in _WITHHOLD_ATTENTIONS


def layer_positions(
    module: Any, keys: torch.Tensor, new_keys: torch.Tensor, index: Any = None
) -> Any:
    """One layer's kept positions ``[h, T']``, :data:`MASKED`, or None (see the module doc);
    ``index``: :func:`row_index` of ``keys`` if already computed."""
    if getattr(module, "masked_key_indices", None) is not None:
        return MASKED  # head-wise masking (AdaKV style), not pruning
    return match_kept_rows(keys, new_keys, index)


@contextmanager
def instrumented(press: Any, positions: dict[int, Any], track: bool = True) -> Iterator[None]:
    """Wrap ``press.compress`` for one prefill: withhold attentions where kvpress requires it,
    record the kept positions of every layer into ``positions`` (if ``track``)."""
    original = press.compress
    withhold = withholds_attentions(press)

    def compress(
        module: Any, hidden_states: Any, keys: Any, values: Any, attentions: Any, kwargs: Any
    ) -> tuple[Any, Any]:
        new_keys, new_values = original(
            module, hidden_states, keys, values, None if withhold else attentions, kwargs
        )
        if track:
            layer = int(getattr(module, "layer_idx", len(positions)))
            positions[layer] = layer_positions(module, keys, new_keys)
        return new_keys, new_values

    press.compress = compress
    try:
        yield
    finally:
        try:
            del press.compress
        except AttributeError:  # pragma: no cover - press defines compress per instance
            press.compress = original


def kept_text(tokenizer: Any, ids: Sequence[int], positions: Sequence[int]) -> str:
    """The decoded runs of kept tokens, joined by :data:`GAP`."""
    runs: list[list[int]] = []
    prev = -2
    for p in positions:
        if p != prev + 1:
            runs.append([])
        runs[-1].append(ids[p])
        prev = p
    return GAP.join(tokenizer.decode(run, skip_special_tokens=False) for run in runs)


def unavailable(reason: str) -> dict[str, Any]:
    """The record fields when kept positions cannot be given."""
    return {"kept_tokens_unavailable_reason": reason}


def _why_unavailable(kept: list[int], positions: dict[int, Any]) -> str | None:
    n_layers = len(kept)
    if not positions:
        return (
            "the press did not call compress() on any layer (it prunes in its own hook"
            " or does not prune)"
        )
    if len(positions) != n_layers:
        missing = sorted(set(range(n_layers)) - set(positions))
        return f"no compress() record for layers {missing[:8]}"
    if any(isinstance(p, str) for p in positions.values()):
        return (
            "the press masks entries per head (kvpress masked_key_indices) instead of pruning"
            " them; the cache keeps every entry, so there is no kept subset to decode"
        )
    if any(p is None for p in positions.values()):
        return (
            "the press's kept keys are not copies of prefill keys (it transforms or merges"
            " entries), so kept positions cannot be recovered"
        )
    for layer, p in positions.items():
        if p.shape[-1] != kept[layer]:
            return (
                f"layer {layer}: cache holds {kept[layer]} entries but compress() kept"
                f" {p.shape[-1]} (the press masks rather than prunes)"
            )
    return None


def positions_summary(
    tokenizer: Any, ids: list[int], kept: list[int], positions: dict[int, Any]
) -> dict[str, Any]:
    """Kept positions and their text by head vote, or why they are unavailable."""
    import torch

    reason = _why_unavailable(kept, positions)
    if reason is not None:
        return unavailable(reason)
    votes = torch.zeros(len(ids), dtype=torch.long)
    slots = 0
    for p in positions.values():
        for h in range(p.shape[0]):
            votes[p[h]] += 1
            slots += 1
    any_pos = torch.nonzero(votes > 0).flatten().tolist()
    majority = torch.nonzero(votes * 2 >= slots).flatten().tolist()
    return {
        "kept_positions": majority,
        "kept_positions_any": any_pos,
        "kept_token_text": kept_text(tokenizer, ids, majority),
        "kept_token_text_any": kept_text(tokenizer, ids, any_pos),
    }
