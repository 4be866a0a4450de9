"""Cached structured generation with retries of unparseable replies (judges build on this).

:func:`generate_structured` asks through :func:`~compressbench.readers.cache.generate_cached`,
reads each reply with :func:`~compressbench.readers.structured.parse_object`, and asks again
for the replies that did not parse, up to ``retries`` times. Attempt ``n`` sends the same
request under a cache key that differs from attempt 0's (``"attempt": n`` joins the decoding in
the key; attempt 0 keeps the reader's own key), so a bad reply stays cached as what attempt 0
said and a rerun replays every attempt from the cache without calling the model. A request
whose last attempt still fails is returned with ``error`` set, never dropped. Transport
failures (``exception:...``) are not retried here: the backend has retried them already, and
they are not cached, so the next run asks again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compressbench.readers.base import ChatRequest, Generation, Reader
from compressbench.readers.cache import AnswerCache, generate_cached
from compressbench.readers.structured import Parsed, parse_object


class AttemptReader(Reader):
    """``reader`` as seen by the cache on attempt ``attempt``: same requests, same provenance,
    a decoding (hence cache key) marked with the attempt number from attempt 1 on."""

    def __init__(self, reader: Reader, attempt: int) -> None:
        self.reader = reader
        self.attempt = attempt
        self.name = reader.name
        self.model_id = reader.model_id
        self.revision = reader.revision

    def decoding(self) -> dict[str, Any]:
        out = dict(self.reader.decoding())
        if self.attempt:
            out["attempt"] = self.attempt
        return out

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        return self.reader.generate(requests)


@dataclass(frozen=True)
class StructuredResult:
    """The outcome for one request: the valid object, or the last attempt's error.

    ``attempts`` counts the attempts used (1 = first reply parsed); ``raw`` is the last reply;
    ``cache_key`` the cache key of the last attempt."""

    id: str
    value: dict[str, Any] | None
    error: str | None
    attempts: int
    raw: str
    cache_key: str


@dataclass
class StructuredRun:
    results: list[StructuredResult]
    stats: dict[str, int] = field(default_factory=dict)


def _read(gen: Generation, schema: Mapping[str, Any]) -> Parsed:
    if gen.is_exception:
        return Parsed(None, gen.error)
    return parse_object(gen.raw, schema)


def generate_structured(
    reader: Reader,
    requests: Sequence[ChatRequest],
    cache: AnswerCache,
    schema: Mapping[str, Any],
    *,
    retries: int = 2,
    commit_every: int | None = None,
    progress: bool = True,
) -> StructuredRun:
    """One :class:`StructuredResult` per request, in order (see the module docstring).

    ``stats``: ``requests``, ``model_calls`` and ``cache_hits`` over all attempts, ``retried``
    (requests that needed more than one attempt), ``errors`` (requests left without a valid
    object)."""
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    results: dict[int, StructuredResult] = {}
    stats = {"requests": len(requests), "model_calls": 0, "cache_hits": 0}
    pending = list(range(len(requests)))
    for attempt in range(retries + 1):
        if not pending:
            break
        batch = [requests[i] for i in pending]
        run = generate_cached(
            AttemptReader(reader, attempt),
            batch,
            cache,
            commit_every=commit_every,
            progress=progress,
        )
        stats["model_calls"] += run.stats.model_calls
        stats["cache_hits"] += run.stats.hits
        retry: list[int] = []
        for i, gen, key in zip(pending, run.generations, run.keys, strict=True):
            parsed = _read(gen, schema)
            results[i] = StructuredResult(
                id=requests[i].id,
                value=parsed.value,
                error=parsed.error,
                attempts=attempt + 1,
                raw=gen.raw,
                cache_key=key,
            )
            if not parsed.ok and not gen.is_exception:
                retry.append(i)
        pending = retry
    ordered = [results[i] for i in range(len(requests))]
    stats["retried"] = sum(r.attempts > 1 for r in ordered)
    stats["errors"] = sum(r.error is not None for r in ordered)
    return StructuredRun(ordered, stats)
