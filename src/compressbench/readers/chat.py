"""Prompt building shared by local backends (spec §6): chat template, then left truncation."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from compressbench.readers.defaults import DEFAULT_MAX_INPUT_TOKENS as DEFAULT_MAX_INPUT_TOKENS


def has_chat_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def render_chat(tokenizer: Any, system: str, user: str) -> str:
    """The templated prompt string; ``system + "\\n\\n" + user`` without a chat template."""
    if not has_chat_template(tokenizer):
        return system + "\n\n" + user
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return str(text)


def prepare_tokenizer(tokenizer: Any) -> Any:
    """Left truncation (drops the oldest tokens) and a pad token (= eos) for batching."""
    tokenizer.truncation_side = "left"
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """Short sha256 of what decides tokenization: vocabulary, rules, template, special tokens."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    rules: Any = type(tokenizer).__name__
    if backend is not None:
        rules = json.loads(backend.to_str())
        rules.pop("truncation", None)  # call-time state, set per encode call
        rules.pop("padding", None)
    parts = [
        json.dumps(rules, sort_keys=True),
        str(getattr(tokenizer, "chat_template", None)),
        json.dumps(getattr(tokenizer, "special_tokens_map", {}), sort_keys=True, default=str),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def encode(tokenizer: Any, text: str, max_input_tokens: int) -> list[int]:
    """Tokenize the templated string again with default special tokens, left-truncated."""
    ids = tokenizer(text, truncation=True, max_length=max_input_tokens)["input_ids"]
    return [int(i) for i in ids]
