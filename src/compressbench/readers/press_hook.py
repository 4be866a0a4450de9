"""The seam a KV press plugs into the hf reader through (:class:`PressHook`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class PressHook(Protocol):
    """Generation under a KV press (see ``compressbench.compress.kv``).

    Gets the left-padded batch, the greedy generation kwargs and whether the reader's decode
    mode decodes a batch's rows together, and where each prompt's question starts
    (``questions_at``: a character offset in the prompt, None for a request without a
    question); returns the new token ids ``[batch, new_tokens]`` (rows may be padded with
    ``pad_token_id`` after eos). ``records`` holds one record per prompt, in the order of
    ``prompts``, appended by each call; ``spec`` describes the press for the cache key.
    """

    records: list[Any]
    spec: dict[str, Any]

    def __call__(
        self,
        *,
        model: Any,
        tokenizer: Any,
        prompts: Sequence[str],
        input_ids: Any,
        attention_mask: Any,
        generate_kwargs: dict[str, Any],
        decode_together: bool,
        questions_at: Sequence[int | None],
    ) -> Any: ...
