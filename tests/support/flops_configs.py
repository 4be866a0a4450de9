"""Model configs written from their published architectures (KEEP-Bench research notes
§4.3-4.4), shared by the FLOPs tests and the KEEP-Bench pipeline tests."""

from __future__ import annotations

from typing import Any

QWEN3_4B: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "num_hidden_layers": 36,
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 9728,
    "vocab_size": 151936,
    "sliding_window": None,
    "use_sliding_window": False,
    "max_window_layers": 36,
    "tie_word_embeddings": True,
}
LLAMA_31_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}
LLAMA_32_3B = {**LLAMA_31_8B, "num_hidden_layers": 28, "hidden_size": 3072}
LLAMA_32_3B.update(num_attention_heads=24, head_dim=128, intermediate_size=8192)
# Gemma-4-E4B: 42 layers in a 5 sliding : 1 full pattern, window 512, sliding head_dim 256,
# global head_dim 512, PLE 256, the last 18 layers share KV; nested under text_config as in the
# multimodal release.
GEMMA4_E4B = {
    "architectures": ["Gemma4ForConditionalGeneration"],
    "model_type": "gemma4",
    "text_config": {
        "model_type": "gemma4_text",
        "num_hidden_layers": 42,
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "global_head_dim": 512,
        "intermediate_size": 10240,
        "vocab_size": 262144,
        "sliding_window": 512,
        "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 7,
        "num_kv_shared_layers": 18,
        "hidden_size_per_layer_input": 256,
        "vocab_size_per_layer_input": 262144,
    },
}
BERT_BASE = {  # RECOMP-extractive's encoder (Contriever-style BERT-base)
    "architectures": ["BertModel"],
    "model_type": "bert",
    "num_hidden_layers": 12,
    "hidden_size": 768,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "vocab_size": 30522,
}
T5_LARGE = {  # RECOMP-abstractive
    "architectures": ["T5ForConditionalGeneration"],
    "model_type": "t5",
    "is_encoder_decoder": True,
    "d_model": 1024,
    "d_kv": 64,
    "d_ff": 4096,
    "num_heads": 16,
    "num_layers": 24,
    "num_decoder_layers": 24,
    "vocab_size": 32128,
    "feed_forward_proj": "relu",
}
GEMMA_2B = {  # EXIT's base model (the LoRA adapter is added by the `exit` formula)
    "architectures": ["GemmaForCausalLM"],
    "model_type": "gemma",
    "num_hidden_layers": 18,
    "hidden_size": 2048,
    "num_attention_heads": 8,
    "num_key_value_heads": 1,
    "head_dim": 256,
    "intermediate_size": 16384,
    "vocab_size": 256000,
}
