"""TPBench statistics (spec §5, paper §6) as pure functions on numpy and ``scipy.stats``.

* :func:`cluster_bootstrap` — dialogue-clustered percentile bootstrap. Clusters (sorted ids)
  are drawn with replacement, ``default_rng(seed).integers(n_clusters, size=(resamples,
  n_clusters))``; each replicate is Σ cluster sums / Σ cluster counts (rows weighted, so a
  cluster counts by its size, or by row weights such as :func:`equal_seed_weights`); the
  interval is ``numpy.quantile`` (linear interpolation) at (1 ± level)/2. A caller can pass its
  own ``rng`` (the authors share one generator across contrasts) or a precomputed index matrix.
* :func:`paired_cluster_bootstrap` — the same on per-row differences b − a, so each resample
  draws the clusters once for both methods.
* :func:`mcnemar` — exact two-sided McNemar: binomial test on the discordant pairs.
* :func:`spearman` — rank correlation with average ranks for ties (NaN on a constant vector).
* :func:`crossover_alpha` — the probe-mix weight where α·P1 + (1 − α)·P2 ranks two methods
  equally (paper §6.1.2).
* :func:`wilson_interval` — Wilson score interval of a proportion (deletion tables).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

# Published bootstrap settings (spec §5, LME-KU / RiSAWOZ; the paper's issue defaults).
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20260811
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A point estimate with its percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    n: int
    n_clusters: int
    resamples: int
    level: float


@dataclass(frozen=True)
class ClusterTotals:
    """Per-cluster Σ weight·value and Σ weight, clusters in sorted id order."""

    ids: list[Hashable]
    sums: np.ndarray
    counts: np.ndarray


def cluster_totals(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    weights: Sequence[float] | None = None,
) -> ClusterTotals:
    """Collapse rows to their clusters: (Σ w·x, Σ w) per cluster id, ids sorted."""
    x = np.asarray(values, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    if not (len(x) == len(clusters) == len(w)):
        raise ValueError(
            f"values ({len(x)}), clusters ({len(clusters)}) and weights ({len(w)}) differ in length"
        )
    if len(x) == 0:
        raise ValueError("no rows to bootstrap")
    ids = sorted(set(clusters))  # type: ignore[type-var]
    pos = {c: i for i, c in enumerate(ids)}
    index = np.fromiter((pos[c] for c in clusters), dtype=np.intp, count=len(x))
    sums = np.bincount(index, weights=w * x, minlength=len(ids))
    counts = np.bincount(index, weights=w, minlength=len(ids))
    return ClusterTotals(ids=ids, sums=sums, counts=counts)


def equal_seed_weights(seeds: Sequence[Hashable]) -> np.ndarray:
    """Row weights 1 / (rows of the row's seed), so every seed counts equally (spec §5,
    first-user-plus-recent comparison)."""
    sizes = Counter(seeds)
    return np.array([1.0 / sizes[s] for s in seeds], dtype=float)


def bootstrap_indices(
    n_clusters: int,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The resample matrix (resamples × n_clusters) of cluster positions drawn with replacement."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    gen = np.random.default_rng(seed) if rng is None else rng
    return gen.integers(n_clusters, size=(resamples, n_clusters))


def release_indices(
    label: str, n_clusters: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """The release's LME-KU / RiSAWOZ draws (spec §5, ``bootstrap_stats.py``): one Python
    ``random.Random`` per label, seeded with the first 16 hex digits of
    ``sha256(f"{seed}|{label}")``; replicate r holds n ``randrange(n)`` draws in order."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    digest = hashlib.sha256(f"{seed}|{label}".encode()).hexdigest()
    gen = random.Random(int(digest[:16], 16))
    flat = [gen.randrange(n_clusters) for _ in range(resamples * n_clusters)]
    return np.asarray(flat, dtype=np.intp).reshape(resamples, n_clusters)


