"""The KEEP-Bench report stage: ``reports/keepbench.md`` and the preservation-vs-TFLOPs PNG."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from compressbench.jsonl import atomic_writer
from compressbench.keepbench.report.figure import Point, preservation_figure
from compressbench.keepbench.report.table import keepbench_markdown, method_label
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.stages.keep_common import read_json
from compressbench.pipeline.declare import stage


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
    params=(),
    code=(
        "keepbench/cases.py",
        "keepbench/subsets.py",
        "keepbench/report/table.py",
        "keepbench/report/figure.py",
        "keepbench/report/reference.py",
        "analysis/markdown.py",
        "keepbench/stages/keep_paths.py",
        "keepbench/stages/keep_common.py",
    ),
    deps=(keep_paths.FULL_METRICS,),
    outs=(keep_paths.REPORT,),
    plots=(keep_paths.FIGURE,),
)
def stage_keep_report(params: Any) -> Path:
    """Write the KEEP-Bench report (the paper's Table 3 layout for this run, FLOPs accounting,
    missing-proposition counts, the published Table 3) and the preservation-vs-TFLOPs figure."""
    full = read_json(keep_paths.FULL_METRICS)
    cells = full["cells"]
    approx = any(c.get("judge_approximation") for c in cells)
    note = f"judge: {cells[0]['judge']}" if cells else ""
    if approx:
        note += " (an approximation, not the paper's LLM entailment judge)"
    preservation_figure(figure_points(cells), keep_paths.FIGURE, judge_note=note)
    report = Path(keep_paths.REPORT)
    figure = os.path.relpath(keep_paths.FIGURE, report.parent)
    text = keepbench_markdown(cells, cases_source=full["cases_source"], figure=figure)
    with atomic_writer(report) as fh:
        fh.write(text)
    return report
