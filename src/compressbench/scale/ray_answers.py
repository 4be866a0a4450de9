"""Answer many cells on a Ray pool of readers; the answer cache is the join point.

1. The driver reads each cell's contexts and builds its requests (the answers stage's code).
2. ``workers`` Ray actors each load one reader (:class:`~compressbench.scale.worker.AnswerWorker`;
   with ``gpus_per_worker`` one GPU each; with ``base_urls`` each talks to one server of a pool
   of OpenAI-compatible servers). One of them computes each cell's cache keys.
3. The prompts the cache lacks are cut into the batches the serial stage would make
   (:mod:`compressbench.scale.plan`) and handed to idle actors by Ray's ``ActorPool``; every
   result is committed to the driver's cache as it arrives, so a killed run resumes.
4. With ``write`` on, each cell's answers file and ``.stats.json`` are written by the answers
   stage's own writer from the cache: the files are byte-identical for any number of workers
   and to a serial ``dvc repro`` (every later ``dvc repro`` of the answers stage is all hits).

The same code runs on a local Ray instance (``address`` None: started here with one logical CPU
per worker) and on a cluster (``address="auto"`` or ``ray://head:10001``): the workers need
the project installed and the model reachable on their node; only prompts and answers travel.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compressbench.config import Params
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl
from compressbench.pipeline.paths import answer_cache
from compressbench.pipeline.reader_factory import build_reader
from compressbench.readers.base import Generation, Reader
from compressbench.readers.cache import AnswerCache, generate_cached
from compressbench.scale.plan import CellJob, Shard, plan_shards
from compressbench.scale.worker import AnswerWorker, CellPlan, ReplayReader, ShardResult
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.answers import cell_requests, write_answers

__all__ = ["RayRun", "run_answers"]

log = logging.getLogger(__name__)

Cell = tuple[str, str, float]  # dataset, method, ratio


@dataclass(frozen=True)
class RayRun:
    """What a run did: cells, requests, shards and generations, cache hits, seconds."""

    cells: int
    requests: int
    cached: int
    shards: int
    generated: int
    seconds: float
    answer_seconds: float  # from the first shard handed out to the last result stored
    workers_used: int  # distinct worker processes that answered a shard

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _factories(
    params: Params, workers: int, base_urls: Sequence[str]
) -> list[Callable[[], Reader]]:
    specs = [params.reader] * workers
    if base_urls:
        specs = [
            replace(params.reader, base_url=base_urls[i % len(base_urls)]) for i in range(workers)
        ]
    return [functools.partial(build_reader, spec) for spec in specs]


def _contexts(cell: Cell) -> list[dict[str, Any]]:
    files = paths.CellFiles(*cell)
    if not files.contexts.is_file():
        raise InputError(
            "no contexts for this cell: run the contexts stage first "
            "(dvc repro, or compressbench stage contexts)",
            file=str(files.contexts),
        )
    return list(read_jsonl(files.contexts))


@functools.cache
def _remote_worker() -> Any:
    import ray

    return ray.remote(AnswerWorker)


def _start(address: str | None, workers: int, cpus_per_worker: float) -> bool:
    """Connect to Ray (or start a local instance); True when this call started it."""
    import ray

    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address)
    else:
        # Ray starts workers at niceness 15; here they do all the work, and on a busy machine
        # a niced worker starves. Read by the raylet this call starts (overridable).
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(num_cpus=max(1, round(workers * cpus_per_worker)), include_dashboard=False)
    return True


def run_answers(
    params: Params,
    cells: Sequence[Cell],
    *,
    workers: int,
    address: str | None = None,
    cpus_per_worker: float = 1.0,
    gpus_per_worker: float = 0.0,
    base_urls: Sequence[str] = (),
    make_reader: Callable[[], Reader] | None = None,
    write: bool = True,
) -> RayRun:
    """Answer every request of ``cells`` on ``workers`` Ray actors (see the module docstring).

    ``make_reader`` replaces the reader built from ``params.reader`` (e.g. an in-process test
    reader; it must pickle). A Ray connection that already exists is used and left open.
    """
    if workers < 1:
        raise InputError(f"must be >= 1; got {workers}", field="--workers")
    started = time.perf_counter()
    contexts = {cell: _contexts(cell) for cell in cells}
    requests = {cell: cell_requests(params.reader, contexts[cell]) for cell in cells}
    factories = [make_reader] * workers if make_reader else _factories(params, workers, base_urls)
    import ray
    from ray.util import ActorPool

    owner = _start(address, workers, cpus_per_worker)
    options = {"num_cpus": cpus_per_worker, "num_gpus": gpus_per_worker}
    actors = [_remote_worker().options(**options).remote(f) for f in factories]
    try:
        jobs = {cell: CellJob(params, cell[1], cell[2]) for cell in cells}
        plans: dict[Cell, CellPlan] = dict(
            zip(
                cells,
                ray.get(
                    [
                        actors[i % workers].plan.remote(jobs[cell], requests[cell])
                        for i, cell in enumerate(cells)
                    ]
                ),
                strict=True,
            )
        )
        with AnswerCache(answer_cache()) as cache:
            shards, cached = _plan(cells, jobs, requests, plans, cache)
            began = time.perf_counter()
            results, used = _answer(ActorPool(actors), shards, cache)
            answer_seconds = time.perf_counter() - began
            if write:
                for cell in cells:
                    reader = ReplayReader(plans[cell].identity, results)
                    run = generate_cached(reader, requests[cell], cache, progress=False)
                    write_answers(
                        paths.CellFiles(*cell), contexts[cell], requests[cell], reader, run
                    )
    finally:
        for actor in actors:
            ray.kill(actor)
        if owner:
            ray.shutdown()
    summary = RayRun(
        cells=len(cells),
        requests=sum(len(r) for r in requests.values()),
        cached=cached,
        shards=len(shards),
        generated=len(results),
        seconds=time.perf_counter() - started,
        answer_seconds=answer_seconds,
        workers_used=len(used),
    )
    log.info("ray answers: %s", summary.as_dict())
    return summary


def _plan(
    cells: Sequence[Cell],
    jobs: dict[Cell, CellJob],
    requests: dict[Cell, Any],
    plans: dict[Cell, CellPlan],
    cache: AnswerCache,
) -> tuple[list[Shard], int]:
    """Every cell's shards, in cell order; how many distinct keys the cache already held."""
    shards: list[Shard] = []
    planned: set[str] = set()
    hits: set[str] = set()
    for cell in cells:
        plan = plans[cell]
        found = cache.entries(plan.keys).keys()
        hits.update(found)
        shards += plan_shards(
            jobs[cell],
            requests[cell],
            plan.keys,
            plan.batch,
            cached=found,
            planned=planned,
            first_index=len(shards),
        )
    return shards, len(hits)


def _answer(
    pool: Any, shards: Sequence[Shard], cache: AnswerCache
) -> tuple[dict[str, Generation], set[str]]:
    """Run the shards on the pool; store each result as it comes. Every generation by key,
    and the workers that answered."""
    from tqdm.auto import tqdm

    results: dict[str, Generation] = {}
    used: set[str] = set()
    total = sum(len(s.requests) for s in shards)
    with tqdm(total=total, desc="ray answers", unit="req", disable=not total) as bar:
        for result in pool.map_unordered(lambda a, s: a.answer.remote(s), shards):
            done: ShardResult = result
            shard = shards[done.index]
            gens = [Generation.from_dict(g) for g in done.generations]
            keep = [
                (key, gen, payload)
                for key, gen, payload in zip(shard.keys, gens, done.payloads, strict=True)
                if not gen.is_exception
            ]
            cache.put_many(keep, started_at=done.started_at, ended_at=done.ended_at)
            results.update(zip(shard.keys, gens, strict=True))
            used.add(done.worker)
            bar.update(len(gens))
    return results, used
