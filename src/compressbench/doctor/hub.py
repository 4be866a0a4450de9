"""The Hugging Face Hub as the doctor sees it: endpoint, token, gated repos, a model's config.

Everything goes through ``huggingface_hub`` (``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HOME``,
``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` mean what they mean to it), with a short timeout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: Orgs whose models need an accepted licence and a token (the paper's readers among them).
GATED_PREFIXES = ("meta-llama/", "mistralai/", "google/gemma")
_TRUE = frozenset({"1", "true", "yes", "on"})


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def token() -> str | None:
    """The token huggingface_hub would send (``HF_TOKEN``, else the saved login)."""
    from huggingface_hub import get_token

    return get_token() or None


def is_gated(repo_id: str) -> bool:
    return repo_id.lower().startswith(tuple(p.lower() for p in GATED_PREFIXES))


def hub_cache() -> Path:
    """Where huggingface_hub keeps downloads: ``HF_HUB_CACHE``, ``$HF_HOME/hub`` or the default."""
    if env := os.environ.get("HF_HUB_CACHE"):
        return Path(env)
    home = os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")
    return Path(home) / "hub"


def repo_folder(cache: Path, repo_id: str) -> Path:
    return cache / ("models--" + repo_id.replace("/", "--"))


def cached_bytes(cache: Path, repo_id: str) -> int:
    """Bytes of ``repo_id`` already downloaded into ``cache`` (complete blobs only)."""
    blobs = repo_folder(cache, repo_id) / "blobs"
    if not blobs.is_dir():
        return 0
    return sum(p.stat().st_size for p in blobs.iterdir() if not p.name.endswith(".incomplete"))


def config_url(repo_id: str, revision: str | None) -> str:
    from huggingface_hub import hf_hub_url

    return hf_hub_url(repo_id, "config.json", revision=revision, endpoint=endpoint())


def head_config(repo_id: str, revision: str | None, timeout: float) -> Any:
    """HEAD of the model's ``config.json`` (raises huggingface_hub's errors: gated, not found)."""
    from huggingface_hub import get_hf_file_metadata

    url = config_url(repo_id, revision)
    return get_hf_file_metadata(url, token=token(), timeout=timeout, endpoint=endpoint())


def fetch_config(repo_id: str, revision: str | None, timeout: float) -> dict[str, Any]:
    """The model's ``config.json`` (from the local cache first, else the Hub; nothing is saved)."""
    from huggingface_hub import try_to_load_from_cache

    local = try_to_load_from_cache(repo_id, "config.json", str(hub_cache()), revision=revision)
    if isinstance(local, str):
        loaded: dict[str, Any] = json.loads(Path(local).read_text(encoding="utf-8"))
        return loaded
    if offline():
        raise OSError(f"HF_HUB_OFFLINE is set and config.json of {repo_id} is not cached")
    import httpx
    from huggingface_hub.utils import build_hf_headers

    resp = httpx.get(
        config_url(repo_id, revision),
        headers=build_hf_headers(token=token()),
        timeout=timeout,
        follow_redirects=True,
    )
    resp.raise_for_status()
    fetched: dict[str, Any] = resp.json()
    return fetched
