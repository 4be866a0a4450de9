"""The registry every KEEP-Bench compressor registers in (a leaf: imports no compressor).

A compressor is one file with a dataclass decorated ``@register_compressor("<name>")``; its
fields are its ``method_params``, read from the signature, so validation imports no model.
:mod:`compressbench.keepbench.compressors.family` imports every compressor file and exposes
them to the project's Method registry.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

COMPRESSORS: dict[str, Callable[..., Any]] = {}


def register_compressor(name: str) -> Callable[[Any], Any]:
    """Class decorator: ``@register_compressor("recomp_extractive")``."""

    def deco(cls: Any) -> Any:
        if name in COMPRESSORS:
            raise ValueError(f"KEEP compressor {name!r} registered twice")
        COMPRESSORS[name] = cls
        return cls

    return deco


def parameters(factory: Callable[..., Any]) -> tuple[str, ...]:
    """The keyword parameters of ``factory`` (a dataclass: its fields)."""
    params = inspect.signature(factory).parameters.values()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
