"""Content-addressed answer cache (sqlite, WAL) and ``generate_cached``.

Key = sha256 of canonical JSON over (backend, model id, revision, system + user prompt,
decoding parameters incl. ``max_new_tokens`` and ``max_input_tokens``). The request id is not
part of the key: two probes with the same prompt share one answer. Generations whose
generation itself raised (``error = "exception:..."``) are returned but never stored, so a
rerun tries them again; everything stored is never regenerated.

Each row also keeps the method hook's ``record`` (e.g. what a KV press measured; nullable) and
when its batch was computed (``started_at`` / ``created_at``, epoch seconds). A file written
before those columns existed is migrated in place (``ALTER TABLE``); its answers stay.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import canonical_json
from compressbench.readers.base import ChatRequest, Generation, Reader, json_record

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    generation TEXT NOT NULL,
    created_at REAL NOT NULL,
    record TEXT,
    started_at REAL
)
"""
# Columns added after the first schema; an older file gets them by ALTER TABLE (rows kept).
_ADDED_COLUMNS = (("record", "TEXT"), ("started_at", "REAL"))
_QUERY_CHUNK = 500  # stay below sqlite's bound-variable limit


def key_payload(reader: Reader, request: ChatRequest) -> dict[str, Any]:
    """Everything that determines an answer, as a JSON-able dict."""
    decoding = dict(reader.decoding())
    decoding["max_new_tokens"] = request.max_new_tokens
    if request.response_schema is not None:  # absent otherwise: free-decoding keys unchanged
        decoding["response_schema"] = dict(request.response_schema)
        # a constrained decoder writes the properties in the schema's order, which the
        # canonical (sorted) JSON of the key would hide
        decoding["response_schema_order"] = list(request.response_schema.get("properties", {}))
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
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:  # not an sqlite file, or a corrupt one
            self._db.close()
            raise InputError(f"unreadable answer cache ({exc})", file=str(self.path)) from exc

    def _migrate(self) -> None:
        """Add the columns an older cache file lacks (one transaction; answers untouched)."""
        if not self._missing_columns():
            return
        with self._transaction():
            for name, decl in self._missing_columns():  # re-read under the write lock
                self._db.execute(f"ALTER TABLE answers ADD COLUMN {name} {decl}")
                log.info("answer cache %s: added column %s", self.path, name)

    def _missing_columns(self) -> list[tuple[str, str]]:
        have = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
        return [(name, decl) for name, decl in _ADDED_COLUMNS if name not in have]

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

    def entries(self, keys: Iterable[str]) -> dict[str, CacheEntry]:
        """The cached generations among ``keys`` with when they were computed."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, CacheEntry] = {}
        for i in range(0, len(wanted), _QUERY_CHUNK):
            chunk = wanted[i : i + _QUERY_CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = (
                "SELECT key, generation, record, started_at, created_at FROM answers "
                f"WHERE key IN ({marks})"
            )
            for key, blob, record, started, created in self._db.execute(sql, chunk):
                gen = Generation.from_dict(json.loads(blob))
                gen.record = None if record is None else json.loads(record)
                start = started if started is not None else created - gen.seconds
                found[key] = CacheEntry(gen, float(start), float(created))
        return found

    def put(
        self, key: str, generation: Generation, request: Mapping[str, Any] | None = None
    ) -> None:
        self.put_many([(key, generation, request)])

    def put_many(
        self,
        items: Iterable[tuple[str, Generation, Mapping[str, Any] | None]],
        *,
        started_at: float | None = None,
        ended_at: float | None = None,
    ) -> int:
        """Store items in one transaction; an existing key is kept, never overwritten.

        ``started_at`` / ``ended_at``: when the batch of these generations ran (epoch seconds;
        ``ended_at`` defaults to now and is stored as ``created_at``).
        """
        created = time.time() if ended_at is None else ended_at
        rows = [
            (
                key,
                canonical_json(dict(req or {})),
                canonical_json({k: v for k, v in gen.to_dict().items() if k != "record"}),
                created,
                None if gen.record is None else canonical_json(gen.record),
                started_at,
            )
            for key, gen, req in items
        ]
        with self._transaction():
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO answers "
                "(key, request, generation, created_at, record, started_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
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


@dataclass(frozen=True)
class CacheEntry:
    """A stored generation and when its batch ran (epoch seconds). Rows stored before
    ``started_at`` was kept start at ``created_at`` minus the generation's own seconds."""

    generation: Generation
    started_at: float
    ended_at: float


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
    # (started, ended) epoch seconds of the batch that computed each request's answer
    spans: list[tuple[float, float]] = field(default_factory=list)

    def compute_window(self) -> tuple[float, float] | None:
        """First start and last end of the work behind these answers (None if no answers)."""
        if not self.spans:
            return None
        return min(s for s, _ in self.spans), max(e for _, e in self.spans)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def default_commit_every(reader: Reader) -> int:
    """Requests generated and committed together: the reader's ``commit_every`` (the batch it
    uses at once: its batch size, its concurrency, 1 for one prompt at a time), at least 1."""
    return max(1, reader.commit_every)


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
    chunk, so a crash loses at most the chunk in flight. A fresh generation's ``record`` is
    returned as a cache hit would return it (:func:`json_record`).
    """
    start = time.perf_counter()
    stats = CacheStats(requests=len(requests))
    keys = [cache_key(reader, r) for r in requests]
    entries = cache.entries(keys)
    found = {key: e.generation for key, e in entries.items()}
    spans = {key: (e.started_at, e.ended_at) for key, e in entries.items()}
    first_of: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key in found:
            stats.hits += 1
        elif key in first_of:
            stats.shared += 1
        else:
            first_of[key] = i
    misses = sorted(first_of.values(), key=_miss_order(reader, requests))
    size = commit_every or default_commit_every(reader)
    bar = _progress(len(misses), progress, reader)
    try:
        for chunk in _chunks(misses, size):
            batch = [requests[i] for i in chunk]
            began = time.time()
            gens = reader.generate(batch)
            ended = time.time()
            if len(gens) != len(batch):
                raise RuntimeError(
                    f"reader {reader.name} returned {len(gens)} rows for {len(batch)}"
                )
            gens = [replace(g, record=json_record(g.record)) for g in gens]
            stats.model_calls += len(batch)
            keep = [
                (keys[i], g, key_payload(reader, requests[i]))
                for i, g in zip(chunk, gens, strict=True)
                if not g.is_exception
            ]
            stats.not_stored += len(batch) - len(keep)
            stats.stored += cache.put_many(keep, started_at=began, ended_at=ended)
            found.update({keys[i]: g for i, g in zip(chunk, gens, strict=True)})
            spans.update({keys[i]: (began, ended) for i in chunk})
            if bar is not None:
                bar.update(len(batch))
                bar.set_postfix(hits=stats.hits, errors=stats.not_stored)
    finally:
        if bar is not None:
            bar.close()
    stats.seconds = time.perf_counter() - start
    out = [replace(found[key], id=req.id) for key, req in zip(keys, requests, strict=True)]
    log.info("reader %s: %s", reader.name, stats.as_dict())
    return CachedRun(out, keys, stats, [spans[key] for key in keys])


def _miss_order(reader: Reader, requests: Sequence[ChatRequest]) -> Callable[[int], Any]:
    """The order misses are generated in: the reader's ``request_order`` key (by default the
    prompt's length, so batches pad little; llamacpp: prompts sharing a prefix next to each
    other), ties by input position. Order never changes an answer."""
    return lambda i: (reader.request_order(requests[i]), i)


def _progress(total: int, enabled: bool, reader: Reader) -> Any:
    if not enabled or total == 0:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"{reader.name} {reader.model_id}", unit="req")
