"""Where the KEEP-Bench stages write (relative to the repo root), beside TPBench's ``paths``.

The compression and judge stages run one DVC cell per compressor (every budget scale of it):
a cell's output is the compressor's folder, a budget scale a file in it.
"""

from __future__ import annotations

from pathlib import Path

CASES = "data/keepbench/cases.jsonl"
COMPRESSED = "data/keepbench/compressed"
VERDICTS = "data/keepbench/verdicts"
COMPRESSED_CELL = COMPRESSED + "/{compressor}"
VERDICTS_CELL = VERDICTS + "/{compressor}"
METRICS = "metrics/keepbench.json"  # compact, what `dvc metrics show` prints
FULL_METRICS = "reports/keepbench_full.json"  # every number of every cell
REPORT = "reports/keepbench.md"
FIGURE = "reports/figures/keepbench_preservation_tflops.png"


def budget_name(scale: float) -> str:
    """A budget scale as it appears in file names (``1.0``)."""
    return repr(float(scale))


def compressed_file(compressor: str, scale: float) -> Path:
    return Path(COMPRESSED) / compressor / f"{budget_name(scale)}.jsonl"


def compressed_stats(compressor: str, scale: float) -> Path:
    return Path(COMPRESSED) / compressor / f"{budget_name(scale)}.stats.json"


def verdicts_file(judge: str, compressor: str, scale: float) -> Path:
    return Path(VERDICTS) / compressor / judge / f"{budget_name(scale)}.jsonl"


def verdict_stats(judge: str, compressor: str, scale: float) -> Path:
    return Path(VERDICTS) / compressor / judge / f"{budget_name(scale)}.stats.json"
