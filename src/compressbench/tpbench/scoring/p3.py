"""P3 joint scorer (spec §1.3, §1.5, §2.4; the artifact's ``P1_LATE``).

Two scorers over the same prediction ``"<goal>; <slot label>: <value>"``:

* segment-local (reported): :func:`split_answer`, then goal tokens on the goal segment and the
  value rules on the value segment; all 0 when the answer does not split;
* whole-field (sensitivity): the same rules on the whole prediction, no parsing.

Whole-field scores are never below segment-local ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from compressbench.text.normalize import norm_text, phrase_occurs
from compressbench.text.tokens import p1_tokens, set_f1
from compressbench.tpbench.scoring.p1 import prediction_text
from compressbench.tpbench.scoring.parse import parse_p3


@dataclass(frozen=True)
class Segments:
    """A parsed P3 answer: goal segment, slot label, value segment."""

    goal: str
    label: str
    value: str


@dataclass(frozen=True)
class P3Scores:
    """Segment-local scores (reported P3) and whole-field scores (``whole_*``)."""

    goal: int
    value_strict: int
    value_loose: int
    strict: int
    loose: int
    parsed: int
    whole_goal: int
    whole_value_strict: int
    whole_value_loose: int
    whole_strict: int
    whole_loose: int
    whole_token_f1: float


ZERO = P3Scores(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0)


def split_answer(pred: str) -> Segments | None:
    """The conservative segment parser of §2.4: exactly one ``;``; the right side splits at its
    first ``:``; goal, label and value must all be non-empty after stripping."""
    if pred.count(";") != 1:
        return None
    goal, right = (part.strip() for part in pred.split(";"))
    label, colon, value = right.partition(":")
    segments = Segments(goal, label.strip(), value.strip())
    if not colon or not (segments.goal and segments.label and segments.value):
        return None
    return segments


def value_strict(gold_value: object, text: str) -> bool:
    """``norm_text(gold)`` occurs phrase-bounded in ``norm_text(text)`` (§1.5 + §1.2)."""
    return phrase_occurs(norm_text(gold_value), norm_text(text))


def value_loose(gold_value: object, text: str) -> bool:
    """Strict, or at least max(1, floor(|V|/2)) of the gold value's content tokens V."""
    if value_strict(gold_value, text):
        return True
    v = p1_tokens(gold_value)
    return bool(v) and len(v & p1_tokens(text)) >= max(1, len(v) // 2)


def goal_correct(gold_story_label: object, text: str) -> bool:
    """At least one shared content token with the gold story label (§2.4)."""
    return bool(p1_tokens(gold_story_label) & p1_tokens(text))


def score_p3(
    prediction: object,
    gold_story_label: object,
    gold_value: object,
    *,
    abstain: bool = False,
    error: bool = False,
) -> P3Scores:
    """Score an extracted P3 prediction, segment-local and whole-field (§2.4).

    Abstentions and errors read as the empty prediction (they score 0 everywhere).
    """
    pred = "" if abstain or error else prediction_text(prediction)
    if pred == "":
        return ZERO
    seg = split_answer(pred)
    goal = int(seg is not None and goal_correct(gold_story_label, seg.goal))
    v_strict = int(seg is not None and value_strict(gold_value, seg.value))
    v_loose = int(seg is not None and value_loose(gold_value, seg.value))
    w_goal = int(goal_correct(gold_story_label, pred))
    w_strict = int(value_strict(gold_value, pred))
    w_loose = int(value_loose(gold_value, pred))
    reference = p1_tokens(gold_story_label) | p1_tokens(gold_value)
    return P3Scores(
        goal=goal,
        value_strict=v_strict,
        value_loose=v_loose,
        strict=goal * v_strict,
        loose=goal * v_loose,
        parsed=int(seg is not None),
        whole_goal=w_goal,
        whole_value_strict=w_strict,
        whole_value_loose=w_loose,
        whole_strict=w_goal * w_strict,
        whole_loose=w_goal * w_loose,
        whole_token_f1=set_f1(reference, p1_tokens(pred)),
    )


def score_p3_text(text: object, gold_story_label: object, gold_value: object) -> P3Scores:
    """Score raw reader text with the P1/P3 parser (§2.1) and :func:`score_p3`."""
    answer = parse_p3(text)
    return score_p3(answer.value, gold_story_label, gold_value, abstain=answer.abstain)
