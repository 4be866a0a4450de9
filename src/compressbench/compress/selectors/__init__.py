"""Turn selectors; importing this package registers every built-in selector."""

from typing import Any

from compressbench.compress.selectors import attention_h2o, embedding_mmr, llmlingua2, positional
from compressbench.compress.selectors.base import SELECTORS, TurnSelector, register_selector

__all__ = [
    "SELECTORS",
    "attention_h2o",
    "embedding_mmr",
    "get_selector",
    "llmlingua2",
    "positional",
    "register_selector",
]


def get_selector(name: str, **params: Any) -> TurnSelector:
    """Build a registered selector by name with its keyword parameters."""
    selector: TurnSelector = SELECTORS.build(name, **params)
    return selector
