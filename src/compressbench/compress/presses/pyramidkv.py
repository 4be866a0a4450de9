"""``pyramidkv`` preset: PyramidKV (Cai et al., 2025, "PyramidKV: dynamic KV cache
compression based on pyramidal information funneling").

SnapKV scoring with a per-layer budget that shrinks linearly from the lower to the upper
layers; the budgets average to the retained fraction ``r`` (kvpress falls back to a uniform
budget when the context is too short for the pyramid). TPBench P2 settings:
``window_size=64, kernel_size=5``, ``compression_ratio = 1 - r``; worker default mode
``full_prompt``.

Parameters: ``r`` (retained fraction), ``window_size`` (64), ``kernel_size`` (5), ``beta``
(20, pyramid steepness).
"""

from __future__ import annotations

from typing import Any

from compressbench.compress.kv.presets import compression_ratio_for, register_press_preset


@register_press_preset("pyramidkv", default_mode="full_prompt")
def pyramidkv(r: float, window_size: int = 64, kernel_size: int = 5, beta: int = 20) -> Any:
    from kvpress import PyramidKVPress

    return PyramidKVPress(
        compression_ratio=compression_ratio_for(r),
        window_size=window_size,
        kernel_size=kernel_size,
        beta=beta,
    )
