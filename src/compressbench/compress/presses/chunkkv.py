"""``chunkkv`` preset: ChunkKV (Liu et al., 2025, "ChunkKV: semantic-preserving KV cache
compression").

Scores entries with an inner SnapKV press, sums the scores over contiguous chunks of
``chunk_length`` tokens and keeps whole chunks (the same chunks in every head), about the
fraction ``r`` of them. TPBench settings: ``ChunkKVPress(press=SnapKVPress(compression_ratio=
1 - r, window_size=64, kernel_size=5), chunk_length=20)``, mode ``context_only``; the paper
sweeps ``chunk_length`` in {10, 20, 40}.

Parameters: ``r`` (retained fraction), ``chunk_length`` (20), ``window_size`` (64),
``kernel_size`` (5).
"""

from __future__ import annotations

from typing import Any

from compressbench.compress.kv.presets import compression_ratio_for, register_press_preset


@register_press_preset("chunkkv", default_mode="context_only")
def chunkkv(r: float, chunk_length: int = 20, window_size: int = 64, kernel_size: int = 5) -> Any:
    from kvpress import ChunkKVPress, SnapKVPress

    inner = SnapKVPress(
        compression_ratio=compression_ratio_for(r), window_size=window_size, kernel_size=kernel_size
    )
    return ChunkKVPress(press=inner, chunk_length=chunk_length)
