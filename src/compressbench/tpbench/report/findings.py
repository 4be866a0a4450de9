"""Grid-level TPBench findings from scored rows: the gap to full context with paired
dialogue-clustered intervals (paper §6.2), method ranks across probes and their Spearman
correlation (§6.1, Figure 2), and where a probe-mix weight flips two methods (§6.1.2).

Bootstrap settings follow the paper's P3 comparisons (spec §5): 5,000 resamples of source
dialogues, ``default_rng(20260928)``; the release shares one generator across contrasts in its
own iteration order, here each contrast draws from a fresh generator with that seed, so adding
a method to the grid never moves another method's interval.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy.stats import rankdata

from compressbench.analysis.stats import crossover_alpha, paired_cluster_bootstrap, spearman
from compressbench.compress.method import FULL_CONTEXT

GAP_RESAMPLES = 5_000
GAP_SEED = 20260928

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Gap:
    """reference − method on one metric over paired rows, with its percentile interval."""

    method: str
    metric: str
    n_pairs: int
    n_clusters: int
    n_unpaired: int  # rows of either side without a partner (left out, counted)
    reference: float
    score: float
    gap: float
    low: float
    high: float


def _by_key(rows: Iterable[Row], probe_type: str) -> dict[tuple[int, str], Row]:
    return {(int(r["seed"]), str(r["probe_id"])): r for r in rows if r["probe_type"] == probe_type}


def paired_gap(
    reference: Iterable[Row],
    method: Iterable[Row],
    *,
    method_name: str,
    metric: str,
    probe_type: str = "P3",
    resamples: int = GAP_RESAMPLES,
    seed: int = GAP_SEED,
) -> Gap | None:
    """reference − method on ``scores.<metric>`` of ``probe_type`` rows paired by (seed,
    probe id), pooled over seeds; clusters are source dialogues. None without a pair."""
    ref = _by_key(reference, probe_type)
    own = _by_key(method, probe_type)
    keys = sorted(ref.keys() & own.keys())
    if not keys:
        return None
    a = [float(own[k]["scores"][metric]) for k in keys]
    b = [float(ref[k]["scores"][metric]) for k in keys]
    clusters = [str(ref[k]["dialogue_id"]) for k in keys]
    interval = paired_cluster_bootstrap(a, b, clusters, resamples=resamples, seed=seed)
    return Gap(
        method=method_name,
        metric=metric,
        n_pairs=len(keys),
        n_clusters=interval.n_clusters,
        n_unpaired=len(ref.keys() ^ own.keys()),
        reference=math.fsum(b) / len(b),
        score=math.fsum(a) / len(a),
        gap=interval.estimate,
        low=interval.low,
        high=interval.high,
    )


def gaps_to_reference(
    rows_by_method: Mapping[str, Sequence[Row]],
    reference: str = FULL_CONTEXT,
    *,
    metrics: Sequence[str] = ("strict", "loose"),
    probe_type: str = "P3",
    resamples: int = GAP_RESAMPLES,
    seed: int = GAP_SEED,
) -> list[Gap]:
    """:func:`paired_gap` of every other method against ``reference`` (methods in the given
    order, then metrics); empty when the reference is not in ``rows_by_method``."""
    if reference not in rows_by_method:
        return []
    found = []
    for method, rows in rows_by_method.items():
        if method == reference:
            continue
        for metric in metrics:
            gap = paired_gap(
                rows_by_method[reference],
                rows,
                method_name=method,
                metric=metric,
                probe_type=probe_type,
                resamples=resamples,
                seed=seed,
            )
            if gap is not None:
                found.append(gap)
    return found


def ranks(scores: Mapping[str, float]) -> dict[str, float]:
    """Rank 1 = highest score; ties share their average rank (``scipy.stats.rankdata``)."""
    names = list(scores)
    values = rankdata([-scores[m] for m in names], method="average")
    return {m: float(r) for m, r in zip(names, values, strict=True)}


def rank_table(
    scores: Mapping[str, Mapping[str, float]], columns: Sequence[str]
) -> dict[str, list[float]]:
    """Each method's rank in every column (``scores[method][column]``), columns in order."""
    per_column = [ranks({m: s[c] for m, s in scores.items()}) for c in columns]
    return {m: [col[m] for col in per_column] for m in scores}


def rank_correlation(x: Mapping[str, float], y: Mapping[str, float]) -> float | None:
    """Spearman ρ of two scores over their common methods (None with fewer than 3 methods;
    NaN when one side is constant)."""
    common = [m for m in x if m in y]
    if len(common) < 3:
        return None
    return spearman([x[m] for m in common], [y[m] for m in common])


@dataclass(frozen=True)
class Crossover:
    """Methods ``a`` and ``b`` order differently on P1 and P2; at weight ``alpha`` on P1 the
    probe-mix scores α·P1 + (1 − α)·P2 tie."""

    a: str
    b: str
    alpha: float
    p1: tuple[float, float]
    p2: tuple[float, float]


def crossovers(p1: Mapping[str, float], p2: Mapping[str, float]) -> list[Crossover]:
    """Every pair of methods (in the given order) whose P1 and P2 orders disagree."""
    common = [m for m in p1 if m in p2]
    found = []
    for a, b in itertools.combinations(common, 2):
        alpha = crossover_alpha(p1[a], p2[a], p1[b], p2[b])
        if alpha is not None:
            found.append(Crossover(a, b, alpha, (p1[a], p1[b]), (p2[a], p2[b])))
    return found
