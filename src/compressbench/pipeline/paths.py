"""Where every stage writes (one folder per stage under ``data/``; relative to the repo root)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATA = Path("data")


def ratio_name(ratio: float) -> str:
    """A ratio as it appears in file and DVC stage names (``0.3``)."""
    return repr(float(ratio))


def corpus_file(dataset: str) -> Path:
    return DATA / "corpora" / f"{dataset}.jsonl.gz"


def transitions_file(dataset: str) -> Path:
    return DATA / "transitions" / f"{dataset}.json"


def retention_file(dataset: str) -> Path:
    return Path("metrics") / "retention" / f"{dataset}.json"


def retention_log(dataset: str) -> Path:
    """Resumable per-dialogue retention outcomes (a cache beside the answer cache, not DVC's)."""
    return Path(".cache") / "retention" / f"{dataset}.events.jsonl"


def probes_file(dataset: str, ratio: float) -> Path:
    return DATA / "probes" / dataset / f"{ratio_name(ratio)}.jsonl"


@dataclass(frozen=True)
class CellFiles:
    """The files of one (dataset, method, ratio) cell along the pipeline."""

    dataset: str
    method: str
    ratio: float

    def _path(self, stage: str, suffix: str = ".jsonl") -> Path:
        return DATA / stage / self.dataset / self.method / f"{ratio_name(self.ratio)}{suffix}"

    @property
    def contexts(self) -> Path:
        return self._path("contexts")

    @property
    def answers(self) -> Path:
        return self._path("answers")

    @property
    def answer_stats(self) -> Path:
        return self._path("answers", ".stats.json")

    @property
    def scores(self) -> Path:
        return self._path("scores")


METRICS_FILE = Path("metrics") / "tpbench.json"
SUMMARY_FILE = Path("reports") / "summary.md"
MANIFEST_FILE = Path("reports") / "manifest.json"
