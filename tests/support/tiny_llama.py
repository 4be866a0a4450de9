"""A tiny random-weight Llama and its word-level tokenizer, saved as a local model folder (the
KEEP-Bench compressor and judge tests load it through the HF reader; the Hub is unreachable)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPECIALS = ["<pad>", "</s>", "<unk>", "<bos>", "<start_of_turn>", "<end_of_turn>",
            "<|reserved_special_token_100|>", "<|reserved_special_token_101|>"]  # fmt: skip


def word_tokenizer(texts: list[str]) -> Any:
    """A word-level fast tokenizer over the words of ``texts`` (ids 0, 1, 2 = pad, eos, unk)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    split = pre_tokenizers.Whitespace()
    words = sorted({w for t in texts for w, _ in split.pre_tokenize_str(t)} | {"Yes", "No"})
    vocab = {tok: i for i, tok in enumerate([*SPECIALS, *words])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = split
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        bos_token="<bos>",
        additional_special_tokens=SPECIALS[4:],
    )


def save_tiny_llama(model_dir: Path, tokenizer: Any, num_hidden_layers: int) -> str:
    """Save a random-weight (seed 0) LlamaForCausalLM over ``tokenizer``'s vocabulary, and the
    tokenizer, in ``model_dir``; returns the folder as a string."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
        num_hidden_layers=num_hidden_layers, num_attention_heads=2, num_key_value_heads=1,
        max_position_embeddings=4096, pad_token_id=0, eos_token_id=1, bos_token_id=3,
    )  # fmt: skip
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return str(model_dir)
