"""The viewer stage: ``reports/viewer/index.html``, every probe's dialogue with what each
method kept and answered, from the probes, contexts and scores files (and the deletion
experiment's scores). A static page with its data embedded: no server, no network."""

from __future__ import annotations

import itertools
import logging
from pathlib import Path
from typing import Any

from compressbench.config import Params
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.pipeline_spec import PROBES
from compressbench.tpbench.probes import ProbeRecord, read_probes
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage
from compressbench.tpbench.viewer.cases import CellRows, build_cases
from compressbench.tpbench.viewer.deletions import deletion_cases
from compressbench.tpbench.viewer.page import VIEWER_DIR, VIEWER_FILE, tpbench_page
from compressbench.viewer import write_pages

log = logging.getLogger(__name__)


def _cell(dataset: str, method: str, ratio: float) -> CellRows:
    files = paths.CellFiles(dataset, method, ratio)
    return CellRows(
        method=method,
        contexts=list(read_jsonl(files.contexts)),
        scores=list(read_jsonl(files.scores)),
        contexts_file=files.contexts,
        scores_file=files.scores,
    )


def _reader(cells: list[CellRows]) -> str:
    row = next((r for c in cells for r in c.scores), None)
    return (
        "no reader (no answers)" if row is None else f"{row.get('backend')} {row.get('model_id')}"
    )


@stage(
    "viewer",
    params=("datasets", "methods", "ratios", "probes"),
    code=(
        *PROBE_TYPE_CODE,
        "viewer",
        "tpbench/viewer",
        "tpbench/probes.py",
        "tpbench/prompts.py",
        "tpbench/deletions.py",
        "tpbench/report/answer_kinds.py",
    ),
    deps=tuple(str(paths.DATA / d) for d in ("probes", "contexts", "scores", "deletions")),
    outs=(str(VIEWER_FILE),),
)
def stage_viewer(params: Params) -> Path:
    """Write the TPBench case viewer: per probe, the dialogue with each method's kept turns
    (a KV press's kept share per turn), the turns that matter, each method's answer, scores and
    answer kind; filters, a per-method summary and the deletion experiment."""
    cases: list[dict[str, Any]] = []
    turns_of: dict[str, Any] = {}
    reader = ""
    for dataset, ratio in itertools.product(params.datasets, params.ratios):
        probes_file = paths.probes_file(dataset, ratio)
        probes: list[ProbeRecord] = list(read_probes(probes_file))
        turns_of.update({p.probe_id: p.turns for p in probes})
        cells = [_cell(dataset, method, ratio) for method in params.methods]
        reader = reader or _reader(cells)
        cases += build_cases(probes, cells, probes_file)
    deletions: list[dict[str, Any]] = []
    for dataset in params.datasets:
        path = paths.fill(paths.DELETION_SCORES, dataset)
        if path.exists():
            deletions += deletion_cases(list(read_jsonl(path)), turns_of, path)
    page = tpbench_page(
        cases,
        deletions,
        methods=params.methods,
        probe_types=PROBES.of(params),
        datasets=params.datasets,
        ratios=params.ratios,
        reader=reader,
    )
    (out,) = write_pages([page], VIEWER_DIR)
    log.info("viewer: %s (%d probes, %d deletion probes)", out, len(cases), len(deletions))
    return out
