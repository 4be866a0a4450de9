"""Repair the tokenizer transformers converts from a byte-level-BPE GGUF file.

transformers 5.2 turns SmolLM2's GGUF tokenizer into a CodeLlama-style tokenizer: it prepends
a BOS token although the GGUF says ``add_bos_token = false``, sets eos to ``<|im_start|>``
instead of ``<|im_end|>``, and adds five CodeLlama tokens with ids beyond the model's
embedding (a prompt containing ``<FILL_ME>`` then crashes the model). This rebuilds the
tokenizer from the converted vocabulary and merges with the GGUF's own metadata, so that it
tokenizes exactly like llama.cpp (tested).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_BYTE_LEVEL = {"add_prefix_space": False, "trim_offsets": False, "use_regex": True}


def gguf_metadata(path: str | Path) -> dict[str, Any]:
    """Tokenizer fields of a GGUF file (scalars and the chat template) and the vocab size."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    meta: dict[str, Any] = {}
    for name, field in reader.fields.items():
        if name.startswith("tokenizer.") and name not in (
            "tokenizer.ggml.tokens",
            "tokenizer.ggml.merges",
            "tokenizer.ggml.token_type",
            "tokenizer.ggml.scores",
        ):
            meta[name] = field.contents()
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    meta["vocab_size"] = len(tokens.data) if tokens is not None else None
    return meta


def repair_tokenizer(tokenizer: Any, gguf_path: str | Path) -> Any:
    """A corrected fast tokenizer for a ``gpt2`` (byte-level BPE) GGUF; others unchanged."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    meta = gguf_metadata(gguf_path)
    if meta.get("tokenizer.ggml.model") != "gpt2" or not meta.get("vocab_size"):
        return tokenizer
    data = json.loads(tokenizer.backend_tokenizer.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["id"] < meta["vocab_size"]]
    data["normalizer"] = None
    data["decoder"] = {"type": "ByteLevel", **_BYTE_LEVEL}

    def token(key: str) -> str | None:
        idx = meta.get(f"tokenizer.ggml.{key}_token_id")
        return None if idx is None else str(tokenizer.convert_ids_to_tokens(int(idx)))

    bos = token("bos")
    if meta.get("tokenizer.ggml.add_bos_token") and bos is not None:
        bos_id = int(meta["tokenizer.ggml.bos_token_id"])
        data["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
        }
    else:
        data["post_processor"] = {"type": "ByteLevel", **_BYTE_LEVEL}
    backend = Tokenizer.from_str(json.dumps(data))
    eos = token("eos")
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=bos,
        eos_token=eos,
        unk_token=token("unknown"),
        pad_token=token("padding") or eos,
        chat_template=meta.get("tokenizer.chat_template"),
        clean_up_tokenization_spaces=False,
        model_max_length=tokenizer.model_max_length,
    )
