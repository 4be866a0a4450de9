"""Readers by name: ``get_reader("hf", model=...)``, ``get_reader("openai", ...)``, ...

Backends register lazily (module path + class name) so that listing or building one never
imports the heavy dependencies of another. The ``reader`` parameters of ``params.yaml`` a
backend takes are its class's keyword parameters (see :func:`reader_parameters`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compressbench.readers.base import Reader
from compressbench.registry import Registry

ReaderFactory = Callable[..., Reader]

# a new backend is one file plus one line here
READERS: Registry[ReaderFactory] = Registry(
    "reader",
    lazy={
        "hf": "compressbench.readers.hf:HFReader",
        "llamacpp": "compressbench.readers.llamacpp:LlamaCppReader",
        "openai": "compressbench.readers.openai_api:OpenAIReader",
        "vllm": "compressbench.readers.vllm_backend:VLLMReader",
    },
)
# backends that constrain an answer to a JSON Schema (``reader.structured``)
STRUCTURED_BACKENDS = ("llamacpp", "openai")

register_reader = READERS.register
unregister_reader = READERS.unregister
reader_names = READERS.names


def reader_parameters(name: str) -> tuple[str, ...]:
    """The keyword parameters of backend ``name`` (its class's signature)."""
    return READERS.parameters(name)


def get_reader(name: str, **params: Any) -> Reader:
    """Build the reader registered as ``name`` with its keyword parameters."""
    reader: Reader = READERS.build(name, **params)
    return reader
