"""Where the KEEP-Bench stages write (relative to the repo root): path templates
(:mod:`compressbench.pipeline.paths`), declared the way TPBench declares its own
(:mod:`compressbench.tpbench.stages.paths`).

The compression and judge stages run one DVC cell per compressor (every budget scale of it):
a cell's output is the compressor's folder (``{compressor}``), a budget scale a file in it
(``{budget}``; the judge's verdicts one folder deeper, under ``{judge}``).
"""

from __future__ import annotations

from pathlib import Path

from compressbench.pipeline import paths as templates

CASES = "data/keepbench/cases.jsonl"
# the fingerprints of the files a compressor's parameters name (stage keep_method_files)
METHOD_FILES = "data/keepbench/method_files/{compressor}.json"
COMPRESSED = "data/keepbench/compressed"
VERDICTS = "data/keepbench/verdicts"
COMPRESSED_CELL = COMPRESSED + "/{compressor}"
VERDICTS_CELL = VERDICTS + "/{compressor}"
METRICS = "metrics/keepbench.json"  # compact, what `dvc metrics show` prints
FULL_METRICS = "reports/keepbench_full.json"  # every number of every cell
REPORT = "reports/keepbench.md"
FIGURE = "reports/figures/keepbench_preservation_tflops.png"
COMPRESSED_FILE = COMPRESSED_CELL + "/{budget}.jsonl"
COMPRESSED_STATS = COMPRESSED_CELL + "/{budget}.stats.json"
VERDICTS_FILE = VERDICTS_CELL + "/{judge}/{budget}.jsonl"
VERDICT_STATS = VERDICTS_CELL + "/{judge}/{budget}.stats.json"


def budget_name(scale: float) -> str:
    """A budget scale as it appears in file names (``1.0``)."""
    return templates.value_name(float(scale))


def compressed_file(compressor: str, scale: float) -> Path:
    return templates.fill(COMPRESSED_FILE, compressor=compressor, budget=float(scale))


def compressed_stats(compressor: str, scale: float) -> Path:
    return templates.fill(COMPRESSED_STATS, compressor=compressor, budget=float(scale))


def verdicts_file(judge: str, compressor: str, scale: float) -> Path:
    return templates.fill(VERDICTS_FILE, compressor=compressor, judge=judge, budget=float(scale))


def verdict_stats(judge: str, compressor: str, scale: float) -> Path:
    return templates.fill(VERDICT_STATS, compressor=compressor, judge=judge, budget=float(scale))
