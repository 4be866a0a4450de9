"""Pair two scored files row by row and compare one 0/1 metric (``compressbench compare``).

Rows pair by (probe_type, seed, probe_id); the difference is b − a with a paired
dialogue-clustered bootstrap interval, and the discordant pairs give an exact McNemar test.
Rows found in only one file are counted, never silently dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.analysis.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    mcnemar_paired,
    paired_cluster_bootstrap,
)
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl

Key = tuple[str, int, str]  # (probe_type, seed, probe_id)
_STR_FIELDS = ("probe_type", "probe_id", "dialogue_id")


@dataclass(frozen=True)
class Outcome:
    """One scored row reduced to what the comparison needs."""

    dialogue_id: str
    value: int  # 0 or 1


def _where(n: int, row: Mapping[str, Any]) -> str:
    """``row 3 (P2|42|sgd:1_00001:qa00)``: the row's position and, when known, its key."""
    parts = [str(row.get(f)) for f in ("probe_type", "seed", "probe_id") if f in row]
    return f"row {n}" + (f" ({'|'.join(parts)})" if parts else "")


def _outcome(path: Path, n: int, row: Mapping[str, Any], metric: str) -> tuple[Key, Outcome]:
    where = _where(n, row)
    for name in _STR_FIELDS:
        if not isinstance(row.get(name), str) or not row[name]:
            raise InputError(
                "missing or not a non-empty string", file=str(path), record=where, field=name
            )
    seed = row.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(
            f"expected an integer, got {seed!r}", file=str(path), record=where, field="seed"
        )
    scores = row.get("scores")
    field = f"scores.{metric}"
    if not isinstance(scores, Mapping) or metric not in scores:
        raise InputError("missing", file=str(path), record=where, field=field)
    value = scores[metric]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in (0, 1):
        raise InputError(
            f"expected 0 or 1, got {value!r} (compare needs a 0/1 metric)",
            file=str(path),
            record=where,
            field=field,
        )
    key = (row["probe_type"], seed, row["probe_id"])
    return key, Outcome(dialogue_id=row["dialogue_id"], value=int(value))


def load_outcomes(path: str | Path, metric: str) -> dict[Key, Outcome]:
    """Every row of a scored file by its pairing key; a bad or duplicated row is an InputError."""
    p = Path(path)
    out: dict[Key, Outcome] = {}
    first_row: dict[Key, int] = {}
    for n, row in enumerate(read_jsonl(p), start=1):
        key, outcome = _outcome(p, n, row, metric)
        if key in out:
            raise InputError(
                f"duplicate (probe_type, seed, probe_id); first at row {first_row[key]}",
                file=str(p),
                record=_where(n, row),
            )
        out[key] = outcome
        first_row[key] = n
    return out


def compare_files(
    a: str | Path,
    b: str | Path,
    metric: str,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The comparison object of two scored files (all validation happens before any result)."""
    rows_a = load_outcomes(a, metric)
    rows_b = load_outcomes(b, metric)
    keys = sorted(rows_a.keys() & rows_b.keys())
    if not keys:
        raise InputError(f"no row of {a} pairs with a row of {b} by (probe_type, seed, probe_id)")
    for key in keys:
        if rows_a[key].dialogue_id != rows_b[key].dialogue_id:
            raise InputError(
                f"dialogue_id {rows_a[key].dialogue_id!r} in {a} but "
                f"{rows_b[key].dialogue_id!r} in {b}",
                file=str(b),
                record="|".join(map(str, key)),
                field="dialogue_id",
            )
    va = [rows_a[k].value for k in keys]
    vb = [rows_b[k].value for k in keys]
    clusters = [rows_a[k].dialogue_id for k in keys]
    interval = paired_cluster_bootstrap(va, vb, clusters, resamples=resamples, seed=seed)
    test = mcnemar_paired(va, vb)
    mean_a = math.fsum(va) / len(keys)
    mean_b = math.fsum(vb) / len(keys)
    return {
        "metric": metric,
        "a": str(a),
        "b": str(b),
        "n_pairs": len(keys),
        "n_clusters": interval.n_clusters,
        "mean_a": mean_a,
        "mean_b": mean_b,
        "diff": mean_b - mean_a,
        "ci_low": interval.low,
        "ci_high": interval.high,
        "level": interval.level,
        "resamples": resamples,
        "seed": seed,
        "mcnemar_b": test.b,
        "mcnemar_c": test.c,
        "mcnemar_p": test.p,
        "unpaired_a": len(rows_a.keys() - rows_b.keys()),
        "unpaired_b": len(rows_b.keys() - rows_a.keys()),
    }
