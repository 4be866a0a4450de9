"""This run's method ranking against a published one, column by column.

Per column (e.g. ``P2-strict``): Spearman's ρ between this run's per-method scores and the
paper's over the methods that have both (``None`` with fewer than three, NaN when one side is
constant), and both ranks among those methods (1 = best, ties share the average rank). A
method of this run without a paper value keeps its score, gets no rank and stays out of ρ.
The per-column ρ's are not averaged: columns share methods, so they are not independent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compressbench.tpbench.report.findings import rank_correlation, ranks

MIN_METHODS = 3  # fewer methods in both: no ρ


@dataclass(frozen=True)
class MethodRank:
    """One method in one column: this run's score and rank, the paper's score and rank."""

    method: str
    score: float | None
    paper: float | None
    rank: float | None  # among the methods with both scores
    paper_rank: float | None


@dataclass(frozen=True)
class ColumnRanking:
    """One column: every method of this run (grid order) and ρ over the ``n`` in both."""

    column: str
    methods: list[MethodRank]
    n: int
    rho: float | None

    def compared(self) -> list[str]:
        """The methods that enter ρ."""
        return [m.method for m in self.methods if m.rank is not None]


def rank_column(
    column: str, ours: Mapping[str, float | None], paper: Mapping[str, float | None]
) -> ColumnRanking:
    """Ranks and ρ of one column; ``ours`` in the order the report lists the methods."""
    both = {m: float(s) for m, s in ours.items() if s is not None and paper.get(m) is not None}
    theirs = {m: float(paper[m]) for m in both}  # type: ignore[arg-type]
    ours_rank = ranks(both) if both else {}
    paper_rank = ranks(theirs) if theirs else {}
    rho = rank_correlation(both, theirs) if len(both) >= MIN_METHODS else None
    return ColumnRanking(
        column=column,
        methods=[
            MethodRank(
                method=m,
                score=s,
                paper=paper.get(m),
                rank=ours_rank.get(m),
                paper_rank=paper_rank.get(m),
            )
            for m, s in ours.items()
        ],
        n=len(both),
        rho=rho,
    )


def rank_against_paper(
    scores: Mapping[str, Mapping[str, float]],
    paper: Mapping[str, Mapping[str, float]],
    columns: Sequence[str],
) -> list[ColumnRanking]:
    """:func:`rank_column` for every column; ``scores`` / ``paper``: method -> column -> score
    (this run's methods in report order; a column a method lacks is no score)."""
    return [
        rank_column(
            column,
            {m: s.get(column) for m, s in scores.items()},
            {m: s.get(column) for m, s in paper.items()},
        )
        for column in columns
    ]
