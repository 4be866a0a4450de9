"""The contexts stage: compress every probe's dialogue with one method, render its prompt."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from compressbench.compress.costs import context_cost, kv_context_cost
from compressbench.compress.methods import (
    TURN_BUDGET_UNIT,
    is_kv_method,
    kv_method,
    method_selector,
)
from compressbench.compress.selectors import get_selector
from compressbench.config import Params
from compressbench.jsonl import write_jsonl
from compressbench.pipeline import paths
from compressbench.pipeline.reader_factory import reader_tokenizer
from compressbench.pipeline.stages.rows import PROBE_FIELDS
from compressbench.tpbench.contexts import probe_context
from compressbench.tpbench.probes import read_probes

log = logging.getLogger(__name__)

# Fields of a probe that travel with its context to the answers and scores stages.


def stage_contexts(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Compress every probe's dialogue with one method and render its prompt.

    A turn selector writes its compressed context; a KV press writes the full context and
    the press it will run under (the answers stage applies it). Every row carries its cost
    (retained turns, characters, reader tokens, theoretical prefill / KV-memory ratios).
    """
    cell = paths.CellFiles(dataset, method, ratio)
    probes = list(read_probes(paths.probes_file(dataset, ratio)))
    method_params = params.method_params.get(method, {})
    kv = kv_method(method, method_params) if is_kv_method(method) else None
    selector = method_selector(method, None if kv else method_params)
    tokenizer = reader_tokenizer(params.reader)
    full = get_selector("full_context")

    def rows() -> Iterator[dict[str, Any]]:
        for probe in tqdm(probes, desc=f"contexts {dataset} {method} {ratio}", unit="probe"):
            ctx = probe_context(probe, method, render_mode=params.render, selector=selector)
            row = ctx.to_row()
            row.update({k: getattr(probe, k) for k in PROBE_FIELDS})
            row["n_turns"] = probe.n_turns
            row["budget_unit"] = kv.record(ratio)["budget_unit"] if kv else TURN_BUDGET_UNIT
            row["kv"] = kv.record(ratio) if kv else None
            full_text = probe_context(probe, "full_context", selector=full).compressed_text_used
            cost = context_cost(
                full_text, ctx.compressed_text_used, probe.n_turns, ctx.kept_turn_ids, tokenizer
            )
            if kv:  # nominal: the press keeps the fraction r of the context's cache entries
                tokens = cost.tokens_full or cost.chars_full
                cost = kv_context_cost(full_text, probe.n_turns, tokens, [int(tokens * ratio)])
            row["cost"] = cost.to_dict()
            yield row

    write_jsonl(cell.contexts, rows())
    return cell.contexts
