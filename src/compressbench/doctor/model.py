"""Where the configured reader's weights come from and how much room they take.

The size of a Hub model comes from its ``config.json`` (the local cache or the Hub), else from
:data:`KNOWN_CONFIGS` (the paper's readers, so a box that cannot reach the Hub yet still gets a
figure); parameters from the FLOPs code's coefficients (:func:`~compressbench.flops.decoder.
decoder_cost`: ``a/2`` multiply-adds per position plus the embedding and LM head), the KV cache
per token from the attention shape. A packaged GGUF's size is its installed parts; a local model
is the size of its files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.config import ReaderSpec
from compressbench.doctor import hub
from compressbench.doctor.base import Context, one_line
from compressbench.flops.decoder import decoder_cost
from compressbench.flops.fields import ConfigFields
from compressbench.readers import packaged
from compressbench.readers.base import HUB, LOCAL, PACKAGED, ModelSource
from compressbench.readers.base import SERVER as SERVER  # re-exported: doctor.disk reads it
from compressbench.readers.registry import backend
from compressbench.readers.synthetic import LLAMA_31_8B

# where a model comes from (a backend says, :meth:`~compressbench.readers.base.Reader.model_source`)
Source = ModelSource
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")

# Mistral-7B-Instruct-v0.3's config.json, the fields that size it.
MISTRAL_7B_V03: dict[str, Any] = {
    "model_type": "mistral",
    "vocab_size": 32768,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "tie_word_embeddings": False,
}
#: Hub id (lower case) -> config fields, for sizing without the Hub (the paper's readers).
KNOWN_CONFIGS: dict[str, dict[str, Any]] = {
    "meta-llama/llama-3.1-8b-instruct": {"model_type": "llama", **LLAMA_31_8B},
    "meta-llama/meta-llama-3.1-8b-instruct": {"model_type": "llama", **LLAMA_31_8B},
    "mistralai/mistral-7b-instruct-v0.3": MISTRAL_7B_V03,
}


@dataclass(frozen=True)
class Size:
    """The weights' bytes, the KV cache's bytes per token (None: unknown) and where from."""

    weights: int
    kv_per_token: int | None
    origin: str


def source(spec: ReaderSpec) -> Source:
    """How ``reader.model`` is read by its backend (the backend's ``model_source``)."""
    return backend(spec.backend).model_source(spec.model, spec.revision)


def size_from_config(raw: Mapping[str, Any], dtype: str, origin: str) -> Size:
    """Weights and KV bytes of a decoder config in ``dtype`` (``auto``: the config's own)."""
    cfg = ConfigFields(raw, origin)
    cost = decoder_cost(cfg)
    tied = bool(cfg.top.get("tie_word_embeddings", False))
    params = cost.a // 2 + (cost.c // 2) * (1 if tied else 2)
    own = str(cfg.top.get("torch_dtype") or cfg.top.get("dtype") or "bfloat16")
    width = DTYPE_BYTES.get(dtype) or DTYPE_BYTES.get(own, 2)
    layers = cfg.integer("num_hidden_layers")
    heads = cfg.integer("num_attention_heads")
    kv_heads = cfg.integer("num_key_value_heads", default=heads)
    head_dim = cfg.integer("head_dim", default=cfg.integer("hidden_size") // heads)
    return Size(params * width, 2 * layers * kv_heads * head_dim * width, origin)


def files_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.suffix in WEIGHT_SUFFIXES)


def _hub_config(ctx: Context, src: Source) -> tuple[dict[str, Any] | None, str]:
    def fetch() -> tuple[dict[str, Any] | None, str]:
        try:
            return hub.fetch_config(src.ref, src.revision, ctx.options.timeout), "config.json"
        except Exception as exc:
            return None, one_line(exc)

    found: tuple[dict[str, Any] | None, str] = ctx.cached(f"hub:{src.ref}@{src.revision}", fetch)
    return found


def size(ctx: Context, src: Source, spec: ReaderSpec) -> Size | None:
    """The model's size, or None when nothing says it (the reason: :func:`unknown_reason`)."""
    if src.kind == PACKAGED:
        model = packaged.lookup(src.ref)
        assert model is not None
        try:
            parts = packaged.part_paths(model)
        except Exception:
            return None
        return Size(sum(p.stat().st_size for p in parts), None, "installed GGUF parts")
    if src.kind == LOCAL:
        path = Path(src.ref)
        if not path.exists():
            return None
        kv = None
        if path.is_dir() and (path / "config.json").is_file():
            try:
                local = ConfigFields.load(path / "config.json").top
                kv = size_from_config(local, spec.dtype, str(path / "config.json")).kv_per_token
            except Exception:  # a config the FLOPs code cannot size: the files still count
                kv = None
        return Size(files_size(path), kv, "local files")
    if src.kind == HUB:
        raw, why = _hub_config(ctx, src)
        if raw is not None:
            return size_from_config(raw, spec.dtype, f"{src.ref} {why}")
        known = KNOWN_CONFIGS.get(src.ref.lower())
        if known is not None:
            return size_from_config(known, spec.dtype, "compressbench's table of known models")
    return None


def unknown_reason(ctx: Context, src: Source) -> str:
    if src.kind == HUB:
        return f"config.json unavailable ({_hub_config(ctx, src)[1]}) and not a known model"
    return f"{src.ref} is not installed or does not exist"


def cache_dir(ctx: Context, src: Source) -> Path:
    """Where the weights go: ``--cache-dir``, else the Hub cache or the packaged-model folder."""
    if ctx.options.cache_dir is not None:
        return ctx.options.cache_dir
    return hub.hub_cache() if src.kind == HUB else packaged.models_dir()


def cached(ctx: Context, src: Source, weights: int) -> int:
    """Bytes of the weights already where the reader reads them."""
    if src.kind == LOCAL:
        return weights
    if src.kind == HUB:
        return hub.cached_bytes(cache_dir(ctx, src), src.ref)
    model = packaged.lookup(src.ref)
    if model is None or model.parts == 0:  # shipped whole: read in place
        return weights
    joined = cache_dir(ctx, src) / model.file_name()
    return joined.stat().st_size if joined.is_file() else 0
