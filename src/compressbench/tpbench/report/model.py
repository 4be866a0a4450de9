"""What the TPBench report is computed from (:class:`ReportInput`) and what it computes once for
its tables, figures and MLflow metrics (:class:`Findings`).

The pipeline fills :class:`ReportInput` from its files and the MLflow store; everything here is
a pure function of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compressbench.analysis.stats import Interval
from compressbench.compress.method import FULL_CONTEXT
from compressbench.tpbench.probe_types import ProbeType, pipeline_probe_types
from compressbench.tpbench.report.aggregate import probe_means
from compressbench.tpbench.report.answer_kinds import KindCounts, kind_counts
from compressbench.tpbench.report.cell_intervals import cell_intervals
from compressbench.tpbench.report.findings import (
    Crossover,
    Gap,
    crossovers,
    gaps_to_reference,
    rank_correlation,
    rank_table,
)
from compressbench.tpbench.report.paper_ranking import ColumnRanking, rank_against_paper
from compressbench.tpbench.report.paper_table3 import COLUMNS as PAPER_COLUMNS
from compressbench.tpbench.report.paper_table3 import paper_values
from compressbench.tpbench.report.retention_reading import Example, examples

Row = Mapping[str, Any]
CellKey = tuple[str, str, float]  # (dataset, method, ratio)
IntervalKey = tuple[str, str, float, str, str]  # (dataset, method, ratio, probe, metric)
RANK_COLUMNS = (("P1", "strict"), ("P1", "loose"), ("P2", "strict"))
FIGURES = ("rank_changes", "retention_accuracy", "p3_gap")  # the report's PNG figures
FULL = FULL_CONTEXT
# Share of format errors over all answers above which the report warns about its reader.
FORMAT_ERROR_WARNING = 0.5


@dataclass(frozen=True)
class CellData:
    """One (dataset, method, ratio) cell: its scored rows, context rows and answers stats."""

    dataset: str
    method: str
    ratio: float
    scores: Sequence[Row]
    contexts: Sequence[Row]
    stats: Mapping[str, Any]


@dataclass(frozen=True)
class RunRef:
    """The MLflow run a number comes from; ``verified`` when the run's recorded sha256 of the
    scored file equals the file's (None when the run records none)."""

    run_id: str
    verified: bool | None = None


@dataclass(frozen=True)
class ReportInput:
    """Everything the report reads (see :mod:`compressbench.tpbench.stages.report`)."""

    datasets: Sequence[str]
    methods: Sequence[str]
    ratios: Sequence[float]
    main_ratio: float
    seeds: Sequence[int]
    reader: str  # how the reader is named in the report
    default_reader: bool  # the offline default reader (a 135M model)
    cells: Mapping[CellKey, CellData]
    styles: Mapping[str, str]  # method -> full / positional / content / kv
    labels: Mapping[str, str]  # method -> display name
    slot_type: Callable[[str], str]
    retention: Mapping[str, Mapping[str, Any] | None]  # dataset -> metrics/retention JSON
    deletions: Mapping[str, Mapping[str, Any] | None] | None  # None: no deletion stage
    deletion_rows: Mapping[str, Sequence[Row]] = field(default_factory=dict)  # scored, by dataset
    verdicts: Mapping[CellKey, Sequence[Row]] = field(default_factory=dict)  # P1, judged cells
    judge: str | None = None  # how the judge is named; None: judging is off (judge.enabled)
    runs: Mapping[tuple[str, str, int, float, str], RunRef] = field(default_factory=dict)
    run_notes: Sequence[str] = ()  # where the runs were found (or why not)
    viewer: str | None = None  # the case viewer's page, relative to the report (None: none)

    def label(self, method: str) -> str:
        """The method's display name (the paper's)."""
        return self.labels.get(method, method)

    def cell(self, dataset: str, method: str, ratio: float) -> CellData | None:
        return self.cells.get((dataset, method, ratio))

    def selectors(self) -> list[str]:
        """The compressed turn selectors of the grid (no full context, no KV press)."""
        return [m for m in self.methods if self.styles.get(m) in ("positional", "content")]

    def kv_methods(self) -> list[str]:
        return [m for m in self.methods if self.styles.get(m) == "kv"]


