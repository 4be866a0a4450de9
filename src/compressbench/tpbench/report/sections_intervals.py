"""The report's section of cell accuracies with dialogue-clustered 95% bootstrap intervals
(:mod:`compressbench.tpbench.report.cell_intervals`): the uncertainty a one-seed study still has."""

from __future__ import annotations

from compressbench.analysis.markdown import NONE, interval
from compressbench.tpbench.probe_types import PIPELINE_PROBES as PROBES
from compressbench.tpbench.report.cell_intervals import METRICS
from compressbench.tpbench.report.findings import GAP_RESAMPLES, GAP_SEED
from compressbench.tpbench.report.model import Findings, ReportInput
from compressbench.tpbench.report.sections import Table, per_dataset

TITLE = "## Cell accuracies with 95% intervals"


def cell_intervals(inp: ReportInput, f: Findings) -> list[str]:
    """Per dataset, one row per method: strict and loose of P1 / P2 / P3 at the main ratio,
    each ``mean [low, high]``, and the answers (dialogues) per probe."""
    lines = [
        TITLE,
        "",
        f"Accuracy per cell at r = {inp.main_ratio:g}: the mean over all the cell's answers "
        f"(seeds {list(inp.seeds)} pooled) with its 95% percentile interval from "
        f"{GAP_RESAMPLES:,} bootstrap resamples of source dialogues (every answer about a "
        f"dialogue moves with it; `default_rng({GAP_SEED})`, as the P3 gaps). The interval is "
        "the sampling uncertainty of the probes drawn, for this reader; it does not cover "
        "other seeds' samples or other readers. P3 is the segment-local joint score. "
        "n = answers (dialogues) per probe.",
        "",
    ]
    header = ["method", *(f"{p} {m}" for p in PROBES for m in METRICS), "n " + " / ".join(PROBES)]

    def build(dataset: str) -> Table:
        rows = []
        for method in inp.methods:
            key = (dataset, method, inp.main_ratio)
            found = {
                (p, m): ci
                for p in PROBES
                for m in METRICS
                if (ci := f.intervals.get((*key, p, m))) is not None
            }
            if not found:
                continue
            cells = [
                interval(ci.estimate, (ci.low, ci.high)) if (ci := found.get((p, m))) else NONE
                for p in PROBES
                for m in METRICS
            ]
            counts = [
                f"{ci.n} ({ci.n_clusters})" if (ci := found.get((p, METRICS[0]))) else NONE
                for p in PROBES
            ]
            rows.append([inp.label(method), *cells, " / ".join(counts)])
        return header, rows

    return lines + per_dataset(inp, build)
