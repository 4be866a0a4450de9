"""Readers by name: ``get_reader("hf", model=...)``, ``get_reader("openai", ...)``, ...

Backends register lazily (module path + class name) so that listing or building one never
imports the heavy dependencies of another. The ``reader`` parameters of ``params.yaml`` a
backend takes are its class's keyword parameters (see :func:`reader_parameters`).
"""

from __future__ import annotations

from typing import Any

from compressbench.readers.base import Reader
from compressbench.registry import Registry

# a new backend is one file plus one line here; what it can do (structured output, where its
# model comes from, its tokenizer, ...) are members of its class (:class:`~.base.Reader`)
READERS: Registry[type[Reader]] = Registry(
    "reader",
    lazy={
        "hf": "compressbench.readers.hf:HFReader",
        "llamacpp": "compressbench.readers.llamacpp:LlamaCppReader",
        "mock": "compressbench.readers.mock:MockReader",
        "openai": "compressbench.readers.openai_api:OpenAIReader",
        "vllm": "compressbench.readers.vllm_backend:VLLMReader",
    },
)

register_reader = READERS.register
unregister_reader = READERS.unregister
reader_names = READERS.names


def backend(name: str) -> type[Reader]:
    """The class of backend ``name`` (imported now; backend modules import no heavy library)."""
    return READERS.factory(name)


def reader_parameters(name: str) -> tuple[str, ...]:
    """The keyword parameters of backend ``name`` (its class's signature)."""
    return READERS.parameters(name)


def structured_backends() -> tuple[str, ...]:
    """The backends that constrain an answer to a JSON Schema (``reader.structured``)."""
    return tuple(n for n in reader_names() if backend(n).structured_output)


def model_problem(name: str, model: str) -> str | None:
    """Why backend ``name`` cannot read ``model`` (its ``model_problem``), else None."""
    return backend(name).model_problem(model)


def get_reader(name: str, **params: Any) -> Reader:
    """Build the reader registered as ``name`` with its keyword parameters."""
    reader: Reader = READERS.build(name, **params)
    return reader
