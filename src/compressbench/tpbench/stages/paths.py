"""Where TPBench's stages write (one folder per stage under ``data/``; relative to the repo root).

Each location is one :mod:`~compressbench.pipeline.paths` template with ``{dataset}``,
``{method}`` and ``{ratio}`` fields: the stages fill it, and ``dvc.yaml`` is generated from the
same templates (see :mod:`compressbench.pipeline.declare`), so a stage and its DVC outputs
cannot disagree. KEEP-Bench declares its own the same way
(:mod:`compressbench.keepbench.stages.keep_paths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compressbench.pipeline import paths as templates
from compressbench.pipeline.paths import DATA

__all__ = ["DATA"]

CORPUS = "data/corpora/{dataset}.jsonl.gz"
CORPUS_SOURCE = "data/corpora/{dataset}.source.json"
TRANSITIONS = "data/transitions/{dataset}.json"
RETENTION = "metrics/retention/{dataset}.json"
PROBES = "data/probes/{dataset}/{ratio}.jsonl"
# the fingerprints of the files a method's method_params name (stage method_files)
METHOD_FILES = "data/method_files/{method}.json"
CONTEXTS = "data/contexts/{dataset}/{method}/{ratio}.jsonl"
ANSWERS = "data/answers/{dataset}/{method}/{ratio}.jsonl"
ANSWER_STATS = "data/answers/{dataset}/{method}/{ratio}.stats.json"
SCORES = "data/scores/{dataset}/{method}/{ratio}.jsonl"
# One cell's headline scores (P1/P2/P3 strict and loose): `dvc metrics show` prints a row each.
CELL_METRICS = "metrics/cells/{dataset}/{method}/{ratio}.json"
DELETION_CONTEXTS = "data/deletions/{dataset}/contexts.jsonl"
DELETION_ANSWERS = "data/deletions/{dataset}/answers.jsonl"
DELETION_ANSWER_STATS = "data/deletions/{dataset}/answers.stats.json"
DELETION_SCORES = "data/deletions/{dataset}/scores.jsonl"
DELETION_SUMMARY = "metrics/deletions/{dataset}.json"

METRICS_FILE = Path("metrics") / "tpbench.json"  # compact: what `dvc metrics show` prints
FULL_METRICS_FILE = Path("reports") / "tpbench_full.json"  # every metric of every cell
SUMMARY_FILE = Path("reports") / "summary.md"
MANIFEST_FILE = Path("reports") / "manifest.json"
REPORT_FILE = Path("reports") / "tpbench.md"
FIGURES_DIR = Path("reports") / "figures"
# P1 judge verdicts of one cell (the judge stage; empty when ``judge.enabled`` is false).
VERDICTS = "data/verdicts/{dataset}/{method}/{ratio}.jsonl"


def ratio_name(ratio: float) -> str:
    """A ratio as it appears in file and DVC stage names (``0.3``)."""
    return templates.value_name(float(ratio))


def fill(template: str, dataset: str = "", method: str = "", ratio: float | None = None) -> Path:
    """A template's path for one cell (its dataset, method and ratio)."""
    r = "" if ratio is None else float(ratio)
    return templates.fill(template, dataset=dataset, method=method, ratio=r)


def corpus_file(dataset: str) -> Path:
    return fill(CORPUS, dataset)


def transitions_file(dataset: str) -> Path:
    return fill(TRANSITIONS, dataset)


def retention_file(dataset: str) -> Path:
    return fill(RETENTION, dataset)


def retention_log(dataset: str) -> Path:
    """Resumable per-dialogue retention outcomes (a cache beside the answer cache, not DVC's)."""
    return Path(".cache") / "retention" / f"{dataset}.events.jsonl"


def probes_file(dataset: str, ratio: float) -> Path:
    return fill(PROBES, dataset, ratio=ratio)


@dataclass(frozen=True)
class CellFiles:
    """The files of one (dataset, method, ratio) cell along the pipeline."""

    dataset: str
    method: str
    ratio: float

    def _path(self, template: str) -> Path:
        return fill(template, self.dataset, self.method, self.ratio)

    @property
    def contexts(self) -> Path:
        return self._path(CONTEXTS)

    @property
    def answers(self) -> Path:
        return self._path(ANSWERS)

    @property
    def answer_stats(self) -> Path:
        return self._path(ANSWER_STATS)

    @property
    def scores(self) -> Path:
        return self._path(SCORES)

    @property
    def metrics(self) -> Path:
        return self._path(CELL_METRICS)
