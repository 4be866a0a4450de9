"""Aggregation and Evidence Preservation Return (KEEP-Bench paper §4.1, eq. 11, Table 3).

* Overall All-Rec ``A`` (0-100) is case-weighted over the settings (the published release:
  900 parallel, 1,364 conditional, 1,010 science, 828 policy = 4,102 cases).
* ``F_bar`` = sum of the per-case (amortised) FLOPs / (10**12 * N), in TFLOPs per case; each
  case is computed before averaging (attention is nonlinear in length).
* ``EPR = kappa * sqrt(A / F_bar)`` with ``kappa = 6``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

KAPPA = 6.0
PUBLISHED_CASES: dict[str, int] = {
    "parallel": 900,
    "conditional": 1364,
    "science": 1010,
    "policy": 828,
}


def overall_all_rec(per_setting: Mapping[str, tuple[float, int]]) -> float:
    """Case-weighted All-Rec: ``per_setting`` maps a setting to (All-Rec, number of cases)."""
    cases = sum(n for _, n in per_setting.values())
    if cases <= 0:
        raise ValueError("no cases to weight")
    return sum(rec * n for rec, n in per_setting.values()) / cases


def mean_tflops(per_case_flops: Iterable[float]) -> float:
    """Eq. 11: the mean per-case FLOPs in TFLOPs."""
    values = list(per_case_flops)
    if not values:
        raise ValueError("no cases to average")
    return sum(values) / (1e12 * len(values))


def epr(all_rec: float, tflops: float, kappa: float = KAPPA) -> float:
    """``kappa * sqrt(A / F_bar)``; ``A`` on the 0-100 scale, ``F_bar`` in TFLOPs per case."""
    if tflops <= 0:
        raise ValueError(f"TFLOPs per case must be > 0, got {tflops}")
    if all_rec < 0:
        raise ValueError(f"All-Rec must be >= 0, got {all_rec}")
    return kappa * math.sqrt(all_rec / tflops)
