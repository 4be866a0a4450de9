"""One KEEP cell's numbers from its compressed rows and verdict rows (KEEP-Bench §4.1, App. C.4).

The definitions live in :mod:`compressbench.keepbench.metrics` (All-Rec, Para-Rec, Cond-Rec per
case; a verdict that failed after its retries counts as not preserved; Rate as a ratio of
averages; Table 5's failure scope; single- vs multi-group retention); this module applies them
to the pipeline's rows and adds compute: TFLOPs per case = the mean of the per-case (amortised)
FLOPs the compression stage recorded, and EPR = 6 * sqrt(overall All-Rec / TFLOPs) when every
case has an estimate.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from compressbench.flops.epr import epr, mean_tflops
from compressbench.keepbench.cases import KeepCase
from compressbench.keepbench.metrics import (
    CaseScore,
    compression_rate,
    failure_scope,
    group_retention,
    metrics_by_subset,
    overall_all_rec,
    score_case,
)


def score_rows(
    cases: Mapping[str, KeepCase],
    compressed: Sequence[Mapping[str, Any]],
    verdicts: Sequence[Mapping[str, Any]],
) -> tuple[list[CaseScore], list[dict[str, Any]]]:
    """Each compressed case's score, and a row per case for tables (recalls, tokens, FLOPs)."""
    labels: dict[str, dict[str, Any]] = defaultdict(dict)
    for v in verdicts:
        labels[v["case_id"]][v["proposition_id"]] = v.get("judgement")
    scores, rows = [], []
    for row in compressed:
        score = score_case(cases[row["case_id"]], labels.get(row["case_id"], {}))
        scores.append(score)
        rows.append(
            {
                "case_id": score.case_id,
                "subset": score.subset,
                "all_rec": int(score.all_rec),
                "para_rec": None if score.para_rec is None else int(score.para_rec),
                "cond_rec": None if score.cond_rec is None else int(score.cond_rec),
                "n_missing": score.n_missing,
                "groups_retained": f"{score.groups_retained}/{score.n_groups}",
                "verdict_errors": score.errors,
                "source_tokens": row["source_tokens"],
                "compressed_tokens": row["compressed_tokens"],
                "flops": row.get("flops"),
            }
        )
    return scores, rows


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def cell_summary(scores: Sequence[CaseScore], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-subset and overall numbers of one cell (rows as :func:`score_rows` makes them)."""
    subsets: dict[str, Any] = {}
    for subset, m in metrics_by_subset(scores).items():
        mine = [r for r in rows if r["subset"] == subset]
        mine_scores = [s for s in scores if s.subset == subset]
        rate = compression_rate(
            [r["source_tokens"] for r in mine], [r["compressed_tokens"] for r in mine]
        )
        subsets[subset] = {
            "cases": m.n,
            "rate": _finite(rate),
            "all_rec": m.all_rec,
            "para_rec": m.para_rec,
            "cond_rec": m.cond_rec,
            "verdict_errors": m.errors,
            "failure_scope": failure_scope(mine_scores),
            "group_retention": group_retention(mine_scores),
        }
    flops = [r["flops"] for r in rows]
    tflops = mean_tflops(flops) if rows and all(f is not None for f in flops) else None
    overall = overall_all_rec(scores)
    return {
        "cases": len(rows),
        "subsets": subsets,
        "overall_all_rec": overall,
        "tflops_per_case": tflops,
        "epr": epr(overall, tflops) if overall is not None and tflops else None,
        "verdict_errors": sum(s.errors for s in scores),
    }
