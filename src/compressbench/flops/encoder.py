"""Bidirectional encoder FLOPs (BERT-style), as RECOMP-extractive runs it (paper eq. 8).

One sequence of ``l`` tokens costs ``a*l + b*l**2``: ``a`` = 2 x the multiply-adds per token of
the Q/K/V/O projections and the two-matrix FFN over all layers, ``b`` = 4 * heads * head_dim *
layers (QK^T and AV over all l**2 pairs; no causal mask). A bi-encoder retriever encodes the
query and each of M candidate sentences on its own and scores each candidate by one dot product
of ``hidden`` dimensions (``dot = 2*hidden`` FLOPs). For BERT-base this gives the paper's
169,869,312 / 36,864 / 1,536. The pooler and the embedding look-ups are not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compressbench.flops.fields import ConfigFields


@dataclass(frozen=True)
class EncoderCost:
    a: int
    b: int
    dot: int

    def sequence(self, length: int) -> int:
        """One sequence of ``length`` tokens encoded on its own."""
        if length < 0:
            raise ValueError(f"sequence length must be >= 0, got {length}")
        return self.a * length + self.b * length * length

    def retrieval(self, query_tokens: int, candidate_tokens: Sequence[int]) -> int:
        """Query plus each candidate encoded separately, one dot product per candidate:
        ``sum_{j=0..M} (a*l_j + b*l_j**2) + dot*M`` (j = 0 is the query)."""
        encoded = self.sequence(query_tokens) + sum(self.sequence(n) for n in candidate_tokens)
        return encoded + self.dot * len(candidate_tokens)

    def case(self, prompt_tokens: int, output_tokens: int = 0) -> int:
        """A single sequence of ``prompt_tokens`` (an encoder generates nothing)."""
        if output_tokens:
            raise ValueError("an encoder produces no output tokens")
        return self.sequence(prompt_tokens)

    def to_dict(self) -> dict[str, int]:
        return {"a": self.a, "b": self.b, "dot": self.dot}


def encoder_cost(cfg: ConfigFields) -> EncoderCost:
    """Coefficients of a BERT-style config (``num_hidden_layers``, ``hidden_size``,
    ``num_attention_heads``, ``intermediate_size``; ``head_dim`` defaults to hidden/heads)."""
    n = cfg.integer("num_hidden_layers")
    hidden = cfg.integer("hidden_size")
    heads = cfg.integer("num_attention_heads")
    head_dim = cfg.integer("head_dim", default=hidden // heads)
    ffn = cfg.integer("intermediate_size")
    inner = heads * head_dim
    per_layer = 4 * hidden * inner + 2 * hidden * ffn
    return EncoderCost(a=2 * n * per_layer, b=4 * inner * n, dot=2 * hidden)
