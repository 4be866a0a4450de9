"""The deletions stage: the paired-deletion contexts of the full-context P2 probes (spec §4)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from compressbench.config import Params
from compressbench.jsonl import write_jsonl
from compressbench.tpbench.deletion_contexts import deletion_contexts
from compressbench.tpbench.pipeline_spec import DELETIONS, P3_RATIO
from compressbench.tpbench.probes import read_probes
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.rows import PROBE_FIELDS
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage

log = logging.getLogger(__name__)


def deletion_ratio(params: Params) -> float:
    """The probes file the experiment reads: ``p3_ratio`` when it is one of ``ratios`` (the
    paper's r = 0.30 sets), else the first ratio. Full-context P2 probes are the same sample
    with the same turns at every ratio; only their ``ratio`` field differs."""
    return P3_RATIO.of(params) if P3_RATIO.of(params) in params.ratios else params.ratios[0]


@stage(
    "deletions",
    over=("dataset",),
    params=("deletions", "seeds", "ratios", "p3_ratio"),
    code=(
        *PROBE_TYPE_CODE,
        "tpbench/deletions.py",
        "tpbench/deletion_contexts.py",
        "tpbench/probes.py",
        "tpbench/prompts.py",
        "tpbench/stages/rows.py",
    ),
    deps=("data/probes/{dataset}",),
    outs=(paths.DELETION_CONTEXTS,),
)
def stage_deletions(params: Params, dataset: str) -> Path:
    """Every deletion condition of each full-context P2 probe of one seed, with its prompt.

    Each row is one probe under one condition; its ``meta`` records the removed turns and the
    matched controls with their status (unmatched controls are kept as rows' status, never
    dropped). ``deletions.enabled: false`` writes an empty file; ``deletions.max_probes`` keeps
    the first probes of the sample.
    """
    out = paths.fill(paths.DELETION_CONTEXTS, dataset)
    seed = DELETIONS.of(params).sample_seed(params.seeds)
    source = paths.probes_file(dataset, deletion_ratio(params))
    rows: list[dict[str, Any]] = []
    probes = unmatched = 0
    if DELETIONS.of(params).enabled:
        for probe in read_probes(source):
            if probe.probe_type != "P2" or probe.seed != seed:
                continue
            if probes == DELETIONS.of(params).max_probes:  # the first ones, in sampled order
                break
            plan, contexts = deletion_contexts(probe, file=str(source))
            probes += 1
            unmatched += plan.control_support is None
            carry = {k: getattr(probe, k) for k in PROBE_FIELDS}
            for ctx in contexts:
                rows.append(
                    {
                        "probe_id": probe.probe_id,
                        "probe_type": probe.probe_type,
                        **carry,
                        "ratio": probe.ratio,
                        "n_turns": probe.n_turns,
                        **ctx.to_row(),
                    }
                )
        if not probes:
            log.warning("deletions %s: no P2 probes of seed %d in %s", dataset, seed, source)
    write_jsonl(out, rows)
    log.info(
        "deletions %s seed %d: %d probes, %d rows, %d without an all-evidence control",
        dataset,
        seed,
        probes,
        len(rows),
        unmatched,
    )
    return out
