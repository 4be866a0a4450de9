"""Cost accounting for one compressed context (TPBench paper, Appendix B).

Appendix B of the TPBench paper defines ``q = L_compressed / L_full``, the fraction of input
tokens a prompt-side selector retains, and states two theoretical scalings for a fixed reader
architecture and precision:

* input KV-cache memory scales as ``q``  -> full-to-compressed ratio ``1 / q``;
* the dense prefill self-attention term scales as ``q**2`` -> ratio ``1 / q**2``.

At ``q = 0.30`` the ratios are about 3.3 (memory) and 11.1 (prefill attention). They are
theoretical scaling factors, not measured speedups: the experimental budget ``r`` counts turns
(selectors) or cache entries (KV presses), and a turn fraction is not a token fraction.

For KV-cache presses the reader still prefills the whole context, so the prefill attention term is
unchanged (ratio 1) while the stored cache shrinks to the kept fraction of entries. Two records
say so: :func:`kv_context_cost`, the *nominal* cost written with the context before anything
ran (the requested fraction of the cache), and :func:`kv_measured_cost`, the cost of one
generation from the cache entries its press actually kept (its KV record).

Everything here is a pure function of its inputs; tokenizers are passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

TokenCounter = Callable[[str], int]


def retention_fraction(compressed: float, full: float) -> float:
    """``q = compressed / full`` (1.0 when ``full`` is 0: nothing to compress)."""
    if compressed < 0 or full < 0:
        raise ValueError(f"lengths must be non-negative, got {compressed} / {full}")
    if full == 0:
        return 1.0
    return compressed / full


def kv_memory_scaling(q: float) -> float:
    """Input KV-cache size of the compressed context relative to the full one: ``q``."""
    _check_q(q)
    return q


def prefill_attention_scaling(q: float) -> float:
    """Dense prefill self-attention term relative to the full context: ``q**2``."""
    _check_q(q)
    return q * q


def kv_memory_ratio(q: float) -> float:
    """Full-to-compressed KV-memory ratio ``1 / q`` (``inf`` when nothing is kept)."""
    s = kv_memory_scaling(q)
    return float("inf") if s == 0 else 1.0 / s


def prefill_attention_ratio(q: float) -> float:
    """Full-to-compressed prefill-attention ratio ``1 / q**2`` (``inf`` when nothing is kept)."""
    s = prefill_attention_scaling(q)
    return float("inf") if s == 0 else 1.0 / s


def _check_q(q: float) -> None:
    if q < 0:
        raise ValueError(f"retention fraction must be >= 0, got {q}")


def token_counter(tokenizer: Any) -> TokenCounter:
    """A ``text -> number of tokens`` function from a tokenizer or a callable.

    Accepts a Hugging Face tokenizer (anything with ``encode``; special tokens are not added,
    so the count is the text's own tokens), a tiktoken ``Encoding``, or a plain callable that
    returns either a count or a sequence of ids.
    """
    encode = getattr(tokenizer, "encode", None)
    if encode is not None:

        def count_encode(text: str) -> int:
            try:
                ids = encode(text, add_special_tokens=False)
            except TypeError:  # tiktoken-style encode(text)
                ids = encode(text)
            return len(ids)

        return count_encode
    if callable(tokenizer):

        def count_call(text: str) -> int:
            out = tokenizer(text)
            return out if isinstance(out, int) else len(out)

        return count_call
    raise TypeError(f"cannot count tokens with {type(tokenizer).__name__}")


@dataclass(frozen=True)
class ContextCost:
    """What one compressed context keeps, and the Appendix-B scalings of what it keeps.

    ``q`` is the token retention fraction when a tokenizer was given (``q_unit`` =
    ``"reader_tokens"``), else the character fraction (``q_unit`` = ``"characters"``) as a
    stated approximation; for KV presses it is the kept fraction of cache entries
    (``q_unit`` = ``"kv_cache_entries"``). ``basis`` says where the kept amount comes from:
    ``"kept_text"`` (measured on the compressed text) or ``"nominal"`` (a KV press's requested
    budget; the measured one is :class:`KVCacheCost`).
    """

    n_turns: int
    kept_turns: int
    turn_fraction: float
    chars_full: int
    chars_kept: int
    char_fraction: float
    tokens_full: int | None
    tokens_kept: int | None
    token_fraction: float | None
    q: float
    q_unit: str
    kv_memory_scaling: float  # q
    prefill_attention_scaling: float  # q**2 (1.0 for KV presses: prefill is not reduced)
    kv_memory_ratio: float  # 1 / q
    prefill_attention_ratio: float  # 1 / q**2
    basis: str = "kept_text"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def context_cost(
    full_context: str,
    compressed_context: str,
    n_turns: int,
    kept_turns: int | Sequence[int],
    tokenizer: Any = None,
) -> ContextCost:
    """Cost record of a prompt-side (turn-selector) compression of one context.

    ``full_context`` / ``compressed_context`` are the rendered context texts the reader sees
    (without the question block); ``kept_turns`` is a count or the kept indices.
    """
    kept = kept_turns if isinstance(kept_turns, int) else len(kept_turns)
    if not 0 <= kept <= n_turns:
        raise ValueError(f"bad turn counts: kept {kept} of {n_turns}")
    chars_full, chars_kept = len(full_context), len(compressed_context)
    char_q = retention_fraction(chars_kept, chars_full)
    tokens_full: int | None = None
    tokens_kept: int | None = None
    token_q: float | None = None
    if tokenizer is not None:
        count = token_counter(tokenizer)
        tokens_full, tokens_kept = count(full_context), count(compressed_context)
        token_q = retention_fraction(tokens_kept, tokens_full)
    q = token_q if token_q is not None else char_q
    return ContextCost(
        n_turns=n_turns,
        kept_turns=kept,
        turn_fraction=retention_fraction(kept, n_turns),
        chars_full=chars_full,
        chars_kept=chars_kept,
        char_fraction=char_q,
        tokens_full=tokens_full,
        tokens_kept=tokens_kept,
        token_fraction=token_q,
        q=q,
        q_unit="reader_tokens" if token_q is not None else "characters",
        kv_memory_scaling=kv_memory_scaling(q),
        prefill_attention_scaling=prefill_attention_scaling(q),
        kv_memory_ratio=kv_memory_ratio(q),
        prefill_attention_ratio=prefill_attention_ratio(q),
    )


def kv_context_cost(
    context: str,
    n_turns: int,
    context_tokens: int,
    kept_entries_per_layer: Sequence[int],
) -> ContextCost:
    """Nominal cost record of a KV-cache press, written before generation: the text is
    intact, the cache is to keep the given entries (the requested budget).

    ``q`` = mean kept cache entries per layer / context tokens compressed. The prefill still
    reads the whole context, so the prefill-attention scaling and ratio are 1. What a press
    really kept is in each answer's :func:`kv_measured_cost`.
    """
    q = _kv_q(context_tokens, kept_entries_per_layer)
    return ContextCost(
        n_turns=n_turns,
        kept_turns=n_turns,
        turn_fraction=1.0,
        chars_full=len(context),
        chars_kept=len(context),
        char_fraction=1.0,
        tokens_full=context_tokens,
        tokens_kept=context_tokens,
        token_fraction=1.0,
        q=q,
        q_unit="kv_cache_entries",
        kv_memory_scaling=kv_memory_scaling(q),
        prefill_attention_scaling=1.0,
        kv_memory_ratio=kv_memory_ratio(q),
        prefill_attention_ratio=1.0,
        basis="nominal",
    )


def _kv_q(context_tokens: int, kept_entries_per_layer: Sequence[int]) -> float:
    """Mean kept entries over layers / context tokens."""
    if not kept_entries_per_layer:
        raise ValueError("kept_entries_per_layer is empty")
    mean_kept = sum(kept_entries_per_layer) / len(kept_entries_per_layer)
    return retention_fraction(mean_kept, context_tokens)


@dataclass(frozen=True)
class KVCacheCost:
    """Measured cost of one generation under a KV press, from its KV record.

    ``q`` = kept cache entries averaged over layers / ``context_tokens`` (the tokens prefilled
    under the press: the system prompt and dialogue in ``context_only`` mode, the whole prompt
    in ``full_prompt`` mode). The prefill reads every context token, so its attention scaling
    and ratio are 1; the stored cache scales as ``q``.
    """

    mode: str | None
    context_tokens: int
    question_tokens: int
    kept_entries_mean: float
    kept_entries_min: int
    kept_entries_max: int
    q: float
    q_unit: str
    kv_memory_scaling: float  # q
    prefill_attention_scaling: float  # 1.0: prefill is not reduced
    kv_memory_ratio: float  # 1 / q
    prefill_attention_ratio: float  # 1.0
    basis: str = "measured"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def kv_measured_cost(record: Mapping[str, Any]) -> KVCacheCost:
    """The cost a KV record implies (``context_tokens``, ``kept_entries_per_layer``,
    optional ``question_tokens`` and ``mode``)."""
    kept = [int(k) for k in record["kept_entries_per_layer"]]
    context_tokens = int(record["context_tokens"])
    q = _kv_q(context_tokens, kept)
    return KVCacheCost(
        mode=record.get("mode"),
        context_tokens=context_tokens,
        question_tokens=int(record.get("question_tokens") or 0),
        kept_entries_mean=sum(kept) / len(kept),
        kept_entries_min=min(kept),
        kept_entries_max=max(kept),
        q=q,
        q_unit="kv_cache_entries",
        kv_memory_scaling=kv_memory_scaling(q),
        prefill_attention_scaling=1.0,
        kv_memory_ratio=kv_memory_ratio(q),
        prefill_attention_ratio=1.0,
    )