def _interval(totals: ClusterTotals, n: int, indices: np.ndarray, level: float) -> Interval:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n_clusters = len(totals.ids)
    if indices.ndim != 2 or indices.shape[1] != n_clusters:
        raise ValueError(f"indices must have shape (resamples, {n_clusters}), got {indices.shape}")
    replicates = totals.sums[indices].sum(axis=1) / totals.counts[indices].sum(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return Interval(
        estimate=float(totals.sums.sum() / totals.counts.sum()),
        low=float(low),
        high=float(high),
        n=n,
        n_clusters=n_clusters,
        resamples=int(indices.shape[0]),
        level=level,
    )


def cluster_bootstrap(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    weights: Sequence[float] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
    rng: np.random.Generator | None = None,
    indices: np.ndarray | None = None,
) -> Interval:
    """Percentile interval of the (weighted) mean of ``values``, resampling whole clusters.

    The estimate is Σ w·x / Σ w over all rows. ``rng`` (a shared generator) replaces
    ``seed``; ``indices`` (e.g. :func:`release_indices`) replaces both.
    """
    totals = cluster_totals(values, clusters, weights)
    if indices is None:
        indices = bootstrap_indices(len(totals.ids), resamples, seed, rng)
    return _interval(totals, len(values), np.asarray(indices), level)


def paired_cluster_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    weights: Sequence[float] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
    rng: np.random.Generator | None = None,
    indices: np.ndarray | None = None,
) -> Interval:
    """Interval of mean(b) − mean(a) over paired rows; one cluster draw serves both methods
    (the bootstrap of per-row differences, as the paper's full-context gaps)."""
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    if xa.shape != xb.shape:
        raise ValueError(f"a ({xa.size}) and b ({xb.size}) must be paired row by row")
    return cluster_bootstrap(
        xb - xa,
        clusters,
        weights=weights,
        resamples=resamples,
        seed=seed,
        level=level,
        rng=rng,
        indices=indices,
    )


@dataclass(frozen=True)
class McNemar:
    """Discordant counts and the exact two-sided p-value."""

    b: int  # a right, b wrong
    c: int  # a wrong, b right
    p: float


def mcnemar(b: int, c: int) -> McNemar:
    """Exact two-sided McNemar test on discordant counts: binomial test of b in b + c at 0.5,
    i.e. min(1, 2·P[Bin(b + c, ½) ≤ min(b, c)]); p = 1 with no discordant pairs."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    p = 1.0 if b + c == 0 else float(stats.binomtest(b, b + c, 0.5).pvalue)
    return McNemar(b=int(b), c=int(c), p=p)


def mcnemar_paired(a: Sequence[int], b: Sequence[int]) -> McNemar:
    """McNemar on paired 0/1 outcomes: b = a right and b wrong, c = a wrong and b right."""
    xa = np.asarray(a, dtype=bool)
    xb = np.asarray(b, dtype=bool)
    if xa.shape != xb.shape:
        raise ValueError(f"a ({xa.size}) and b ({xb.size}) must be paired row by row")
    return mcnemar(int(np.sum(xa & ~xb)), int(np.sum(~xa & xb)))


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's ρ: Pearson correlation of average ranks (ties share their mean rank);
    NaN when either vector is constant (no ranking to correlate)."""
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.size < 2:
        raise ValueError(
            f"spearman needs two paired vectors of length >= 2, got {xs.size}, {ys.size}"
        )
    if np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return math.nan
    return float(stats.spearmanr(xs, ys).statistic)


def crossover_alpha(p1_a: float, p2_a: float, p1_b: float, p2_b: float) -> float | None:
    """The α in [0, 1] where α·P1 + (1 − α)·P2 of methods a and b are equal; ``None`` when no
    mix changes their order (one method is at least as good on both probes).

    With d1 = P1_a − P1_b and d2 = P2_a − P2_b the difference α·d1 + (1 − α)·d2 is zero at
    α = d2 / (d2 − d1).
    """
    d1 = p1_a - p1_b
    d2 = p2_a - p2_b
    if d1 * d2 >= 0:  # same sign (or a tie on a probe): the order never flips inside (0, 1)
        return None
    return d2 / (d2 - d1)


def wilson_interval(successes: int, n: int, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Wilson score interval of a proportion (``scipy.stats.binomtest(...).proportion_ci``)."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {successes}/{n}")
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)
