"""The hf reader's decoding modes (``reader.decode_mode``): ``paper`` and ``fast``.

- ``paper`` (the default): what the paper's reader did and what this project did before the
  fast mode existed: ``generate()`` with the dynamic cache, batches of ``reader.batch_size``
  (1 in the paper configs but P1's 8), KV presses one prompt at a time. Its answer cache keys
  are the keys of every answer stored before ``decode_mode`` existed.
- ``fast``: the same greedy decoding through transformers' static cache
  (``cache_implementation="static"``), which ``generate()`` compiles by itself on CUDA (its
  decoding steps; the prefill runs eagerly), batches of ``reader.batch_size`` (64 in the fast
  configs), batch widths padded up to a multiple of :data:`WIDTH_STEP` tokens so the compiled
  step sees few shapes, and KV presses compressed one prompt at a time but decoded together
  (:mod:`compressbench.compress.kv.batched`). Greedy answers may differ from ``paper``'s
  (another cache layout, other kernels and batch companions change rounding, and a near-tie
  flips a token); ``benchmarks/bench_fast_mode_agreement.py`` measures how many do.

A mode is part of the reader's ``decoding()`` (so of every answer cache key) only when it is
not ``paper``, and the report never puts answers of two modes in one table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WIDTH_STEP = 64  # fast mode: a batch's padded width is a multiple of this many tokens


@dataclass(frozen=True)
class DecodeMode:
    """How the hf reader decodes: its cache, batch widths and press batching."""

    name: str
    cache_implementation: str | None  # "static": a StaticCache passed to generate() (None: dynamic)
    width_step: int  # a batch is left-padded to a multiple of this width (1: its longest row)
    decode_presses_together: bool  # a press batch's compressed caches decode in one batch

    def decoding(self) -> dict[str, Any]:
        """What the mode adds to the reader's ``decoding()`` (nothing for ``paper``)."""
        if self.name == DEFAULT_DECODE_MODE:
            return {}
        return {
            "decode_mode": self.name,
            "cache_implementation": self.cache_implementation,
            "width_step": self.width_step,
            "decode_presses_together": self.decode_presses_together,
        }

    def padded_width(self, longest: int) -> int:
        """The width a batch whose longest row has ``longest`` tokens is left-padded to."""
        return -(-longest // self.width_step) * self.width_step


PAPER = DecodeMode("paper", None, 1, False)
FAST = DecodeMode("fast", "static", WIDTH_STEP, True)
DECODE_MODES: dict[str, DecodeMode] = {m.name: m for m in (PAPER, FAST)}
DEFAULT_DECODE_MODE = PAPER.name


def get_decode_mode(name: str) -> DecodeMode:
    """The mode called ``name`` (ValueError naming the modes otherwise)."""
    try:
        return DECODE_MODES[name]
    except KeyError:
        raise ValueError(
            f"decode_mode must be one of {', '.join(DECODE_MODES)}, got {name!r}"
        ) from None


def mode_of(decoding: dict[str, Any]) -> str:
    """The decode mode a reader's recorded ``decoding()`` names (absent: ``paper``)."""
    return str(decoding.get("decode_mode", DEFAULT_DECODE_MODE))


class StaticCachePool:
    """The static cache of the last batch shape, reset before each use.

    ``generate()`` would keep its own static cache across calls and reuse it for any batch
    it can hold, so a batch's cache length (and the kernels' shapes) would depend on what ran
    before it; the answer cache must not. Here every batch gets a cache of exactly its padded
    width plus its ``max_new_tokens``: the one kept (reset) if the shape repeats, else a new
    one (the old one is dropped, so one cache's memory at most)."""

    def __init__(self) -> None:
        self.shape: tuple[int, int] | None = None
        self.cache: Any = None
        self.built = 0  # caches allocated so far

    def get(self, model: Any, rows: int, max_cache_len: int) -> Any:
        from transformers import StaticCache

        if self.shape == (rows, max_cache_len):
            self.cache.reset()
            return self.cache
        self.cache = None  # free the old one before allocating
        self.cache = StaticCache(config=model.config, max_cache_len=max_cache_len)
        self.shape = (rows, max_cache_len)
        self.built += 1
        return self.cache
