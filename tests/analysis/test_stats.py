"""TPBench statistics (spec §5): hand-checked examples and the published numbers they reproduce."""

from __future__ import annotations

import hashlib
import math
import random

import numpy as np
import pytest
from scipy.stats import binom, norm

from compressbench.analysis import stats

# --- McNemar ----------------------------------------------------------------------------------


def test_mcnemar_hand_example() -> None:
    # P[Bin(7, 1/2) <= 1] = (1 + 7) / 128, doubled
    result = stats.mcnemar(1, 6)
    assert result.p == pytest.approx(0.125)
    assert result.p == pytest.approx(2 * binom.cdf(1, 7, 0.5))
    assert stats.mcnemar(6, 1).p == result.p
    assert (result.b, result.c) == (1, 6)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 3), (10, 10)])
def test_mcnemar_without_imbalance_is_one(b: int, c: int) -> None:
    assert stats.mcnemar(b, c).p == 1.0


@pytest.mark.parametrize(
    ("b", "c", "published"),
    [(23, 0, 2.38e-7), (64, 0, 1.08e-19), (76, 1, 1.03e-21), (123, 0, 1.88e-37)],
)
def test_mcnemar_reproduces_the_deletion_p_values(b: int, c: int, published: float) -> None:
    p = stats.mcnemar(b, c).p
    assert float(f"{p:.2e}") == published


def test_mcnemar_paired_counts_discordant_rows() -> None:
    a = [1, 1, 1, 0, 0, 1, 0]
    b = [0, 0, 1, 1, 0, 1, 0]
    result = stats.mcnemar_paired(a, b)
    assert (result.b, result.c) == (2, 1)
    assert result.p == stats.mcnemar(2, 1).p


# --- Spearman ---------------------------------------------------------------------------------


def test_spearman_with_ties_uses_average_ranks() -> None:
    x = [0.1, 0.5, 0.5, 0.9]  # ranks 1, 2.5, 2.5, 4
    y = [0.8, 0.2, 0.6, 0.4]  # ranks 4, 1, 3, 2
    rx = np.array([1, 2.5, 2.5, 4])
    ry = np.array([4, 1, 3, 2])
    dx, dy = rx - rx.mean(), ry - ry.mean()
    hand = (dx @ dy) / math.sqrt((dx @ dx) * (dy @ dy))
    assert hand == pytest.approx(-3 / math.sqrt(4.5 * 5))  # by hand: dx.dy = -3, |dx|² 4.5, |dy|² 5
    assert stats.spearman(x, y) == pytest.approx(hand)


def test_spearman_of_a_constant_vector_is_nan() -> None:
    assert math.isnan(stats.spearman([0.2, 0.2, 0.2], [0.1, 0.5, 0.3]))


# Published Table 3 (spec §8 H1), seed means over the seven compressed selectors: recency,
# random_seed42, first_n, uniform_stride, attention_h2o_cache, embedding_mmr_cache, llmlingua2.
H1_P1_STRICT = {
    "sgd": [0.010, 0.145, 0.480, 0.493, 0.493, 0.178, 0.193],
    "multiwoz": [0.002, 0.147, 0.410, 0.407, 0.408, 0.128, 0.117],
}
H1_P2_STRICT = {
    "sgd": [0.254, 0.278, 0.156, 0.283, 0.114, 0.309, 0.164],
    "multiwoz": [0.125, 0.314, 0.296, 0.286, 0.244, 0.292, 0.306],
}


@pytest.mark.parametrize(("dataset", "published"), [("sgd", -0.342), ("multiwoz", 0.107)])
def test_spearman_reproduces_table_3(dataset: str, published: float) -> None:
    rho = stats.spearman(H1_P1_STRICT[dataset], H1_P2_STRICT[dataset])
    assert round(rho, 3) == published
    assert round(rho, 2) == {"sgd": -0.34, "multiwoz": 0.11}[dataset]  # as the paper prints


# --- crossover alpha --------------------------------------------------------------------------


def test_crossover_alpha_hand_example() -> None:
    # a leads P1 by 0.4, b leads P2 by 0.2: 0.4 α = 0.2 (1 - α)  ->  α = 1/3
    alpha = stats.crossover_alpha(0.6, 0.2, 0.2, 0.4)
    assert alpha == pytest.approx(1 / 3)
    # the probe mix alpha * P1 + (1 - alpha) * P2 of the two methods is equal there
    assert alpha * 0.6 + (1 - alpha) * 0.2 == pytest.approx(alpha * 0.2 + (1 - alpha) * 0.4)
    assert stats.crossover_alpha(0.2, 0.4, 0.6, 0.2) == pytest.approx(alpha)


