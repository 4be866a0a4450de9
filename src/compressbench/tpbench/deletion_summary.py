"""Summary of a scored deletion run (spec §4-§5, paper Tables 11-12).

Per condition: n, strict and loose accuracy with Wilson 95% intervals, format-error rate. Per
paired comparison (single update turn; all answer-bearing turns) over the items where the
deletion and its matched control both ran: the flips among items answered correctly in full
context and exact McNemar tests (b = deletion-only wrong, c = control-only wrong) on those
items and on all matched items. Items whose control could not be matched are listed with the
reason, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from compressbench.analysis.stats import mcnemar_paired, wilson_interval
from compressbench.tpbench.deletions import CONDITIONS, FULL, PAIRS, UNMATCHED

Row = Mapping[str, Any]

# Where each pair's match status and failure reason live in the rows' meta.
STATUS_FIELDS: dict[str, tuple[str, str]] = {
    "single": ("control_origin_status", "control_origin_reason"),
    "all_evidence": ("transition_support_control_status", "transition_support_control_reason"),
}


def _outcome(row: Row, metric: str = "strict") -> int:
    return int(row["scores"][metric])


def _rate(rows: Sequence[Row], metric: str) -> tuple[float | None, list[float] | None]:
    if not rows:
        return None, None
    hits = sum(_outcome(r, metric) for r in rows)
    return hits / len(rows), list(wilson_interval(hits, len(rows)))


def condition_table(by_condition: Mapping[str, Sequence[Row]]) -> list[dict[str, Any]]:
    """One entry per condition (all five, in order; empty ones have n 0 and nulls)."""
    out = []
    for condition in CONDITIONS:
        rows = by_condition.get(condition, [])
        strict, strict_ci = _rate(rows, "strict")
        loose, loose_ci = _rate(rows, "loose")
        errors = sum(int(r.get("format_error") or 0) for r in rows)
        out.append(
            {
                "condition": condition,
                "n": len(rows),
                "strict": strict,
                "strict_ci": strict_ci,
                "loose": loose,
                "loose_ci": loose_ci,
                "format_error_rate": errors / len(rows) if rows else None,
            }
        )
    return out


def pair_entry(pair: str, items: Mapping[str, Mapping[str, Row]]) -> dict[str, Any]:
    """The paired comparison ``pair`` over the items that ran all three of its conditions."""
    deletion, control = PAIRS[pair]
    matched = [c for c in items.values() if FULL in c and deletion in c and control in c]
    full = [_outcome(c[FULL]) for c in matched]
    dele = [_outcome(c[deletion]) for c in matched]
    ctrl = [_outcome(c[control]) for c in matched]
    right = [i for i, ok in enumerate(full) if ok]
    on_right = mcnemar_paired([ctrl[i] for i in right], [dele[i] for i in right])
    on_all = mcnemar_paired(ctrl, dele)
    return {
        "pair": pair,
        "deletion": deletion,
        "control": control,
        "n_matched": len(matched),
        "n_correct_full": len(right),
        "deletion_flips": sum(1 for i in right if not dele[i]),
        "control_flips": sum(1 for i in right if not ctrl[i]),
        "mcnemar_b": on_right.b,
        "mcnemar_c": on_right.c,
        "mcnemar_p": on_right.p,
        "mcnemar_all_b": on_all.b,
        "mcnemar_all_c": on_all.c,
        "mcnemar_all_p": on_all.p,
    }


def unmatched_items(full_rows: Iterable[Row]) -> dict[str, Any]:
    """Counts per pair and one entry per (probe, pair) whose control failed."""
    items = []
    for row in full_rows:
        meta = row.get("meta") or {}
        for pair, (status, reason) in STATUS_FIELDS.items():
            if meta.get(status) == UNMATCHED:
                items.append({"probe_id": row["probe_id"], "pair": pair, "reason": meta[reason]})
    counts = {pair: sum(1 for i in items if i["pair"] == pair) for pair in STATUS_FIELDS}
    return {**counts, "items": items}


def summarize(rows: Iterable[Row], *, dataset: str, seed: int | None) -> dict[str, Any]:
    """The deletion summary of one dataset's scored rows (``condition``, ``probe_id``,
    ``scores.strict`` / ``scores.loose`` as 0/1, ``format_error``, ``meta``)."""
    by_condition: dict[str, list[Row]] = {}
    items: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_condition.setdefault(row["condition"], []).append(row)
        items.setdefault(row["probe_id"], {})[row["condition"]] = row
    full_rows = by_condition.get(FULL, [])
    return {
        "dataset": dataset,
        "seed": seed,
        "n_probes": len(full_rows),
        "unmatched": unmatched_items(full_rows),
        "conditions": condition_table(by_condition),
        "pairs": [pair_entry(pair, items) for pair in PAIRS],
    }
