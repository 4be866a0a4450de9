"""Decoder-only FLOPs coefficients from a Hugging Face config (KEEP-Bench paper, App. C.4).

Per case ``F = a*T + b*A_inf(T) + b_local*A_w(T) + c*Z`` with ``T = P + G - 1`` positions and
``Z = G`` vocabulary projections (P prompt tokens after the chat template, G output tokens):

* ``a`` = 2 x the multiply-adds per position of every layer's Q/K/V/O projections and FFN
  (3 matrices when gated, 2 otherwise), plus Gemma-style per-layer-embedding (PLE) matmuls
  (input gate h->p and projection p->h in every layer, one h->L*p projection per position) and
  any unmerged LoRA adapter (in->r and r->out for each adapted projection). Layers that reuse
  another layer's KV (``num_kv_shared_layers``, the last ones) compute no K/V projections.
* ``b`` = 4 * heads * head_dim summed over full-attention layers (QK^T and AV; KV heads do not
  matter); ``b_local`` the same over sliding-window layers (window ``window``). KV-shared layers
  still attend, so they count here.
* ``c`` = 2 * hidden * vocab (the LM head, tied or not).

Config fields read: ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``,
``num_key_value_heads`` (default: heads), ``head_dim`` (default hidden/heads),
``intermediate_size`` (a number or one per layer), ``vocab_size``; for sliding attention
``layer_types`` + ``sliding_window`` (or the model type's own pattern, see
:data:`LAYER_PATTERNS`); Gemma-4 ``global_head_dim``, ``num_global_key_value_heads``,
``attention_k_eq_v``, ``num_kv_shared_layers``, ``hidden_size_per_layer_input``,
``use_double_wide_mlp``. **[derived]**: ``attention_k_eq_v`` drops the V projection of the
full-attention layers and ``use_double_wide_mlp`` doubles the FFN of the KV-shared layers (the
research notes' reading of the Gemma-4 E2B/31B configs); E4B, the paper's example, uses neither.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compressbench.flops.attention import pairs_causal, pairs_window
from compressbench.flops.fields import ConfigFields

FULL, SLIDING = "full_attention", "sliding_attention"
# Model types whose FFN is two matrices (up, down) rather than gated (gate, up, down).
UNGATED_MLP = frozenset({"gpt_neox", "phi", "starcoder2", "gpt_bigcode"})
# The LoRA target names the EXIT adapter uses (rank 64, unmerged).
ALL_PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")


@dataclass(frozen=True)
class DecoderCost:
    """The coefficients of one decoder-only model; all counts are exact integers."""

    a: int
    b: int
    c: int
    b_local: int = 0
    window: int | None = None

    def flops(self, t: int, z: int) -> int:
        """``a*T + b*A_inf(T) + b_local*A_w(T) + c*Z``."""
        return self.a * t + self.attention(t) + self.c * z

    def attention(self, t: int) -> int:
        local = self.b_local * pairs_window(t, self.window) if self.window else 0
        return self.b * pairs_causal(t) + local

    def case(self, prompt_tokens: int, output_tokens: int) -> int:
        """One generation: ``T = P + G - 1`` positions (none when both are 0), ``Z = G``."""
        if prompt_tokens < 0 or output_tokens < 0:
            raise ValueError(f"token counts must be >= 0, got {prompt_tokens}, {output_tokens}")
        t = max(prompt_tokens + output_tokens - 1, 0)
        return self.flops(t, output_tokens)

    def prefill(self, prefix_tokens: int) -> int:
        """``F(p, 0) = a*p + attention(p)``: a cached prefix, no vocabulary projection."""
        return self.flops(prefix_tokens, 0)

    def to_dict(self) -> dict[str, int]:
        out = {"a": self.a, "b": self.b, "c": self.c}
        if self.window is not None:
            out.update(b_local=self.b_local, b_global=self.b, window=self.window)
        return out


@dataclass(frozen=True)
class _Layer:
    kind: str
    heads: int
    head_dim: int
    kv_heads: int
    ffn: int
    kv_shared: bool
    v_proj: bool


def _gemma2(cfg: ConfigFields, n: int) -> list[str]:
    return [SLIDING if (i + 1) % 2 else FULL for i in range(n)]


def _gemma3(cfg: ConfigFields, n: int) -> list[str]:
    every = cfg.integer("sliding_window_pattern", default=6)
    return [SLIDING if (i + 1) % every else FULL for i in range(n)]


def _windowed_tail(cfg: ConfigFields, n: int) -> list[str]:
    """Mistral/Qwen2 style: ``sliding_window`` (unless ``use_sliding_window`` is false) on the
    layers from ``max_window_layers`` on; no window -> every layer is full attention."""
    if not cfg.has("sliding_window") or not cfg.flag("use_sliding_window", default=True):
        return [FULL] * n
    first = cfg.integer("max_window_layers", default=0, minimum=0)
    return [SLIDING if i >= first else FULL for i in range(n)]


# Layer pattern of configs without ``layer_types``, by model type (default: _windowed_tail).
LAYER_PATTERNS: dict[str, Callable[[ConfigFields, int], list[str]]] = {
    "gemma2": _gemma2,
    "gemma3": _gemma3,
    "gemma3_text": _gemma3,
}


def layer_kinds(cfg: ConfigFields, n: int) -> list[str]:
    """``full_attention`` / ``sliding_attention`` for each of the ``n`` layers."""
    if cfg.has("layer_types"):
        return cfg.strings("layer_types", n, (FULL, SLIDING))
    return LAYER_PATTERNS.get(cfg.model_type(), _windowed_tail)(cfg, n)


def _layers(cfg: ConfigFields, n: int, hidden: int) -> list[_Layer]:
    heads = cfg.integer("num_attention_heads")
    kv_heads = cfg.integer("num_key_value_heads", default=heads)
    head_dim = cfg.integer("head_dim", default=hidden // heads)
    global_dim = cfg.integer("global_head_dim", default=head_dim)
    global_kv = cfg.integer("num_global_key_value_heads", default=kv_heads)
    k_eq_v = cfg.flag("attention_k_eq_v")
    shared = cfg.integer("num_kv_shared_layers", default=0, minimum=0)
    if shared > n:
        raise cfg.fail("num_kv_shared_layers", f"is {shared} but the model has {n} layers")
    ffn = cfg.per_layer_ints("intermediate_size", n)
    double_wide = cfg.flag("use_double_wide_mlp")
    layers = []
    for i, kind in enumerate(layer_kinds(cfg, n)):
        is_shared = i >= n - shared
        full = kind == FULL
        layers.append(
            _Layer(
                kind=kind,
                heads=heads,
                head_dim=global_dim if full else head_dim,
                kv_heads=global_kv if full else kv_heads,
                ffn=ffn[i] * (2 if double_wide and is_shared else 1),
                kv_shared=is_shared,
                v_proj=not (full and k_eq_v),
            )
        )
    return layers


def _projections(layer: _Layer, hidden: int, gated: bool) -> dict[str, tuple[int, int]]:
    """(in, out) of each linear map of one layer that runs (shared-KV layers: no k, v)."""
    q = layer.heads * layer.head_dim
    kv = layer.kv_heads * layer.head_dim
    maps = {"q": (hidden, q), "o": (q, hidden), "up": (hidden, layer.ffn)}
    maps["down"] = (layer.ffn, hidden)
    if gated:
        maps["gate"] = (hidden, layer.ffn)
    if not layer.kv_shared:
        maps["k"] = (hidden, kv)
        if layer.v_proj:
            maps["v"] = (hidden, kv)
    return maps


def decoder_cost(
    cfg: ConfigFields,
    *,
    lora_rank: int = 0,
    lora_targets: tuple[str, ...] = ALL_PROJECTIONS,
    logits_every_position: bool = False,
) -> DecoderCost:
    """The coefficients of a decoder-only config (see the module docstring).

    ``lora_rank`` > 0 adds an unmerged LoRA adapter on ``lora_targets``;
    ``logits_every_position`` folds the LM head into ``a`` (a forward pass that computes logits
    for the whole sequence, as EXIT's classifier does in Hugging Face).
    """
    cfg.reject(
        ("num_experts", "num_local_experts", "n_routed_experts"),
        "mixture-of-experts FFNs are not counted by this formula",
    )
    cfg.reject(("laurel_rank", "altup_num_inputs"), "Gemma-3n LAuReL/AltUp blocks are not counted")
    n = cfg.integer("num_hidden_layers")
    hidden = cfg.integer("hidden_size")
    vocab = cfg.integer("vocab_size")
    gated = cfg.model_type() not in UNGATED_MLP
    unknown = sorted(set(lora_targets) - set(ALL_PROJECTIONS))
    if unknown:
        raise ValueError(f"unknown LoRA targets {unknown}; allowed: {', '.join(ALL_PROJECTIONS)}")
    macs = 0
    b_full = b_local = 0
    for layer in _layers(cfg, n, hidden):
        for name, (d_in, d_out) in _projections(layer, hidden, gated).items():
            macs += d_in * d_out
            if lora_rank and name in lora_targets:
                macs += lora_rank * (d_in + d_out)
        pair = 4 * layer.heads * layer.head_dim
        if layer.kind == FULL:
            b_full += pair
        else:
            b_local += pair
    ple = cfg.integer("hidden_size_per_layer_input", default=0, minimum=0)
    macs += n * 2 * hidden * ple + hidden * n * ple
    c = 2 * hidden * vocab
    a = 2 * macs + (c if logits_every_position else 0)
    window = cfg.integer("sliding_window") if b_local else None
    return DecoderCost(a=a, b=b_full, c=c, b_local=b_local, window=window)
