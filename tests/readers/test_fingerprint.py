"""Weight files are hashed once per version: a second load takes the sha256 from the
fingerprint cache, a touched or replaced file is hashed again, ``COMPRESSBENCH_REHASH=1``
hashes everything again, and the hash is hashlib's. The hf reader loads a real tiny model
twice and reports what hashing cost."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from compressbench.readers.env import model_sha256
from compressbench.readers.fingerprint import (
    REHASH_ENV,
    FingerprintCache,
    default_cache_file,
    weights_sha256,
)
from support.tiny_llama import save_tiny_llama, word_tokenizer


def _weights(folder: Path, *names: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for i, name in enumerate(names):
        path = folder / name
        path.write_bytes(os.urandom(1000 + i) * 50)
        files.append(path)
    return files


def test_second_load_reads_the_cache_and_the_hash_is_hashlibs(tmp_path: Path) -> None:
    model = tmp_path / "model"
    files = _weights(model, "a.safetensors", "b.safetensors")
    store = tmp_path / "cache" / "fingerprints.json"
    first, stats = weights_sha256(model, FingerprintCache(store))
    assert first == model_sha256(model)  # the revision the reader always recorded
    lines = "".join(f"{f.name} {hashlib.sha256(f.read_bytes()).hexdigest()}\n" for f in files)
    assert first == hashlib.sha256(lines.encode()).hexdigest()
    assert (stats.files_hashed, stats.files_from_cache) == (2, 0)
    assert not stats.as_dict()["weights_hash_from_cache"]

    again, stats = weights_sha256(model, FingerprintCache(store))  # another process, later
    assert again == first
    assert (stats.files_hashed, stats.files_from_cache) == (0, 2)
    assert stats.as_dict()["weights_hash_from_cache"]
    entries = json.loads(store.read_text())["files"]
    entry = entries[str(files[0].resolve())]
    st = files[0].stat()
    assert entry == {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "inode": st.st_ino,
        "sha256": hashlib.sha256(files[0].read_bytes()).hexdigest(),
    }


def test_a_touched_or_replaced_file_is_hashed_again(tmp_path: Path) -> None:
    (weights,) = _weights(tmp_path / "m", "model.gguf")
    store = tmp_path / "fingerprints.json"
    old = FingerprintCache(store).sha256(weights)

    st = weights.stat()
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # touched, same bytes
    cache = FingerprintCache(store)
    assert cache.sha256(weights) == old and cache.stats.files_hashed == 1
    assert FingerprintCache(store).sha256(weights) == old  # and remembered at its new mtime

    # new bytes of the same size and mtime under the same name: a new inode gives it away
    st = weights.stat()
    other = tmp_path / "other.gguf"
    other.write_bytes(bytes(reversed(weights.read_bytes())))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, weights)
    assert weights.stat().st_ino != st.st_ino
    cache = FingerprintCache(store)
    new = cache.sha256(weights)
    assert cache.stats.files_hashed == 1
    assert new == hashlib.sha256(weights.read_bytes()).hexdigest() != old


def test_rehash_on_request_and_a_broken_cache_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (weights,) = _weights(tmp_path / "m", "model.safetensors")
    store = tmp_path / "fingerprints.json"
    sha = FingerprintCache(store).sha256(weights)
    monkeypatch.setenv(REHASH_ENV, "1")
    cache = FingerprintCache(store)
    assert cache.sha256(weights) == sha and cache.stats.files_hashed == 1
    monkeypatch.setenv(REHASH_ENV, "0")
    cache = FingerprintCache(store)
    assert cache.sha256(weights) == sha and cache.stats.files_from_cache == 1
    assert FingerprintCache(store, rehash=True).sha256(weights) == sha

    store.write_text("{not json")  # a torn or foreign file: hashed afresh, then rewritten
    cache = FingerprintCache(store)
    assert cache.sha256(weights) == sha and cache.stats.files_hashed == 1
    assert json.loads(store.read_text())["files"][str(weights.resolve())]["sha256"] == sha

    monkeypatch.setenv("COMPRESSBENCH_CACHE", str(tmp_path / "cb"))
    assert default_cache_file() == tmp_path / "cb" / "fingerprints.json"


def test_hf_reader_hashes_its_weights_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from compressbench.readers.hf import HFReader

    monkeypatch.setenv("COMPRESSBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(REHASH_ENV, raising=False)
    model_dir = Path(save_tiny_llama(tmp_path / "tiny", word_tokenizer(["a b c"]), 1))
    first = HFReader(model_dir, device="cpu")
    assert first.revision == model_sha256(model_dir)
    assert first.stats["weight_files_hashed"] == 1
    assert first.stats["weights_hash_from_cache"] is False
    assert first.stats["weights_hash_seconds"] > 0

    second = HFReader(model_dir, device="cpu")
    assert second.revision == first.revision
    assert second.stats["weight_files_hashed"] == 0
    assert second.stats["weight_files_from_cache"] == 1
    assert second.stats["weights_hash_from_cache"] is True

    copy = tmp_path / "copy"  # the same bytes at another path: its own entry, hashed once
    shutil.copytree(model_dir, copy)
    third = HFReader(copy, device="cpu")
    assert third.revision == first.revision and third.stats["weight_files_hashed"] == 1
