"""Aggregation and Evidence Preservation Return (KEEP-Bench paper §4.1, eq. 11, Table 3).

* Overall All-Rec ``A`` (0-100), case-weighted over the subsets, is an input here: KEEP-Bench
  defines it once (:func:`compressbench.keepbench.metrics.overall_all_rec`).
* ``F_bar`` = sum of the per-case (amortised) FLOPs / (10**12 * N), in TFLOPs per case; each
  case is computed before averaging (attention is nonlinear in length).
* ``EPR = kappa * sqrt(A / F_bar)`` with ``kappa = 6``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

KAPPA = 6.0


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
