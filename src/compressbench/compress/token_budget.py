"""Any turn selector under a reader-token budget, so every method is compared on one budget.

A turn selector keeps ``k`` whole turns. Under ``budget_unit: reader_tokens`` it keeps the
selection of the largest ``k`` whose rendered context has at most ``floor(r * T)`` reader tokens
(``T``: the full dialogue rendered with markers), trying ``k = n, n-1, ..., 1`` with the
selector's own ``select`` (a selection at ``k`` need not contain the one at ``k - 1``, so the
search is linear, not binary; content-aware selectors memoise their features, so each try is
cheap). A try is counted exactly unless the sum of its turns' own token counts already exceeds
the budget by more than two tokens per turn (joining lines never saves that much), which
skips the exact count of selections far over budget. When not even one turn fits, nothing is
kept. A method that is not a turn selector (a
KV press: its budget is already a fraction of the prompt's tokens; a span method that budgets
in reader tokens itself) is returned unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compressbench.compress.budgets import READER_TOKENS
from compressbench.compress.method import FULL_CONTEXT, Compression, Method, Source
from compressbench.compress.reader_tokens import dialogue_token_budget, reader_counter
from compressbench.compress.render import render, render_style
from compressbench.compress.selector_method import SelectorMethod
from compressbench.compress.selectors.base import FeatureMemo
from compressbench.compress.text_method import TextMethod


@dataclass(frozen=True)
class TokenBudgetSelector(TextMethod):
    """A :class:`SelectorMethod` whose budget is ``floor(r * T)`` reader tokens."""

    inner: SelectorMethod
    tokenizer: Any = None  # object, path or None (the default reader's tokenizer)
    _memo: FeatureMemo = field(default_factory=FeatureMemo, init=False, repr=False, compare=False)

    family = "turn_selector"
    budget_unit = READER_TOKENS

    @property
    def name(self) -> str:
        return self.inner.name

    def compress(self, source: Source, ratio: float) -> Compression:
        units, sel = source.units, self.inner.selector
        count = reader_counter(source.tokenizer or self.tokenizer)
        budget, full = dialogue_token_budget(units, ratio, count)
        style = render_style(sel.published_render, source.render)
        keep: tuple[int, ...] = ()
        text = ""
        per_dialogue = self._memo.get(units, dict)  # own token counts of each turn
        slot = (style, id(source.tokenizer))
        if slot not in per_dialogue:
            per_dialogue[slot] = [count(render(units, [p], style)) for p in range(len(units))]
        own = per_dialogue[slot]
        for k in range(len(units), 0, -1):
            chosen = tuple(sel.select(units, k, source.key))
            if sum(own[p] for p in chosen) - 2 * len(chosen) > budget:
                continue
            candidate = render(units, chosen, style)
            if count(candidate) <= budget:
                keep, text = chosen, candidate
                break
        return self._compression(
            units,
            ratio,
            text=text,
            kept_ids=tuple(units[p].index for p in sorted(keep)),
            kept_text="\n".join(units[p].text for p in sorted(keep)),
            render=style,
            params=self.inner.params,
            budget=budget,
            full_tokens=full,
            kept_tokens=count(text),
            kept=len(keep),
        )


def with_budget_unit(method: Method, budget_unit: str, tokenizer: Any = None) -> Method:
    """``method`` budgeted in ``budget_unit``: turn selectors are wrapped for reader tokens;
    every other method (``full_context``, the uncompressed reference, included) is returned
    as it is."""
    wrap = isinstance(method, SelectorMethod) and method.name != FULL_CONTEXT
    if budget_unit == READER_TOKENS and wrap and isinstance(method, SelectorMethod):
        return TokenBudgetSelector(method, tokenizer)
    return method
