"""LongMemEval-KU scorer (spec §1.6, §2.5): P2 on free-text gold with "(or ...)" variants."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from compressbench.text.normalize import phrase_occurs
from compressbench.text.tokens import lme_norm, lme_tokens
from compressbench.tpbench.scoring.parse import lme_abstains, lme_prediction, parse_lme

_GROUP = re.compile(r"\((?:or\s+)?([^()]*)\)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_LETTER = re.compile(r"[a-z]")
_EDGE = " .,;"


@dataclass(frozen=True)
class LMEScores:
    """``strict``: exact / phrase / number match against a gold variant; ``loose``: strict or
    at least ceil(|T(gold)|/2) shared content tokens."""

    strict: int
    loose: int
    abstain: int


@lru_cache(maxsize=10_000)
def gold_variants(gold: str) -> tuple[str, ...]:
    """Full gold, the inner text of each ``( ... )`` / ``(or ...)`` group, and the gold with the
    groups removed (stripped of ``" .,;"``), de-duplicated in order (§2.5)."""
    inner = [m.group(1).strip(_EDGE) for m in _GROUP.finditer(gold)]
    outer = _GROUP.sub("", gold).strip(_EDGE)
    return tuple(dict.fromkeys([gold, *inner, outer]))


def _numbers_match(pn: str, rn: str) -> bool:
    if _LETTER.search(pn):
        return False
    numbers = _NUMBER.findall(pn)
    return bool(numbers) and numbers == _NUMBER.findall(rn)


def lme_strict(prediction: object, gold: object) -> bool:
    """Strict match of §2.5 (prediction as produced by :func:`lme_prediction`)."""
    pn = lme_norm(prediction)
    if not pn:
        return False
    for variant in gold_variants("" if gold is None else str(gold)):
        rn = lme_norm(variant)
        if rn and (pn == rn or phrase_occurs(rn, pn) or _numbers_match(pn, rn)):
            return True
    return False


def lme_loose(prediction: object, gold: object) -> bool:
    """Strict, or |T(pred) & T(gold)| >= ceil(|T(gold)|/2) with both sets non-empty."""
    if lme_strict(prediction, gold):
        return True
    t_pred, t_gold = lme_tokens(prediction), lme_tokens(gold)
    return bool(t_pred and t_gold) and len(t_pred & t_gold) >= math.ceil(len(t_gold) / 2)


def score_lme(
    prediction: object, gold: object, *, abstain: bool = False, error: bool = False
) -> LMEScores:
    """Score an extracted LME-KU value (any JSON type; booleans count as empty)."""
    pred = lme_prediction(prediction)
    abstains = lme_abstains(pred, abstain)
    if error or abstains:
        return LMEScores(0, 0, int(abstains and not error))
    return LMEScores(int(lme_strict(pred, gold)), int(lme_loose(pred, gold)), 0)


def score_lme_text(text: object, gold: object, *, error: object = None) -> LMEScores:
    """Score raw reader text with the LME-KU parser (§2.1)."""
    if error:
        return LMEScores(0, 0, 0)
    answer = parse_lme(text)
    return score_lme(answer.value, gold, abstain=answer.abstain)
