"""``snapkv`` preset: SnapKV (Li et al., 2024, "SnapKV: LLM knows what you are looking for").

Scores every cache entry by the attention the last ``window_size`` prompt tokens pay to it
(pooled with a ``kernel_size`` window) and keeps the top ``r`` fraction per KV head; the
window itself is always kept. TPBench P2 settings: ``window_size=64, kernel_size=5``,
``compression_ratio = 1 - r``; worker default mode ``full_prompt``.

Parameters: ``r`` (retained fraction), ``window_size`` (64), ``kernel_size`` (5).
"""

from __future__ import annotations

from typing import Any

from compressbench.compress.kv.presets import compression_ratio_for, register_press_preset


@register_press_preset("snapkv", default_mode="full_prompt")
def snapkv(r: float, window_size: int = 64, kernel_size: int = 5) -> Any:
    from kvpress import SnapKVPress

    return SnapKVPress(
        compression_ratio=compression_ratio_for(r), window_size=window_size, kernel_size=kernel_size
    )
