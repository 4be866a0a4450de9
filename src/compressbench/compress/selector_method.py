"""Turn selectors under the method contract: keep whole units, the reader reads what is left.

The budget ``k`` comes from the selector's rule at the ratio (spec §3.10), the kept units from
its ``select``, the context from its published rendering (or a style forced for all); the
retained text is the kept units' own texts, one per line, without markers (so a value such
as "user" cannot match a ``USER:`` label).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compressbench.compress.budgets import budget_k
from compressbench.compress.costs import ContextCost, context_cost
from compressbench.compress.method import (
    TURN_BUDGET_UNIT,
    Compression,
    PromptFn,
    ReaderHook,
    Source,
)
from compressbench.compress.render import render, render_style
from compressbench.compress.selectors.base import TurnSelector


@dataclass(frozen=True)
class SelectorMethod:
    """A :class:`~compressbench.compress.selectors.base.TurnSelector` as a method."""

    name: str
    selector: TurnSelector
    params: dict[str, Any]

    family = "turn_selector"
    budget_unit = TURN_BUDGET_UNIT
    needs_reader = False

    def compress(self, source: Source, ratio: float) -> Compression:
        units = source.units
        sel = self.selector
        k = budget_k(len(units), ratio, sel.budget_rule)
        keep = tuple(sel.select(units, k, source.key))
        style = render_style(sel.published_render, source.render)
        return Compression(
            text=render(units, keep, style),
            kept_ids=tuple(units[p].index for p in keep),
            kept_text="\n".join(units[p].text for p in sorted(keep)),
            n_units=len(units),
            budget=k,
            budget_unit=self.budget_unit,
            render=style,
            ratio=ratio,
            record={
                "method": self.name,
                "family": self.family,
                "budget_unit": self.budget_unit,
                "budget_rule": sel.budget_rule,
                "budget": k,
                "kept": len(keep),
                "render": style,
                "params": self.params,
            },
        )

    def retained_text(
        self, source: Source, ratio: float, prompt: PromptFn, reader: ReaderHook | None
    ) -> str:
        return self.compress(source, ratio).kept_text

    def reader_hook(self, ratio: float, *, max_input_tokens: int) -> Any:
        return None

    def cost(self, compression: Compression, full_text: str, tokenizer: Any) -> ContextCost:
        return context_cost(
            full_text, compression.text, compression.n_units, compression.kept_ids, tokenizer
        )
