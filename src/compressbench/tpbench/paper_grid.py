"""The paper's run grid (spec §3.13, §6, H1-H5) as reader prompts, and its GPU-hours at given rates.

Two grids: ``as_run`` is what the paper ran (two readers, two datasets, three seeds; P1/P2/P3
for the turn methods at r = 0.30, P2 also at 0.10, the wider-budget P2 at 0.50/0.70 for five
methods, the four KV presses at P2 r = 0.30 seed 42 only); ``full_factorial`` is every probe x
method x ratio x seed x reader x dataset. Stdlib only: the GPU check imports it on a bare
machine (the probe types are stdlib-only too).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from compressbench.compress.method import FULL_CONTEXT
from compressbench.tpbench.probe_types import PROBE_TYPES

READERS = ("llama-3.1-8b-instruct", "mistral-7b-instruct")
DATASETS = ("sgd", "multiwoz")
SEEDS = (42, 43, 44)
TURN_METHODS = (
    FULL_CONTEXT,
    "recency",
    "random_seed42",
    "first_n",
    "uniform_stride",
    "attention_h2o_cache",
    "embedding_mmr_cache",
    "llmlingua2_cache",
)
WIDE_METHODS = TURN_METHODS[:5]  # the wider-budget P2 rows (spec §3.13)
PRESSES = ("snapkv", "pyramidkv", "streamingllm", "chunkkv")
RATIOS = (0.10, 0.30, 0.50, 0.70)
# Probe rows per seed (spec §3.13): P1 and P3 200; P2 the survivors of the filters.
P2_ROWS = {"sgd": (128, 125, 132), "multiwoz": (161, 168, 168)}
ASSUMPTIONS = (
    "Every prompt has the mean full-context P2 length (compressed prompts are shorter, so"
    " prefill is an upper bound) and generates its full output budget (answers that stop at"
    " eos take less); turn-method prompts run batched (the batch's aggregate decode rate) or"
    " one at a time; press prompts always one at a time (kvpress compresses one sequence per"
    " prefill), at the measured seconds per pressed prompt when given."
)


@dataclass(frozen=True)
class Cell:
    """Prompts of one (reader, dataset, probe, method, ratio) over its seeds."""

    reader: str
    dataset: str
    probe: str
    method: str
    ratio: float
    prompts: int
    new_tokens: int
    kv: bool  # generated under a press (one prompt at a time)


def _rows(dataset: str, probe: str, seeds: tuple[int, ...]) -> int:
    if probe == "P2":
        return sum(P2_ROWS[dataset][SEEDS.index(s)] for s in seeds)
    return 200 * len(seeds)


def _new_tokens(reader: str, probe: str) -> int:
    # Llama's budget is the probe type's; Mistral uses 128 throughout (§6)
    return PROBE_TYPES[probe].output_tokens if reader.startswith("llama") else 128


def grid(kind: str = "as_run") -> list[Cell]:
    """The cells of ``as_run`` or ``full_factorial`` (ValueError otherwise)."""
    if kind not in ("as_run", "full_factorial"):
        raise ValueError(f"grid kind must be 'as_run' or 'full_factorial', got {kind!r}")
    cells: list[Cell] = []

    def add(
        reader: str, ds: str, probe: str, method: str, r: float, seeds: tuple[int, ...]
    ) -> None:
        kv = method in PRESSES
        n = _rows(ds, probe, seeds)
        cells.append(Cell(reader, ds, probe, method, r, n, _new_tokens(reader, probe), kv))

    for reader in READERS:
        for ds in DATASETS:
            if kind == "full_factorial":
                for probe in ("P1", "P2", "P3"):
                    for method in TURN_METHODS + PRESSES:
                        for r in RATIOS:
                            add(reader, ds, probe, method, r, SEEDS)
                continue
            for probe in ("P1", "P2", "P3"):
                for method in TURN_METHODS:
                    add(reader, ds, probe, method, 0.30, SEEDS)
            for method in TURN_METHODS:
                add(reader, ds, "P2", method, 0.10, SEEDS)
            for r in (0.50, 0.70):
                for method in WIDE_METHODS:
                    add(reader, ds, "P2", method, r, SEEDS)
            if reader.startswith("llama"):
                for method in PRESSES:
                    add(reader, ds, "P2", method, 0.30, (42,))
    return cells


def gpu_hours(
    cells: list[Cell],
    *,
    prompt_tokens: float,
    prefill_tps: float,
    decode_tps_serial: float,
    decode_tps_batched: float,
    press_seconds_per_prompt: float | None = None,
) -> dict[str, Any]:
    """GPU-hours of ``cells`` at measured rates, under :data:`ASSUMPTIONS`."""
    prompts = sum(c.prompts for c in cells)
    kv_prompts = sum(c.prompts for c in cells if c.kv)
    out_tokens = sum(c.prompts * c.new_tokens for c in cells if not c.kv)
    kv_out = sum(c.prompts * c.new_tokens for c in cells if c.kv)
    prefill_s = prompts * prompt_tokens / prefill_tps
    turn_prefill_s = (prompts - kv_prompts) * prompt_tokens / prefill_tps
    if press_seconds_per_prompt is not None:
        kv_s = kv_prompts * press_seconds_per_prompt
    else:
        kv_s = kv_prompts * prompt_tokens / prefill_tps + kv_out / decode_tps_serial
    serial_s = turn_prefill_s + out_tokens / decode_tps_serial + kv_s
    batched_s = turn_prefill_s + out_tokens / decode_tps_batched + kv_s
    return {
        "prompts": prompts,
        "kv_prompts": kv_prompts,
        "output_tokens_max": out_tokens + kv_out,
        "prefill_hours": round(prefill_s / 3600, 3),
        "gpu_hours_one_at_a_time": round(serial_s / 3600, 3),
        "gpu_hours_batched": round(batched_s / 3600, 3),
    }


def describe(kind: str) -> dict[str, Any]:
    """Cell count and a few example cells of a grid (for the report)."""
    cells = grid(kind)
    return {
        "cells": len(cells),
        "prompts": sum(c.prompts for c in cells),
        "examples": [asdict(c) for c in cells[:2]],
    }


# Table 3 and what it takes in one reader pass. The deletion experiment (spec §4, §6.3): the
# full-context P2 probes of seed 42 under five conditions, 128 new tokens.
DELETION_CONDITIONS = 5
DELETION_NEW_TOKENS = 128
# Mean answer length in tokens of the Qwen2.5-Coder-1.5B reader's SGD study answers
# (benchmarks/results/sgd_cpu_qwen15_answers.jsonl.gz: 3,345 answers; by probe, and its
# deletion answers): what a grid extrapolation assumes an answer costs.
STUDY_ANSWER_TOKENS = {"P1": 44.0, "P2": 32.0, "P3": 70.7, "deletions": 27.9}


def table3(reader: str = READERS[0]) -> list[Cell]:
    """Table 3 as run for ``reader``: the turn methods' P1/P2/P3 at r = 0.30 over three seeds,
    the four presses (P2, seed 42; Llama only) and the deletion experiment (method
    ``deletions``: :data:`DELETION_CONDITIONS` x the seed-42 P2 probes per dataset)."""
    cells = [c for c in grid("as_run") if c.reader == reader and c.ratio == 0.30]
    for ds in DATASETS:
        n = DELETION_CONDITIONS * _rows(ds, "P2", (42,))
        cells.append(Cell(reader, ds, "P2", "deletions", 0.30, n, DELETION_NEW_TOKENS, False))
    return cells


def extrapolate(
    cells: list[Cell],
    tokens_per_s: dict[str, float],
    measured_as: Any,
    *,
    answer_tokens: dict[str, float] = STUDY_ANSWER_TOKENS,
    loads: int = 1,
    load_seconds: float = 0.0,
) -> dict[str, Any]:
    """Seconds of ``cells`` at measured rates: a cell's prompts x its answer length
    (``answer_tokens`` by probe, ``deletions`` for the deletion experiment) / the tokens/s of
    the measured cell ``measured_as(cell)`` names in ``tokens_per_s`` (tokens out over the
    cell's generation seconds, so its prefill is in the rate); plus ``loads`` x
    ``load_seconds``. Per part (measured cell) and in total, in hours too."""
    parts: dict[str, dict[str, Any]] = {}
    for cell in cells:
        label = measured_as(cell)
        tokens = (
            cell.prompts * answer_tokens["deletions" if cell.method == "deletions" else cell.probe]
        )
        part = parts.setdefault(label, {"prompts": 0, "answer_tokens": 0.0, "seconds": 0.0})
        part["prompts"] += cell.prompts
        part["answer_tokens"] += tokens
        part["seconds"] += tokens / tokens_per_s[label]
    answering = sum(p["seconds"] for p in parts.values())
    total = answering + loads * load_seconds
    return {
        "prompts": sum(c.prompts for c in cells),
        "parts": {
            k: {**v, "seconds": round(v["seconds"], 1), "tokens_per_s": tokens_per_s[k]}
            for k, v in parts.items()
        },
        "loads": loads,
        "load_seconds_each": round(load_seconds, 2),
        "seconds": round(total, 1),
        "hours": round(total / 3600, 3),
    }
