"""Agreement of binary model decisions with human labels (judge validation).

Each item has a human label (True / False, or None when the human votes tied: unresolved, left
out of every figure) and a model decision (True / False, None for an uncertain decision, or an
error). Over the resolved items:

* ``accuracy`` = (tp + tn) / resolved - uncertain decisions and errors count as disagreements
  (no credit, like the paper's semantic accuracy);
* ``balanced_accuracy`` = mean of tp / positives and tn / negatives (same convention);
* ``cohen_kappa`` over the items with a true/false decision (scikit-learn's
  ``cohen_kappa_score`` when installed, else the same formula: (p_o - p_e) / (1 - p_e));
* the confusion counts tp / tn / fp / fn, and the uncertain and error counts.

Figures with an empty denominator are None. Check: the paper's AE test counts (tp 201, tn 297,
fp 64, fn 33) give accuracy 0.837 and balanced accuracy 0.841.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def kappa_from_counts(tp: int, tn: int, fp: int, fn: int) -> float | None:
    """Cohen's kappa of a 2x2 table (None when undefined: no items, or chance agreement 1)."""
    n = tp + tn + fp + fn
    if n == 0:
        return None
    observed = (tp + tn) / n
    chance = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    if chance == 1:
        return None
    return (observed - chance) / (1 - chance)


def cohen_kappa(labels: Sequence[bool], decisions: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary raters (scikit-learn's when installed)."""
    if not labels:
        return None
    try:
        from sklearn.metrics import cohen_kappa_score
    except ImportError:
        pairs = list(zip(labels, decisions, strict=True))
        return kappa_from_counts(
            tp=sum(a and b for a, b in pairs),
            tn=sum(not a and not b for a, b in pairs),
            fp=sum(not a and b for a, b in pairs),
            fn=sum(a and not b for a, b in pairs),
        )
    import warnings

    with warnings.catch_warnings():  # sklearn warns, then returns nan, when kappa is undefined
        warnings.simplefilter("ignore")
        value = float(cohen_kappa_score(list(labels), list(decisions), labels=[False, True]))
    return None if math.isnan(value) else value


def binary_agreement(
    labels: Sequence[bool | None], decisions: Sequence[bool | None], errors: Sequence[bool]
) -> dict[str, Any]:
    """Agreement figures (see the module docstring); the three sequences run over the same
    items. ``errors[i]`` marks an item the model left without a valid decision."""
    if not len(labels) == len(decisions) == len(errors):
        raise ValueError("labels, decisions and errors must have the same length")
    rows = [
        (label, None if err else decision, err)
        for label, decision, err in zip(labels, decisions, errors, strict=True)
        if label is not None
    ]
    decided = [(label, d) for label, d, err in rows if d is not None and not err]
    tp = sum(label and d for label, d in decided)
    tn = sum(not label and not d for label, d in decided)
    fp = sum(not label and d for label, d in decided)
    fn = sum(label and not d for label, d in decided)
    positives = sum(bool(label) for label, _, _ in rows)
    negatives = len(rows) - positives
    recalls = [_ratio(tp, positives), _ratio(tn, negatives)]
    return {
        "n_items": len(labels),
        "n_unresolved": len(labels) - len(rows),
        "n_resolved": len(rows),
        "n_decided": len(decided),
        "n_uncertain": sum(d is None and not err for _, d, err in rows),
        "n_errors": sum(err for _, _, err in rows),
        "confusion": {"tp": tp, "tn": tn, "fp": fp, "fn": fn},
        "accuracy": _ratio(tp + tn, len(rows)),
        "balanced_accuracy": None if None in recalls else sum(r or 0.0 for r in recalls) / 2,
        "cohen_kappa": cohen_kappa(
            [bool(label) for label, _ in decided], [bool(d) for _, d in decided]
        ),
        "kappa_method": _kappa_method(),
    }


def _kappa_method() -> str:
    try:
        import sklearn.metrics  # noqa: F401
    except ImportError:
        return "formula"
    return "sklearn.metrics.cohen_kappa_score"
