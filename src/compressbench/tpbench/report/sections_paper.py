"""The report's section on this run's method ranking against the paper's Llama-3.1-8B-Instruct
(Table 3, :mod:`compressbench.tpbench.report.paper_table3`), column by column."""

from __future__ import annotations

import math

from compressbench.analysis.markdown import NONE, num, table
from compressbench.tpbench.report.model import Findings, ReportInput
from compressbench.tpbench.report.paper_ranking import MIN_METHODS, ColumnRanking, MethodRank
from compressbench.tpbench.report.paper_table3 import (
    PAPER_RATIO,
    PAPER_READER,
    TABLE3,
    paper_dataset,
)

TITLE = f"## Method ranking vs the paper's {PAPER_READER.removesuffix('-Instruct')}"


def rho_text(ranking: ColumnRanking) -> str:
    if ranking.rho is None:
        return f"not computed (fewer than {MIN_METHODS} methods in both)"
    if math.isnan(ranking.rho):
        return "undefined (one side's scores are all equal)"
    return f"{ranking.rho:+.2f}"


def _score(value: float | None, rank: float | None) -> str:
    if value is None:
        return NONE
    return num(value) if rank is None else f"{num(value)} ({rank:g})"


def _cell(m: MethodRank) -> str:
    return f"{_score(m.score, m.rank)} / {_score(m.paper, m.paper_rank)}"


def _tables(inp: ReportInput, rankings: list[ColumnRanking]) -> list[str]:
    lines = table(
        ["column", "methods in both", "Spearman ρ"],
        [[r.column, r.n, rho_text(r)] for r in rankings],
    )
    methods = [m.method for m in rankings[0].methods] if rankings else []
    rows = [
        [inp.label(method), *(_cell(r.methods[i]) for r in rankings)]
        for i, method in enumerate(methods)
    ]
    header = ["method", *(f"{r.column}: run (rank) / paper (rank)" for r in rankings)]
    return lines + table(header, rows)


def paper_ranking(inp: ReportInput, f: Findings) -> list[str]:
    """ρ per column between this run's and the paper's per-method scores, and both ranks."""
    lines = [TITLE, ""]
    compared = [d for d in inp.datasets if d in f.paper_ranking]
    others = [d for d in inp.datasets if d not in f.paper_ranking]
    paper_sets = " and ".join(TABLE3)
    if not compared:
        return [
            *lines,
            f"Applies to {paper_sets} only (the paper's Table 3); no dataset of this run "
            f"({', '.join(inp.datasets)}) has paper values.",
            "",
        ]
    lines += [
        f"This run's score of every method at r = {inp.main_ratio:g} (seed means, as in Main "
        f"results) against the paper's {PAPER_READER} at r = {PAPER_RATIO:.2f} (Table 3: mean "
        "of seeds 42/43/44 on the SGD and MultiWOZ 2.2 test sets; P3 segment-local; ChunkKV "
        "seed 42 only, no P1). Per column, Spearman's ρ between the two scores over the "
        "methods present in both; ranks are among those methods (1 = best, ties share the "
        "average rank). Methods without a paper value show – and stay out of ρ. The columns "
        "share their methods, so their ρ's are not averaged.",
        "",
    ]
    if not math.isclose(inp.main_ratio, PAPER_RATIO):
        lines += [
            f"The paper's numbers are at r = {PAPER_RATIO:.2f} and this run's main r is "
            f"{inp.main_ratio:g}: the ranks compare different budgets.",
            "",
        ]
    for dataset in compared:
        paper = paper_dataset(dataset)
        heading = dataset if paper == dataset else f"{dataset} (paper: {paper})"
        lines += [f"### {heading}", "", *_tables(inp, f.paper_ranking[dataset])]
    if others:
        lines += [f"{', '.join(others)}: no paper values (applies to {paper_sets} only).", ""]
    return lines
