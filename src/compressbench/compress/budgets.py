"""Turn budgets: how many turns a selector keeps at retained fraction ``r`` (spec §3.10).

* ``round`` (positional selectors): ``k = max(1, round(n * r))`` - Python's ``round``, i.e.
  banker's rounding on the float product (15 * 0.3 = 4.5 -> 4, 25 * 0.3 = 7.5 -> 8).
* ``floor`` (content-aware selectors: LLMLingua-2, H2O proxy, MMR): ``k = max(1, floor(n * r))``.

Reader-token budgets (``budget_unit: reader_tokens``): at most ``floor(r * T)`` tokens, ``T``
the reader tokens of the rendered full dialogue (:func:`token_budget`; may be 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable

BudgetRule = Callable[[int, float], int]
READER_TOKENS = "reader_tokens"  # budget unit: reader tokens of the rendered dialogue


def round_budget(n_turns: int, ratio: float) -> int:
    """``max(1, round(n * r))`` with round-half-to-even on the float product."""
    return max(1, round(n_turns * ratio))


def floor_budget(n_turns: int, ratio: float) -> int:
    """``max(1, floor(n * r))``."""
    return max(1, math.floor(n_turns * ratio))


BUDGET_RULES: dict[str, BudgetRule] = {
    "round": round_budget,
    "floor": floor_budget,
}


def budget_k(n_turns: int, ratio: float, rule: str = "round") -> int:
    """Turn budget for ``n_turns`` turns at ratio ``ratio`` under the named rule."""
    try:
        fn = BUDGET_RULES[rule]
    except KeyError:
        raise KeyError(f"unknown budget rule {rule!r}; known: {', '.join(BUDGET_RULES)}") from None
    return fn(n_turns, ratio)


def token_budget(full_tokens: int, ratio: float) -> int:
    """``floor(r * T)`` reader tokens; the product is rounded to 9 decimals first, so float
    noise (``0.3 * 10 = 3.0000000000000004``, ``0.7 * 10 = 6.999999999999999``) never moves it."""
    if full_tokens < 0 or not 0 <= ratio <= 1:
        raise ValueError(f"need full_tokens >= 0 and 0 <= ratio <= 1, got {full_tokens}, {ratio}")
    return math.floor(round(full_tokens * ratio, 9))
