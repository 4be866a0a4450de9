"""Content-addressed answer cache (sqlite, WAL) and ``generate_cached``.

Key = sha256 of canonical JSON over (backend, model id, revision, system + user prompt,
decoding parameters incl. ``max_new_tokens`` and ``max_input_tokens``). The request id is not
part of the key: two probes with the same prompt share one answer. Generations whose
generation itself raised (``error = "exception:..."``) are returned but never stored, so a
rerun tries them again; everything stored is never regenerated.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compressbench.jsonl import canonical_json
from compressbench.readers.base import ChatRequest, Generation, Reader

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    generation TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""
_QUERY_CHUNK = 500  # stay below sqlite's bound-variable limit


def key_payload(reader: Reader, request: ChatRequest) -> dict[str, Any]:
    """Everything that determines an answer, as a JSON-able dict."""
    decoding = dict(reader.decoding())
    decoding["max_new_tokens"] = request.max_new_tokens
    return {
        "backend": reader.name,
        "model_id": reader.model_id,
        "revision": reader.revision,
        "system": request.system,
        "user": request.user,
        "decoding": decoding,
    }


def cache_key(reader: Reader, request: ChatRequest) -> str:
    return hashlib.sha256(canonical_json(key_payload(reader, request)).encode()).hexdigest()


class AnswerCache:
    """sqlite store of generations by key; every write is one atomic transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def keys(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT key FROM answers ORDER BY key")]

    def get_many(self, keys: Iterable[str]) -> dict[str, Generation]:
        """The cached generations among ``keys`` (missing keys are absent)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Generation] = {}
        for i in range(0, len(wanted), _QUERY_CHUNK):
            chunk = wanted[i : i + _QUERY_CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key, generation FROM answers WHERE key IN ({marks})"
            for key, blob in self._db.execute(sql, chunk):
                found[key] = Generation.from_dict(json.loads(blob))
        return found

    def put(
        self, key: str, generation: Generation, request: Mapping[str, Any] | None = None
    ) -> None:
        self.put_many([(key, generation, request)])

    def put_many(self, items: Iterable[tuple[str, Generation, Mapping[str, Any] | None]]) -> int:
        """Store items in one transaction; an existing key is kept, never overwritten."""
        rows = [
            (key, canonical_json(dict(req or {})), canonical_json(gen.to_dict()), time.time())
            for key, gen, req in items
        ]
        with self._transaction():
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO answers (key, request, generation, created_at) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )
            return self._db.total_changes - before

    def _transaction(self) -> _Txn:
        return _Txn(self._db)


class _Txn:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type is not None else "COMMIT")


@dataclass
class CacheStats:
    """Counts for the caller to log: requests, cache hits, model calls, stored rows."""

    requests: int = 0
    hits: int = 0
    model_calls: int = 0
    shared: int = 0  # requests answered by an identical request in the same call
    stored: int = 0
    not_stored: int = 0  # exception rows, retried on the next run
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class CachedRun:
    generations: list[Generation]
    keys: list[str]  # the cache key of each request, in order
    stats: CacheStats = field(default_factory=CacheStats)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def default_commit_every(reader: Reader) -> int:
    """Batch the reader can use at once: its batch size, else its concurrency, else 8."""
    for attr in ("batch_size", "concurrency"):
        value = getattr(reader, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return 8


def generate_cached(
    reader: Reader,
    requests: Sequence[ChatRequest],
    cache: AnswerCache,
    *,
    commit_every: int | None = None,
    progress: bool = True,
) -> CachedRun:
    """Answers for ``requests`` in order: cached ones looked up, only misses generated.

    Misses are generated in length-sorted chunks of ``commit_every`` and committed after each
    chunk, so a crash loses at most the chunk in flight.
    """
    start = time.perf_counter()
    stats = CacheStats(requests=len(requests))
    keys = [cache_key(reader, r) for r in requests]
    found = cache.get_many(keys)
    first_of: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key in found:
            stats.hits += 1
        elif key in first_of:
            stats.shared += 1
        else:
            first_of[key] = i
    misses = sorted(
        first_of.values(), key=lambda i: (len(requests[i].system) + len(requests[i].user), i)
    )
    size = commit_every or default_commit_every(reader)
    bar = _progress(len(misses), progress, reader)
    try:
        for chunk in _chunks(misses, size):
            batch = [requests[i] for i in chunk]
            gens = reader.generate(batch)
            if len(gens) != len(batch):
                raise RuntimeError(
                    f"reader {reader.name} returned {len(gens)} rows for {len(batch)}"
                )
            stats.model_calls += len(batch)
            keep = [
                (keys[i], g, key_payload(reader, requests[i]))
                for i, g in zip(chunk, gens, strict=True)
                if not g.is_exception
            ]
            stats.not_stored += len(batch) - len(keep)
            stats.stored += cache.put_many(keep)
            found.update({keys[i]: g for i, g in zip(chunk, gens, strict=True)})
            if bar is not None:
                bar.update(len(batch))
                bar.set_postfix(hits=stats.hits, errors=stats.not_stored)
    finally:
        if bar is not None:
            bar.close()
    stats.seconds = time.perf_counter() - start
    out = [replace(found[key], id=req.id) for key, req in zip(keys, requests, strict=True)]
    log.info("reader %s: %s", reader.name, stats.as_dict())
    return CachedRun(out, keys, stats)


def _progress(total: int, enabled: bool, reader: Reader) -> Any:
    if not enabled or total == 0:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"{reader.name} {reader.model_id}", unit="req")
