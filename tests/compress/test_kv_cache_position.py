"""kvpress's forward hook on a transformers that passes no ``cache_position`` (5.17 on the GPU
machine): :func:`fill_cache_position` derives it, and the press compresses the same cache."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from compressbench.compress.kv.vendored import load_kvpress  # noqa: E402


def _tiny_llama() -> Any:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    return transformers.LlamaForCausalLM(config).eval()


def _prefill(model: Any, press: Any, *, drop_cache_position: bool) -> list[int]:
    """Prefill 40 tokens under ``press``; the cache length of every layer afterwards."""

    def drop(module: Any, args: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        kwargs.pop("cache_position", None)
        return args, kwargs

    handles = []
    if drop_cache_position:
        handles = [
            layer.self_attn.register_forward_pre_hook(drop, with_kwargs=True)
            for layer in model.model.layers
        ]
    cache = transformers.DynamicCache()
    ids = torch.arange(3, 43).unsqueeze(0)
    try:
        with torch.no_grad(), press(model):
            model(input_ids=ids, past_key_values=cache, use_cache=True)
    finally:
        for handle in handles:
            handle.remove()
    return [cache.get_seq_length(i) for i in range(len(model.model.layers))]


def test_press_compresses_the_same_without_cache_position() -> None:
    kvpress, _ = load_kvpress()
    model = _tiny_llama()
    press = kvpress.StreamingLLMPress(compression_ratio=0.5, n_sink=4)
    with_position = _prefill(model, press, drop_cache_position=False)
    without = _prefill(model, press, drop_cache_position=True)
    assert with_position == [20, 20]  # 40 tokens, half kept
    assert without == with_position
    assert getattr(kvpress.BasePress.forward_hook, "fills_cache_position", False)
