"""The KEEP-Bench compression stage: one cell per compressor, every case at every budget scale."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

from compressbench.jsonl import write_jsonl
from compressbench.keepbench.compressors.base import keep_source
from compressbench.keepbench.compressors.family import check_keep_method, keep_method
from compressbench.keepbench.flops_accounting import cell_flops
from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.rate import count_tokens
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.stages.keep_common import read_cases
from compressbench.pipeline import paths
from compressbench.pipeline.declare import stage
from compressbench.pipeline.run_log import write_stats
from compressbench.readers.cache import AnswerCache
from compressbench.readers.failures import check_model_calls

log = logging.getLogger(__name__)
# The keys of a cell's ``.stats.json`` that are facts of its compressions (the same bytes on
# every run that compresses alike); the rest (cache counts, seconds, when it ran) is the run's
# observation and goes to its run log (:mod:`compressbench.pipeline.run_log`).
STATS_FACTS = ("cell", "method_params", "cases", "flops")


def compress_cell(
    name: str,
    params: dict[str, Any],
    scale: float,
    cases: list[Any],
    cache: Any,
    flops_config: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows (deterministic) and stats (timings, cache counts, FLOPs summary) of one cell;
    :class:`~compressbench.errors.ModelCallsFailed` when too many model calls raised."""
    method: Any = keep_method(name, params)
    sources = [keep_source(c) for c in cases]
    started = time.time()
    comps, cache_stats = method.compress_cell(sources, scale, cache)
    seconds = time.time() - started
    # a generative compressor's calls that raised: too many, and the stage writes nothing
    errors = [(c.record or {}).get("error") for c in comps]
    check_model_calls(f"keep_compressed {name} x{scale}", errors, noun="compressions")
    flops = cell_flops(name, method, sources, comps, flops_config)
    source_tokens = [count_tokens(c.context) for c in cases]  # o200k_base, for Rate
    compressed_tokens = [count_tokens(c.text) for c in comps]
    rows = [
        {
            "case_id": case.case_id,
            "subset": case.subset,
            "setting": case.setting,
            "compressor": name,
            "budget_scale": scale,
            "budget": comp.budget,
            "compressed": comp.text,
            "kept_ids": list(comp.kept_ids),
            "n_sentences": comp.n_units,
            "source_tokens": n_src,
            "compressed_tokens": n_out,
            "flops": f,
            "record": comp.record,
        }
        for case, comp, n_src, n_out, f in zip(
            cases, comps, source_tokens, compressed_tokens, flops.per_case, strict=True
        )
    ]
    stats = {
        "cell": {"compressor": name, "budget_scale": scale},
        "method_params": method.describe(),
        "cases": len(rows),
        "cache": cache_stats,
        "compress_seconds": seconds,
        "started_at": started,
        "ended_at": started + seconds,
        "flops": flops.summary(),
    }
    return rows, stats


@stage(
    "keep_compressed",
    over=("compressor",),
    params=(
        "keepbench.compressors.{compressor}",
        "keepbench.budgets",
        "keepbench.flops_configs",
    ),
    code=(
        "keepbench/cases.py",
        "keepbench/subsets.py",
        "keepbench/sentences.py",
        "keepbench/compressors",
        "keepbench/prompts",
        "keepbench/loader.py",
        "keepbench/release_schema.py",
        "keepbench/data",
        "keepbench/compression_cache.py",
        "keepbench/rate.py",
        "keepbench/metrics.py",
        "keepbench/flops_accounting.py",
        "flops",
        "keepbench/stages/keep_paths.py",
        "keepbench/stages/keep_common.py",
    ),
    deps=(keep_paths.CASES, keep_paths.METHOD_FILES),
    outs=(keep_paths.COMPRESSED_CELL,),
    worker=True,  # asks the reader: runs in the reader worker with reader.worker
)
def stage_keep_compressed(params: Any, compressor: str) -> Path:
    """Compress every case with one compressor of ``keepbench`` at every budget scale; model
    outputs and extractive compressions go through the answer cache, so a killed run resumes.
    Each row carries o200k token counts (Rate) and the case's estimated FLOPs."""
    spec = KEEPBENCH.of(params)
    name = compressor
    check_keep_method(
        name, spec.compressors[name], source=params.source, field="keepbench.compressors"
    )
    cases = read_cases()
    out = Path(keep_paths.COMPRESSED_CELL.format(compressor=name))
    shutil.rmtree(out, ignore_errors=True)  # only this run's budget scales, whatever ran before
    cells: dict[float, tuple[list[dict[str, Any]], dict[str, Any]]] = {}
    with AnswerCache(paths.answer_cache()) as cache:
        for scale in spec.budgets:
            log.info("keep_compressed: %s at budget x%s on %d cases", name, scale, len(cases))
            rows, stats = compress_cell(
                name, spec.compressors[name], scale, cases, cache, spec.flops_configs.get(name)
            )
            cells[scale] = rows, stats
    for scale, (rows, stats) in cells.items():
        write_jsonl(keep_paths.compressed_file(name, scale), rows)
        write_stats(
            keep_paths.compressed_stats(name, scale),
            stats,
            STATS_FACTS,
            describes=[keep_paths.compressed_file(name, scale)],
        )
    return out