@dataclass
class Findings:
    """Everything the report shows, computed once."""

    headline: dict[CellKey, dict[str, dict[str, float]]]
    kinds: dict[tuple[str, str, float, str], KindCounts]  # (dataset, method, ratio, probe)
    reading: dict[CellKey, list[Example]]  # P2 retention vs reading
    gaps: dict[str, list[Gap]]  # dataset -> P3 gaps at the main ratio
    ranks: dict[str, dict[str, list[float]]]  # dataset -> method -> rank per RANK_COLUMNS
    rank_scores: dict[str, dict[str, dict[str, float]]]  # dataset -> method -> column -> score
    spearman: dict[str, float | None]  # dataset -> P1-strict vs P2-strict
    crossovers: dict[str, list[Crossover]]
    format_error_rate: float | None  # over every answer of the grid
    # cell means (seeds pooled) with dialogue-clustered 95% intervals, at the main ratio
    intervals: dict[IntervalKey, Interval] = field(default_factory=dict)
    # dataset -> one ranking per paper column (datasets with Table 3 values only)
    paper_ranking: dict[str, list[ColumnRanking]] = field(default_factory=dict)

    def weak_reader(self, inp: ReportInput) -> bool:
        rate = self.format_error_rate
        return inp.default_reader or (rate is not None and rate >= FORMAT_ERROR_WARNING)


def column_name(probe: str, metric: str) -> str:
    return f"{probe}-{metric}"


def _ranks(inp: ReportInput, head: Mapping[CellKey, Any], dataset: str) -> dict[str, Any]:
    scores: dict[str, dict[str, float]] = {}
    for method in inp.selectors():
        probes = head.get((dataset, method, inp.main_ratio), {})
        values = {column_name(p, m): probes.get(p, {}).get(m) for p, m in RANK_COLUMNS}
        if all(v is not None for v in values.values()):
            scores[method] = {k: float(v) for k, v in values.items()}
    columns = [column_name(p, m) for p, m in RANK_COLUMNS]
    return {"scores": scores, "ranks": rank_table(scores, columns) if scores else {}}


def _paper_ranking(
    inp: ReportInput, head: Mapping[CellKey, Any], dataset: str
) -> list[ColumnRanking] | None:
    """Every method's seed-mean score at the main ratio against the paper's Table 3."""
    paper = paper_values(dataset)
    if paper is None:
        return None
    scores: dict[str, dict[str, float]] = {}
    for method in inp.methods:
        probes = head.get((dataset, method, inp.main_ratio))
        if not probes:
            continue
        scores[method] = {}
        for column in PAPER_COLUMNS:
            probe, metric = column.split("-")
            value = probes.get(probe, {}).get(metric)
            if value is not None:
                scores[method][column] = float(value)
    return rank_against_paper(scores, paper, PAPER_COLUMNS)


def kind_table_probes() -> list[ProbeType]:
    """The probe types the answer-kind table shows: the registered pipeline probe types with a
    kind rule that ask for it (``kinds_in_report``), in registry order."""
    return [p for p in pipeline_probe_types() if p.kind_rule is not None and p.kinds_in_report]


def _kinds(rows: Sequence[Row], probe: ProbeType) -> KindCounts | None:
    """The answer kinds of ``probe``'s rows among ``rows`` (None when it has none)."""
    mine = [r for r in rows if r["probe_type"] == probe.name]
    if not mine or probe.kind_rule is None:
        return None
    return kind_counts(mine, probe.kind_rule)


def compute(inp: ReportInput) -> Findings:
    """Every table's numbers from the cells."""
    head = {key: probe_means(cell.scores) for key, cell in inp.cells.items()}
    kinds = {
        (*key, probe.name): k
        for key, cell in inp.cells.items()
        for probe in kind_table_probes()
        if (k := _kinds(cell.scores, probe)) is not None
    }
    reading = {key: examples(cell.contexts, cell.scores, "P2") for key, cell in inp.cells.items()}
    intervals = {
        (*key, probe, metric): ci
        for key, cell in inp.cells.items()
        if key[2] == inp.main_ratio
        for (probe, metric), ci in cell_intervals(cell.scores).items()
    }
    gaps, ranks, rank_scores, rho, cross, paper = {}, {}, {}, {}, {}, {}
    for dataset in inp.datasets:
        rows = {
            m: inp.cells[(dataset, m, inp.main_ratio)].scores
            for m in inp.methods
            if (dataset, m, inp.main_ratio) in inp.cells
        }
        gaps[dataset] = gaps_to_reference(rows, FULL)
        r = _ranks(inp, head, dataset)
        ranks[dataset], rank_scores[dataset] = r["ranks"], r["scores"]
        p1 = {m: s["P1-strict"] for m, s in r["scores"].items()}
        p2 = {m: s["P2-strict"] for m, s in r["scores"].items()}
        rho[dataset] = rank_correlation(p1, p2)
        cross[dataset] = crossovers(p1, p2)
        if (ranking := _paper_ranking(inp, head, dataset)) is not None:
            paper[dataset] = ranking
    answers = [r for cell in inp.cells.values() for r in cell.scores]
    errors = sum(bool(r.get("format_error")) for r in answers)
    return Findings(
        headline=head,
        kinds=kinds,
        reading=reading,
        gaps=gaps,
        ranks=ranks,
        rank_scores=rank_scores,
        spearman=rho,
        crossovers=cross,
        format_error_rate=errors / len(answers) if answers else None,
        intervals=intervals,
        paper_ranking=paper,
    )
