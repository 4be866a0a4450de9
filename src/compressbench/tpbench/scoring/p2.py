"""P2 current-value scorer (spec §1.1, §1.2, §1.4, §2.3; the artifact's "P3")."""

from __future__ import annotations

from dataclasses import dataclass

from compressbench.text.normalize import dataset_key, normalize_value, phrase_occurs
from compressbench.text.tokens import overlap_tokens
from compressbench.tpbench.scoring.parse import ABSTAIN_STRINGS, parse_p2


@dataclass(frozen=True)
class P2Scores:
    """``strict``: normalised equality; ``loose``: gold occurs phrase-bounded inside the
    prediction; ``overlap_*``: diagnostic token overlap; ``norm_*``: normalised strings."""

    strict: int
    loose: int
    overlap_strict: int
    overlap_loose: int
    norm_pred: str
    norm_gold: str
    abstain: int


ERROR = P2Scores(0, 0, 0, 0, "", "", 0)


def score_p2(
    prediction: object,
    gold: object,
    dataset: str | None,
    *,
    abstain: bool = False,
    error: bool = False,
) -> P2Scores:
    """Score an extracted P2 value (§2.3).

    ``abstain`` is the model's flag after ``bool()``; it is OR-ed with the value being one of
    ``""``, ``unknown``, ``n/a``, ``none``. Only string predictions can score. An errored row
    scores 0 with ``abstain`` 0 and empty normalised strings.
    """
    if error:
        return ERROR
    pred = prediction if isinstance(prediction, str) else None
    abstains = bool(abstain) or (pred is not None and pred.strip().lower() in ABSTAIN_STRINGS)
    ds = dataset_key(dataset)
    norm_pred, norm_gold = normalize_value(pred, ds), normalize_value(gold, ds)
    ok = not abstains
    t_pred, t_gold = overlap_tokens(pred), overlap_tokens(gold)
    shared = len(t_pred & t_gold)
    return P2Scores(
        strict=int(ok and norm_gold != "" and norm_pred == norm_gold),
        loose=int(ok and phrase_occurs(norm_gold, norm_pred)),
        overlap_strict=int(ok and shared >= 2 and len(t_gold) >= 2),
        overlap_loose=int(ok and shared >= 1 and len(t_gold) >= 1),
        norm_pred=norm_pred,
        norm_gold=norm_gold,
        abstain=int(abstains),
    )


def score_p2_text(
    text: object, gold: object, dataset: str | None, *, error: object = None
) -> P2Scores:
    """Score raw reader text: a truthy reader ``error`` zeroes the row, else the P2 parser."""
    if error:
        return ERROR
    answer = parse_p2(text)
    return score_p2(answer.value, gold, dataset, abstain=answer.abstain)
