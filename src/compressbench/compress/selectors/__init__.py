"""Turn selectors; importing this package registers every built-in selector."""

from compressbench.compress.selectors import attention_h2o, embedding_mmr, llmlingua2, positional
from compressbench.compress.selectors.base import SELECTORS, get_selector, register_selector

__all__ = [
    "SELECTORS",
    "attention_h2o",
    "embedding_mmr",
    "get_selector",
    "llmlingua2",
    "positional",
    "register_selector",
]
