"""The KEEP-Bench report stage: ``reports/keepbench.md`` and the preservation-vs-TFLOPs PNG,
logged to MLflow as a report run that carries them and the case viewer's page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from compressbench.jsonl import atomic_writer
from compressbench.keepbench.pipeline_spec import KEEPBENCH
from compressbench.keepbench.report.figure import Point, preservation_figure
from compressbench.keepbench.report.table import keepbench_markdown, method_label
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.stages.keep_common import read_json
from compressbench.keepbench.stages.keep_viewer import VIEWER_FILE
from compressbench.pipeline.declare import stage
from compressbench.tracking import start_pipeline_run


def figure_points(cells: list[dict[str, Any]]) -> list[Point]:
    """Cells with both an overall All-Rec and a FLOPs estimate above zero (log axis)."""
    several = len({c["budget_scale"] for c in cells}) > 1
    points = []
    for c in cells:
        s = c["summary"]
        if s.get("tflops_per_case") and s.get("overall_all_rec") is not None:
            points.append(
                Point(method_label(c, several), s["tflops_per_case"], s["overall_all_rec"])
            )
    return points


@stage(
    "keep_report",
    params=("keepbench.experiment", "tracking"),
    code=(
        "keepbench/cases.py",
        "keepbench/subsets.py",
        "keepbench/report/table.py",
        "keepbench/report/figure.py",
        "keepbench/report/reference.py",
        "analysis/markdown.py",
        "keepbench/stages/keep_paths.py",
        "keepbench/stages/keep_common.py",
        "keepbench/stages/keep_viewer.py",  # the viewer's path (and what keep_viewer imports)
        "keepbench/viewer",
        "viewer",
        "tracking",
    ),
    deps=(keep_paths.FULL_METRICS, str(VIEWER_FILE)),
    outs=(keep_paths.REPORT,),
    plots=(keep_paths.FIGURE,),
)
def stage_keep_report(params: Any) -> Path:
    """Write the KEEP-Bench report (the paper's Table 3 layout for this run, FLOPs accounting,
    missing-proposition counts, the published Table 3) and the preservation-vs-TFLOPs figure;
    log them and the case viewer's page to MLflow as one report run."""
    full = read_json(keep_paths.FULL_METRICS)
    cells = full["cells"]
    approx = any(c.get("judge_approximation") for c in cells)
    note = f"judge: {cells[0]['judge']}" if cells else ""
    if approx:
        note += " (an approximation, not the paper's LLM entailment judge)"
    preservation_figure(figure_points(cells), keep_paths.FIGURE, judge_note=note)
    report = Path(keep_paths.REPORT)
    figure = os.path.relpath(keep_paths.FIGURE, report.parent)
    viewer = os.path.relpath(VIEWER_FILE, report.parent)
    text = keepbench_markdown(
        cells, cases_source=full["cases_source"], figure=figure, viewer=viewer
    )
    with atomic_writer(report) as fh:
        fh.write(text)
    with start_pipeline_run(
        "keepbench report",
        {"compressors": sorted({c["compressor"] for c in cells})},
        tracking_uri=params.tracking.uri,
        experiment=KEEPBENCH.of(params).experiment,
        stage="keep_report",
    ) as run:
        run.log_artifacts([report, Path(keep_paths.FULL_METRICS)], "report")
        run.log_artifacts([Path(keep_paths.FIGURE)], "figures")
        run.log_artifacts([VIEWER_FILE], "viewer")
    return report
