"""The seam a KV press plugs into the hf reader through (:class:`PressHook`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class PressHook(Protocol):
    """Generation under a KV press (see ``compressbench.compress.kv``).

    Gets the left-padded batch, the greedy generation kwargs and whether the reader's decode
    mode decodes a batch's rows together; returns the new token ids ``[batch, new_tokens]``
    (rows may be padded with ``pad_token_id`` after eos). A hook may keep a ``records`` list
    and append one record per prompt, in the order of ``prompts``.
    """

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
    ) -> Any: ...
