"""Aggregate scored rows: per (probe type, seed) cell means, then unweighted means over seeds.

Headline numbers follow the paper (spec §5): the mean of the per-seed cell means; ``sd`` is the
sample standard deviation over seeds (0 with one seed).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

# Rates reported beside the scores of every cell.
RATE_FIELDS = ("abstain", "format_error")


def cell_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Means of every score plus abstain / format-error / reader-error rates and token totals."""
    rows = list(rows)
    n = len(rows)
    out: dict[str, float] = {"n": float(n)}
    if not n:
        return out
    sums: dict[str, float] = defaultdict(float)
    for row in rows:
        for key, value in row["scores"].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                sums[key] += value
        for key in RATE_FIELDS:
            sums[f"{key}_rate"] += float(row.get(key) or 0)
        sums["error_rate"] += 1.0 if row.get("error") else 0.0
        sums["tokens_in"] += row.get("tokens_in", 0)
        sums["tokens_out"] += row.get("tokens_out", 0)
    for key, total in sums.items():
        out[key] = total if key.startswith("tokens_") else total / n
    return out


def by_probe_seed(
    rows: Iterable[Mapping[str, Any]],
) -> dict[tuple[str, int], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, int], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["probe_type"], int(row["seed"]))].append(row)
    return dict(sorted(groups.items()))


def seed_means(per_seed: Mapping[int, Mapping[str, float]]) -> dict[str, float]:
    """Unweighted mean over seeds of each metric, plus ``<metric>_sd`` for the scores."""
    keys = sorted({k for m in per_seed.values() for k in m})
    out: dict[str, float] = {"seeds": float(len(per_seed))}
    for key in keys:
        values = [m[key] for m in per_seed.values() if key in m]
        out[key] = statistics.fmean(values)
        if key in ("strict", "loose") and len(values) > 1:
            out[f"{key}_sd"] = statistics.stdev(values)
    return out


def probe_means(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per probe type: :func:`seed_means` of the per-seed :func:`cell_metrics` of ``rows``."""
    per_probe: dict[str, dict[int, dict[str, float]]] = {}
    for (probe, seed), group in by_probe_seed(rows).items():
        per_probe.setdefault(probe, {})[seed] = cell_metrics(group)
    return {probe: seed_means(seeds) for probe, seeds in per_probe.items()}


HEADLINE_METRICS = ("strict", "loose")


def compact(per_probe: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Only the headline scores (strict, loose) of each probe: what ``dvc metrics`` shows."""
    return {
        probe: {m: metrics[m] for m in HEADLINE_METRICS if m in metrics}
        for probe, metrics in per_probe.items()
    }