def test_crossover_alpha_reproduces_paper_6_1_2() -> None:
    # SGD r=0.30: earliest turns 0.480 / 0.156 vs embedding MMR 0.178 / 0.309
    alpha = stats.crossover_alpha(0.480, 0.156, 0.178, 0.309)
    assert round(alpha, 3) == 0.336


@pytest.mark.parametrize(
    "scores",
    [(0.5, 0.5, 0.4, 0.3), (0.4, 0.3, 0.5, 0.5), (0.5, 0.3, 0.5, 0.4), (0.2, 0.2, 0.2, 0.2)],
)
def test_no_crossover_when_one_method_dominates(scores: tuple[float, ...]) -> None:
    assert stats.crossover_alpha(*scores) is None


# --- cluster bootstrap ------------------------------------------------------------------------


def spec_bootstrap(values, clusters, resamples, seed, weights=None):  # type: ignore[no-untyped-def]
    """The spec §5 rule, written out: sorted clusters, default_rng(seed).integers(n, (R, n)),
    replicate = Σ cluster sums / Σ cluster counts, numpy.quantile at 0.025 / 0.975."""
    ids = sorted(set(clusters))
    w = [1.0] * len(values) if weights is None else list(weights)
    sums = np.array(
        [sum(v * wi for v, c, wi in zip(values, clusters, w, strict=True) if c == k) for k in ids]
    )
    counts = np.array([sum(wi for c, wi in zip(clusters, w, strict=True) if c == k) for k in ids])
    idx = np.random.default_rng(seed).integers(len(ids), size=(resamples, len(ids)))
    reps = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    return np.quantile(reps, [0.025, 0.975])


def _rows(n_dialogues: int, seed: int = 0) -> tuple[list[float], list[str]]:
    """Dialogues of 1-4 rows with 0/1 values (a deterministic fixture)."""
    gen = random.Random(seed)
    values: list[float] = []
    clusters: list[str] = []
    for d in range(n_dialogues):
        for _ in range(gen.randint(1, 4)):
            values.append(float(gen.random() < 0.4))
            clusters.append(f"dlg{d:03d}")
    return values, clusters


def test_cluster_bootstrap_follows_the_spec_rule() -> None:
    values, clusters = _rows(40)
    got = stats.cluster_bootstrap(values, clusters, resamples=2000, seed=20260928)
    low, high = spec_bootstrap(values, clusters, 2000, 20260928)
    assert (got.low, got.high) == pytest.approx((low, high), abs=1e-12)
    assert got.estimate == pytest.approx(sum(values) / len(values))
    assert (got.n, got.n_clusters, got.resamples) == (len(values), 40, 2000)


def test_cluster_bootstrap_is_deterministic_for_a_seed() -> None:
    values, clusters = _rows(30)
    one = stats.cluster_bootstrap(values, clusters, resamples=500, seed=7)
    assert stats.cluster_bootstrap(values, clusters, resamples=500, seed=7) == one
    shared = stats.cluster_bootstrap(values, clusters, resamples=500, rng=np.random.default_rng(7))
    assert shared == one
    assert stats.cluster_bootstrap(values, clusters, resamples=500, seed=8) != one


def test_identical_rows_per_dialogue_equal_a_bootstrap_over_dialogues() -> None:
    per_dialogue = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    ids = [f"d{i:02d}" for i in range(len(per_dialogue))]
    rows = [
        (v, c) for v, c in zip(per_dialogue, ids, strict=True) for _ in range(3)
    ]  # one row per seed
    clustered = stats.cluster_bootstrap(
        [v for v, _ in rows], [c for _, c in rows], resamples=3000, seed=11
    )
    dialogues = stats.cluster_bootstrap(per_dialogue, ids, resamples=3000, seed=11)
    assert (clustered.low, clustered.high) == pytest.approx((dialogues.low, dialogues.high))
    # ... which is the plain percentile bootstrap of the dialogue values
    idx = np.random.default_rng(11).integers(len(ids), size=(3000, len(ids)))
    plain = np.quantile(np.asarray(per_dialogue)[idx].mean(axis=1), [0.025, 0.975])
    assert (dialogues.low, dialogues.high) == pytest.approx(tuple(plain))


