"""Reader-token budgets: count tokens with the reader's tokenizer, the offline default included.

A budget in reader tokens (``budget_unit: reader_tokens``) lets a method keep at most
``floor(r * T)`` tokens, ``T`` being the reader tokens of the full dialogue rendered with turn
markers (:func:`full_dialogue_tokens`). The tokenizer is the reader's: one passed in (a
Hugging Face tokenizer, a ``tokenizers.Tokenizer``, a tiktoken encoding or a callable), a path
(a ``tokenizer.json`` or a folder holding one), or, by default, the offline SmolLM2 reader's
tokenizer, rebuilt once from the packaged GGUF (repaired as the reader repairs it) and cached
as ``tokenizer.json`` so later processes load it in milliseconds with ``tokenizers`` alone.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compressbench.compress.budgets import token_budget
from compressbench.compress.costs import TokenCounter, token_counter
from compressbench.compress.render import render_markers
from compressbench.corpora.model import Turn

DEFAULT_TOKENIZER = "smollm2"  # the offline default reader's tokenizer


def _default_tokenizer_file() -> Path:
    """``tokenizer.json`` of the default reader, built from its GGUF on first use."""
    from compressbench.readers import smollm
    from compressbench.readers.gguf_tokenizer import repair_tokenizer

    gguf = smollm.find_gguf()
    target = smollm.cache_root() / "tokenizers" / f"smollm2-{smollm.gguf_sha256(gguf)[:12]}.json"
    if not target.exists():
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        tok = repair_tokenizer(tok, gguf)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tok.backend_tokenizer.save(str(tmp))
        tmp.replace(target)
    return target


@functools.lru_cache(maxsize=8)
def load_tokenizer(spec: str = DEFAULT_TOKENIZER) -> Any:
    """A ``tokenizers.Tokenizer`` by name: ``smollm2`` (default) or a path to a
    ``tokenizer.json`` / a folder holding one."""
    from tokenizers import Tokenizer

    if spec == DEFAULT_TOKENIZER:
        return Tokenizer.from_file(str(_default_tokenizer_file()))
    path = Path(spec)
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"tokenizer {spec!r}: not {DEFAULT_TOKENIZER!r}, a tokenizer.json or a folder with one"
        )
    return Tokenizer.from_file(str(path))


def reader_counter(tokenizer: Any = None) -> TokenCounter:
    """Token counter of ``tokenizer`` (an object, a name or path; None = the default)."""
    if tokenizer is None or isinstance(tokenizer, str | Path):
        tokenizer = load_tokenizer(str(tokenizer or DEFAULT_TOKENIZER))
    return token_counter(tokenizer)


def full_dialogue_tokens(turns: Sequence[Turn], count: TokenCounter) -> int:
    """Reader tokens of the full dialogue rendered with ``[Tn] SPEAKER:`` markers."""
    return count(render_markers(turns, range(len(turns))))


def dialogue_token_budget(
    turns: Sequence[Turn], ratio: float, count: TokenCounter
) -> tuple[int, int]:
    """``(floor(r * T), T)`` - the kept-token budget and the full dialogue's tokens ``T``."""
    full = full_dialogue_tokens(turns, count)
    return token_budget(full, ratio), full
