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
# backends whose ``reader.model`` is checked when params.yaml is read: the function returns
# why a model name cannot be used, or None; it loads no weights and no backend library
MODEL_CHECKS: Registry[Callable[[str], str | None]] = Registry(
    "model check", lazy={"llamacpp": "compressbench.readers.packaged:gguf_model_problem"}
)

register_reader = READERS.register
unregister_reader = READERS.unregister
reader_names = READERS.names


def reader_parameters(name: str) -> tuple[str, ...]:
    """The keyword parameters of backend ``name`` (its class's signature)."""
    return READERS.parameters(name)


def model_problem(name: str, model: str) -> str | None:
    """Why backend ``name`` cannot read ``model`` (see :data:`MODEL_CHECKS`), else None."""
    return MODEL_CHECKS.factory(name)(model) if name in MODEL_CHECKS else None


def get_reader(name: str, **params: Any) -> Reader:
    """Build the reader registered as ``name`` with its keyword parameters."""
    reader: Reader = READERS.build(name, **params)
    return reader
