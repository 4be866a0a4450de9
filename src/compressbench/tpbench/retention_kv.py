"""Kept text of a KV-cache press, for the retention diagnostic.

The press runs on the P2 prompt of the event (full context, rendered as the reader sees it)
exactly as in the answers stage, with one new token; the text of the cache positions it kept
(``KVRecord.kept_token_text``: positions kept by a majority of (layer, head) slots, runs
joined by " … ") is what retention is measured on. In ``context_only`` mode only the
context is compressed; the question tail is not part of the kept text.
"""

from __future__ import annotations

from typing import Any

from compressbench.compress.kv import get_press, run_with_press
from compressbench.compress.methods import KVMethod
from compressbench.compress.render import render
from compressbench.corpora.model import Dialogue
from compressbench.readers.chat import encode, render_chat
from compressbench.text.normalize import humanize_slot
from compressbench.tpbench.prompts import build_prompt
from compressbench.tpbench.retention import KeptTextFn
from compressbench.tpbench.transitions import Transition


class KeptTokensUnavailable(RuntimeError):
    """The press does not expose which cache positions it kept."""


def kv_kept_text(reader: Any, kv: KVMethod, max_input_tokens: int = 7168) -> KeptTextFn:
    """A :data:`KeptTextFn` running ``kv`` on ``reader``'s loaded model (an ``HFReader``)."""

    def kept(dialogue: Dialogue, t: Transition, ratio: float) -> str:
        context = render(dialogue.turns, range(dialogue.n_turns), "markers")
        prompt = build_prompt("P2", context, humanize_slot(t.slot))
        text = render_chat(reader.tokenizer, prompt.system, prompt.user)
        _, record = run_with_press(
            reader.model,
            reader.tokenizer,
            text,
            get_press(kv.preset, ratio, **kv.overrides),
            1,
            kv.mode,
            max_input_tokens=max_input_tokens,
            prompt_ids=encode(reader.tokenizer, text, max_input_tokens),
        )
        if record.kept_token_text is None:
            raise KeptTokensUnavailable(
                f"{kv.preset}: {record.kept_tokens_unavailable_reason or 'no kept positions'}"
            )
        return record.kept_token_text

    return kept


def kv_kept_text_fns(
    methods: list[str], method_params: dict[str, dict[str, Any]], make_reader: Any
) -> dict[str, KeptTextFn]:
    """Kept-text functions of the KV methods among ``methods`` (one reader, built lazily)."""
    from compressbench.compress.methods import is_kv_method, kv_method

    kv_names = [m for m in methods if is_kv_method(m)]
    if not kv_names:
        return {}
    reader = make_reader()
    return {m: kv_kept_text(reader, kv_method(m, method_params.get(m))) for m in kv_names}
