"""The probes stage: sample the P1/P2/P3 probes of every (probe type, seed) cell."""

from __future__ import annotations

import logging
from pathlib import Path

from compressbench.config import Params
from compressbench.jsonl import write_jsonl
from compressbench.tpbench.candidates import candidate_pool
from compressbench.tpbench.pipeline_spec import P3_RATIO, PROBES
from compressbench.tpbench.probe_types import get_probe_type
from compressbench.tpbench.probes import build_probes, cells
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.rows import read_corpus
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage

log = logging.getLogger(__name__)


def probe_types_at(params: Params, ratio: float) -> list[str]:
    """The probe types of ``probes`` built at ``ratio``: each by its own ratio rule
    (``ProbeType.built_at``: P1/P2 at every ratio, P3 only at ``p3_ratio``, as published)."""
    return [p for p in PROBES.of(params) if get_probe_type(p).built_at(ratio, P3_RATIO.of(params))]


@stage(
    "probes",
    over=("dataset", "ratio"),
    params=("probes", "seeds", "n_per_cell", "p3_ratio"),
    code=(
        *PROBE_TYPE_CODE,
        "tpbench/probes.py",
        "tpbench/prompts.py",
        "tpbench/stages/rows.py",
    ),
    deps=(paths.CORPUS,),
    outs=(paths.PROBES,),
)
def stage_probes(params: Params, dataset: str, ratio: float) -> Path:
    """The sampled probes of every (probe type, seed) cell at one ratio."""
    pool = candidate_pool(read_corpus(dataset))
    grid = cells(probe_types_at(params, ratio), params.seeds, [ratio])
    out = paths.probes_file(dataset, ratio)
    n = write_jsonl(out, (p.to_row() for p in build_probes(pool, grid, params.n_per_cell)))
    log.info("probes %s r=%s: %d rows from a pool of %d", dataset, ratio, n, len(pool))
    return out
