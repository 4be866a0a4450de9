"""``streamingllm`` preset: StreamingLLM (Xiao et al., 2024, "Efficient streaming language
models with attention sinks").

Keeps the first ``n_sink`` entries (attention sinks) and the most recent ones, dropping the
middle, so the cache keeps the fraction ``r``. TPBench P2 settings: ``n_sink=4``,
``compression_ratio = 1 - r``; worker default mode ``full_prompt``.

Parameters: ``r`` (retained fraction), ``n_sink`` (4).
"""

from __future__ import annotations

from typing import Any

from compressbench.compress.kv.presets import compression_ratio_for, register_press_preset


@register_press_preset("streamingllm", default_mode="full_prompt")
def streamingllm(r: float, n_sink: int = 4) -> Any:
    from kvpress import StreamingLLMPress

    return StreamingLLMPress(compression_ratio=compression_ratio_for(r), n_sink=n_sink)
