"""Build the configured reader from ``params.yaml``'s ``reader`` block (by backend name)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compressbench.config import ReaderSpec
from compressbench.readers.base import Reader
from compressbench.readers.registry import get_reader

DEFAULT_MODEL = "smollm2"


def _hf(spec: ReaderSpec) -> dict[str, Any]:
    return {
        "model": None if spec.model == DEFAULT_MODEL else spec.model,
        "revision": spec.revision,
        "dtype": spec.dtype,
        "attn_implementation": spec.attn_implementation,
        "batch_size": spec.batch_size,
        "max_input_tokens": spec.max_input_tokens,
    }


def _openai(spec: ReaderSpec) -> dict[str, Any]:
    return {
        "model": spec.model,
        "base_url": spec.base_url,
        "revision": spec.revision,  # provenance: what the server serves
        "concurrency": spec.concurrency,
        "max_retries": spec.max_retries,
    }


def _vllm(spec: ReaderSpec) -> dict[str, Any]:
    return {
        "model": spec.model,
        "revision": spec.revision,
        "max_input_tokens": spec.max_input_tokens,
        "dtype": spec.dtype,
    }


def _llamacpp(spec: ReaderSpec) -> dict[str, Any]:
    return {
        "model": spec.model,
        "n_ctx": spec.n_ctx,
        "n_threads": spec.n_threads,
        "n_gpu_layers": spec.n_gpu_layers,
        "max_input_tokens": spec.max_input_tokens,
    }


BACKEND_PARAMS: dict[str, Callable[[ReaderSpec], dict[str, Any]]] = {
    "hf": _hf,
    "llamacpp": _llamacpp,
    "openai": _openai,
    "vllm": _vllm,
}


def _model_only(spec: ReaderSpec) -> dict[str, Any]:
    return {"model": spec.model}


def build_reader(spec: ReaderSpec) -> Reader:
    """The reader named by ``spec.backend`` with its parameters (a backend registered at run
    time, e.g. an in-process reader in a test, gets ``model`` only)."""
    return get_reader(spec.backend, **BACKEND_PARAMS.get(spec.backend, _model_only)(spec))


def reader_tokenizer(spec: ReaderSpec) -> Any:
    """The reader's tokenizer when it is a local model (for token counts), else None: a
    transformers tokenizer (``hf``) or the GGUF's own (``llamacpp``, a callable)."""
    if spec.backend == "llamacpp":
        from compressbench.readers.llamacpp import gguf_tokenizer

        return gguf_tokenizer(spec.model)
    if spec.backend != "hf":
        return None
    from transformers import AutoTokenizer

    if spec.model == DEFAULT_MODEL:
        from compressbench.readers.smollm import prepare_default_model

        prepared = prepare_default_model()
        return AutoTokenizer.from_pretrained(prepared.path)
    return AutoTokenizer.from_pretrained(spec.model)
