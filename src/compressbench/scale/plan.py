"""Plan a Ray run: per cell, the prompts the answer cache lacks, cut into shards.

A shard is exactly the batch the serial answers stage would hand the reader (misses of the
cell sorted by prompt length, cut every ``batch`` requests, see
:func:`compressbench.readers.cache.generate_cached`), so a batched reader sees the same
batches however many workers there are. A prompt that an earlier cell already plans is not
planned twice (the cache key, not the cell, is the unit of work).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.readers.base import ChatRequest

__all__ = ["CellJob", "Shard", "plan_shards"]


@dataclass(frozen=True)
class CellJob:
    """What a worker needs to set its reader up for one cell: the parameters (reader block and
    ``method_params``), the method and the retained fraction."""

    params: Any  # compressbench.config.Params (or a view with the same attributes)
    method: str
    ratio: float


@dataclass(frozen=True)
class Shard:
    """One batch of requests of one cell, with the cache key of each request."""

    index: int
    job: CellJob
    requests: tuple[ChatRequest, ...]
    keys: tuple[str, ...]


def _size(request: ChatRequest) -> int:
    return len(request.system) + len(request.user)


def plan_shards(
    job: CellJob,
    requests: Sequence[ChatRequest],
    keys: Sequence[str],
    batch: int,
    *,
    cached: Container[str],
    planned: set[str],
    first_index: int = 0,
) -> list[Shard]:
    """Shards of the requests whose key is neither ``cached`` nor already ``planned`` (which
    this call extends), numbered from ``first_index``."""
    if len(requests) != len(keys):
        raise ValueError(f"{len(requests)} requests but {len(keys)} keys")
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    misses: list[int] = []
    for i, key in enumerate(keys):
        if key in cached or key in planned:
            continue
        planned.add(key)
        misses.append(i)
    misses.sort(key=lambda i: (_size(requests[i]), i))
    shards = []
    for n, start in enumerate(range(0, len(misses), batch)):
        chunk = misses[start : start + batch]
        shards.append(
            Shard(
                index=first_index + n,
                job=job,
                requests=tuple(requests[i] for i in chunk),
                keys=tuple(keys[i] for i in chunk),
            )
        )
    return shards
