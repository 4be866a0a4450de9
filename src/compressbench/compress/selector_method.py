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
from compressbench.compress.method import TURN_BUDGET_UNIT, Compression, Source
from compressbench.compress.render import render, render_style
from compressbench.compress.selectors.base import TurnSelector
from compressbench.compress.text_method import TextMethod


@dataclass(frozen=True)
class SelectorMethod(TextMethod):
    """A :class:`~compressbench.compress.selectors.base.TurnSelector` as a method."""

    name: str
    selector: TurnSelector
    params: dict[str, Any]

    family = "turn_selector"
    budget_unit = TURN_BUDGET_UNIT

    def compress(self, source: Source, ratio: float) -> Compression:
        units = source.units
        sel = self.selector
        k = budget_k(len(units), ratio, sel.budget_rule)
        keep = tuple(sel.select(units, k, source.key))
        style = render_style(sel.published_render, source.render)
        return self._compression(
            units,
            ratio,
            text=render(units, keep, style),
            kept_ids=tuple(units[p].index for p in keep),
            kept_text="\n".join(units[p].text for p in sorted(keep)),
            render=style,
            params=self.params,
            budget_rule=sel.budget_rule,
            budget=k,
            kept=len(keep),
        )
