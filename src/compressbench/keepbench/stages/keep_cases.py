"""The KEEP-Bench cases stage: load, check and write the evaluation cases."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from compressbench.jsonl import write_jsonl
from compressbench.keepbench.cases import case_to_dict
from compressbench.keepbench.loader import evaluation_cases, load_cases
from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.subsets import SUBSETS
from compressbench.pipeline.declare import stage

log = logging.getLogger(__name__)


@stage(
    "keep_cases",
    params=("keepbench",),
    code=(
        "keepbench/cases.py",
        "keepbench/subsets.py",
        "keepbench/loader.py",
        "keepbench/release_schema.py",
        "keepbench/data",
        "keepbench/stages/keep_paths.py",
    ),
    outs=(keep_paths.CASES,),
)
def stage_keep_cases(params: Any) -> Path:
    """Load the KEEP-Bench cases (built-in sample, a local file, or the release) and write the
    evaluation cases (demonstrations excluded), at most ``max_per_subset`` per subset."""
    spec = KEEPBENCH.of(params)
    cases = evaluation_cases(load_cases(spec.cases))
    if spec.max_per_subset is not None:
        kept: dict[str, int] = {}
        limited = []
        for case in cases:
            kept[case.subset] = kept.get(case.subset, 0) + 1
            if kept[case.subset] <= spec.max_per_subset:
                limited.append(case)
        cases = limited
    counts = {s.name: sum(1 for c in cases if c.subset == s.name) for s in SUBSETS}
    log.info("keep_cases: %d cases from %s %s", len(cases), spec.cases, counts)
    out = Path(keep_paths.CASES)
    write_jsonl(out, [case_to_dict(c) for c in cases])
    return out
