"""Pinned upstream corpora: download once into ``data/sources/<corpus>`` and verify.

Every file is fetched from the pinned commit (``upstream_manifest.json``) and checked against
its git blob SHA-1 (full id, or the recorded id prefix where only that is known). Files with no
recorded id are pinned on first download: their sha256 goes into ``SHA256SUMS`` beside them and
every later run verifies against it (trust on first use; ``data/sources`` is git-ignored, like
the pipeline's other data).
"""

from __future__ import annotations

import hashlib
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import atomic_writer

log = logging.getLogger(__name__)
SOURCES_ROOT = Path("data") / "sources"
LOCK_NAME = "SHA256SUMS"


def manifest() -> dict[str, Any]:
    text = resources.files("compressbench.corpora").joinpath("upstream_manifest.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def blob_sha1(data: bytes) -> str:
    """Git's blob id of a file's bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def wanted_files(corpus: str, splits: Sequence[str] | None) -> dict[str, str | None]:
    """``relative path -> expected blob id (or prefix, or None)`` for the requested splits."""
    try:
        files: dict[str, str | None] = manifest()[corpus]["files"]
    except KeyError:
        raise InputError(
            f"no pinned upstream source for corpus {corpus!r}", field="loader"
        ) from None
    keep = set(splits) if splits else None
    return {
        name: blob
        for name, blob in files.items()
        if "/" not in name or keep is None or name.split("/", 1)[0] in keep
    }


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            data: bytes = resp.read()
            return data
    except (urllib.error.URLError, TimeoutError) as exc:
        raise InputError(
            f"cannot download {url} ({exc}); offline, use `source: builtin` or a local folder"
            " (`source: local`, `path: ...`) in params.yaml"
        ) from exc


def _read_lock(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    pairs = (line.split("  ", 1) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {name: digest for digest, name in pairs}


def _write_lock(path: Path, lock: dict[str, str]) -> None:
    with atomic_writer(path) as fh:
        fh.writelines(f"{digest}  {name}\n" for name, digest in sorted(lock.items()))


def verify(name: str, data: bytes, blob: str | None, lock: dict[str, str], where: str) -> None:
    """Raise unless ``data`` (file ``name``, read from ``where``) matches its recorded blob id
    (or prefix), or else its sha256 pinned in ``lock`` (pinning it when new)."""
    if blob is not None:
        actual = blob_sha1(data)
        if not actual.startswith(blob):
            raise InputError(f"git blob id {actual} does not match the pinned {blob}", file=where)
        return
    digest = hashlib.sha256(data).hexdigest()
    if name in lock and lock[name] != digest:
        raise InputError(f"sha256 {digest} differs from the pinned {lock[name]}", file=where)
    lock[name] = digest


def fetch_upstream(corpus: str, splits: Sequence[str] | None, root: Path = SOURCES_ROOT) -> Path:
    """Make ``root/<corpus>`` hold the verified upstream files of ``splits``; return it."""
    spec = manifest()[corpus]
    target = root / corpus
    lock_path = target / LOCK_NAME
    lock = _read_lock(lock_path)
    for name, blob in wanted_files(corpus, splits).items():
        path = target / name
        if path.exists():
            verify(name, path.read_bytes(), blob, lock, str(path))
            continue
        url = spec["url"].format(commit=spec["commit"], file=name)
        log.info("downloading %s", url)
        data = _download(url)
        verify(name, data, blob, lock, url)
        with atomic_writer(path, "wb") as fh:
            fh.write(data)
        _write_lock(lock_path, lock)  # pin as we go: an interrupted fetch keeps its pins
    _write_lock(lock_path, lock)
    return target
