"""The markdown summary a user reads after a run: method x probe, strict / loose, per dataset."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.tpbench.probe_types import pipeline_probe_types


@dataclass(frozen=True)
class SummaryGrid:
    """What the summary shows: the grid in table order and one line about the run."""

    datasets: Sequence[str]
    methods: Sequence[str]
    ratios: Sequence[str]  # as keyed in the headline metrics (``"0.3"``)
    about: str  # reader, seeds, rendering


def _cell(metrics: dict[str, Any] | None) -> str:
    if not metrics:
        return "–"
    return f"{metrics['strict']:.3f} / {metrics['loose']:.3f} (n={int(metrics['n'])})"


def summary_markdown(grid: SummaryGrid, headline: dict[str, Any]) -> str:
    """One table per (dataset, ratio): rows = methods, columns = the registered pipeline probe
    types (strict / loose)."""
    probes = [p.name for p in pipeline_probe_types()]
    lines = [
        "# TPBench summary",
        "",
        f"{grid.about} Cells: strict / loose (n = answers per seed, averaged).",
        "",
    ]
    for dataset in grid.datasets:
        for ratio in grid.ratios:
            lines += [f"## {dataset}, r = {ratio}", ""]
            lines.append("| method | " + " | ".join(probes) + " |")
            lines.append("|---|" + "---|" * len(probes))
            for method in grid.methods:
                by_probe = headline.get(dataset, {}).get(method, {}).get(ratio, {})
                cells = " | ".join(_cell(by_probe.get(p)) for p in probes)
                lines.append(f"| {method} | {cells} |")
            lines.append("")
    return "\n".join(lines)
