"""Encoder-decoder FLOPs (T5-style), as RECOMP-abstractive runs it (paper eq. 9).

With n encoder tokens and r decoder positions (beam 1, KV cache):
``F = enc_token*n + enc_pairs*n**2 + dec_token*r + dec_pairs*(A_inf(r) + n*r)``, where

* ``enc_token`` = encoder Q/K/V/O + FFN per token, plus the decoder's cross-attention K/V
  projections of every encoder state (computed once, in each decoder layer);
* ``enc_pairs`` = 4 * inner * encoder layers (bidirectional self-attention over n**2 pairs);
* ``dec_token`` = decoder self-attention Q/K/V/O, cross-attention Q/O and FFN per position,
  plus the LM head;
* ``dec_pairs`` = 4 * inner * decoder layers (causal self-attention and cross-attention pairs).

All products x2 (FLOPs per multiply-add); ``inner = num_heads * d_kv``. The FFN has 3 matrices
when ``feed_forward_proj`` is gated (``gated-gelu``), else 2. For T5-large this gives the
paper's 704,643,072 / 98,304 / 770,441,216 / 98,304.
"""

from __future__ import annotations

from dataclasses import dataclass

from compressbench.flops.attention import pairs_causal
from compressbench.flops.fields import ConfigFields


@dataclass(frozen=True)
class EncDecCost:
    enc_token: int
    enc_pairs: int
    dec_token: int
    dec_pairs: int

    def flops(self, n: int, r: int) -> int:
        if n < 0 or r < 0:
            raise ValueError(f"lengths must be >= 0, got n={n}, r={r}")
        encoder = self.enc_token * n + self.enc_pairs * n * n
        return encoder + self.dec_token * r + self.dec_pairs * (pairs_causal(r) + n * r)

    def case(self, prompt_tokens: int, output_tokens: int) -> int:
        """``n`` = encoder input tokens, ``r`` = decoder output tokens."""
        return self.flops(prompt_tokens, output_tokens)

    def to_dict(self) -> dict[str, int]:
        return {
            "enc_token": self.enc_token,
            "enc_pairs": self.enc_pairs,
            "dec_token": self.dec_token,
            "dec_pairs": self.dec_pairs,
        }


def encdec_cost(cfg: ConfigFields) -> EncDecCost:
    """Coefficients of a T5-style config (``d_model``, ``d_kv``, ``num_heads``, ``num_layers``,
    ``num_decoder_layers`` (default num_layers), ``d_ff``, ``vocab_size``,
    ``feed_forward_proj``)."""
    d = cfg.integer("d_model")
    inner = cfg.integer("num_heads") * cfg.integer("d_kv")
    enc_layers = cfg.integer("num_layers")
    dec_layers = cfg.integer("num_decoder_layers", default=enc_layers)
    d_ff = cfg.integer("d_ff")
    vocab = cfg.integer("vocab_size")
    proj = str(cfg.get("feed_forward_proj", "relu"))
    ffn = (3 if proj.startswith("gated") else 2) * d * d_ff
    attn = 4 * d * inner  # q, k, v, o
    enc_token = 2 * enc_layers * (attn + ffn) + 2 * dec_layers * 2 * d * inner
    dec_token = 2 * dec_layers * (attn + 2 * d * inner + ffn) + 2 * d * vocab
    return EncDecCost(
        enc_token=enc_token,
        enc_pairs=4 * inner * enc_layers,
        dec_token=dec_token,
        dec_pairs=4 * inner * dec_layers,
    )
