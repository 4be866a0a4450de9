"""Build the configured reader from ``params.yaml``'s ``reader`` block (by backend name).

A backend takes the ``reader`` keys its class accepts as keyword parameters (its signature),
the others are for other backends.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from compressbench.config import ReaderSpec
from compressbench.readers.base import Reader
from compressbench.readers.registry import READERS, get_reader


def reader_kwargs(spec: ReaderSpec) -> dict[str, Any]:
    """The ``reader`` settings backend ``spec.backend`` takes, by its parameters' names."""
    accepted = READERS.parameters(spec.backend)
    return {f.name: getattr(spec, f.name) for f in fields(spec) if f.name in accepted}


def build_reader(spec: ReaderSpec) -> Reader:
    """The reader named by ``spec.backend`` with the parameters it takes."""
    return get_reader(spec.backend, **reader_kwargs(spec))


def reader_tokenizer(spec: ReaderSpec) -> Any:
    """The reader's tokenizer when its backend can load one without the model (a local model:
    ``hf``'s transformers tokenizer, ``llamacpp``'s GGUF vocabulary), else None."""
    tokenizer_for = getattr(READERS.factory(spec.backend), "tokenizer_for", None)
    return tokenizer_for(spec.model) if tokenizer_for is not None else None
