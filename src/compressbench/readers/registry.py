"""Readers by name: ``get_reader("hf", model=...)``, ``get_reader("openai", ...)``, ...

Backends register lazily (module path + class name) so that listing or building one never
imports the heavy dependencies of another.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from compressbench.readers.base import Reader

ReaderFactory = Callable[..., Reader]

# name -> "module:attribute"; a new backend is one file plus one line here.
_LAZY: dict[str, str] = {
    "hf": "compressbench.readers.hf:HFReader",
    "llamacpp": "compressbench.readers.llamacpp:LlamaCppReader",
    "openai": "compressbench.readers.openai_api:OpenAIReader",
    "vllm": "compressbench.readers.vllm_backend:VLLMReader",
}
_FACTORIES: dict[str, ReaderFactory] = {}
# backends that constrain an answer to a JSON Schema (``reader.structured``)
STRUCTURED_BACKENDS = ("llamacpp", "openai")


def register_reader(name: str, factory: ReaderFactory | None = None) -> Any:
    """Register a reader factory under ``name`` (usable as a decorator)."""

    def deco(f: ReaderFactory) -> ReaderFactory:
        if name in _FACTORIES or name in _LAZY:
            raise ValueError(f"reader {name!r} registered twice")
        _FACTORIES[name] = f
        return f

    return deco(factory) if factory is not None else deco


def unregister_reader(name: str) -> None:
    """Remove a reader registered with :func:`register_reader` (tests)."""
    _FACTORIES.pop(name, None)


def reader_names() -> list[str]:
    return sorted({*_LAZY, *_FACTORIES})


def _factory(name: str) -> ReaderFactory:
    if name in _FACTORIES:
        return _FACTORIES[name]
    if name not in _LAZY:
        raise KeyError(f"unknown reader {name!r}; known: {', '.join(reader_names())}")
    module_name, attr = _LAZY[name].split(":")
    factory: ReaderFactory = getattr(importlib.import_module(module_name), attr)
    return factory


def get_reader(name: str, **params: Any) -> Reader:
    """Build the reader registered as ``name`` with its keyword parameters."""
    return _factory(name)(**params)
