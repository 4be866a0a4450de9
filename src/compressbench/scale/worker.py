"""The Ray side of a scaled answers run, and the reader that replays its results.

:class:`AnswerWorker` is a plain class (the driver wraps it with ``ray.remote``): it builds
one reader when the actor starts and answers shards with it, applying the cell's KV press the
way the answers stage does (:func:`compressbench.tpbench.stages.answers.cell_reader`), so the
cache keys it computes are the stage's keys. :class:`ReplayReader` stands in for that reader on
the driver: same identity (name, model id, revision, decoding), answers looked up by cache key
among what the workers returned, so the stage's own writer produces the cell files without
loading a model on the driver.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compressbench.readers.base import ChatRequest, Generation, Reader, json_record
from compressbench.readers.cache import cache_key, default_commit_every, key_payload
from compressbench.scale.plan import CellJob, Shard
from compressbench.tpbench.stages.answers import cell_reader

__all__ = ["AnswerWorker", "CellPlan", "ReaderIdentity", "ReplayReader", "ShardResult"]


@dataclass(frozen=True)
class ReaderIdentity:
    """What makes a reader's cache keys: backend name, model id, revision, decoding; whether
    a press hook was attached (the answers stage then writes a KV summary)."""

    name: str
    model_id: str
    revision: str
    decoding: dict[str, Any]
    pressed: bool

    @classmethod
    def of(cls, reader: Reader) -> ReaderIdentity:
        return cls(
            name=reader.name,
            model_id=reader.model_id,
            revision=reader.revision,
            decoding=dict(reader.decoding()),
            pressed=reader.press is not None,
        )


@dataclass(frozen=True)
class CellPlan:
    """A worker's answer to "what are this cell's keys": its reader identity for the cell,
    the cache key of every request, and the batch size its reader uses."""

    identity: ReaderIdentity
    keys: tuple[str, ...]
    batch: int


@dataclass(frozen=True)
class ShardResult:
    """Generations of one shard (``Generation.to_dict()``, request order), the cache payload
    of each, and when the reader ran (epoch seconds)."""

    index: int
    generations: tuple[dict[str, Any], ...]
    payloads: tuple[dict[str, Any], ...]
    started_at: float
    ended_at: float
    worker: str  # host:pid of the process that answered


class AnswerWorker:
    """One reader in one worker process (a Ray actor)."""

    def __init__(self, make_reader: Callable[[], Reader]) -> None:
        self.reader = make_reader()

    def _reader(self, job: CellJob) -> Reader:
        return cell_reader(self.reader, job.params, job.method, job.ratio)

    def plan(self, job: CellJob, requests: Sequence[ChatRequest]) -> CellPlan:
        reader = self._reader(job)
        return CellPlan(
            identity=ReaderIdentity.of(reader),
            keys=tuple(cache_key(reader, r) for r in requests),
            batch=default_commit_every(reader),
        )

    def answer(self, shard: Shard) -> ShardResult:
        reader = self._reader(shard.job)  # a fresh press hook per shard: records in order
        began = time.time()
        gens = reader.generate(list(shard.requests))
        ended = time.time()
        if len(gens) != len(shard.requests):
            raise RuntimeError(
                f"reader {reader.name} returned {len(gens)} rows for {len(shard.requests)}"
            )
        return ShardResult(
            index=shard.index,
            generations=tuple(replace(g, record=json_record(g.record)).to_dict() for g in gens),
            payloads=tuple(key_payload(reader, r) for r in shard.requests),
            started_at=began,
            ended_at=ended,
            worker=f"{socket.gethostname()}:{os.getpid()}",
        )


class ReplayReader(Reader):
    """A reader with a worker's identity whose answers are the workers' results (by key).

    Used where the answer cache does not hold a result: a generation that raised is never
    cached, but the cell file still records it, as the serial stage does.
    """

    def __init__(self, identity: ReaderIdentity, results: Mapping[str, Generation]) -> None:
        self.name = identity.name
        self.model_id = identity.model_id
        self.revision = identity.revision
        self._decoding = identity.decoding
        self.press = True if identity.pressed else None
        self._results = results

    def decoding(self) -> dict[str, Any]:
        return dict(self._decoding)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        out = []
        for request in requests:
            key = cache_key(self, request)
            if key not in self._results:
                raise RuntimeError(f"request {request.id}: no worker answered key {key}")
            out.append(replace(self._results[key], id=request.id))
        return out
