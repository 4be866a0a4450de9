"""P1, the user's initial goal (spec §2.2, §3.6): every sampled question, gold the goal's first
sentence, judged on the value string (English and Chinese scorers)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from compressbench.tpbench.candidates import Candidate, sample_questions
from compressbench.tpbench.goals import goal_first_sentence, goal_text
from compressbench.tpbench.probe_types.spec import (
    VALUE_ANSWER_SCHEMA,
    Gold,
    KindRule,
    ProbeType,
    RescoreAnswer,
    Scored,
    score_is_one,
    scored,
)
from compressbench.tpbench.scoring.p1 import score_p1
from compressbench.tpbench.scoring.parse import parse_p1
from compressbench.tpbench.scoring.zh import is_chinese_dataset, score_p1_zh


def _scorer(dataset: str) -> Any:
    return score_p1_zh if is_chinese_dataset(dataset) else score_p1


def _gold(c: Candidate, slot_human: str) -> Gold:
    return Gold(goal_first_sentence(goal_text(c.dialogue.turns)))


def _score_answer(text: str, error: bool, row: Mapping[str, Any], corrected: bool) -> Scored:
    answer = parse_p1(text)
    score = _scorer(row["dataset"])(answer.value, row["gold"], abstain=answer.abstain)
    return scored(answer, asdict(score))


def _rescore(a: RescoreAnswer) -> dict[str, Any]:
    score = _scorer(a.dataset)(
        a.prediction, a.references["reference"], abstain=a.abstain, error=a.error
    )
    return asdict(score)


P1 = ProbeType(
    name="P1",
    title="initial goal",
    artifact_name="P1",
    sample=sample_questions,
    gold=_gold,
    question=(
        "What was the user's initial goal at the beginning of this conversation? Reply with one "
        'short noun phrase (e.g. "book a hotel", "find a flight", "reserve a restaurant").'
    ),
    answer_schema=VALUE_ANSWER_SCHEMA,
    score_answer=_score_answer,
    rescore_references=("reference",),
    rescore=_rescore,
    output_tokens=96,
    # correct by P1-strict; a goal has no replaced value. The report's answer-kind table
    # leaves P1 out (paper Table 13 is about current values); the case viewer shows it.
    kind_rule=KindRule(correct=score_is_one("strict"), superseded=lambda row: False),
    kinds_in_report=False,
)
