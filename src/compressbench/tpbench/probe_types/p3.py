"""P3, the goal plus a late update (spec §2.4, §3.5, §3.6): a sorted seeded sample of the
P3-eligible events, gold ``"<story label>; <slot human>: <new value>"``, scored jointly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from compressbench.tpbench.candidates import Candidate, sample_sorted_ids
from compressbench.tpbench.goals import goal_first_sentence, goal_text, normalize_task
from compressbench.tpbench.probe_types.spec import (
    Gold,
    KindRule,
    ProbeType,
    RescoreAnswer,
    Row,
    Scored,
    score_is_one,
    scored,
)
from compressbench.tpbench.scoring.p3 import score_p3
from compressbench.tpbench.scoring.parse import parse_p3

# The structured variant's value: the ``<task>; <slot>: <value>`` shape the question asks for.
# Its character classes leave out the quote, the backslash and line breaks: a grammar built
# from the pattern reads it inside the JSON string, where ``[^;]`` would run past the quote.
VALUE_PATTERN = r'^[^;"\\\n]+; [^;:"\\\n]+: [^;"\\\n]+$'


def _sample(pool: Sequence[Candidate], seed: int, n: int) -> list[Candidate]:
    return sample_sorted_ids(pool, seed, n, lambda c: c.transition.p3_eligible)


def _gold(c: Candidate, slot_human: str) -> Gold:
    goal = goal_text(c.dialogue.turns)
    story = normalize_task(goal_first_sentence(goal) or goal)
    value = c.transition.new_value
    return Gold(f"{story}; {slot_human}: {value}", value=value, story_label=story)


def _score_answer(text: str, error: bool, row: Mapping[str, Any], corrected: bool) -> Scored:
    answer = parse_p3(text)
    s = score_p3(answer.value, row["gold_story_label"], row["gold_value"], abstain=answer.abstain)
    return scored(answer, asdict(s))


def p3_superseded(row: Row) -> bool:
    """The P3 answer's value segment names the replaced value by P3 value-strict's rule
    (the scorer itself, with ``old_value`` as the gold value)."""
    if row.get("abstain") or not row.get("old_value"):
        return False
    scores = score_p3(row.get("prediction"), row.get("gold_story_label"), row["old_value"])
    return bool(scores.value_strict)


def _rescore(a: RescoreAnswer) -> dict[str, Any]:
    refs = a.references
    s = score_p3(
        a.prediction,
        refs["reference_goal"],
        refs["reference_value"],
        abstain=a.abstain,
        error=a.error,
    )
    return asdict(s)


P3 = ProbeType(
    name="P3",
    title="goal plus late update",
    artifact_name="P1_LATE",
    sample=_sample,
    gold=_gold,
    question=(
        "In one short reply, state BOTH (a) the user's task in this conversation AND (b) the "
        "final value the user decided on for {slot_human}. Format your answer as: "
        '"<task>; {slot_human}: <final value>".'
    ),
    answer_schema=(
        '{"value": <string in the format above>, "support": <verbatim span from context, '
        '<= 30 words>, "abstain": <true if you cannot tell, else false>}'
    ),
    value_pattern=VALUE_PATTERN,
    score_answer=_score_answer,
    rescore_references=("reference_goal", "reference_value"),
    rescore=_rescore,
    output_tokens=128,
    main_ratio_only=True,  # as published: the late-update probe only at p3_ratio
    # judged on its value part: correct by P3 value-strict, superseded by the same rule
    kind_rule=KindRule(correct=score_is_one("value_strict"), superseded=p3_superseded),
    retention_field="gold_value",
)
