"""KV-cache presses under the method contract: the text stays whole, the reader's cache shrinks.

A press method keeps every unit in the context (rendered as the uncompressed condition is)
and hands the reader a press to prefill under: a preset (``snapkv``...) or any kvpress class
by name, at ``compression_ratio = 1 - r``, in mode ``context_only`` or ``full_prompt``
(:mod:`compressbench.compress.kv.generate`). Its retained text is measured, not assumed: the
rendered prompt is prefilled under the press on the reader's model and the text of the cache
positions kept by a majority of (layer, head) slots is returned.

Nothing heavy is imported until a press is built: the contexts stage and config validation
never import torch or kvpress.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from compressbench.compress.costs import ContextCost, kv_context_cost
from compressbench.compress.kv.presets import compression_ratio_for
from compressbench.compress.kv.record import BUDGET_UNIT
from compressbench.compress.method import (
    FULL_CONTEXT,
    Compression,
    PromptFn,
    ReaderHook,
    RetentionUnavailable,
    Source,
)
from compressbench.compress.selector_method import SelectorMethod
from compressbench.compress.selectors.positional import FullContext
from compressbench.readers.base import question_offset


@dataclass(frozen=True)
class PressMethod:
    """A press by preset or kvpress class ``name``, its ``mode`` and its other settings."""

    name: str
    mode: str
    overrides: dict[str, Any] = field(default_factory=dict)

    libraries: ClassVar[tuple[str, ...]] = ("torch", "kvpress")  # what a press loads to run

    family = "kv_press"
    budget_unit = BUDGET_UNIT
    needs_reader = True

    def press(self, ratio: float) -> Any:
        """The kvpress press for retained fraction ``ratio`` (imports kvpress)."""
        from compressbench.compress.presses import get_press

        return get_press(self.name, ratio, **self.overrides)

    def press_record(self, ratio: float) -> dict[str, Any]:
        """What the reader runs under, as every contexts row states it."""
        return {
            "preset": self.name,
            "mode": self.mode,
            "compression_ratio": compression_ratio_for(ratio),
            "budget_unit": BUDGET_UNIT,
            **({"overrides": self.overrides} if self.overrides else {}),
        }

    def compress(self, source: Source, ratio: float) -> Compression:
        # The text is the uncompressed condition's; the nominal turn budget is kept as published.
        whole = SelectorMethod(FULL_CONTEXT, FullContext(), {}).compress(source, ratio)
        record = self.press_record(ratio)
        return replace(whole, budget_unit=BUDGET_UNIT, record=record, press=record)

    def retained_text(
        self, source: Source, ratio: float, prompt: PromptFn, reader: ReaderHook | None
    ) -> str:
        from compressbench.compress.kv.generate import run_with_press

        if reader is None:
            raise ValueError(f"{self.name}: a KV press needs the reader's model for retention")
        request = prompt(self.compress(source, ratio).text)
        text, ids = reader.prompt(request)
        at = question_offset(text, request)  # where the request's question starts in the text
        shared = reader.shared_prefill
        key, job = self.press_job(ratio)
        if shared is not None and job is not None:  # one forward for every press and ratio
            found = shared.get(
                reader.model,
                reader.tokenizer,
                text,
                ids,
                key,
                job,
                reader.max_input_tokens,
                question_at=at,
            )
            kept, reason = found.get("kept_token_text"), found.get("kept_tokens_unavailable_reason")
        else:
            _, record = run_with_press(
                reader.model,
                reader.tokenizer,
                text,
                job.press if job is not None else self.press(ratio),
                1,
                self.mode,
                max_input_tokens=reader.max_input_tokens,
                prompt_ids=ids,
                question_at=at,
            )
            kept, reason = record.kept_token_text, record.kept_tokens_unavailable_reason
        if kept is None:
            raise RetentionUnavailable(f"{self.name}: {reason or 'no kept positions'}")
        return str(kept)

    def press_job(self, ratio: float) -> tuple[Any, Any]:
        """``(key, PressJob)`` of this method at ``ratio`` for a shared prefill
        (:mod:`compressbench.compress.kv.shared`); the job is None if the press cannot be
        replayed from one."""
        from compressbench.compress.kv.shared import PressJob, replayable

        press = self.press(ratio)
        key = (self.name, self.mode, repr(sorted(self.overrides.items())), ratio)
        return key, PressJob(press, self.mode) if replayable(press) else None

    def reader_hook(self, ratio: float, *, max_input_tokens: int) -> Any:
        from compressbench.compress.kv.hook import KVPressHook

        return KVPressHook(
            self.press(ratio),
            mode=self.mode,
            preset=self.name,
            max_input_tokens=max_input_tokens,
        )

    def cost(self, compression: Compression, full_text: str, tokenizer: Any) -> ContextCost:
        """Nominal: the press is to keep the fraction r of the context's cache entries (what
        it really kept is measured per answer)."""
        text_cost = SelectorMethod(FULL_CONTEXT, FullContext(), {}).cost(
            compression, full_text, tokenizer
        )
        tokens = text_cost.tokens_full or text_cost.chars_full
        return kv_context_cost(
            full_text, compression.n_units, tokens, [int(tokens * compression.ratio)]
        )
