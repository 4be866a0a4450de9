"""Turn selectors; importing this package registers every built-in selector."""

from typing import Any

from compressbench.compress.selectors import attention_h2o, embedding_mmr, llmlingua2, positional
from compressbench.compress.selectors.base import SELECTORS, TurnSelector, register_selector

__all__ = [
    "PATH_PARAMS",
    "SELECTORS",
    "attention_h2o",
    "embedding_mmr",
    "get_selector",
    "llmlingua2",
    "positional",
    "register_selector",
]

# The keyword parameters of each selector that name a file or folder it reads (a model, an
# encoder): the method_files stage fingerprints them, so a cell reruns when their content changes.
PATH_PARAMS: dict[str, tuple[str, ...]] = {
    "embedding_mmr": ("encoder",),
    "attention_h2o": ("feature_model", "gguf_file"),
    "llmlingua2": ("model",),
}


def get_selector(name: str, **params: Any) -> TurnSelector:
    """Build a registered selector by name with its keyword parameters."""
    selector: TurnSelector = SELECTORS.build(name, **params)
    return selector