def test_interval_contains_the_mean_and_is_ordered() -> None:
    values, clusters = _rows(60, seed=3)
    ci = stats.cluster_bootstrap(values, clusters, resamples=1000, seed=1)
    assert ci.low <= ci.estimate <= ci.high
    assert 0 < ci.low < ci.high < 1
    wider = stats.cluster_bootstrap(values, clusters, resamples=1000, seed=1, level=0.99)
    assert wider.low <= ci.low and wider.high >= ci.high


def test_constant_values_give_a_degenerate_interval() -> None:
    ci = stats.cluster_bootstrap([1, 1, 1, 1], ["a", "a", "b", "c"], resamples=200)
    assert (ci.estimate, ci.low, ci.high) == (1.0, 1.0, 1.0)


def test_published_defaults() -> None:
    values, clusters = _rows(10)
    ci = stats.cluster_bootstrap(values, clusters)
    assert ci.resamples == 10_000 == stats.DEFAULT_RESAMPLES
    assert stats.DEFAULT_SEED == 20260811
    low, high = spec_bootstrap(values, clusters, 10_000, 20260811)
    assert (ci.low, ci.high) == pytest.approx((low, high))


def test_equal_seed_weights_make_seeds_count_equally() -> None:
    seeds = [42, 42, 42, 42, 43, 43]
    values = [1, 1, 0, 0, 1, 1]  # seed 42 mean 0.5, seed 43 mean 1.0
    clusters = ["a", "b", "c", "d", "a", "e"]
    w = stats.equal_seed_weights(seeds)
    assert list(w) == [0.25] * 4 + [0.5] * 2
    ci = stats.cluster_bootstrap(values, clusters, weights=w, resamples=800, seed=20260928)
    assert ci.estimate == pytest.approx(0.75)
    low, high = spec_bootstrap(values, clusters, 800, 20260928, weights=w)
    assert (ci.low, ci.high) == pytest.approx((low, high))


def test_paired_bootstrap_draws_clusters_once_for_both_methods() -> None:
    a, clusters = _rows(50, seed=5)
    b = [1.0 - v if i % 3 == 0 else v for i, v in enumerate(a)]
    paired = stats.paired_cluster_bootstrap(a, b, clusters, resamples=1500, seed=2)
    totals_a = stats.cluster_totals(a, clusters)
    totals_b = stats.cluster_totals(b, clusters)
    idx = np.random.default_rng(2).integers(50, size=(1500, 50))
    per_rep = (totals_b.sums[idx].sum(1) - totals_a.sums[idx].sum(1)) / totals_a.counts[idx].sum(1)
    assert (paired.low, paired.high) == pytest.approx(tuple(np.quantile(per_rep, [0.025, 0.975])))
    assert paired.estimate == pytest.approx((sum(b) - sum(a)) / len(a))
    assert paired.low <= paired.estimate <= paired.high


def test_release_indices_follow_the_labelled_python_random_rule() -> None:
    idx = stats.release_indices("lme_ku_p2|strict|full_context", n_clusters=72, resamples=3)
    gen = random.Random(
        int(hashlib.sha256(b"20260811|lme_ku_p2|strict|full_context").hexdigest()[:16], 16)
    )
    expected = [[gen.randrange(72) for _ in range(72)] for _ in range(3)]
    assert idx.tolist() == expected
    other = stats.release_indices("lme_ku_p2|strict|recency", n_clusters=72, resamples=3)
    assert other.tolist() != expected


def test_bootstrap_accepts_a_precomputed_index_matrix() -> None:
    values = [1.0, 0.0, 1.0, 1.0]
    clusters = ["a", "b", "c", "d"]
    idx = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 2, 3]])
    ci = stats.cluster_bootstrap(values, clusters, indices=idx)
    assert ci.resamples == 3
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile([1.0, 0.0, 0.75], [0.025, 0.975])))
    with pytest.raises(ValueError, match="shape"):
        stats.cluster_bootstrap(values, clusters, indices=idx[:, :3])


def test_bootstrap_rejects_mismatched_inputs() -> None:
    with pytest.raises(ValueError, match="length"):
        stats.cluster_bootstrap([1, 0], ["a"])
    with pytest.raises(ValueError, match="paired"):
        stats.paired_cluster_bootstrap([1, 0], [1], ["a", "b"])
    with pytest.raises(ValueError, match="resamples"):
        stats.cluster_bootstrap([1, 0], ["a", "b"], resamples=0)


# --- Wilson -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(23, 86), (0, 10), (10, 10), (125, 128)])
def test_wilson_interval_matches_the_closed_form(k: int, n: int) -> None:
    z = norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert stats.wilson_interval(k, n) == pytest.approx((centre - half, centre + half))
