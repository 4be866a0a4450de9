"""The report stage: ``reports/tpbench.md`` with the paper's tables, three PNG figures (DVC
plots), all logged to MLflow as a report run linked to the metrics run it reads."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path

from compressbench.config import Params
from compressbench.errors import InputError
from compressbench.jsonl import atomic_writer
from compressbench.pipeline.run_log import LOGS
from compressbench.readers.packaged import is_smoke_reader
from compressbench.tpbench.judge.prompt import prompt_sha256
from compressbench.tpbench.judge.spec import JudgeSpec
from compressbench.tpbench.pipeline_spec import JUDGE, P3_RATIO
from compressbench.tpbench.report.decode_modes import decode_mode_label
from compressbench.tpbench.report.model import FIGURES, CellData, CellKey, Findings, ReportInput
from compressbench.tpbench.report.sections_extra import RUN_IDS, provenance
from compressbench.tpbench.slot_types import slot_type
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.report_inputs import (
    LABELS,
    cell_runs,
    deletion_rows,
    load_cells,
    load_verdicts,
    method_style,
    optional_json,
)
from compressbench.tpbench.stages.shared import PROBE_TYPE_CODE, stage
from compressbench.tpbench.viewer.page import VIEWER_FILE
from compressbench.tracking import start_pipeline_run

log = logging.getLogger(__name__)

FIGURE_FILES = {name: paths.FIGURES_DIR / f"{name}.png" for name in FIGURES}


def write_run_ids(inp: ReportInput) -> Path:
    """The report's provenance table with every cell's MLflow run id, as a run log
    (``logs/report/runs.md``: neither a DVC output nor a dependency, since ids differ on every
    run), for the report run's artifacts."""
    out = LOGS / "report" / RUN_IDS
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(out) as fh:
        fh.write("\n".join(provenance(inp, ids=True)) + "\n")
    return out


def judge_name(spec: JudgeSpec) -> str | None:
    """How the report names the judge (None when judging is off)."""
    if not spec.enabled:
        return None
    revision = f" revision `{spec.revision}`" if spec.revision else ""
    return f"`{spec.model}`{revision}, released prompt sha256 `{prompt_sha256()[:12]}`"


def _metrics(f: Findings) -> dict[str, float]:
    """The report's own numbers for its MLflow run (NaN and missing values left out)."""
    out: dict[str, float] = {}
    for dataset, gaps in f.gaps.items():
        for g in gaps:
            base = f"p3_gap.{dataset}.{g.method}.{g.metric}"
            out |= {base: g.gap, f"{base}.ci_low": g.low, f"{base}.ci_high": g.high}
    for dataset, rho in f.spearman.items():
        if rho is not None:
            out[f"spearman_p1_p2.{dataset}"] = rho
    if f.format_error_rate is not None:
        out["format_error_rate"] = f.format_error_rate
    return {k: v for k, v in out.items() if not math.isnan(v)}


STRUCTURED_LABEL = (
    ", structured output (answers constrained to each probe's JSON Schema; the paper decodes"
    " freely, so compare these numbers only with another structured-output run)"
)


def decoding_label(cells: Mapping[CellKey, CellData]) -> str:
    """``""`` for the published free decoding, :data:`STRUCTURED_LABEL` for schema-constrained
    answers; a grid that mixes the two is refused (one table never holds both)."""
    variants = {bool(cell.stats.get("structured_output")) for cell in cells.values()}
    if len(variants) > 1:
        mixed = sorted(
            f"{c.dataset}/{c.method}/{c.ratio}"
            for c in cells.values()
            if c.stats.get("structured_output")
        )
        raise InputError(
            "cells answered with structured output and cells decoded freely cannot share "
            f"one report (structured: {', '.join(mixed)}); rerun them with one "
            "reader.structured",
            file=paths.ANSWER_STATS,
            field="structured_output",
        )
    return STRUCTURED_LABEL if variants == {True} else ""


