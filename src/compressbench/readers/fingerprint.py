"""Weight-file fingerprints: a file's sha256 computed once per version of the file.

The hf reader's revision of a local model is the sha256 of its weight files
(:func:`compressbench.readers.env.model_sha256`); at the paper reader's size that is 16 GB read
on every load. :class:`FingerprintCache` keeps each file's sha256 in a JSON file,
``$COMPRESSBENCH_CACHE/fingerprints.json`` (``~/.cache/compressbench/fingerprints.json``),
keyed by the file's resolved path with the ``size``, ``mtime_ns`` and ``inode`` it had when it
was hashed. An entry is used only while all three still match the file; otherwise the file is
hashed again and the entry replaced. ``COMPRESSBENCH_REHASH=1`` (or ``rehash=True``) hashes
every file again and refreshes its entry.

The cache file is written atomically (temp file, rename) after each new hash, merged with what
is on disk just before, so concurrent loads lose at most an entry (a re-hash later, never a wrong
hash). A cache file that cannot be read is treated as empty and one that cannot be written is
skipped, each with a warning: the hash itself is always computed when in doubt.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.jsonl import sha256_file, write_json
from compressbench.readers.env import hub_commit, model_sha256
from compressbench.readers.smollm import cache_root

log = logging.getLogger(__name__)

REHASH_ENV = "COMPRESSBENCH_REHASH"
"""Set to ``1`` (any value but empty or ``0``) to hash every weight file again."""

CACHE_NAME = "fingerprints.json"
_VERSION = 1


def default_cache_file() -> Path:
    """``$COMPRESSBENCH_CACHE/fingerprints.json`` (``~/.cache/compressbench/...``)."""
    return cache_root() / CACHE_NAME


def rehash_requested(environ: dict[str, str] | None = None) -> bool:
    """True when ``COMPRESSBENCH_REHASH`` asks for a full re-hash."""
    value = (os.environ if environ is None else environ).get(REHASH_ENV, "")
    return value.strip() not in ("", "0")


@dataclass
class HashStats:
    """What fingerprinting cost: files hashed, files taken from the cache, seconds spent."""

    files_hashed: int = 0
    files_from_cache: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "weights_hash_seconds": self.seconds,
            "weight_files_hashed": self.files_hashed,
            "weight_files_from_cache": self.files_from_cache,
            # True when no file had to be read: the whole fingerprint came from the cache
            "weights_hash_from_cache": self.files_hashed == 0 and self.files_from_cache > 0,
        }


def _version_of(path: Path) -> dict[str, int]:
    """The file's size, mtime_ns and inode now (what an entry must match)."""
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


class FingerprintCache:
    """sha256 of weight files through the JSON cache (see the module docstring).

    ``path``: the cache file (default :func:`default_cache_file`); ``rehash``: hash every file
    again (default: ``COMPRESSBENCH_REHASH``). ``stats`` counts this instance's work.
    """

    def __init__(self, path: str | Path | None = None, *, rehash: bool | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_file()
        self.rehash = rehash_requested() if rehash is None else rehash
        self.stats = HashStats()

    def sha256(self, file: str | Path) -> str:
        """The sha256 of ``file``: from the cache when its size, mtime and inode match the
        entry (and no re-hash was asked for), else computed and stored."""
        start = time.perf_counter()
        resolved = Path(file).resolve()
        key = str(resolved)
        version = _version_of(resolved)
        entry = None if self.rehash else self._read().get(key)
        if entry is not None and all(entry.get(k) == v for k, v in version.items()):
            self.stats.files_from_cache += 1
            self.stats.seconds += time.perf_counter() - start
            return str(entry["sha256"])
        sha = sha256_file(resolved)
        if _version_of(resolved) == version:  # unchanged while it was read: safe to keep
            self._store(key, {**version, "sha256": sha})
        self.stats.files_hashed += 1
        self.stats.seconds += time.perf_counter() - start
        return sha

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("fingerprint cache %s unreadable (%s); hashing afresh", self.path, exc)
            return {}
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            return {}
        files = data.get("files")
        return files if isinstance(files, dict) else {}

    def _store(self, key: str, entry: dict[str, Any]) -> None:
        files = self._read()  # what other processes wrote since, kept
        files[key] = entry
        try:
            write_json(self.path, {"version": _VERSION, "files": files}, sort_keys=True)
        except OSError as exc:
            log.warning("fingerprint cache %s not writable (%s); not kept", self.path, exc)


def weights_sha256(
    path: str | Path, cache: FingerprintCache | None = None
) -> tuple[str, HashStats]:
    """:func:`~compressbench.readers.env.model_sha256` of ``path`` through ``cache`` (a default
    :class:`FingerprintCache` when None), and what it cost."""
    cache = cache or FingerprintCache()
    return model_sha256(path, hash_file=cache.sha256), cache.stats


def loaded_revision(
    model: Any, source: str, gguf_file: str | None, revision: str | None, hashes: FingerprintCache
) -> str:
    """The revision of a transformers model loaded from ``source``: the sha256 of its local
    GGUF / weight files (through ``hashes``), else its Hub commit hash when known."""
    if Path(source).exists():
        return weights_sha256(Path(source) / gguf_file if gguf_file else source, hashes)[0]
    commit = getattr(model.config, "_commit_hash", None)
    return str(commit or hub_commit(source, revision) or revision or "unknown")
