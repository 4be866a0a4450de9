"""Each cell's accuracy with a dialogue-clustered bootstrap interval.

A cell's estimate is the mean over all its answers of one probe type (seeds pooled); the 95%
percentile interval resamples source dialogues (every answer about the same dialogue, from any
seed, moves together) with the settings of the report's P3 gaps: 5,000 resamples drawn from
``default_rng(20260928)``, a fresh generator per cell and probe, so adding a method never moves
another cell's interval. Strict and loose of one probe share the draws.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from compressbench.analysis.stats import Interval, bootstrap_indices, cluster_bootstrap
from compressbench.tpbench.probe_types import PIPELINE_PROBES as PROBES
from compressbench.tpbench.report.findings import GAP_RESAMPLES, GAP_SEED

METRICS = ("strict", "loose")

Row = Mapping[str, Any]


def dialogue_of(row: Row) -> str:
    """The source dialogue of a scored row: ``dialogue_id``, else the middle of its probe id
    ``<dataset>:<dialogue_id>:qa<NN>``."""
    found = row.get("dialogue_id")
    if found not in (None, ""):
        return str(found)
    probe_id = str(row.get("probe_id", ""))
    parts = probe_id.split(":")
    if len(parts) < 3:
        raise ValueError(
            f"scored row {probe_id!r}: no dialogue_id and the probe id is not "
            "<dataset>:<dialogue_id>:qa<NN>"
        )
    return ":".join(parts[1:-1])


def cell_intervals(
    rows: Iterable[Row],
    *,
    probes: Sequence[str] = PROBES,
    metrics: Sequence[str] = METRICS,
    resamples: int = GAP_RESAMPLES,
    seed: int = GAP_SEED,
) -> dict[tuple[str, str], Interval]:
    """(probe, metric) -> interval of ``scores.<metric>`` over the cell's rows of that probe
    (a missing score counts 0, as in the headline means); probes without rows are left out."""
    rows = list(rows)
    out: dict[tuple[str, str], Interval] = {}
    for probe in probes:
        selected = [r for r in rows if r["probe_type"] == probe]
        if not selected:
            continue
        clusters = [dialogue_of(r) for r in selected]
        indices = bootstrap_indices(len(set(clusters)), resamples, seed)
        for metric in metrics:
            values = [float(r["scores"].get(metric) or 0.0) for r in selected]
            out[(probe, metric)] = cluster_bootstrap(values, clusters, indices=indices)
    return out
