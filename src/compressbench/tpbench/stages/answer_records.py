"""The measured KV records of an answers cell: row fields, the stats summary, the warnings.

Every generation under a KV press carries the record its hook measured (mode used, any
``context_only`` -> ``full_prompt`` fallback and why, cache entries kept per layer, context
tokens). :func:`measured_fields` puts it and the cost it implies into the answer row,
:func:`kv_summary` condenses a cell's records for its ``.stats.json``, and a fallback is never
silent (:func:`warn_fallbacks`). :data:`STATS_FACTS` names what of a cell's stats is a fact
of its answers (the rest goes to the run log).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from compressbench.compress.costs import kv_measured_cost

log = logging.getLogger(__name__)

# The keys of an answers cell's ``.stats.json`` that are facts of its answers, the same bytes
# on every run that gives the same answers (what the report, metrics, viewer and tracking read:
# the reader's identity, decoding and batch, the image, counts, the KV summary, FLOPs). Every
# other key the stage records (cache hits, seconds, tokens/s, when the batches ran, the process
# and its loads, the backend's counters) is an observation of the run: it goes to the cell's
# run log (:mod:`compressbench.pipeline.run_log`), outside DVC's graph.
STATS_FACTS = (
    "cell",
    "dataset",
    "requests",
    "tokens_in",
    "tokens_out",
    "backend",
    "model_id",
    "model_revision",
    "decoding",
    "reader",
    "image",
    "structured_output",
    "kv",
    "flops",
)


def _counts(values: Sequence[Any]) -> dict[str, int]:
    return dict(sorted(Counter(str(v) for v in values).items()))


def measured_fields(record: dict[str, Any] | None) -> dict[str, Any]:
    """An answer row's ``kv_record`` and ``cost_measured`` (null without a record)."""
    cost = None if record is None else kv_measured_cost(record).to_dict()
    return {"kv_record": record, "cost_measured": cost}


def kv_summary(records: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """Summary of a KV cell's records (one per answer row; None where a row has none).

    ``kept_entries_per_layer`` pools every (row, layer) value; ``kept_entries_total`` sums each
    row's kept entries averaged over layers, so it compares with ``context_tokens_total``.
    """
    measured = [r for r in records if r is not None]
    fallbacks = [r for r in measured if r.get("fallback_reason")]
    reasons = Counter(str(r["fallback_reason"]) for r in fallbacks)
    per_layer = [int(k) for r in measured for k in r["kept_entries_per_layer"]]
    row_kept = [
        sum(r["kept_entries_per_layer"]) / len(r["kept_entries_per_layer"])
        for r in measured
        if r["kept_entries_per_layer"]
    ]
    fractions = [float(r["kept_fraction"]) for r in measured]
    return {
        "rows": len(records),
        "rows_measured": len(measured),
        "rows_without_record": len(records) - len(measured),
        "modes_requested": _counts([r.get("mode_requested") for r in measured]),
        "modes": _counts([r.get("mode") for r in measured]),
        "fallbacks": {
            "count": len(fallbacks),
            "reasons": [
                {"reason": reason, "count": n}
                for reason, n in sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
            ],
        },
        "kept_entries_per_layer": {
            "mean": sum(per_layer) / len(per_layer) if per_layer else None,
            "min": min(per_layer) if per_layer else None,
            "max": max(per_layer) if per_layer else None,
        },
        "kept_fraction_mean": sum(fractions) / len(fractions) if fractions else None,
        "context_tokens_total": sum(int(r["context_tokens"]) for r in measured),
        "question_tokens_total": sum(int(r.get("question_tokens") or 0) for r in measured),
        "kept_entries_total": sum(row_kept),
    }


def warn_fallbacks(cell: str, summary: dict[str, Any]) -> None:
    """One warning line per cell when prompts fell back or carry no measured record."""
    fallbacks = summary["fallbacks"]
    if fallbacks["count"]:
        reasons = "; ".join(f"{r['count']}x {r['reason']}" for r in fallbacks["reasons"])
        log.warning(
            "%s: %d of %d prompts fell back to full_prompt: %s",
            cell,
            fallbacks["count"],
            summary["rows"],
            reasons,
        )
    if summary["rows_without_record"]:
        log.warning(
            "%s: %d of %d answers carry no KV record (failed rows, or cached before records"
            " were kept)",
            cell,
            summary["rows_without_record"],
            summary["rows"],
        )
