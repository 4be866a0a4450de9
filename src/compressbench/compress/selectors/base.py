"""Turn-selector protocol and the registry every selector registers in.

A selector gets a dialogue's turns and a turn budget ``k`` and returns the indices to keep
(ascending). It never renders, caches, logs or retries: the pipeline does.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from compressbench.corpora.model import Turn
from compressbench.registry import Registry


class TurnSelector(Protocol):
    name: str
    budget_rule: str  # "round" (positional, spec §3.10) or "floor" (content-aware)
    published_render: str  # "markers" ("[Tn] SPEAKER: text" lines) or "plain" (space-joined)

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        """Indices of the turns to keep, ascending. ``probe_id`` seeds random selectors."""
        ...


SelectorFactory = Callable[..., TurnSelector]
SELECTORS: Registry[SelectorFactory] = Registry("turn selector")
register_selector = SELECTORS.register  # class/factory decorator: @register_selector("recency")


class FeatureMemo:
    """A small LRU of per-dialogue features (embeddings, attention or label scores), keyed by
    the turn texts: several probes, budgets and ratios of one dialogue compute them once."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, ...], Any] = OrderedDict()

    def get(self, turns: Sequence[Turn], compute: Callable[[], Any]) -> Any:
        key = tuple(t.text for t in turns)
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        value = compute()
        self._items[key] = value
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value


def top_k(scores: Sequence[float], k: int) -> list[int]:
    """Indices of the ``k`` highest scores (ties -> lower index), ascending."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return sorted(order[: max(0, k)])


def select_by_content(
    turns: Sequence[Turn],
    k: int,
    memo: FeatureMemo,
    features: Callable[[], Any],
    pick: Callable[[Any, int], list[int]],
) -> list[int]:
    """The common shape of a content-aware selection: nothing for ``k <= 0``, everything when
    ``k >= n``, else ``pick(features, k)`` on the dialogue's (memoised) features."""
    n = len(turns)
    if n == 0 or k <= 0:
        return []
    if k >= n:
        return list(range(n))
    return pick(memo.get(turns, features), k)
