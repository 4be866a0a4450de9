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


# In a fresh process (no earlier test has wrapped kvpress): kvpress's own press raises
# KeyError('cache_position') on a model whose attention layers get no cache_position, as on
# transformers 5.17; the reader's press path (a method's reader hook, built by get_press)
# applies the shim itself and answers.
_READER_PATH = """
import json, sys, torch
import kvpress
from compressbench.compress.registry import get_method
from compressbench.readers.base import ChatRequest
from compressbench.readers.hf import HFReader

reader = HFReader(sys.argv[1], device="cpu")
def drop(module, args, kwargs):
    kwargs.pop("cache_position", None)
    return args, kwargs
for layer in reader.model.model.layers:
    layer.self_attn.register_forward_pre_hook(drop, with_kwargs=True)
raw = kvpress.StreamingLLMPress(compression_ratio=0.5, n_sink=2)
try:
    with torch.no_grad(), raw(reader.model):
        ids = reader.tokenizer(" ".join(["a b c"] * 9), return_tensors="pt").input_ids
        reader.model(input_ids=ids, use_cache=True)
    control = "ran"
except KeyError as exc:
    control = f"KeyError:{exc}"
hook = get_method("streamingllm").reader_hook(0.5, max_input_tokens=512)
gen = reader.with_press(hook, hook.spec).generate(
    [ChatRequest("q", "a b c", " ".join(["a b c"] * 20), 4)]
)[0]
print(json.dumps({"control": control, "error": gen.error, "record": gen.record}))
"""


def test_the_reader_press_path_applies_the_shim(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys

    from support.tiny_llama import save_tiny_llama, word_tokenizer

    model_dir = save_tiny_llama(tmp_path / "tiny", word_tokenizer(["a b c"]), 2)
    proc = subprocess.run(
        [sys.executable, "-c", _READER_PATH, model_dir],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["control"] == "KeyError:'cache_position'"  # the setup is really incompatible
    assert not (out["error"] or "").startswith("exception:"), out["error"]  # it answered
    record = out["record"]
    assert record["fallback_reason"] is None
    tokens = record["context_tokens"]
    assert record["kept_entries_per_layer"] == [int(tokens * 0.5)] * 2, record  # half kept
