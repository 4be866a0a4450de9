"""Prefix amortisation for ICL prompts (KEEP-Bench paper, App. C.4, eq. 7).

Within one subset s (parallel, conditional, science, policy) the n_s serialized prompts of an
LLM compressor share a prefix of p tokens (system instruction and ICL demonstrations, in the
model's own tokenizer after the chat template). Its prefill is counted once for the subset:
``F~_i = F(T_i, G_i) - F(p, 0) + F(p, 0) / n_s``. The suffix tokens' attention to the prefix
stays in ``A(T_i) - A(p)``. Only decoder-only LLMs with a shared prompt get this; dedicated
compressors do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compressbench.flops.decoder import DecoderCost


def common_prefix_length(token_ids: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix of the token-id sequences (0 for none given)."""
    if not token_ids:
        return 0
    first = token_ids[0]
    length = min(len(ids) for ids in token_ids)
    for i in range(length):
        tok = first[i]
        if any(ids[i] != tok for ids in token_ids):
            return i
    return length


@dataclass(frozen=True)
class AmortizedSubset:
    """One subset's per-case costs with the shared prefix counted once."""

    prefix_tokens: int
    per_case: tuple[float, ...]  # F~_i (FLOPs)
    total: int  # sum of F~_i, exact: sum(F_i - F(p,0)) + F(p,0)

    @property
    def cases(self) -> int:
        return len(self.per_case)


def amortize(
    cost: DecoderCost, lengths: Sequence[tuple[int, int]], prefix_tokens: int
) -> AmortizedSubset:
    """Eq. 7 for one subset: ``lengths`` holds (P_i, G_i) per case, ``prefix_tokens`` = p.

    p must not exceed any prompt (it is their common prefix)."""
    if not lengths:
        return AmortizedSubset(prefix_tokens, (), 0)
    shortest = min(p for p, _ in lengths)
    if not 0 <= prefix_tokens <= shortest:
        raise ValueError(
            f"prefix of {prefix_tokens} tokens, but the shortest prompt has {shortest}"
        )
    shared = cost.prefill(prefix_tokens)
    n = len(lengths)
    own = [cost.case(p, g) - shared for p, g in lengths]
    return AmortizedSubset(
        prefix_tokens=prefix_tokens,
        per_case=tuple(f + shared / n for f in own),
        total=sum(own) + shared,
    )
