"""The contexts stage: compress every probe's dialogue with one method, render its prompt."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from compressbench.compress.method import FULL_CONTEXT, Source
from compressbench.compress.registry import get_method
from compressbench.config import Params
from compressbench.errors import InputError
from compressbench.jsonl import write_jsonl
from compressbench.pipeline.reader_factory import reader_tokenizer
from compressbench.tpbench.contexts import probe_compression
from compressbench.tpbench.probes import ProbeRecord, read_probes
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.rows import PROBE_FIELDS
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage

log = logging.getLogger(__name__)


def cell_probes(dataset: str, ratio: float) -> list[ProbeRecord]:
    """The probes of a cell: its ratio's probes file is the one source of the ratio, so a
    probe built at another ratio is bad input."""
    path = paths.probes_file(dataset, ratio)
    probes = list(read_probes(path))
    for probe in probes:
        if probe.ratio != ratio:
            raise InputError(
                f"ratio {probe.ratio} in the probes file of ratio {ratio}",
                file=str(path),
                record=probe.probe_id,
                field="ratio",
            )
    return probes


@stage(
    "contexts",
    over=("dataset", "method", "ratio"),
    params=("render", "method_params", "reader"),  # reader: its tokenizer counts the cost
    code=(
        *PROBE_TYPE_CODE,
        "compress",
        "readers",
        "tpbench/contexts.py",
        "tpbench/probes.py",
        "tpbench/prompts.py",
        "pipeline/reader_factory.py",
        "tpbench/stages/rows.py",
    ),
    deps=(paths.CORPUS, paths.PROBES, paths.METHOD_FILES),
    outs=(paths.CONTEXTS,),
)
def stage_contexts(params: Params, dataset: str, method: str, ratio: float) -> Path:
    """Compress every probe's dialogue with one method and render its prompt.

    A turn selector writes its compressed context; a KV press writes the full context and
    the press it will run under (the answers stage applies it). Every row carries its cost
    (retained turns, characters, reader tokens, theoretical prefill / KV-memory ratios).
    """
    cell = paths.CellFiles(dataset, method, ratio)
    probes = cell_probes(dataset, ratio)
    compressor = get_method(method, params.method_params.get(method))
    full = get_method(FULL_CONTEXT)
    tokenizer = reader_tokenizer(params.reader)

    def rows() -> Iterator[dict[str, Any]]:
        for probe in tqdm(probes, desc=f"contexts {dataset} {method} {ratio}", unit="probe"):
            ctx, comp = probe_compression(
                probe, method, compressor, render_mode=params.render, tokenizer=tokenizer
            )
            row = ctx.to_row()
            row.update({k: getattr(probe, k) for k in PROBE_FIELDS})
            row["n_turns"] = probe.n_turns
            row["budget_unit"] = comp.budget_unit
            row["kv"] = comp.press
            whole = Source(probe.dialogue_turns(), key=probe.probe_id)
            full_text = full.compress(whole, comp.ratio).text
            row["cost"] = compressor.cost(comp, full_text, tokenizer).to_dict()
            yield row

    write_jsonl(cell.contexts, rows())
    return cell.contexts
