"""Loading a transformers model for :class:`~compressbench.readers.hf.HFReader`: a ``.gguf``
path split into folder and file, the device (TF32 off on CUDA), model and tokenizer (a GGUF's
tokenizer repaired), and the ids that end an answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def split_gguf(model: str | Path, gguf_file: str | None) -> tuple[str, str | None]:
    """A ``.gguf`` path becomes (its directory, its file name)."""
    path = Path(model)
    if gguf_file is None and path.suffix == ".gguf" and path.is_file():
        return str(path.parent), path.name
    return str(model), gguf_file


def resolve_device(device: str) -> Any:
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False  # spec §6: TF32 off
        torch.backends.cudnn.allow_tf32 = False
    return torch.device(device)


def load_model(
    source: str,
    gguf_file: str | None,
    revision: str | None,
    dtype: str,
    attn_implementation: str,
    device: Any,
) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs: dict[str, Any] = {}
    if gguf_file is not None:
        kwargs["gguf_file"] = gguf_file
    if revision is not None:
        kwargs["revision"] = revision
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    if gguf_file is not None:
        from transformers.utils import cached_file

        from compressbench.readers.gguf_tokenizer import repair_tokenizer

        local = cached_file(source, gguf_file, revision=revision)
        if local is not None:
            tokenizer = repair_tokenizer(tokenizer, local)
    torch_dtype = dtype if dtype == "auto" else getattr(torch, dtype)
    model = AutoModelForCausalLM.from_pretrained(
        source, dtype=torch_dtype, attn_implementation=attn_implementation, **kwargs
    )
    model.to(device)
    model.eval()
    return model, tokenizer


def eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    configured = getattr(model.generation_config, "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return ids
