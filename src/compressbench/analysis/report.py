"""The markdown summary a user reads after a run: method x probe, strict / loose, per dataset."""

from __future__ import annotations

from typing import Any

from compressbench.config import Params
from compressbench.pipeline.paths import ratio_name

PROBE_ORDER = ("P1", "P2", "P3")


def _cell(metrics: dict[str, Any] | None) -> str:
    if not metrics:
        return "–"
    return f"{metrics['strict']:.3f} / {metrics['loose']:.3f} (n={int(metrics['n'])})"


def summary_markdown(params: Params, headline: dict[str, Any]) -> str:
    """One table per (dataset, ratio): rows = methods, columns = probes (strict / loose)."""
    lines = [
        "# TPBench summary",
        "",
        f"Reader: `{params.reader.backend}` `{params.reader.model}`; seeds {list(params.seeds)};"
        f" render `{params.render}`. Cells: strict / loose (n = answers per seed, averaged).",
        "",
    ]
    for dataset in params.datasets:
        for ratio in params.ratios:
            lines += [f"## {dataset}, r = {ratio}", ""]
            lines.append("| method | " + " | ".join(PROBE_ORDER) + " |")
            lines.append("|---|" + "---|" * len(PROBE_ORDER))
            for method in params.methods:
                by_probe = headline.get(dataset, {}).get(method, {}).get(ratio_name(ratio), {})
                cells = " | ".join(_cell(by_probe.get(p)) for p in PROBE_ORDER)
                lines.append(f"| {method} | {cells} |")
            lines.append("")
    return "\n".join(lines)