@stage(
    "report",
    params=("datasets", "methods", "ratios", "seeds", "p3_ratio", "tracking", "judge"),
    code=(
        *PROBE_TYPE_CODE,
        "analysis",
        "tpbench/report",
        "tracking",
        "tpbench/slot_types.py",
        "tpbench/judge/prompt.py",
        "tpbench/judge/verdict_file.py",
        "tpbench/stages/report_inputs.py",
        "tpbench/viewer/summary.py",
        "tpbench/viewer/page.py",
        "viewer",
    ),
    deps=(
        *(str(paths.DATA / d) for d in ("contexts", "answers", "scores", "deletions", "verdicts")),
        "metrics/retention",
        "metrics/deletions",
        str(paths.FULL_METRICS_FILE),  # the metrics stage (and its MLflow run) comes first
        str(VIEWER_FILE),  # the case viewer: its cells link into it, its run carries it
    ),
    outs=(str(paths.REPORT_FILE),),
    plots=tuple(str(p) for p in FIGURE_FILES.values()),
)
def stage_report(params: Params) -> Path:
    """Write the TPBench report and its figures; log them to MLflow, linked to the metrics run.

    Every number traces to its MLflow cell run (the report's last table); the judge stage's
    P1 verdicts (``data/verdicts/``) fill the semantic section, or it says "not judged".
    """
    cells = load_cells(params.datasets, params.methods, params.ratios)
    runs, notes, metrics_run = cell_runs(
        params.tracking.uri, params.tracking.experiment, cells, params.datasets
    )
    stats = next(iter(cells.values())).stats
    reader = (
        f"`{stats['backend']}` `{stats['model_id']}`"
        + decode_mode_label(cells)
        + decoding_label(cells)
    )
    with start_pipeline_run(
        "tpbench report",
        {
            "datasets": params.datasets,
            "methods": params.methods,
            "ratios": params.ratios,
            "seeds": params.seeds,
            "p3_ratio": P3_RATIO.of(params),
        },
        tracking_uri=params.tracking.uri,
        experiment=params.tracking.experiment,
        stage="report",
        tags={"report.metrics_run_id": metrics_run or "none"},
    ) as run:
        inp = ReportInput(
            datasets=params.datasets,
            methods=params.methods,
            ratios=params.ratios,
            main_ratio=P3_RATIO.of(params),
            seeds=params.seeds,
            reader=reader,
            default_reader=is_smoke_reader(str(stats["model_id"])),
            cells=cells,
            styles={m: method_style(m) for m in params.methods},
            labels=LABELS,
            slot_type=slot_type,
            retention={d: optional_json(paths.retention_file(d)) for d in params.datasets},
            deletions={
                d: optional_json(paths.fill(paths.DELETION_SUMMARY, d)) for d in params.datasets
            },
            deletion_rows={d: deletion_rows(d) for d in params.datasets},
            verdicts=load_verdicts(params.datasets, params.methods, params.ratios),
            judge=judge_name(JUDGE.of(params)),
            runs=runs,
            run_notes=[*notes, f"this report: MLflow run `{run.run_id}`"],
            viewer=VIEWER_FILE.relative_to(paths.REPORT_FILE.parent).as_posix()
            if VIEWER_FILE.exists()
            else None,
        )
        from compressbench.tpbench.report.document import write_report  # imports matplotlib

        findings, figures = write_report(inp, paths.REPORT_FILE, FIGURE_FILES)
        run.log_metrics(_metrics(findings))
        run_ids = write_run_ids(inp)
        run.log_artifacts([paths.REPORT_FILE, paths.FULL_METRICS_FILE, run_ids], "report")
        run.log_artifacts(list(figures.values()), "figures")
        if VIEWER_FILE.exists():  # always under dvc repro (a dependency); a bare call may lack it
            run.log_artifacts([VIEWER_FILE], "viewer")
    log.info("report: %s (%d figures)", paths.REPORT_FILE, len(figures))
    return paths.REPORT_FILE
