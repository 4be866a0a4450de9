"""Model provenance: content hashes of model files and Hub commit ids (the software
environment is :func:`compressbench.tracking.software_env`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from compressbench.jsonl import sha256_file

MODEL_FILE_SUFFIXES = (".safetensors", ".gguf", ".bin")


def cuda_peak_memory(device: Any) -> dict[str, int]:
    """``torch.cuda.max_memory_allocated`` / ``_reserved`` of ``device`` in this process (since
    it started: a reader worker's cells share one count); empty off CUDA."""
    import torch

    if device.type != "cuda":
        return {}
    return {
        "cuda_max_memory_allocated_bytes": int(torch.cuda.max_memory_allocated(device)),
        "cuda_max_memory_reserved_bytes": int(torch.cuda.max_memory_reserved(device)),
    }


def model_files(path: str | Path) -> list[Path]:
    """Weight files of a model: the file itself, or the weight files in a directory."""
    p = Path(path)
    if p.is_file():
        return [p]
    files = [f for f in sorted(p.iterdir()) if f.is_file() and f.suffix in MODEL_FILE_SUFFIXES]
    safetensors = [f for f in files if f.suffix == ".safetensors"]
    return safetensors or files


def sha256_files(
    files: Iterable[str | Path], hash_file: Callable[[Path], str] = sha256_file
) -> str:
    """sha256 of one file, or of the sorted ``name sha256`` lines of several; ``hash_file``
    gives one file's sha256 (e.g. a :class:`~compressbench.readers.fingerprint.FingerprintCache`
    that hashes a file once per version)."""
    paths = sorted(Path(f) for f in files)
    if len(paths) == 1:
        return hash_file(paths[0])
    lines = "".join(f"{p.name} {hash_file(p)}\n" for p in paths)
    return hashlib.sha256(lines.encode()).hexdigest()


def model_sha256(path: str | Path, hash_file: Callable[[Path], str] = sha256_file) -> str:
    """Content hash of a model file or directory (its safetensors / gguf / bin files)."""
    files = model_files(path)
    if not files:
        raise FileNotFoundError(f"no model weight files in {path}")
    return sha256_files(files, hash_file)


def hub_commit(repo_id: str, revision: str | None = None) -> str | None:
    """Commit hash of a Hub model in the local HF cache (no network), else None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except Exception:  # malformed id or cache
        return None
    if not isinstance(found, str):
        return None
    return Path(found).parent.name  # .../snapshots/<commit>/config.json
