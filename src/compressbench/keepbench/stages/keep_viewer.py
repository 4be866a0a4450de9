"""The KEEP-Bench viewer stage: ``reports/viewer/keepbench.html``, every case with each
compressor's output and the evidence propositions it kept and lost (beside TPBench's page)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from compressbench.jsonl import read_jsonl
from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.stages.keep_common import read_cases
from compressbench.keepbench.viewer.cases import OutputRows, build_keep_cases
from compressbench.keepbench.viewer.page import FILENAME, keepbench_page
from compressbench.pipeline.declare import stage
from compressbench.viewer import write_pages

log = logging.getLogger(__name__)

VIEWER_DIR = Path("reports") / "viewer"
VIEWER_FILE = VIEWER_DIR / FILENAME


@stage(
    "keep_viewer",
    params=("keepbench.compressors", "keepbench.budgets", "keepbench.judge"),
    code=(
        "viewer",
        "keepbench/cases.py",
        "keepbench/viewer",
        "keepbench/stages/keep_paths.py",
        "keepbench/stages/keep_common.py",
    ),
    deps=(keep_paths.CASES, keep_paths.COMPRESSED, keep_paths.VERDICTS),
    outs=(str(VIEWER_FILE),),
)
def stage_keep_viewer(params: Any) -> Path:
    """Write the KEEP-Bench case viewer: per case the query, the source context, and each
    compressor's output with every evidence proposition kept or lost, the judge's verdict and
    reason; filters by subset, compressor and outcome."""
    spec = KEEPBENCH.of(params)
    outputs = []
    for name in spec.compressors:
        for scale in spec.budgets:
            compressed = keep_paths.compressed_file(name, scale)
            verdicts = keep_paths.verdicts_file(spec.judge, name, scale)
            outputs.append(
                OutputRows(
                    compressor=name,
                    scale=scale,
                    compressed=list(read_jsonl(compressed)),
                    verdicts=list(read_jsonl(verdicts)),
                    compressed_file=compressed,
                    verdicts_file=verdicts,
                )
            )
    cases = build_keep_cases(read_cases(), outputs)
    page = keepbench_page(cases, [o.label for o in outputs], spec.judge)
    (out,) = write_pages([page], VIEWER_DIR)
    log.info("keep_viewer: %s (%d cases, %d outputs)", out, len(cases), len(outputs))
    return out
