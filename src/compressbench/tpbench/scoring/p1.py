"""P1 initial-goal scorer (spec §1.3, §2.2): shared content tokens with the goal sentence."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compressbench.text.tokens import p1_tokens, set_f1
from compressbench.tpbench.scoring.parse import parse_p1

Tokenizer = Callable[[object], frozenset[str]]


@dataclass(frozen=True)
class P1Scores:
    """``strict``: >= 2 shared tokens; ``loose``: >= 1; ``token_f1``: set-based F1."""

    strict: int
    loose: int
    token_f1: float


ZERO = P1Scores(0, 0, 0.0)


def prediction_text(value: object) -> str:
    """``str(value or "")`` - how the P1/P3 front end turns a JSON value into a prediction."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value or "")


def score_p1(
    prediction: object,
    gold: object,
    *,
    abstain: bool = False,
    error: bool = False,
    tokenize: Tokenizer = p1_tokens,
) -> P1Scores:
    """Score an extracted P1 prediction against the goal sentence (§2.2).

    Abstentions, errors and empty predictions score 0 everywhere.
    """
    pred = prediction_text(prediction)
    if abstain or error or pred == "":
        return ZERO
    g, p = tokenize(gold), tokenize(pred)
    overlap = len(g & p)
    return P1Scores(int(overlap >= 2), int(overlap >= 1), set_f1(g, p))


def score_p1_text(text: object, gold: object, *, tokenize: Tokenizer = p1_tokens) -> P1Scores:
    """Score raw reader text: the P1 parser (§2.1) then :func:`score_p1`."""
    answer = parse_p1(text)
    return score_p1(answer.value, gold, abstain=answer.abstain, tokenize=tokenize)
